#!/usr/bin/env bash
# Alternated A/B of a small-message benchmark row, 2 ranks (NP sets another count): each round runs every variant
# once (the order reversed every other round, so that a drift of the machine's placement favours none; ORDER=given
# keeps the order given, as the script's first version did for ab_fr_parts_fixed_order.txt), each run 10 timings of
# 1,000 calls (-w 1000 -n 1000 -N 10), out of place and in place. A variant is NAME=LIBDIR[:VAR=VALUE], LIBDIR put
# first on LD_LIBRARY_PATH (a copy of a build's libchorus.so.0), VAR=VALUE set for that run. Each line printed:
# "variant round-trip-ns out-of-place-us in-place-us", the round trip measured by pingpong before the round
# (perf/results/2026-11-29-zen5-s26/pingpong.cc, built as /tmp/mode/pingpong).
#
#   ROUNDS=8 BIND=core COLL=sendrecv SIZE=8 Y=1 ab_small.sh main=/tmp/libMain new=/tmp/libNew > out.txt
#   ab_small.py out.txt
set -euo pipefail
cd "$(dirname "$0")/../../.."
rounds=${ROUNDS:-8}
for r in $(seq 1 "$rounds"); do
  rt=$(/tmp/mode/pingpong | tail -1 | awk '{print $3}')
  variants=("$@")
  if [ "${ORDER:-alternate}" != given ] && [ $((r % 2)) -eq 0 ]; then
    reversed=()
    for ((i = ${#variants[@]} - 1; i >= 0; i--)); do reversed+=("${variants[i]}"); done
    variants=("${reversed[@]}")
  fi
  for v in "${variants[@]}"; do
    name=${v%%=*}
    rest=${v#*=}
    dir=${rest%%:*}
    extra=()
    [[ "$rest" == *:* ]] && extra=("${rest#*:}")
    env LD_LIBRARY_PATH="$dir" "${extra[@]}" mpirun --allow-run-as-root -x LD_LIBRARY_PATH -x CHORUS_FR_SIZE \
      -np "${NP:-2}" --bind-to "${BIND:-core}" "build/bin/${COLL:-sendrecv}_perf" -b "${SIZE:-8}" -e "${SIZE:-8}" \
      -w 1000 -n 1000 -N 10 -c 0 -y "${Y:-1}" 2>&1 | grep -E '^ +[0-9]+ ' |
      awk -v n="$name" -v rt="$rt" '{print n, rt, $6, $10}'
  done
done
