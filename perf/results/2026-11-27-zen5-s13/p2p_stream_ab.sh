#!/bin/bash
# A/B of the library alone: the same *_perf binaries with LD_LIBRARY_PATH at the old (A) or new (B) libchorus.so.0,
# alternated, 2 ranks unbound, 8-128 MiB. Usage: p2p_stream_ab.sh LIBDIR_A LIBDIR_B ROUNDS
# Columns: size, Chorus us out of place, Chorus us in place, MPI us out of place, ratio, MPI us in place, ratio.
A=$1 B=$2 ROUNDS=${3:-2}
for coll in alltoall sendrecv; do
  for r in $(seq "$ROUNDS"); do
    for L in "$A" "$B"; do
      echo "== $coll round $r lib $L"
      LD_LIBRARY_PATH=$L mpirun --allow-run-as-root --bind-to none -np 2 -x LD_LIBRARY_PATH \
        build/bin/${coll}_perf -b 8M -e 128M -f 4 -w 2 -n 10 -c 1 --compare mpi 2>&1 |
        grep -E '^ +[0-9]' | awk '{print $1, $6, $10, $14, $16, $17, $19}'
    done
  done
done
