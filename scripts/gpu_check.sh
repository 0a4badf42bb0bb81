#!/usr/bin/env bash
# The GPU check of the CUDA executor, run as .gpukit/run.sh on the GPU machine (scripts/gpu_kit.sh makes the kit):
# bad input and abort; the all-reduce sweeps (ring and direct); every other collective and send/recv
# (cuda_coll_gpu_test) in parallel shards, with compute-sanitizer's three tools on cases of the point-to-point and
# collective kernels and ranks as processes (CUDA IPC, cuda_procs_gpu_test) beside them; then the device
# benchmark; first, the trainer on the GPU (its layer test, the run that several gradient buckets per step once hung,
# ranks as processes, and train_proofs.py's GPU proofs in parallel). Every operation has a 15 s deadline, so that a
# hang fails with its wait named. Logs: $OUT/gpulogs.tar.gz; summary on standard output.
K=$(cd "$(dirname "$0")" && pwd)
W=/tmp/gpukit
rm -rf $W && mkdir -p $W && tar xzf "$K/kit.tar.gz" -C $W
B=$W/kit
# cuBLAS (the trainer's) from the machine's CUDA toolkit: the kit leaves it out.
export LD_LIBRARY_PATH=$B/lib:$(ls -d /usr/local/cuda/lib64 /usr/local/cuda*/targets/x86_64-linux/lib 2>/dev/null | paste -sd:)
export CHORUS_TIMEOUT_MS=15000
L=/tmp/gpulogs; rm -rf $L; mkdir -p $L
count() { echo "$(cat "$@" | grep -c '^\[       OK') ok, $(cat "$@" | grep -c '^\[  FAILED  \].*ms)') failed, $(cat "$@" | grep -c '^\[  SKIPPED \].*ms)') skipped"; }
shards() {  # name n timeout binary filter
  local name=$1 n=$2 t=$3 bin=$4 filter=$5 s pids=()
  for ((s = 0; s < n; s++)); do
    GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$s timeout $t $B/$bin --gtest_filter="$filter" > $L/$name$s.log 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  echo "$name: $(count $L/$name*.log)"
  for ((s = 0; s < n; s++)); do grep -q '^\[  PASSED  \]' $L/$name$s.log || echo "  shard $s unfinished or failed, last: $(grep -E '^\[ RUN' $L/$name$s.log | tail -1)"; done
  grep -h '^\[  FAILED  \].*ms)' $L/$name*.log | head -20
  grep -h -E 'Failure|rror|imeout|deadline|wrong|past' $L/$name*.log | sort | uniq -c | sort -rn | head -12
}
echo "== host"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u +%T
echo "== trainer"; date -u +%T
timeout 120 $B/train_cuda_device_test > $L/train_device.log 2>&1; echo "layers, engine, model: rc=$? $(count $L/train_device.log)"
TRAIN_ARGS=(--corpus synthetic --eval-every 0 --layers 4 --heads 4 --d-model 256 --seq-len 128 --batch 16)
# Two ranks as threads with several gradient buckets per step: hung in its first step on 2026-11-27 (suspected: CUDA's
# lazy kernel loading, which chorus-train now turns off for -t N; docs/training.md). The control: lazy loading forced.
timeout 90 $B/chorus-train -t 2 --device cuda "${TRAIN_ARGS[@]}" --steps 20 > $L/train_threads.log 2>&1
echo "2 ranks as threads, 4 MiB buckets: rc=$?; $(grep -E '^done|failed' $L/train_threads.log)"
timeout 40 env CUDA_MODULE_LOADING=LAZY $B/chorus-train -t 2 --device cuda "${TRAIN_ARGS[@]}" --steps 3 \
  > $L/train_threads_lazy.log 2>&1
echo "the same with CUDA_MODULE_LOADING=LAZY: rc=$?; $(grep -E '^done|failed' $L/train_threads_lazy.log)"
timeout 90 $B/chorusrun -np 2 $B/chorus-train --device cuda "${TRAIN_ARGS[@]}" --zero 3 --steps 20 > $L/train_procs.log 2>&1
echo "2 ranks as processes, ZeRO-3: rc=$?; $(grep -E '^done|failed' $L/train_procs.log)"
# The proofs that passed took 3-17 s on an H200; 90 s bounds one that hangs (the 3-D proof did, 2026-11-27).
pids=()
for t in $(python3 $B/train_proofs.py --list --kind gpu); do
  timeout 90 python3 $B/train_proofs.py --bin $B --mpi OFF $t > $L/proof_$t.log 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait $p; done
for f in $L/proof_*.log; do echo "$(basename $f .log): $(tail -1 $f)"; done
echo "== bad input + abort"
timeout 60 $B/cuda_gpu_test --gtest_filter='DeviceBadInput*:DeviceAbort*' > $L/basic.log 2>&1; echo "rc=$? $(count $L/basic.log)"
echo "== all-reduce: ring sweep and direct"; date -u +%T
shards allreduce 16 60 cuda_gpu_test 'Sweep/*:Small/*'
echo "== other collectives and send/recv, sanitizers beside them"; date -u +%T
( for tool in memcheck racecheck synccheck; do
    timeout 170 compute-sanitizer --tool $tool --error-exitcode 9 $B/cuda_coll_gpu_test \
      --gtest_filter='Ranks/DeviceSendRecv.*/n2:Sweep/DeviceCollective.*/AlltoAll_n2_float32:Sweep/DeviceCollective.*/ReduceScatter_n3_bfloat16' \
      > $L/san_$tool.log 2>&1; echo "sanitizer $tool: rc=$? $(count $L/san_$tool.log); $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/san_$tool.log)"
  done > $L/sanitizers.txt ) &
san=$!
( shards procs 2 170 cuda_procs_gpu_test '*' > $L/procs.txt ) &
procs=$!
shards coll 14 180 cuda_coll_gpu_test '*'
wait $san; cat $L/sanitizers.txt
wait $procs; echo "ranks as processes:"; cat $L/procs.txt
echo "== device benchmark"; date -u +%T
for spec in "allreduce 1" "allreduce 2" "allreduce 4" "allgather 2" "reducescatter 2" "broadcast 2" "alltoall 2" "alltoall 4" "sendrecv 2"; do
  set -- $spec
  timeout 25 $B/device_coll_bench -c $1 -n $2 -b 1048576 -e 268435456 -f 4 -w 5 -i 20 2>&1 | tee $L/bench_$1_$2.log
done
echo "== all-reduce, 2 ranks, with the host's FIFO size (1 MiB)"
timeout 25 env CHORUS_BUFFSIZE=1048576 $B/device_coll_bench -c allreduce -n 2 -b 1048576 -e 268435456 -f 4 -w 5 -i 20 2>&1 | tee $L/bench_buff1m.log
echo "== bfloat16 all-reduce, 2 ranks"
timeout 25 $B/device_coll_bench -c allreduce -n 2 -t bfloat16 -b 1048576 -e 268435456 -f 16 -w 5 -i 20 2>&1 | tee $L/bench_bf16.log
date -u +%T
tar czf $OUT/gpulogs.tar.gz -C /tmp gpulogs
