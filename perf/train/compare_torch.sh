#!/usr/bin/env bash
# chorus-train on one rank (one BLAS thread) against Debian's PyTorch on one thread, same model and settings
# (4 layers, d_model 128, 4 heads, seq 128, batch 16, AdamW lr 3e-3, clip 1.0), side by side:
#  1. speed: ROUNDS alternating runs of SPEED_STEPS steps each, tokens/s of every run and their medians;
#  2. learning: one run of STEPS steps each on the Jargon File, CSV logs and one PNG of both loss curves.
# Usage: perf/train/compare_torch.sh [BUILD_DIR]   (environment: STEPS=600 SPEED_STEPS=60 ROUNDS=3 OUT=...)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
steps=${STEPS:-600}
speed_steps=${SPEED_STEPS:-60}
rounds=${ROUNDS:-3}
out=${OUT:-perf/results/train}
mkdir -p "$out"
model=(--layers 4 --heads 4 --d-model 128 --seq-len 128 --batch 16 --lr 3e-3 --clip 1.0)
py=/usr/bin/python3

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

echo "# speed: $rounds rounds of $speed_steps steps, alternating (tokens/s)"
: >"$out/speed_chorus.txt"
: >"$out/speed_torch.txt"
for r in $(seq "$rounds"); do
  c=$("$build/bin/chorus-train" "${model[@]}" --steps "$speed_steps" --eval-every 0 -q | sed -n 's/^done: .* steps, \([0-9.]*\) tokens\/s.*/\1/p')
  t=$(OMP_NUM_THREADS=1 $py perf/train/torch_gpt.py "${model[@]}" --steps "$speed_steps" --eval-every 1000000 |
        sed -n 's/^mean \([0-9.]*\) tokens\/s.*/\1/p')
  echo "round $r: chorus-train $c, pytorch $t"
  echo "$c" >>"$out/speed_chorus.txt"
  echo "$t" >>"$out/speed_torch.txt"
done
mc=$(median <"$out/speed_chorus.txt")
mt=$(median <"$out/speed_torch.txt")
echo "median tokens/s: chorus-train $mc, pytorch $mt, ratio $(awk -v a="$mc" -v b="$mt" 'BEGIN {printf "%.2f", a / b}')"

echo "# learning: $steps steps each on the Jargon File"
"$build/bin/chorus-train" "${model[@]}" --steps "$steps" --log-every 100 --csv "$out/chorus_loss.csv" | grep -E '^(step|done)'
OMP_NUM_THREADS=1 $py perf/train/torch_gpt.py "${model[@]}" --steps "$steps" --csv "$out/torch_loss.csv" | grep -E 'val|mean'
bash perf/train/plot_loss.sh "$out/loss_vs_torch.png" chorus-train="$out/chorus_loss.csv" pytorch="$out/torch_loss.csv"
