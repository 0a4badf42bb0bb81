#!/usr/bin/env bash
# A/B of the flight recorder's sequence number (A: main at the flight-recorder change, B: CallCommScope looks its thread slot up once), alternated.
set -uo pipefail
bin=/work/main/build/bin
for r in 1 2 3; do
  for v in A B; do
    for spec in "1 sendrecv -y 1" "1 all_reduce -y 1" ; do
      set -- $spec
      printf "%s round %s np%s %-10s %s: " $v $r $1 $2 "$3 $4"
      LD_LIBRARY_PATH=/tmp/lib$v mpirun --allow-run-as-root --oversubscribe --mca btl self,vader --bind-to none \
        -x LD_LIBRARY_PATH -np $1 $bin/${2}_perf -b 8 -e 8 -w 1000 -n 100000 -c 0 $3 $4 | grep -E '^ +8 ' | awk '{printf "%s / %s us\n", $6, $10}'
    done
  done
done
