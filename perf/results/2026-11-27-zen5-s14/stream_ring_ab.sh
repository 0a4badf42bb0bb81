#!/usr/bin/env bash
# A host stream's first deep loop: the library with a 1024-slot queue (lib A) against a 4096-slot one (lib E), same
# binaries, alternated. 2 ranks, 8 B, host stream, -n 4000 (a queue about 3000 deep) and -n 1000, 3 cycles per process.
#   stream_ring_ab.sh ROUNDS   (libraries in /tmp/libA and /tmp/libE, as libchorus.so.0)
set -u
M="mpirun --allow-run-as-root --oversubscribe --mca btl self,vader --bind-to none"
for r in $(seq 1 "${1:-3}"); do
  for c in all_reduce sendrecv broadcast; do
    for n in 4000 1000; do
      for L in A E; do
        echo -n "round $r $c -n $n lib $L (oop us, ip us, mpi oop, mpi ip per cycle): "
        LD_LIBRARY_PATH=/tmp/lib$L $M -x LD_LIBRARY_PATH -np 2 build/bin/${c}_perf -b 8 -e 8 -w 100 -n $n -c 1 -N 3 \
          --compare mpi 2>&1 | grep -E '^ *[0-9]' | awk '{printf "%s %s %s %s | ", $6, $10, $14, $17}'
        echo
      done
    done
  done
done
