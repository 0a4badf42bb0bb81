#!/usr/bin/env python3
"""Summarises alg_sweep.sh output: per variant and size, over the rounds, Chorus's out-of-place and in-place time
(median, range) and Open MPI's time / Chorus's (median; above 1: Chorus faster).

  alg_summary.py FILE
"""
import re
import statistics
import sys


def main():
    rows = {}
    order = []
    variant = None
    for line in open(sys.argv[1]):
        m = re.match(r'\[(.*)\]', line)
        if m:
            variant = m.group(1)
            continue
        f = line.split()
        if len(f) < 10 or variant is None:
            continue
        size, oop, ip, mo, mi = int(f[0]), float(f[2]), float(f[4]), float(f[7]), float(f[9])
        key = (variant, size)
        if key not in rows:
            rows[key] = []
            order.append(key)
        rows[key].append((oop, ip, mo / oop, mi / ip))
    print('%-16s %9s  %-22s %-22s %s' % ('variant', 'size', 'chorus oop us', 'chorus ip us', 'mpi/chorus oop, ip'))
    for key in sorted(order, key=lambda k: (k[1], order.index(k))):
        r = rows[key]
        col = lambda i: [x[i] for x in r]
        span = lambda v: '%.2f (%.2f-%.2f)' % (statistics.median(v), min(v), max(v))
        print('%-16s %9d  %-22s %-22s %.2f, %.2f' % (key[0].split('/')[-1], key[1], span(col(0)), span(col(1)),
                                                     statistics.median(col(2)), statistics.median(col(3))))


if __name__ == '__main__':
    main()
