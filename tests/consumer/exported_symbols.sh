#!/usr/bin/env bash
# A library must export exactly the functions a header declares: nothing of the C++ standard library, the
# CUDA runtime or the implementation, and no declared function missing.
#   exported_symbols.sh LIB HEADER chorus   libchorus.so against chorus.h (its CHORUS_API functions)
#   exported_symbols.sh LIB HEADER nccl     libnccl.so.2 against nccl.h (every ncclX and pncclX it declares)
set -euo pipefail
lib=$1
header=$2
kind=${3:-chorus}
if [ "$kind" = chorus ]; then
  declared=$(grep -o 'CHORUS_API [^(]*(' "$header" | grep -o 'chorus[A-Za-z0-9_]*(' | tr -d '(' | sort -u)
else
  declared=$(grep -oE '^[a-zA-Z_][a-zA-Z0-9_ ]*[ *]+p?nccl[A-Za-z0-9_]+ *\(' "$header" |
             grep -oE 'p?nccl[A-Za-z0-9_]+ *\($' | tr -d ' (' | sort -u)
fi
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
if [ "$declared" != "$exported" ]; then
  echo "exported but not declared in $header:"; comm -13 <(echo "$declared") <(echo "$exported")
  echo "declared in $header but not exported:"; comm -23 <(echo "$declared") <(echo "$exported")
  exit 1
fi
echo "$(basename "$lib") exports exactly the $(echo "$declared" | wc -l) functions of $header"
