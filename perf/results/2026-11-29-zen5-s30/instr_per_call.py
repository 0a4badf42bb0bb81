#!/usr/bin/env python3
"""Per-call instructions between two callgrind outputs of one rank (instr_per_call.sh): the difference of the
exclusive counts of libchorus's, libc's and the dynamic linker's functions, divided by CALLS. Functions that wait
(spin, yield, sleep: their counts follow the other rank's timing, not this rank's work) are summed apart.

  instr_per_call.py SHORT_RUN LONG_RUN CALLS [PER_FUNCTION_OUT]
"""
import re
import subprocess
import sys

ENTRY = re.compile(r'\s*([\d,]+)\s+\(.*?\)\s+(src\S*|\./\S*|build\S*|/usr/include\S*|/work/\S*/(?:src|build)/\S*)'
                   r'(.*)\[(\S*)\]\s*$')
WAITS = re.compile(r'wait|Wait|pause|[Ff]utex|checkFarEnd|yield|sleep|poll|Endpoint|bootstrap')


def exclusive(path):
    out = subprocess.run(['callgrind_annotate', '--inclusive=no', path], capture_output=True, text=True).stdout
    counts = {}
    for line in out.split('\n'):
        m = ENTRY.match(line)
        if m and '/perf/' not in m.group(2):
            counts[m.group(2) + m.group(3)] = int(m.group(1).replace(',', ''))
    return counts


def main():
    short, long_, calls = exclusive(sys.argv[1]), exclusive(sys.argv[2]), float(sys.argv[3])
    work = waits = 0.0
    rows = []
    for name in set(short) | set(long_):
        per_call = (long_.get(name, 0) - short.get(name, 0)) / calls
        if WAITS.search(name):
            waits += per_call
        else:
            work += per_call
        rows.append((per_call, name))
    print('%.0f (waits %.0f)' % (work, waits), end='')
    if len(sys.argv) > 4:
        with open(sys.argv[4], 'w') as f:
            for per_call, name in sorted(rows, reverse=True):
                if abs(per_call) >= 0.5:
                    f.write('%.1f\t%s\n' % (per_call, name[:160]))


if __name__ == '__main__':
    main()
