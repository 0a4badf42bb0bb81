#!/usr/bin/env bash
# Data-parallel scaling and the two communication backends on this machine, for docs/training.md:
#  - weak scaling: 1 rank against 2 ranks at the same per-rank batch (DDP), tokens/s and exposed communication;
#  - ZeRO-3 against DDP at 2 ranks (step time);
#  - the same DDP and ZeRO-3 steps over Open MPI (mpirun, --backend mpi) beside Chorus (chorusrun).
# Each configuration runs ROUNDS times; the table gives the median of each run's mean over its steps.
# Usage: perf/train/scaling.sh [BUILD_DIR]   (environment: STEPS=40 ROUNDS=3 MODEL="...")
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
steps=${STEPS:-40}
rounds=${ROUNDS:-3}
read -r -a model <<<"${MODEL:---layers 4 --heads 4 --d-model 128 --seq-len 128 --batch 16}"
exe="$build/bin/chorus-train"
common=("${model[@]}" --steps "$steps" --eval-every 0 -q --corpus jargon)
mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none)

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
# Prints "tokens/s step_ms exposed_ms" of one run from chorus-train's summary line.
summary() { sed -n 's/^\(\[0\] \)\{0,1\}done: .* steps, \([0-9.]*\) tokens\/s, \([0-9.]*\) ms per step, exposed communication \([0-9.]*\) ms.*/\2 \3 \4/p'; }

run_config() {  # name, command...
  local name=$1
  shift
  local tok=() ms=() comm=()
  for _ in $(seq "$rounds"); do
    read -r t m c < <("$@" | summary)
    tok+=("$t")
    ms+=("$m")
    comm+=("$c")
  done
  printf '| %-34s | %9s | %8s | %8s |\n' "$name" "$(printf '%s\n' "${tok[@]}" | median)" \
    "$(printf '%s\n' "${ms[@]}" | median)" "$(printf '%s\n' "${comm[@]}" | median)"
}

echo "| configuration                      |  tokens/s |  step ms | exposed comm ms |"
echo "| --- | ---: | ---: | ---: |"
run_config "1 rank" "$exe" "${common[@]}"
run_config "2 ranks DDP, chorus" "$build/bin/chorusrun" -np 2 "$exe" "${common[@]}" --zero 0
run_config "2 ranks ZeRO-3, chorus" "$build/bin/chorusrun" -np 2 "$exe" "${common[@]}" --zero 3
run_config "2 ranks DDP, Open MPI" "${mpirun[@]}" -np 2 "$exe" "${common[@]}" --zero 0 --backend mpi
run_config "2 ranks ZeRO-3, Open MPI" "${mpirun[@]}" -np 2 "$exe" "${common[@]}" --zero 3 --backend mpi
