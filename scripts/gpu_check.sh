#!/usr/bin/env bash
# The GPU check of the CUDA executor, run as .gpukit/run.sh on the GPU machine (scripts/gpu_kit.sh makes the kit):
# the bad-input and abort tests, a smoke case, then the direct and ring all-reduce sweeps in parallel shards, with
# a 15 s deadline per operation so that a hang fails with its wait named. Logs: $OUT/gpulogs.tar.gz.
K=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$K/lib
export CHORUS_TIMEOUT_MS=15000  # a hung operation fails with a message naming its wait instead of eating the shard
L=/tmp/gpulogs; mkdir -p $L
T=$K/cuda_gpu_test
chmod +x $T
echo "== host"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; date -u +%T
echo "== bad input + abort (timeout 90)"
timeout 90 $T --gtest_filter='DeviceBadInput*:DeviceAbort*' > $L/basic.log 2>&1; echo "rc=$?"; grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) ' $L/basic.log | head -20; tail -5 $L/basic.log
echo "== smoke n2 float32 sum (timeout 60)"; date -u +%T
timeout 60 $T --gtest_filter='Sweep/DeviceAllReduce.MatchesReference/n2_float32_sum*' > $L/smoke.log 2>&1; echo "rc=$?"; grep -E '^\[ *(OK|FAILED|PASSED) ' $L/smoke.log | head -20; grep -m5 -iE 'error|failure|expected|rank ' $L/smoke.log
echo "== direct small (8 shards, timeout 55)"; date -u +%T
for s in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$s timeout 55 $T --gtest_filter='Small/*' > $L/direct$s.log 2>&1 & done; wait
for s in 0 1 2 3 4 5 6 7; do echo "shard $s: $(grep -c '^\[       OK' $L/direct$s.log) ok, $(grep -c '^\[  FAILED  \].*ms)' $L/direct$s.log) failed, $(grep -c "^\[  SKIPPED \].*ms)" $L/direct$s.log) skipped, last: $(grep -E '^\[ RUN' $L/direct$s.log | tail -1)"; done
grep -h '^\[  FAILED  \].*ms)' $L/direct*.log | head -15
echo "== sweep (12 shards, timeout 95)"; date -u +%T
for s in 0 1 2 3 4 5 6 7 8 9 10 11; do GTEST_TOTAL_SHARDS=12 GTEST_SHARD_INDEX=$s timeout 95 $T --gtest_filter='Sweep/*' > $L/sweep$s.log 2>&1 & done; wait
for s in 0 1 2 3 4 5 6 7 8 9 10 11; do echo "shard $s: $(grep -c '^\[       OK' $L/sweep$s.log) ok, $(grep -c '^\[  FAILED  \].*ms)' $L/sweep$s.log) failed, last: $(grep -E '^\[ RUN' $L/sweep$s.log | tail -1)"; done
grep -h '^\[  FAILED  \].*ms)' $L/sweep*.log | head -25
grep -h -m3 -E 'rank [0-9]+:|Failure|error|rror|imeout|deadline' $L/sweep*.log $L/direct*.log | sort | uniq -c | sort -rn | head -20
date -u +%T
tar czf $OUT/gpulogs.tar.gz -C /tmp gpulogs
