#!/usr/bin/env python3
"""Medians of an A/B benchmark file, per collective and size.

The file alternates two variants, each block headed "== round R warm=W COLL" (two builds: W 0 is the base, 1 the
change; perf/results/*/ab_bin.sh) or "== round R variant=V COLL ..." (one binary, two settings: V A is the base, B
the change; ab_env.sh, or two library builds: perf/ab_lib.sh), followed by rows "size chorus_oop chorus_ip mpi_oop mpi_ip" in microseconds. Prints, per
collective and size, the base's median (min-max) -> the change's, out of place and in place, Open MPI's medians
over both variants' runs, and the ratio Open MPI's time / Chorus's taken run by run (median, and how many runs were
below 1.0), base -> change. Usage: ab_summary.py FILE
"""
import collections
import re
import statistics
import sys

HEADER = re.compile(r"== round \d+ (?:warm=([01])|variant=([AB])) (\S+)")
BASE = {"0", "A"}


def main(path):
    runs = collections.defaultdict(list)  # (collective, size, is_change) -> rows of 4 times
    current = None
    for line in open(path):
        m = HEADER.match(line)
        if m:
            current = (m.group(3), (m.group(1) or m.group(2)) not in BASE)
            continue
        fields = line.split()
        if current and len(fields) == 5 and fields[0] != "0":
            runs[(current[0], fields[0], current[1])].append([float(x) for x in fields[1:]])
    keys = sorted({(c, s) for c, s, _ in runs}, key=lambda k: (k[0], int(k[1])))
    print("coll size | base oop med (min-max) -> new | base ip -> new | mpi oop/ip med | "
          "ratio mpi/chorus oop, ip: base med [runs < 1.0] -> new")

    def fmt(rows, i):
        x = [r[i] for r in rows]
        digits = 2 if statistics.median(x) < 10 else 1
        return f"{statistics.median(x):8.{digits}f} ({min(x):.{digits}f}-{max(x):.{digits}f})"

    def ratio(rows, i):  # Open MPI's time over Chorus's, run by run (each run has its own Open MPI figure)
        x = [r[i + 2] / r[i] for r in rows if r[i] > 0]
        return f"{statistics.median(x):.2f} [{sum(v < 1.0 for v in x)}/{len(x)}]" if x else "-"

    for coll, size in keys:
        base, new = runs.get((coll, size, False), []), runs.get((coll, size, True), [])
        if not base or not new:
            continue
        both = base + new
        mpi = f"{statistics.median([r[2] for r in both]):.2f}/{statistics.median([r[3] for r in both]):.2f}"
        print(f"{coll:10s} {size:>9s} | {fmt(base, 0)} -> {fmt(new, 0)} | {fmt(base, 1)} -> {fmt(new, 1)} | {mpi} | "
              f"{ratio(base, 0)} -> {ratio(new, 0)}, {ratio(base, 1)} -> {ratio(new, 1)}")


if __name__ == "__main__":
    main(sys.argv[1])
