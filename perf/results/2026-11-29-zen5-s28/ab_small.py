#!/usr/bin/env python3
"""Summarizes ab_small.sh's output: per variant, the median and quartiles of its times (out of place and in place
together), over all rounds and over the rounds in the near placement (round trip under 300 ns)."""
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
for name in times:
    print(f"{name}: all rounds {quartiles(times[name])}")
    if len(near[name]) >= 2:
        print(f"{' ' * len(name)}  near placement {quartiles(near[name])}")
