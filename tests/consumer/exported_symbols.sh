#!/usr/bin/env bash
# libchorus.so must export exactly the functions chorus.h declares (CHORUS_API): nothing of the C++ standard
# library, the CUDA runtime or Chorus's internals, and no declared function missing.
set -euo pipefail
lib=$1
header=$2
declared=$(grep -o 'CHORUS_API [^(]*(' "$header" | grep -o 'chorus[A-Za-z0-9_]*(' | tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
if [ "$declared" != "$exported" ]; then
  echo "exported but not declared in chorus.h:"; comm -13 <(echo "$declared") <(echo "$exported")
  echo "declared in chorus.h but not exported:"; comm -23 <(echo "$declared") <(echo "$exported")
  exit 1
fi
echo "libchorus.so exports exactly the $(echo "$declared" | wc -l) functions of chorus.h"
