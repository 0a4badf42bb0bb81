#!/usr/bin/env python3
"""Lines up small_sweep.sh outputs: per collective, rank count and size, each file's Chorus/Open MPI ratio out of
place and in place, and the cells below 1.0 counted per file.

  sweep_compare.py NAME=FILE [NAME=FILE ...]
"""
import sys


def read(path):
    rows, head = {}, None
    for line in open(path):
        if line.startswith('=='):
            head = line.split()[1] + ' ' + line.split()[2]
            continue
        f = line.split()
        if len(f) < 15 or f[0] == '0':
            continue
        rows[(head, int(f[0]))] = (float(f[7]), float(f[14]))
    return rows


def main():
    named = [a.split('=', 1) for a in sys.argv[1:]]
    data = [(n, read(p)) for n, p in named]
    keys = sorted({k for _, d in data for k in d}, key=lambda k: (k[0].split()[1], k[0].split()[0], k[1]))
    print('%-22s %6s  ' % ('collective ranks', 'size') + '  '.join('%-11s' % n for n, _ in data))
    below = [0] * len(data)
    for k in keys:
        cells = []
        for i, (_, d) in enumerate(data):
            r = d.get(k)
            if r is None:
                cells.append('%-11s' % '-')
                continue
            below[i] += sum(1 for x in r if x < 1.0)
            cells.append('%4.2f / %4.2f' % r)
        print('%-22s %6d  ' % k + '  '.join(cells))
    print('cells below 1.0: ' + ', '.join('%s %d' % (n, b) for (n, _), b in zip(data, below)))


if __name__ == '__main__':
    main()
