#!/usr/bin/env bash
# Installs the build tree into a fresh prefix; checks that lib/libnccl.so.2 exports exactly the functions the
# toolkit's nccl.h declares (each with its pnccl alias) and reports NCCL's version; then builds
# nccl_program.c as a user would, `cc -I<toolkit include> prog.c -L<prefix>/lib -lnccl`, and runs it on 3
# host ranks with LD_LIBRARY_PATH pointing at the install.
set -euo pipefail
build=$1
src=$2
nccl_h_dir=$3
cuda_h_dir=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
lib="$work/prefix/lib/libnccl.so.2"
[ -e "$lib" ] || { echo "the install has no lib/libnccl.so.2"; exit 1; }
[ "$(readlink -f "$lib")" = "$(readlink -f "$work/prefix/lib/libnccl.so.2.28.9")" ] || { echo "libnccl.so.2 is not 2.28.9"; exit 1; }

"$src/../consumer/exported_symbols.sh" "$lib" "$nccl_h_dir/nccl.h" nccl

cc -I"$nccl_h_dir" -I"$cuda_h_dir" "$src/nccl_program.c" -o "$work/prog" -L"$work/prefix/lib" -lnccl -lpthread
LD_LIBRARY_PATH="$work/prefix/lib" "$work/prog" threads 3 | tee "$work/out"
grep -q "from $work/prefix/lib/libnccl.so.2" "$work/out" || { echo "the program did not load the installed libnccl.so.2"; exit 1; }

# A program built against NCCL's own library (the toolkit's, when it ships one) runs on Chorus by pointing the
# loader at the install: same SONAME, same ABI.
for d in "$nccl_h_dir/../lib64" "$nccl_h_dir/../lib"; do
  if [ -e "$d/libnccl.so" ]; then
    cc -I"$nccl_h_dir" -I"$cuda_h_dir" "$src/nccl_program.c" -o "$work/prog-nvidia" -L"$d" -lnccl -lpthread
    LD_LIBRARY_PATH="$work/prefix/lib" "$work/prog-nvidia" threads 2 | tee "$work/out2"
    grep -q "from $work/prefix/lib/libnccl.so.2" "$work/out2" || { echo "the loader did not take Chorus's libnccl.so.2"; exit 1; }
    break
  fi
done
