#!/usr/bin/env python3
"""Medians of an A/B benchmark file, per collective and size.

The file alternates variants, each block headed "== round R warm=W COLL" (two builds: W 0 is the base, 1 the change;
perf/results/*/ab_bin.sh), "== round R variant=V COLL" (one binary, two settings, ab_env.sh; or library builds,
perf/ab_lib.sh: A is the base, the last letter the build) or "== round R lib=DIR COLL" (session 23's ab_libs.sh),
followed by rows "size chorus_oop chorus_ip mpi_oop mpi_ip" in microseconds.

With two variants it prints, per collective and size, the base's median (min-max) -> the change's, out of place and in
place, Open MPI's medians over both variants' runs, and the ratio Open MPI's time / Chorus's taken run by run (median,
and how many runs were below 1.0), base -> change. With more, each variant's medians side by side. Then, per variant,
the runs slower than Open MPI's in the same run and the geometric mean of Open MPI's time over Chorus's.
Usage: ab_summary.py FILE
"""
import collections
import math
import re
import statistics
import sys

HEADER = re.compile(r"== round \d+ (?:warm=(\S+)|variant=(\S+)|lib=(\S+)) (\S+)")


def read(path):
    """Returns {(collective, size, variant): [[chorus_oop, chorus_ip, mpi_oop, mpi_ip], ...]} and the variants in
    the order they first appear."""
    runs = collections.defaultdict(list)
    variants = []
    current = None
    for line in open(path):
        m = HEADER.match(line)
        if m:
            variant = m.group(1) or m.group(2) or m.group(3).rstrip("/").split("/")[-1]
            if variant not in variants:
                variants.append(variant)
            current = (m.group(4), variant)
            continue
        fields = line.split()
        if current and len(fields) == 5 and fields[0] != "0":
            runs[(current[0], fields[0], current[1])].append([float(x) for x in fields[1:]])
    return runs, variants


def fmt(rows, i):
    x = [r[i] for r in rows]
    digits = 2 if statistics.median(x) < 10 else 1
    return f"{statistics.median(x):8.{digits}f} ({min(x):.{digits}f}-{max(x):.{digits}f})"


def ratio(rows, i):  # Open MPI's time over Chorus's, run by run (each run has its own Open MPI figure)
    x = [r[i + 2] / r[i] for r in rows if r[i] > 0]
    return f"{statistics.median(x):.2f} [{sum(v < 1.0 for v in x)}/{len(x)}]" if x else "-"


def main(path):
    runs, variants = read(path)
    keys = sorted({(c, s) for c, s, _ in runs}, key=lambda k: (k[0], int(k[1])))
    if len(variants) == 2:
        print("coll size | base oop med (min-max) -> new | base ip -> new | mpi oop/ip med | "
              "ratio mpi/chorus oop, ip: base med [runs < 1.0] -> new")
    else:
        print("coll size |", "  ".join(f"{v} oop/ip" for v in variants), "| mpi oop/ip med")
    for coll, size in keys:
        rows = [runs.get((coll, size, v), []) for v in variants]
        if not all(rows):
            continue
        both = [r for vr in rows for r in vr]
        mpi = f"{statistics.median([r[2] for r in both]):.2f}/{statistics.median([r[3] for r in both]):.2f}"
        if len(variants) == 2:
            base, new = rows
            print(f"{coll:10s} {size:>9s} | {fmt(base, 0)} -> {fmt(new, 0)} | {fmt(base, 1)} -> {fmt(new, 1)} | "
                  f"{mpi} | {ratio(base, 0)} -> {ratio(new, 0)}, {ratio(base, 1)} -> {ratio(new, 1)}")
        else:
            cells = [f"{statistics.median(r[0] for r in vr):.2f}/{statistics.median(r[1] for r in vr):.2f}"
                     for vr in rows]
            print(f"{coll:10s} {size:>9s} |", "  ".join(cells), f"| {mpi}")
    for v in variants:
        logs = [math.log(r[i + 2] / r[i]) for (_, _, rv), vr in runs.items() if rv == v for r in vr for i in (0, 1)
                if r[i] > 0 and r[i + 2] > 0]
        if not logs:
            continue
        slower = sum(x < 0 for x in logs)
        print(f"variant {v}: runs slower than Open MPI's {slower} of {len(logs)}, geometric mean of Open MPI's time "
              f"over Chorus's {math.exp(sum(logs) / len(logs)):.3f}")


if __name__ == "__main__":
    main(sys.argv[1])
