#!/usr/bin/env bash
# Instructions per call of a 2-rank 8-byte collective on Chorus's path, as callgrind counts them, with the one-time
# costs (start-up, connection set-up, the first plan) and the waits taken out: two runs of N1 and N2 iterations (two
# calls each: out of place and in place), and per rank the difference of their exclusive counts over every function
# of libchorus, libc and the dynamic linker, less those that wait (instr_per_call.py names them), divided by the
# calls between. LIBDIR (optional) goes first on LD_LIBRARY_PATH, to count another build's libchorus.so.0; Y=0 counts
# calls on a host stream (default: blocking).
#
#   [LIBDIR=/tmp/libMain] instr_per_call.sh broadcast [N1] [N2]
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=perf/results/2026-11-29-zen5-s30
coll=${1:-broadcast}
n1=${2:-3000}
n2=${3:-13000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for n in "$n1" "$n2"; do
  env LD_LIBRARY_PATH="${LIBDIR:-}" mpirun --allow-run-as-root -x LD_LIBRARY_PATH -np 2 valgrind --tool=callgrind \
    --callgrind-out-file="$out/cg.$n.%p" "build/bin/${coll}_perf" -b 8 -e 8 -w 10 -n "$n" -c 0 -y "${Y:-1}" \
    >/dev/null 2>&1
done
mapfile -t a < <(printf "%s\n" "$out"/cg."$n1".* | sort)
mapfile -t b < <(printf "%s\n" "$out"/cg."$n2".* | sort)
calls=$((2 * (n2 - n1)))
echo "$coll, per call: rank 0 $(python3 $here/instr_per_call.py "${a[0]}" "${b[0]}" $calls)," \
  "rank 1 $(python3 $here/instr_per_call.py "${a[1]}" "${b[1]}" $calls)"
