#!/usr/bin/env bash
# Installs the build tree into a fresh prefix, then builds and runs against that prefix only: a C++ consumer
# project with find_package(Chorus) and a one-file program with pkg-config; and a C program
# (tests/consumer/c_project) linked statically with CMake (chorus::chorus_static, in a C-only project) and with
# `pkg-config --static`, and against the shared library with pkg-config, relying on the RPATH its Libs set (no
# LD_LIBRARY_PATH). Every program must run, and the static ones must not need libchorus.so.
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
for f in include/chorus/chorus.h lib/cmake/Chorus/ChorusConfig.cmake lib/pkgconfig/chorus.pc bin/chorusrun; do
  [ -e "$work/prefix/$f" ] || { echo "missing from the install: $f"; exit 1; }
done
ls "$work"/prefix/lib/libchorus.so.* >/dev/null
cmake -S "$src/project" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib" "$work/cmake-build/consumer"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
g++ -std=c++17 "$src/project/consumer.cc" -o "$work/pc-consumer" $(pkg-config --cflags --libs chorus) -pthread
LD_LIBRARY_PATH="$work/prefix/lib" "$work/pc-consumer"

unset LD_LIBRARY_PATH

cmake -S "$src/c_project" -B "$work/c-build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/c-build" >/dev/null
"$work/c-build/consumer_static"
if ldd "$work/c-build/consumer_static" | grep -q libchorus; then
  echo "chorus::chorus_static linked the shared library"; exit 1
fi
LD_LIBRARY_PATH="$work/prefix/lib" "$work/c-build/consumer_shared"

# pkg-config --static against an install that has only libchorus.a (as a static-only package would), so that
# -lchorus can only mean the archive: the flags must bring everything it needs, for the C compiler's driver.
cp -a "$work/prefix" "$work/static-prefix"
rm -f "$work"/static-prefix/lib/libchorus.so*
export PKG_CONFIG_PATH="$work/static-prefix/lib/pkgconfig"
cc "$src/c_project/consumer.c" -o "$work/pc-static" $(pkg-config --static --cflags --libs chorus)
"$work/pc-static"
if ldd "$work/pc-static" | grep -q libchorus; then echo "pkg-config --static linked the shared library"; exit 1; fi

# The shared library through pkg-config: the RPATH its Libs set finds it, without LD_LIBRARY_PATH.
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
cc "$src/c_project/consumer.c" -o "$work/pc-shared" $(pkg-config --cflags --libs chorus)
"$work/pc-shared"
found=$(ldd "$work/pc-shared" | awk '/libchorus/ {print $3}')
if [ -z "$found" ] || [ "$(realpath "$found")" != "$(realpath "$work/prefix/lib/libchorus.so.0")" ]; then
  echo "the RPATH of pkg-config's Libs was not used (libchorus resolved to '$found')"; exit 1
fi

# The PyTorch backend, when the build has it: the installed package imports and registers "chorus" (its
# extension finds the installed libchorus through its RUNPATH).
for pkg in "$work"/prefix/lib/python3*/dist-packages/chorus_torch; do
  [ -d "$pkg" ] || continue
  PYTHONPATH=$(dirname "$pkg") /usr/bin/python3 -c \
    "import chorus_torch, torch.distributed as d; assert d.Backend('chorus') == 'chorus'; assert '$work' in chorus_torch.__file__"
  echo "chorus_torch imports from the install"
done
echo "consumer check passed"
