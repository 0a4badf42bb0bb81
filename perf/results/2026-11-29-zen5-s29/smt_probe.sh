#!/usr/bin/env bash
# Whether the two vCPUs share a core, and what that does to a small broadcast. Each round: a 1-rank 8-byte blocking
# broadcast pinned to CPU 0 with CPU 1 idle, the same with busy.cc (a high-IPC loop) on CPU 1, then the 2-rank
# broadcast of Chorus and of Open MPI under mpirun's default binding. Each figure is the median of five timings of
# 1,000 calls (broadcast_perf -w 1000 -n 1000 -N 5).
#
#   g++ -O2 busy.cc -o /tmp/mm/busy && ROUNDS=10 smt_probe.sh > smt_probe.txt
set -euo pipefail
cd "$(dirname "$0")/../../.."
bench=(build/bin/broadcast_perf -b 8 -e 8 -w 1000 -n 1000 -N 5 -c 0 -y 1)
median() { grep -E '^ +8 ' | awk '{print $6}' | sort -n | sed -n 3p; }
mpirun=(mpirun --allow-run-as-root --mca btl "self,vader" -np 2)
echo "# 1 rank on CPU 0 (us): CPU 1 idle, CPU 1 busy | 2 ranks bound: Chorus, Open MPI"
for _ in $(seq 1 "${ROUNDS:-10}"); do
  alone=$(taskset -c 0 "${bench[@]}" 2>&1 | median)
  taskset -c 1 /tmp/mm/busy 3000000000 >/dev/null &
  busy=$!
  sleep 0.2
  shared=$(taskset -c 0 "${bench[@]}" 2>&1 | median)
  kill "$busy"
  wait "$busy" 2>/dev/null || true
  chorus=$("${mpirun[@]}" "${bench[@]}" 2>&1 | median)
  mpi=$("${mpirun[@]}" "${bench[@]}" --backend mpi 2>&1 | median)
  echo "$alone $shared | $chorus $mpi"
done
