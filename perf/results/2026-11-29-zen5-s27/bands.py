#!/usr/bin/env python3
"""Counts the rows below Open MPI (ratio < 1.0, out of place and in place apart) in perf/compare.sh folders (DIR...),
by size band (8 B - 2 KiB, 8 - 512 KiB, 2 - 8 MiB, larger) and rank count, over every *_np*.txt file (the 1,000-call
small-message files included, so the totals exceed perf/ratio_summary.py's)."""
import glob
import re
import sys
from collections import Counter

for d in sys.argv[1:]:
    below = Counter()
    for f in glob.glob(d + '/*_np*.txt'):
        ranks = re.search(r'np(\d+)', f).group(1)
        for line in open(f):
            p = line.split()
            if len(p) < 19 or not p[0].isdigit():
                continue
            try:
                size, ratios = int(p[0]), (float(p[15]), float(p[18]))
            except ValueError:
                continue
            band = '8B-2K' if size <= 2048 else '8K-512K' if size <= 524288 else '2M-8M' if size <= 8388608 else '32M+'
            below[(band, int(ranks))] += sum(r < 1.0 for r in ratios)
    print(d, sum(below.values()), ' '.join(f'{b}@{n}:{c}' for (b, n), c in sorted(below.items())))
