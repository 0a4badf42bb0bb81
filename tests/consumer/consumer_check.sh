#!/usr/bin/env bash
# Installs the build tree into a fresh prefix, then builds and runs a consumer project with
# find_package(Chorus) and a one-file program with pkg-config, both against that prefix only.
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
echo "consumer check passed"
