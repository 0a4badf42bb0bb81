import re,collections,sys
d=collections.defaultdict(list)
cur=None
for l in open(sys.argv[1]):
    m=re.match(r'== round (\d) warm=(\d) (\S+)',l)
    if m: cur=(m.group(2),m.group(3)); continue
    f=l.split()
    if len(f)==5 and cur and float(f[1])>0 and f[0]!='0': d[(cur[1],f[0],cur[0])].append((float(f[3])/float(f[1]),float(f[4])/float(f[2])))
for k in sorted(d, key=lambda k:(k[0],int(k[1]),k[2])):
    v=d[k]
    print(f"{k[0]:15s} {k[1]:>7s} {'warm' if k[2]=='1' else 'cold'} out", ' '.join(f"{x[0]:.2f}" for x in v), ' in', ' '.join(f"{x[1]:.2f}" for x in v))
