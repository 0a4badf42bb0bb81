#!/usr/bin/env bash
# Bound (mpirun's default: one core per rank) against unbound (--bind-to none) runs of the same large
# collectives, repeated, with the spread: issue 14's bimodal bound runs showed only across runs, never within
# one. Each run times Chorus and Open MPI in alternation in the same processes (--compare mpi).
#
#   perf/bind_spread.sh [BUILD_DIR] [RUNS] [SIZE]     (defaults: build 8 64M)
#
# LIMIT (seconds, default 300) bounds each run; a run that fails or passes it is reported and left out of the
# spread (on a machine shared with other jobs a bound rank can starve behind them).
# Prints, per collective and binding, every run's out-of-place Chorus time, Open MPI time and ratio (Chorus
# busbw / MPI busbw), then the minimum, median and maximum of each. Raw outputs: perf/results/bind/.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-8}
size=${3:-64M}
out=perf/results/bind
mkdir -p "$out"

summary() {  # summary LABEL FILE: FILE holds "chorus_us mpi_us ratio" per line
  sort -n -k1 "$2" | awk -v label="$1" '{c[NR]=$1} END {printf "  %-8s chorus us min %9.1f median %9.1f max %9.1f", label, c[1], c[int((NR+1)/2)], c[NR]}'
  sort -n -k2 "$2" | awk '{m[NR]=$2} END {printf " | mpi us median %9.1f", m[int((NR+1)/2)]}'
  sort -g -k3 "$2" | awk '{r[NR]=$3} END {printf " | ratio min %5.2f median %5.2f max %5.2f\n", r[1], r[int((NR+1)/2)], r[NR]}'
}

for coll in all_reduce broadcast; do
  for bind in core none; do
    tag="${coll}_${size}_bind-${bind}"
    : >"$out/$tag.runs"
    for i in $(seq 1 "$runs"); do
      if ! timeout "${LIMIT:-300}" mpirun --allow-run-as-root --oversubscribe --mca btl self,vader --bind-to "$bind" -np 2 \
        "$build/bin/${coll}_perf" -b "$size" -e "$size" -w 2 -n 10 -c 1 --compare mpi >"$out/$tag.$i.txt" 2>&1; then
        echo "  $tag run $i failed or passed ${LIMIT:-300} s: $out/$tag.$i.txt"
        continue
      fi
      # Out of place: Chorus time is column 6, wrong elements column 9, MPI time column 14, the ratio 16.
      awk '/^ *[0-9]/ {if ($9 != 0) {print "wrong elements: " $9 > "/dev/stderr"; exit 1} print $6, $14, $16}' \
        "$out/$tag.$i.txt" >>"$out/$tag.runs"
    done
    [ -s "$out/$tag.runs" ] || continue
    echo "$coll $size --bind-to $bind, $(wc -l <"$out/$tag.runs") of $runs runs (chorus_us mpi_us ratio):"
    tr '\n' ';' <"$out/$tag.runs" | sed 's/;/  /g; s/^/   /'
    echo
    summary "$bind" "$out/$tag.runs"
  done
done
