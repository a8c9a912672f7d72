#!/bin/bash
# Kept as the record of the A/B in docs/performance.md ("The scan reads whole blocks ..."): the library
# before the change copied to /tmp/probe/oldlib (cp -a build/libmpix_sparse.so* there), the bench
# binary of the build (RUNPATH, so LD_LIBRARY_PATH picks the old library), launches alternated.
# OLD_ENV=NAME=1 makes "old" the same build with that variable set (a temporary switch) instead.
# usage: bench_ab_lib.sh ROUNDS OUT: alternates the old library (LD_LIBRARY_PATH=/tmp/probe/oldlib) and the build's, bench rows 64 MiB
rounds=$1; out=$2; : > $out
for ((r=0;r<rounds;r++)); do
  for c in old new; do
    envs=""; [ $c = old ] && envs="-x ${OLD_ENV:-LD_LIBRARY_PATH=/tmp/probe/oldlib}"
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np ${NP:-4} $envs /work/main/build/bench/osu_sparse_allreduce -m 67108864:67108864 --density 0.01,0.1,0.5,1 -i 20 -x 3 --validate --json /tmp/probe/bl.json > /dev/null 2>&1
    python3 -c "
import json; j=json.load(open('/tmp/probe/bl.json'))
for r in j['rows']: print('$c', r['density'], r['sparse_avg_us']/1e3, r['floor_avg_us']/1e3, r['mpi_allreduce_avg_us']/1e3, r.get('valid'))" >> $out
  done
done
python3 - $out <<'PY'
import sys,statistics,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    c,den,s,f,m,v=l.split(); d[(den,c)].append((float(s),float(f),v))
for (den,c),v in sorted(d.items()):
    print(f"{den:6s} {c}: ours median {statistics.median(x[0] for x in v):6.2f} floor {statistics.median(x[1] for x in v):6.2f} ratio median {statistics.median(x[0]/x[1] for x in v):5.2f} valid {all(x[2]=='True' for x in v)} ratios {' '.join(f'{x[0]/x[1]:.2f}' for x in v)}")
PY
