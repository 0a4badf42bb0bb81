#!/usr/bin/env bash
# A/B of libchorus builds with one set of benchmark programs: each round runs every collective once with each base
# library (a folder holding libchorus.so.0, put first on LD_LIBRARY_PATH, ahead of the programs' RUNPATH) and once
# with the build's own, Open MPI in the same runs (--compare mpi). The bases are variants A, B, ... in the order
# given and the build is the next letter. Rows "size chorus_oop chorus_ip mpi_oop mpi_ip" (us) under "== round R
# variant=V COLL" headers, for perf/ab_summary.py.
#
#   cp build/lib/libchorus.so.0.* /tmp/base/libchorus.so.0   # before the change
#   perf/ab_lib.sh OUT /tmp/base "all_reduce all_gather" "-b 8 -e 2048 -f 4 -w 2 -n 10 -c 1" [NP]
#   perf/ab_lib.sh OUT "/tmp/libA /tmp/libC" ...             # A: /tmp/libA, B: /tmp/libC, C: the build
#
# ROUNDS (default 4) sets the rounds; BIND=default keeps mpirun's default binding instead of --bind-to none.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1 bases=$2 colls=$3 args=$4 np=${5:-2}
# shellcheck disable=SC2054  # "self,vader" is one value of --mca btl
mpirun=(mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np "$np")
[ "${BIND:-none}" = default ] || mpirun+=(--bind-to none)
letters=(A B C D E F G H)
read -r -a libs <<<"$bases"
libs+=("")  # the build's own library: no LD_LIBRARY_PATH
((${#libs[@]} <= ${#letters[@]})) || { echo "ab_lib.sh: at most $((${#letters[@]} - 1)) base folders" >&2; exit 2; }
: >"$out"
for round in $(seq "${ROUNDS:-4}"); do
  for coll in $colls; do
    for i in "${!libs[@]}"; do
      env=()
      [ -n "${libs[$i]}" ] && env=(-x "LD_LIBRARY_PATH=${libs[$i]}")
      echo "== round $round variant=${letters[$i]} $coll" >>"$out"
      # shellcheck disable=SC2086  # args is a list of flags
      "${mpirun[@]}" "${env[@]}" build/bin/"${coll}_perf" $args --compare mpi 2>&1 | grep -E '^ +[0-9]' |
        awk '{print $1, $6, $10, $14, $17}' >>"$out"
    done
  done
done
