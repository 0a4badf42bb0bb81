#!/usr/bin/env bash
# Chorus against Open MPI, same machine, same run: each *_perf program under mpirun with --compare mpi, which
# times every size through both libraries in alternation (Chorus's columns first, MPI's and the ratio last),
# plus TCP between two simulated hosts (chorusrun --hosts 2 against mpirun --mca btl tcp,self).
# Results go to perf/results/<name>.txt and perf/results/*.png (gnuplot). Used for docs/performance.md.
#
#   perf/compare.sh [BUILD_DIR]
#
# BIND=default runs every mpirun with mpirun's default binding (one core per rank for up to 2 ranks, the package
# beyond; Slurm's --cpu-bind=cores binds like the first) instead of --bind-to none, and writes to
# perf/results/bound/ (OUT overrides the folder). TCP=0 leaves out the TCP runs.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/bin
bind=${BIND:-none}
if [ "$bind" = none ]; then out=${OUT:-perf/results}; else out=${OUT:-perf/results/bound}; fi
mkdir -p "$out"
mpirun=(mpirun --allow-run-as-root --oversubscribe --mca btl self,vader)
[ "$bind" = default ] || mpirun+=(--bind-to "$bind")
iters=(-w 2 -n 10 -c 1)

run() {  # run NAME COMMAND...
  local name=$1
  shift
  echo "== $name: $*"
  "$@" >"$out/$name.txt" 2>&1 || { echo "FAILED: $name"; tail -20 "$out/$name.txt"; return 1; }
  grep -E '^ *[0-9]' "$out/$name.txt" | awk '{printf "  %10s B  chorus %7s GB/s  mpi %7s GB/s  ratio %s\n", $1, $8, $15, $16}' || true
}

for np in 2 4 8; do
  run "all_reduce_np$np" "${mpirun[@]}" -np $np "$bin/all_reduce_perf" -b 8 -e 256M -f 4 "${iters[@]}" --compare mpi
done
for coll in all_gather reduce_scatter broadcast alltoall sendrecv; do
  for np in 2 4 8; do
    run "${coll}_np$np" "${mpirun[@]}" -np $np "$bin/${coll}_perf" -b 8 -e 256M -f 16 "${iters[@]}" --compare mpi
  done
done
# Small messages on the NULL stream (blocking calls), many iterations: the latency goals.
for np in 2 4 8; do
  run "all_reduce_small_np$np" "${mpirun[@]}" -np $np "$bin/all_reduce_perf" -b 8 -e 32K -f 8 -w 100 -n 1000 -c 1 -y 1 \
    --compare mpi
done
# The bandwidth goals' range at 2 ranks, every power of two.
run all_reduce_large_np2 "${mpirun[@]}" -np 2 "$bin/all_reduce_perf" -b 16M -e 256M -f 2 "${iters[@]}" --compare mpi
for coll in all_gather reduce_scatter; do
  run "${coll}_large_np2" "${mpirun[@]}" -np 2 "$bin/${coll}_perf" -b 16M -e 128M -f 2 "${iters[@]}" --compare mpi
done
# TCP between two simulated hosts: Chorus (socket transport) and Open MPI (btl tcp) in separate runs.
if [ "${TCP:-1}" = 1 ]; then
run all_reduce_tcp_chorus "$bin/chorusrun" -np 2 --hosts 2 "$bin/all_reduce_perf" -b 8 -e 128M -f 16 "${iters[@]}"
run all_reduce_tcp_mpi mpirun --allow-run-as-root --oversubscribe --mca btl tcp,self -np 2 "$bin/all_reduce_perf" \
  -b 8 -e 128M -f 16 "${iters[@]}" --backend mpi
fi
for coll in all_reduce all_gather reduce_scatter broadcast alltoall sendrecv; do
  perf/plot.sh -o "$out/${coll}.png" -t "$coll busbw, Chorus vs Open MPI (2, 4, 8 ranks, 2 cores)" "$out/${coll}"_np?.txt
done
if [ "${TCP:-1}" = 1 ]; then
  perf/plot.sh -o "$out/all_reduce_tcp.png" -t "all_reduce over TCP, 2 simulated hosts" "$out"/all_reduce_tcp_*.txt
fi
