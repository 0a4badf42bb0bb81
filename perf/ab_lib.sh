#!/usr/bin/env bash
# A/B of two libchorus builds with one set of benchmark programs: each round runs every collective once with the
# library copied to BASE_LIB (variant A, put first on LD_LIBRARY_PATH, ahead of the programs' RUNPATH) and once with
# the build's own (variant B), Open MPI in the same runs (--compare mpi). Rows "size chorus_oop chorus_ip mpi_oop
# mpi_ip" (us) under "== round R variant=V COLL" headers, for perf/ab_summary.py.
#
#   cp build/lib/libchorus.so.0.* /tmp/base/libchorus.so.0   # before the change
#   perf/ab_lib.sh OUT /tmp/base "all_reduce all_gather" "-b 8 -e 2048 -f 4 -w 2 -n 10 -c 1" [NP]
#
# ROUNDS (default 4) sets the rounds; BIND=default keeps mpirun's default binding instead of --bind-to none.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1 base=$2 colls=$3 args=$4 np=${5:-2}
mpirun=(mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np "$np")
[ "${BIND:-none}" = default ] || mpirun+=(--bind-to none)
: >"$out"
for round in $(seq "${ROUNDS:-4}"); do
  for coll in $colls; do
    for variant in A B; do
      env=()
      [ "$variant" = A ] && env=(-x "LD_LIBRARY_PATH=$base")
      echo "== round $round variant=$variant $coll" >>"$out"
      # shellcheck disable=SC2086  # args is a list of flags
      "${mpirun[@]}" "${env[@]}" build/bin/"${coll}_perf" $args --compare mpi 2>&1 | grep -E '^ +[0-9]' |
        awk '{print $1, $6, $10, $14, $17}' >>"$out"
    done
  done
done
