#!/bin/bash
# usage: NP=n bench_ab.sh ROUNDS DENSITY config... (config: base or ENV1,ENV2)
rounds=$1; d=$2; shift 2
for ((r=0;r<rounds;r++)); do
  for c in "$@"; do
    envs=""; [ "$c" != base ] && for v in ${c//,/ }; do envs="$envs -x $v=1"; done
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np ${NP:-4} $envs /work/main/build/bench/osu_sparse_allreduce -m 67108864:67108864 --density $d -i 20 -x 3 --json /tmp/probe/b.json > /dev/null 2>&1
    python3 -c "
import json; r=json.load(open('/tmp/probe/b.json'))['rows'][0]; print('$c', r['sparse_avg_us']/1e3, r['floor_avg_us']/1e3, r['mpi_allreduce_avg_us']/1e3)"
  done
done > /tmp/probe/bench_out.txt
python3 - <<'PY'
import statistics,collections
d=collections.defaultdict(list)
for l in open('/tmp/probe/bench_out.txt'):
    c,s,f,m=l.split(); d[c].append((float(s),float(f),float(m)))
for c,v in d.items():
    print(f"{c:20s} ours median {statistics.median(x[0] for x in v):6.2f} ratio median {statistics.median(x[0]/x[1] for x in v):5.2f}  ours: {' '.join(f'{x[0]:.1f}' for x in v)}")
PY
