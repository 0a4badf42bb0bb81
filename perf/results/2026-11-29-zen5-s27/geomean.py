#!/usr/bin/env python3
"""Per placement, the geometric mean over collectives, sizes and both placements of the buffer (out of place, in place)
of each variant's median time over the first variant's, from ab2.sh lines (FILE...). Placement as in summ.py: both round
trips under 200 ns near, both over 400 ns far, the others mixed."""
import math
import statistics as st
import sys
from collections import defaultdict

rows = defaultdict(list)
order = []
for f in sys.argv[1:]:
    for line in open(f):
        p = line.split()
        if len(p) < 9:
            continue
        if p[0] not in order:
            order.append(p[0])
        r0, r1 = float(p[2]), float(p[3])
        mode = 'near' if max(r0, r1) < 200 else 'far' if min(r0, r1) > 400 else 'mixed'
        rows[(p[1], p[4], mode, p[0])].append((float(p[5]), float(p[6])))
print(f"| placement | variant | cells | geometric mean of time / {order[0]}'s | lowest | highest |")
print("| --- | --- | --- | --- | --- | --- |")
for mode in ('near', 'far', 'mixed'):
    for v in order[1:]:
        logs = []
        for (coll, size, m, var), r in rows.items():
            base = rows.get((coll, size, m, order[0]))
            if m != mode or var != v or not base:
                continue
            for i in (0, 1):
                logs.append(math.log(st.median(x[i] for x in r) / st.median(x[i] for x in base)))
        if logs:
            g = math.exp(sum(logs) / len(logs))
            print(f"| {mode} | {v} | {len(logs)} | {g:.3f} | {math.exp(min(logs)):.2f} | {math.exp(max(logs)):.2f} |")
