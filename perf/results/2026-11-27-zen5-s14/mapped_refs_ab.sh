#!/usr/bin/env bash
# chorusMemAlloc buffers read by the peer through a mapping (lib S) against the library before (lib E: 48d06e1, the
# same data path otherwise), same binaries, alternated: nccl-tests' -R 1 (buffers from chorusMemAlloc and registered),
# 2 ranks unbound, all-to-all and send/recv 256 KiB-128 MiB, Open MPI in the same runs.
#   mapped_refs_ab.sh ROUNDS   (libraries in /tmp/libE and /tmp/libS, as libchorus.so.0)
set -u
M="mpirun --allow-run-as-root --oversubscribe --mca btl self,vader --bind-to none"
for r in $(seq 1 "${1:-3}"); do
  for L in E S; do
    for c in alltoall sendrecv; do
      echo "== round $r lib $L $c (bytes, chorus oop us, ip us, mpi oop us, ip us, ratio oop, ip)"
      LD_LIBRARY_PATH=/tmp/lib$L $M -x LD_LIBRARY_PATH -np 2 build/bin/${c}_perf -b 256K -e 128M -f 8 -w 5 -n 10 -c 1 \
        -R 1 --compare mpi 2>&1 | grep -E '^ *[0-9]' | awk '{print $1, $6, $10, $14, $17, $16, $19}'
    done
  done
done
