#!/usr/bin/env python3
"""Turns *_perf text output into Markdown tables for docs/performance.md.

    perf/table.py FILE...

Each file gives one table: size, then Chorus's time and busbw, Open MPI's time and busbw and the ratio
(Chorus busbw / MPI busbw) for the out-of-place half, and the in-place ratio. Files from a run without
--compare mpi give Chorus's columns only. Launcher prefixes ("[0] " of chorusrun --tag-output) are stripped.
"""
import re
import sys


def human(size):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return "%d %s" % (size >> shift, unit)
    return "%d B" % size


def rows(path):
    out = []
    for line in open(path):
        line = re.sub(r"^\[[0-9]+\] ", "", line)
        fields = line.split()
        if not fields or not fields[0].isdigit() or len(fields) < 13:
            continue
        out.append(fields)
    return out


def table(path):
    data = rows(path)
    if not data:
        return "(no rows in %s)\n" % path
    compare = len(data[0]) >= 19
    text = "`%s`:\n\n" % path
    if compare:
        text += "| size | Chorus time (us) | Chorus busbw (GB/s) | MPI time (us) | MPI busbw (GB/s) | ratio | in-place ratio |\n"
        text += "| --- | --- | --- | --- | --- | --- | --- |\n"
        for f in data:
            text += "| %s | %s | %s | %s | %s | %s | %s |\n" % (human(int(f[0])), f[5], f[7], f[13], f[14], f[15], f[18])
    else:
        text += "| size | time (us) | busbw (GB/s) | in-place time (us) | in-place busbw (GB/s) |\n"
        text += "| --- | --- | --- | --- | --- |\n"
        for f in data:
            text += "| %s | %s | %s | %s | %s |\n" % (human(int(f[0])), f[5], f[7], f[9], f[11])
    return text


def main():
    if len(sys.argv) < 2:
        print("usage: %s FILE..." % sys.argv[0], file=sys.stderr)
        return 2
    for path in sys.argv[1:]:
        print(table(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
