#!/usr/bin/env bash
# Alternates variants of one Chorus benchmark in rounds, each run timing Chorus and Open MPI (--compare mpi):
# per size, Chorus's time out of place / in place, Open MPI's two, and the wrong elements. A variant is either a
# library folder (holding libchorus.so.0, first on LD_LIBRARY_PATH) or "env:VAR=VALUE[,VAR=VALUE]" (passed with -x).
# EXTRA: more mpirun arguments for every run (-x CHORUS_ALGO=tree); B, E, F: sizes; W, N: warm-up and timed
# iterations; Y: 1 blocking (default), 0 host stream.
#
#   [EXTRA=...] [B=8] [E=32768] alg_sweep.sh NP COLL ROUNDS VARIANT...
set -euo pipefail
np=$1
coll=$2
rounds=$3
shift 3
bin=$(cd "$(dirname "$0")/../../.." && pwd)/build/bin
read -r -a extra <<<"${EXTRA:-}"
for _ in $(seq "$rounds"); do
  for v in "$@"; do
    echo "[$v]"
    lib=""
    vars=()
    if [[ $v == env:* ]]; then
      IFS=, read -r -a pairs <<<"${v#env:}"
      for p in "${pairs[@]}"; do vars+=(-x "$p"); done
    else
      lib=$v
    fi
    LD_LIBRARY_PATH=$lib mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -x LD_LIBRARY_PATH \
      -np "$np" "${vars[@]}" "${extra[@]}" "$bin/${coll}_perf" -b "${B:-8}" -e "${E:-32768}" -f "${F:-4}" \
      -w "${W:-100}" -n "${N:-1000}" -c 1 -y "${Y:-1}" --compare mpi 2>&1 | grep -E '^ +[0-9]+ ' |
      awk '{printf "  %9d  chorus %8.2f / %8.2f us  mpi %8.2f / %8.2f  wrong %s/%s\n", $1, $6, $10, $14, $17, $9, $13}'
  done
done
