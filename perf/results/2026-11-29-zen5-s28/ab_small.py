#!/usr/bin/env python3
"""Summarizes ab_small.sh's output: per variant, the median and quartiles of its times (out of place and in place
together), over all rounds and over the rounds in the near placement (round trip under 300 ns).

    ab_small.py out.txt [SPLIT_US]

With SPLIT_US (session 29's 2-rank 8-byte broadcast: 0.2), each variant's timings are also split into the two modes its
runs fall in, over and under SPLIT_US, with each mode's median: runs land in one mode or the other as a whole, so a
median over all runs mostly says how many runs each variant drew in the fast one."""
import collections
import statistics
import sys


def quartiles(xs):
    q = statistics.quantiles(xs, n=4)
    return f"median {statistics.median(xs):.3f} us (quartiles {q[0]:.3f}-{q[2]:.3f}, {len(xs)} timings)"


times = collections.defaultdict(list)
near = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, rt, oop, ip = line.split()
    times[name] += [float(oop), float(ip)]
    if float(rt) < 300:
        near[name] += [float(oop), float(ip)]
split = float(sys.argv[2]) if len(sys.argv) > 2 else None
for name, xs in times.items():
    print(f"{name}: all rounds {quartiles(xs)}")
    if len(near[name]) >= 2:
        print(f"{' ' * len(name)}  near placement {quartiles(near[name])}")
    if split is not None:
        slow = [x for x in xs if x > split]
        fast = [x for x in xs if x <= split]
        med = lambda v: f"{statistics.median(v):.3f}" if v else "-"
        print(f"{' ' * len(name)}  slow mode median {med(slow)} us ({len(slow)} timings), fast mode {med(fast)} us "
              f"({len(fast)})")
