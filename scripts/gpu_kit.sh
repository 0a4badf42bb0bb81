#!/usr/bin/env bash
# Prepares a GPU check that spends no device time compiling: copies the CUDA test binary of a build made here
# (nvcc on this machine, CMAKE_CUDA_ARCHITECTURES including the GPU's) and the shared libraries it needs into
# .gpukit/ (keep it out of git: `echo /.gpukit/ >> .git/info/exclude`), with scripts/gpu_check.sh as its run.sh.
# On the GPU machine, from the repository root: `bash .gpukit/run.sh` (carry .gpukit). docs/cuda.md has the runs.
#
#   scripts/gpu_kit.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
kit=.gpukit
rm -rf "$kit"
mkdir -p "$kit/lib"
strip --strip-debug -o "$kit/cuda_gpu_test" "$build/bin/cuda_gpu_test"
# Every library the test needs that is not glibc's own (the GPU machine's image has a newer glibc, not ours).
ldd "$build/bin/cuda_gpu_test" | awk '/=> \// {print $3}' |
  grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' | while read -r lib; do cp -L "$lib" "$kit/lib/"; done
cp scripts/gpu_check.sh "$kit/run.sh"
du -sh "$kit"
