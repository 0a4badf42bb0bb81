#!/usr/bin/env python3
"""Summarises ab2.sh lines by the machine's mode (both round trips under 200 ns: near; both over 400 ns: far)."""
import os, sys, statistics as st
from collections import defaultdict
rows = defaultdict(list)
order = []  # variants in the order they first appear
digits = int(os.environ.get('DIGITS', '2'))
for f in sys.argv[1:]:
    for line in open(f):
        p = line.split()
        if len(p) < 9: continue
        if p[0] not in order: order.append(p[0])
        v, coll, r0, r1, size = p[0], p[1], float(p[2]), float(p[3]), int(p[4])
        oop, ip, moop, mip = map(float, p[5:9])
        mode = 'near' if max(r0, r1) < 200 else 'far' if min(r0, r1) > 400 else 'mixed'
        rows[(coll, size, mode, v)].append((oop, ip, moop, mip))
print("| collective | size | mode | variant | runs | Chorus oop / ip (ms, median) | Open MPI oop / ip | ratio oop / ip |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for k in sorted(rows, key=lambda k: (k[0], k[1], k[2], order.index(k[3]))):
    coll, size, mode, v = k
    if mode == 'mixed': continue
    r = rows[k]
    med = [st.median(x[i] for x in r) for i in range(4)]
    print(f"| {coll} | {size >> 20} MiB | {mode} | {v} | {len(r)} | {med[0]:.{digits}f} / {med[1]:.{digits}f} | {med[2]:.{digits}f} / {med[3]:.{digits}f} | {med[2]/med[0]:.2f} / {med[3]/med[1]:.2f} |")
