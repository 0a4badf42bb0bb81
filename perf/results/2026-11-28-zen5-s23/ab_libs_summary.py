# Summary of an ab_libs.sh file: per collective and size, each library's median out of place / in place (us), Open
# MPI's median; then per library the runs slower than Open MPI's in the same run and the geometric mean of
# Open MPI's time over Chorus's. Usage: ab_libs_summary.py FILE
import collections, statistics, re, sys
runs=collections.defaultdict(list)
cur=None
for line in open(sys.argv[1]):
    m=re.match(r'== round \d+ lib=(\S+) (\S+)', line)
    if m: cur=(m.group(1).split('/')[-1], m.group(2)); continue
    f=line.split()
    if cur and len(f)==5 and f[0]!='0':
        runs[(cur[1], f[0], cur[0])].append([float(x) for x in f[1:]])
libs=sorted({k[2] for k in runs})
print('coll size |', '  '.join(libs), '| mpi')
tot=collections.Counter(); geo=collections.defaultdict(list)
import math
for (c,s) in sorted({(k[0],k[1]) for k in runs}, key=lambda k:(k[0],int(k[1]))):
    cells=[]
    for L in libs:
        r=runs[(c,s,L)]
        o=statistics.median(x[0] for x in r); i=statistics.median(x[1] for x in r)
        cells.append(f"{o:.2f}/{i:.2f}")
        tot[L]+=sum(1 for x in r if x[2]<x[0])+sum(1 for x in r if x[3]<x[1])
        geo[L]+= [math.log(x[2]/x[0]) for x in r] + [math.log(x[3]/x[1]) for x in r]
    mpi=statistics.median(x[2] for L in libs for x in runs[(c,s,L)])
    print(f"{c:10s} {s:>5s} | {'  '.join(cells)} | {mpi:.2f}")
print('runs slower than MPI:', dict(tot), 'of', len(geo[libs[0]]))
print('geomean ratio mpi/chorus:', {L: round(math.exp(sum(v)/len(v)),3) for L,v in geo.items()})
