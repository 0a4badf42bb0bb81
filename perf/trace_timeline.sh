#!/usr/bin/env bash
# Draws one timeline PNG from a merged Chorus trace (scripts/chorus_trace.py merge): a row per rank, a box per
# operation (its width the operation's time), the transport waits inside it as thin dark bars.
#
#   perf/trace_timeline.sh MERGED.json OUT.png
#
# Needs gnuplot (Debian: gnuplot-nox, installed by scripts/install_deps.sh).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 MERGED.json OUT.png" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
data=$(mktemp)
trap 'rm -f "$data" "$data.op" "$data.wait"' EXIT
python3 "$here/scripts/chorus_trace.py" table "$1" > "$data"
awk '$4 == "op"' "$data" > "$data.op"
awk '$4 == "wait"' "$data" > "$data.wait"
[ -s "$data.op" ] || { echo "trace_timeline: no operation in $1" >&2; exit 1; }
nranks=$(awk '{ if ($1 > m) m = $1 } END { print m + 1 }' "$data.op")
gnuplot <<GP
set terminal pngcairo size 1400,$((120 + 60 * nranks)) noenhanced
set output "$2"
set title "Chorus trace: $(basename "$1")"
set xlabel "time (us from the first event)"
set ylabel "rank"
set yrange [-0.6:$nranks - 0.4]
set ytics 1
set style fill solid 0.6 border -1
set grid xtics
set key outside top center horizontal
# x y xlow xhigh ylow yhigh
plot "$data.op" using (\$2 + \$3 / 2):1:2:(\$2 + \$3):(\$1 - 0.35):(\$1 + 0.35) with boxxyerror lc rgb "#4a90d9" title "operation", \
     "$data.wait" using (\$2 + \$3 / 2):1:2:(\$2 + \$3):(\$1 - 0.08):(\$1 + 0.08) with boxxyerror lc rgb "#333333" title "transport wait"
GP
echo "trace_timeline: $2 ($(wc -l < "$data.op") operations, $nranks ranks)"
