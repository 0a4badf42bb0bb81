#!/usr/bin/env bash
# Draws training loss (thin lines) and validation loss (points) against step for several runs on one plot.
# Usage: perf/train/plot_loss.sh OUT.png LABEL=FILE.csv [LABEL=FILE.csv ...]
# Each CSV starts with the columns step,loss,val_loss (chorus-train --csv and perf/train/torch_gpt.py --csv).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OUT.png LABEL=FILE.csv [LABEL=FILE.csv ...]" >&2; exit 2; }
out=$1
shift
plots=()
i=1
for arg in "$@"; do
  label=${arg%%=*}
  file=${arg#*=}
  [ -r "$file" ] || { echo "$0: cannot read $file" >&2; exit 2; }
  plots+=("'$file' using 1:2 with lines lw 1 lc $i title '$label (train)'")
  plots+=("'$file' using 1:3 with points pt 7 ps 0.8 lw 2 lc $i title '$label (validation)'")
  i=$((i + 1))
done
joined=$(printf '%s, ' "${plots[@]}")
gnuplot <<GP
set terminal pngcairo size 1000,600 noenhanced
set output '$out'
set datafile separator ','
set key top right
set grid
set xlabel 'step'
set ylabel 'loss (nats per byte)'
set yrange [*:5.8]
plot ${joined%, }, log(256) with lines dt 2 lc rgb 'gray' title 'ln 256 (uniform)'
GP
echo "wrote $out"
