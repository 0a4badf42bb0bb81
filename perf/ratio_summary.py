#!/usr/bin/env python3
"""Summarizes perf/compare.sh outputs (*_perf --compare mpi) as one Markdown row per collective and rank count:
the range of the ratio Chorus busbw / Open MPI busbw (computed as Open MPI's time over Chorus's) in each size band, out of place and in place, how many
rows fall below 1.0 and below 0.9, and the wrong elements Chorus's check counted (must be 0).

    perf/ratio_summary.py DIR [DIR2]

With DIR2 (the same run bound to cores, BIND=core), each cell shows DIR's range, then DIR2's after a slash.
Reads DIR/<collective>_np<N>.txt for every collective and N that exists.
"""
import os
import re
import sys

COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall", "sendrecv"]
BANDS = [("8 B - 2 KiB", 0, 4 << 10), ("8 - 512 KiB", 4 << 10, 1 << 20), ("2 - 8 MiB", 1 << 20, 16 << 20),
         ("32 - 256 MiB", 16 << 20, 1 << 40)]


def rows(path):
    out = []
    for line in open(path):
        line = re.sub(r"^\[[0-9]+\] ", "", line)
        f = line.split()
        # A row of 0 bytes (8 B split over more ranks than it has floats) moves nothing: left out.
        if len(f) >= 19 and f[0].isdigit() and int(f[0]) > 0:
            out.append(f)
    return out


def num(text):
    try:
        return float(text)
    except ValueError:  # N/A: no in-place variant
        return None


def ratio(f, col):
    """Open MPI's time over Chorus's (= the busbw ratio, without busbw's rounding to 0.00 at small sizes)."""
    chorus, mpi = (num(f[5]), num(f[13])) if col == 15 else (num(f[9]), num(f[16]))
    return None if not chorus or mpi is None else mpi / chorus


def band_range(data, lo, hi, col):
    vals = [r for r in (ratio(f, col) for f in data if lo <= int(f[0]) < hi) if r is not None]
    if not vals:
        return "-"
    return "%.2f" % vals[0] if len(vals) == 1 else "%.2f-%.2f" % (min(vals), max(vals))


def summary(path):
    data = rows(path)
    ratios = [r for r in (ratio(f, c) for f in data for c in (15, 18)) if r is not None]
    wrong = sum(int(num(f[8]) or 0) + int(num(f[12]) or 0) for f in data)
    return data, sum(r < 1.0 for r in ratios), sum(r < 0.9 for r in ratios), len(ratios), wrong


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    dirs = sys.argv[1:]
    head = "| collective | ranks | " + " | ".join("%s (in place)" % b[0] for b in BANDS)
    head += " | rows < 1.0 | rows < 0.9 | wrong |"
    print(head)
    print("|" + " --- |" * (len(BANDS) + 5))
    for coll in COLLECTIVES:
        for np in (2, 4, 8):
            paths = [os.path.join(d, "%s_np%d.txt" % (coll, np)) for d in dirs]
            if not all(os.path.exists(p) for p in paths):
                continue
            results = [summary(p) for p in paths]
            if not all(r[0] for r in results):
                print("| %s | %d | (no rows) |" % (coll, np))
                continue
            cells = []
            for _, lo, hi in BANDS:
                cells.append(" / ".join("%s (%s)" % (band_range(r[0], lo, hi, 15), band_range(r[0], lo, hi, 18))
                                        for r in results))
            below1 = " / ".join("%d of %d" % (r[1], r[3]) for r in results)
            below09 = " / ".join(str(r[2]) for r in results)
            wrong = " / ".join(str(r[4]) for r in results)
            print("| %s | %d | %s | %s | %s | %s |" % (coll, np, " | ".join(cells), below1, below09, wrong))
    return 0


if __name__ == "__main__":
    sys.exit(main())
