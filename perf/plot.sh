#!/bin/sh
# Plots bus bandwidth against message size from *_perf result files (the text output, or -J JSON) with gnuplot:
# one line per library and rank count (and per program, type and operation when the files hold several);
# --compare mpi output gives a Chorus line and an MPI line.
#
#   perf/plot.sh [-o out.png] [-t title] [--in-place] FILE...
set -eu

out=busbw.png
title="Bus bandwidth"
half=out_of_place
usage() { echo "usage: $0 [-o out.png] [-t title] [--in-place] FILE..." >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    -o) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    -t) [ $# -ge 2 ] || usage; title=$2; shift 2 ;;
    --in-place) half=in_place; shift ;;
    -h|--help) usage ;;
    -*) echo "$0: $1: unknown flag" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage
command -v gnuplot >/dev/null || { echo "$0: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Each input becomes lines "key<TAB>size<TAB>busbw" in $tmp/points, key = "library|nranks|program|type|redop".
for f in "$@"; do
  [ -r "$f" ] || { echo "$0: $f: cannot read" >&2; exit 1; }
  if [ "$(tr -d ' \t\r\n' < "$f" | head -c 1)" = "{" ]; then
    python3 - "$f" "$half" >> "$tmp/points" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
half = sys.argv[2]
lib = d.get("library", "chorus")
n = len(d.get("config", {}).get("devices", []))
for r in d.get("results", []):
    key = "|".join([lib, str(n), r.get("experiment_name", "?"), r["type"], r["redop"]])
    if r.get(half):
        print("%s\t%d\t%s" % (key, r["size"], r[half]["bus_bw"]))
    if r.get("mpi_" + half):
        key = "|".join(["mpi", str(n), r.get("experiment_name", "?"), r["type"], r["redop"]])
        print("%s\t%d\t%s" % (key, r["size"], r["mpi_" + half]["bus_bw"]))
PY
  else
    # Text: strip launcher prefixes ("[0] ", "[1,0]<stdout>:"), then read the header and the 13 columns.
    sed -e 's/^\[[0-9]*\] //' -e 's/^\[[0-9]*,[0-9]*\]<stdout>://' "$f" | awk -v half="$half" '
      /^# Collective test starting:/ { prog = $5 }
      /^# Backend: mpi/ { lib = "mpi" }
      /^#  *Rank  *[0-9]+ Group/ { n++ }
      /^#/ { next }
      NF >= 13 {
        l = (lib == "" ? "chorus" : lib)
        col = (half == "in_place") ? 12 : 8
        printf "%s|%d|%s|%s|%s\t%s\t%s\n", l, n, prog, $3, $4, $1, $col
        if (NF >= 19) {
          mcol = (half == "in_place") ? 18 : 15
          printf "mpi|%d|%s|%s|%s\t%s\t%s\n", n, prog, $3, $4, $1, $mcol
        }
      }' >> "$tmp/points"
  fi
done
[ -s "$tmp/points" ] || { echo "$0: no result rows in $*" >&2; exit 1; }

# Label only what varies between series: the program, type and operation are left out when all share them.
plotcmd=$(awk -F'\t' -v dir="$tmp" '
  { split($1, k, "|"); if (!($1 in seen)) { seen[$1] = ++ns; keys[ns] = $1 }
    progs[k[3]]; types[k[4] "/" k[5]]
    file = dir "/s" seen[$1] ".dat"; print $2, $3 >> file; close(file) }
  END {
    np = 0; for (p in progs) np++; nt = 0; for (t in types) nt++
    for (i = 1; i <= ns; i++) {
      split(keys[i], k, "|")
      label = k[1] ", " k[2] " ranks"
      if (np > 1) label = label " " k[3]
      if (nt > 1) label = label " " k[4] (k[5] == "none" ? "" : " " k[5])
      printf "%s\"%s/s%d.dat\" using 1:2 with linespoints title \"%s\"", (i > 1 ? ", " : ""), dir, i, label
    }
  }' "$tmp/points")

gnuplot <<GP
set terminal pngcairo size 1000,640 enhanced font "sans,11"
set output "$out"
set title "$title ($(echo "$half" | tr "_" "-"))" noenhanced
set logscale x 2
set format x "%.0b%B"
set xlabel "message size (bytes)"
set ylabel "bus bandwidth (GB/s)"
set grid
set key top left noenhanced
set yrange [0:*]
plot $plotcmd
GP
echo "$0: wrote $out"
