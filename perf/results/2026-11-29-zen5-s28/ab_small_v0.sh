#!/usr/bin/env bash
# The first version of ab_small.sh (the variants always in the order given, 2 ranks), kept for
# ab_fr_parts_fixed_order.txt. Same variants and output as ab_small.sh.
#
#   ROUNDS=5 ab_small_v0.sh main=/tmp/libMain storesOnly=/tmp/libFra clockOnly=/tmp/libFrb fr=/tmp/libFr \
#     fr0=/tmp/libMain:CHORUS_FR_SIZE=0
set -euo pipefail
cd "$(dirname "$0")/../../.."
for _ in $(seq 1 "${ROUNDS:-6}"); do
  rt=$(/tmp/mode/pingpong | tail -1 | awk '{print $3}')
  for v in "$@"; do
    name=${v%%=*}
    rest=${v#*=}
    dir=${rest%%:*}
    extra=()
    [[ "$rest" == *:* ]] && extra=("${rest#*:}")
    env LD_LIBRARY_PATH="$dir" "${extra[@]}" mpirun --allow-run-as-root -x LD_LIBRARY_PATH -x CHORUS_FR_SIZE -np 2 \
      --bind-to "${BIND:-core}" "build/bin/${COLL:-sendrecv}_perf" -b "${SIZE:-8}" -e "${SIZE:-8}" -w 1000 -n 1000 \
      -N 10 -c 0 -y "${Y:-1}" 2>&1 | grep -E '^ +[0-9]+ ' | awk -v n="$name" -v rt="$rt" '{print n, rt, $6, $10}'
  done
done
