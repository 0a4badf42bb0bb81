#!/usr/bin/env bash
# Small messages against Open MPI: every collective and send/recv at 8 B - 2 KiB, 2 and 4 ranks, mpirun's default
# binding, 1,000 calls per timing, Chorus and Open MPI alternated in one run (--compare mpi). LIBDIR (optional) goes
# first on LD_LIBRARY_PATH, to time another build's libchorus.so.0; Y=1 times blocking calls (default: host stream).
# Each line: size, Chorus / Open MPI time (us) and ratio out of place, then in place.
#
#   [LIBDIR=/tmp/libMain] [Y=1] small_sweep.sh > out.txt
set -euo pipefail
cd "$(dirname "$0")/../../.."
for np in 2 4; do
  for coll in all_reduce all_gather reduce_scatter broadcast alltoall sendrecv; do
    echo "== $coll np$np"
    env LD_LIBRARY_PATH="${LIBDIR:-}" mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -x LD_LIBRARY_PATH \
      -np "$np" "build/bin/${coll}_perf" -b 8 -e 2K -f 4 -w 100 -n 1000 -c 1 -y "${Y:-0}" --compare mpi 2>&1 |
      grep -E '^ +[0-9]+ ' |
      awk '{printf "%6d  oop %6.2f us mpi %6.2f r %5.2f | ip %6.2f mpi %6.2f r %5.2f\n", $1, $6, $14, $16, $10, $17, $19}'
  done
done
