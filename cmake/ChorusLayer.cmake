# The library's layers and the rule between them: a layer includes only its own headers and those of the layers
# it names in DEPS (docs/architecture.md's layers: base <- bootstrap, transport, topology <- collectives <- core).
#
# chorus_add_layer(NAME DIR_NAME [DEPS layer...] [PUBLIC_API]): an OBJECT library NAME of every .cc under src/DIR_NAME.
# Its include path is not src/ but a folder of its own in the build tree that holds links to src/DIR_NAME and to
# the DEPS' folders only, so `#include "core/comm.h"` from a lower layer does not compile. PUBLIC_API adds
# include/ (the C API boundary). scripts/check_layers.py reads the same declarations and checks every header
# too (lint), including the ones no compiled file includes.
set(CHORUS_LAYER_ROOT ${PROJECT_BINARY_DIR}/layers)

function(chorus_add_layer name dir)
  cmake_parse_arguments(ARG "PUBLIC_API" "" "DEPS" ${ARGN})
  set(_root ${CHORUS_LAYER_ROOT}/${dir})
  file(MAKE_DIRECTORY ${_root})
  foreach(d IN LISTS dir ARG_DEPS)
    if(NOT IS_DIRECTORY ${PROJECT_SOURCE_DIR}/src/${d})
      message(FATAL_ERROR "layer ${name}: src/${d} is not a layer")
    endif()
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${d} ${_root}/${d} SYMBOLIC)
  endforeach()
  set_property(GLOBAL PROPERTY CHORUS_LAYER_INCLUDES_${dir} ${_root})

  file(GLOB_RECURSE _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  list(FILTER _srcs EXCLUDE REGEX "_test\\.cc$")
  if(NOT _srcs)
    set(_srcs ${PROJECT_SOURCE_DIR}/cmake/empty.cc)
  endif()
  add_library(${name} OBJECT ${_srcs})
  target_include_directories(${name} PRIVATE ${_root} ${PROJECT_BINARY_DIR}/generated)
  if(ARG_PUBLIC_API)
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  endif()
  target_compile_definitions(${name} PRIVATE CHORUS_BUILDING_LIBRARY=1)
endfunction()

# Gives `target` (the CUDA objects, say) the include path of layer DIR_NAME.
function(chorus_use_layer_includes target dir)
  get_property(_root GLOBAL PROPERTY CHORUS_LAYER_INCLUDES_${dir})
  target_include_directories(${target} PRIVATE ${_root} ${PROJECT_BINARY_DIR}/generated)
endfunction()
