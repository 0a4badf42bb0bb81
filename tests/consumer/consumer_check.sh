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
# The PyTorch backend, when the build has it: the installed package imports and registers "chorus" (its
# extension finds the installed libchorus through its RUNPATH).
for pkg in "$work"/prefix/lib/python3*/dist-packages/chorus_torch; do
  [ -d "$pkg" ] || continue
  PYTHONPATH=$(dirname "$pkg") /usr/bin/python3 -c \
    "import chorus_torch, torch.distributed as d; assert d.Backend('chorus') == 'chorus'; assert '$work' in chorus_torch.__file__"
  echo "chorus_torch imports from the install"
done
echo "consumer check passed"
