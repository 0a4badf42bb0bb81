#!/usr/bin/env bash
# Prepares a GPU check that spends no device time compiling: packs the GPU tests, the device benchmark and the
# trainer (chorus-train, chorusrun, train_cuda_device_test, tests/train/train_proofs.py) of a CUDA build made here
# (nvcc on this machine, CMAKE_CUDA_ARCHITECTURES including the GPU's), stripped, with the shared
# libraries they need, into .gpukit/kit.tar.gz (compressed, so the kit stays well inside the 64 MiB a device call
# carries), with scripts/gpu_check.sh as .gpukit/run.sh. Keep the folder out of git
# (`echo /.gpukit/ >> .git/info/exclude`). On the GPU machine, from the repository root: `bash .gpukit/run.sh`
# (carry .gpukit). docs/cuda.md has the runs.
#
#   scripts/gpu_kit.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
kit=.gpukit
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/kit/lib"
programs=(cuda_gpu_test cuda_coll_gpu_test cuda_procs_gpu_test device_coll_bench chorus-train chorusrun
          train_cuda_device_test)
for p in "${programs[@]}"; do strip --strip-debug -o "$stage/kit/$p" "$build/bin/$p"; done
# Every library they need that is not glibc's own (the GPU machine's image has a newer glibc, not ours) nor cuBLAS
# (600 MB; the GPU machine's CUDA toolkit has it, and run.sh puts that on the library path).
for p in "${programs[@]}"; do ldd "$build/bin/$p"; done | awk '/=> \// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*|libcublas|libcublasLt)\.so' | while read -r lib; do
  strip --strip-debug -o "$stage/kit/lib/$(basename "$lib")" "$lib"
done
cp tests/train/train_proofs.py "$stage/kit/"
rm -rf "$kit"
mkdir -p "$kit"
tar czf "$kit/kit.tar.gz" -C "$stage" kit
cp scripts/gpu_check.sh "$kit/run.sh"
du -sh "$kit"
