#!/usr/bin/env bash
# A/B of the library alone (same *_perf binaries, LD_LIBRARY_PATH to the old or the new libchorus.so.0),
# alternated: A = main before 7891de6 (waits without a spin budget spun 64 pauses before their first yield),
# B = 7891de6. Small messages at 4 and 8 ranks on 2 cores (oversubscribed: no spin budget), then 2 ranks (a spin
# budget of 20 us: the change does not apply, a control).
#   waiter_ab.sh DIR_A DIR_B [ROUNDS]
set -uo pipefail
a=$1 b=$2 rounds=${3:-2}
bin=$(dirname "$0")/../../../build/bin
for spec in "8 broadcast" "4 sendrecv" "8 all_reduce" "4 all_gather" "4 alltoall" "2 broadcast"; do
  set -- $spec
  for r in $(seq "$rounds"); do
    for v in A B; do
      lib=$a; [ $v = B ] && lib=$b
      echo "== $2 np$1 round $r $v"
      LD_LIBRARY_PATH=$lib mpirun --allow-run-as-root --oversubscribe --mca btl self,vader --bind-to none \
        -x LD_LIBRARY_PATH -np "$1" "$bin/${2}_perf" -b 8 -e 2K -f 16 -w 100 -n 1000 -c 1 --compare mpi |
        grep -E '^ +[0-9]'
    done
  done
done
