import re,collections,sys,statistics as st
d=collections.defaultdict(list)
cur=None
for l in open(sys.argv[1]):
    m=re.match(r'== round (\d+) variant=([AB]) (\S+)',l)
    if m: cur=(m.group(2),m.group(3)); continue
    f=l.split()
    if len(f)==5 and cur and f[0]!='0': d[(cur[1],f[0],cur[0])].append([float(x) for x in f[1:]])
keys=sorted({(k[0],k[1]) for k in d}, key=lambda k:(k[0],int(k[1])))
print("coll size | A oop med (min-max) -> B | A ip -> B | mpi oop/ip med")
for c,s in keys:
    b=d.get((c,s,'A'),[]); n=d.get((c,s,'B'),[])
    if not b or not n: continue
    def fm(v,i): x=[r[i] for r in v]; return f"{st.median(x):8.1f} ({min(x):.0f}-{max(x):.0f})"
    print(f"{c:10s} {s:>9s} | {fm(b,0)} -> {fm(n,0)} | {fm(b,1)} -> {fm(n,1)} | {st.median([r[2] for r in b+n]):.0f}/{st.median([r[3] for r in b+n]):.0f}")
