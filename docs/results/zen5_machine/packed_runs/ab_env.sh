#!/bin/bash
# usage: ab_env.sh ROUNDS DENSITY VAR val1 val2 ...   (cpu probe, alternated launch by launch)
rounds=$1; d=$2; var=$3; shift 3
for ((r=0;r<rounds;r++)); do for v in "$@"; do
  t=$(mpirun --allow-run-as-root --oversubscribe --bind-to none -np ${NP:-4} -x $var=$v /tmp/probe/cpu $d 30 2>&1 | tail -1 | sed -E 's/.*: ([0-9.]+) ms\/call.*user ([0-9.]+) ms.*/\1 \2/')
  echo "$v $t"
done; done > /tmp/probe/ab_env_out.txt
python3 - <<'PY'
import statistics,collections
d=collections.defaultdict(list)
for l in open('/tmp/probe/ab_env_out.txt'):
    v,t,u=l.split(); d[v].append((float(t),float(u)))
for v,x in d.items():
    print(f"{v:6s} wall median {statistics.median(a for a,b in x):6.2f}  user median {statistics.median(b for a,b in x):6.2f}   {' '.join(f'{a:.1f}' for a,b in x)}")
PY
