# chorus_add_layer(NAME DIR DEPS...): an OBJECT library of every .cc under DIR, which may include only DEPS'
# headers besides its own (the layering of DESIGN.md).
function(chorus_add_layer name)
  file(GLOB_RECURSE _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  list(FILTER _srcs EXCLUDE REGEX "_test\\.cc$")
  if(NOT _srcs)
    set(_srcs ${PROJECT_SOURCE_DIR}/cmake/empty.cc)
  endif()
  add_library(${name} OBJECT ${_srcs})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include
                                             ${PROJECT_BINARY_DIR}/generated)
  target_compile_definitions(${name} PRIVATE CHORUS_BUILDING_LIBRARY=1)
endfunction()
