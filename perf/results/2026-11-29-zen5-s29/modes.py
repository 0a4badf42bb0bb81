#!/usr/bin/env python3
"""Splits ab_small.sh timings of a 2-rank 8-byte broadcast into its two modes (over and under 0.2 us) and prints each
variant's median per mode: the runs land in one mode or the other as a whole, so a median over all runs mostly says how
many runs each variant drew in the fast mode.

    modes.py ab_counters_broadcast.txt
"""
import statistics
import sys

times = {}
for line in open(sys.argv[1]):
    variant, _roundtrip, out_of_place, in_place = line.split()
    times.setdefault(variant, []).extend([float(out_of_place), float(in_place)])
for variant, xs in times.items():
    slow = [x for x in xs if x > 0.2]
    fast = [x for x in xs if x <= 0.2]
    med = lambda v: f"{statistics.median(v):.3f}" if v else "-"
    print(f"{variant}: slow mode median {med(slow)} us ({len(slow)} timings), fast mode {med(fast)} us ({len(fast)})")
