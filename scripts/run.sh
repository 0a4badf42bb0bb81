#!/usr/bin/env bash
# The main job: installs what is missing, builds, then runs all_reduce_perf on 4 local ranks over shared
# memory from 8 B to 128 MiB, checking every element (-c 1).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh -DCHORUS_BUILD_TESTS=OFF
./build/bin/chorusrun -np 4 ./build/bin/all_reduce_perf -b 8 -e 128M -f 2 -c 1
