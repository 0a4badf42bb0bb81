#!/usr/bin/env bash
# Enforces the style: the layering of src/ (scripts/check_layers.py), every C++ file formatted by .clang-format,
# and the short .clang-tidy list clean on the library's sources (compile_commands.json from the build in $1,
# default build/).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
python3 scripts/check_layers.py
files=$(git ls-files '*.h' '*.cc' '*.cu' '*.cuh' | grep -v '^tests/fuzz/corpus/')
echo "lint: clang-format on $(echo "$files" | wc -l) files"
echo "$files" | xargs clang-format --dry-run --Werror
srcs=$(git ls-files 'src/*.cc' | grep -v '/device/')
echo "lint: clang-tidy on $(echo "$srcs" | wc -l) library sources"
log=$(mktemp)
# clang-tidy parses with clang, which may not know every GCC flag of the build (-mtls-dialect=gnu2 before clang 19):
# it reads a copy of the compile commands without them.
db=$(mktemp -d)
sed 's/ -mtls-dialect=gnu2//g' "$build/compile_commands.json" >"$db/compile_commands.json"
echo "$srcs" | xargs -P "$(nproc)" -n 8 clang-tidy -p "$db" --quiet >"$log" 2>&1 || true
rm -rf "$db"
if grep -q 'error:' "$log"; then
  grep -v '^[0-9]* warnings generated' "$log"
  echo "lint: clang-tidy found problems"
  exit 1
fi
echo "lint: clean"
