#!/bin/bash
# usage: ab_bin.sh ROUNDS DENSITY ITERS config... (config: binary[:ENV1,ENV2=VALUE]; a bare ENV is set to 1)
# Prints each config's medians and, against the first config, the median of the round-by-round ratios.
rounds=$1; d=$2; it=$3; shift 3
for ((r=0;r<rounds;r++)); do
  for c in "$@"; do
    bin=${c%%:*}; envs=""
    if [[ "$c" == *:* ]]; then
      e=${c#*:}
      for v in ${e//,/ }; do [[ "$v" == *=* ]] && envs="$envs -x $v" || envs="$envs -x $v=1"; done
    fi
    # shellcheck disable=SC2086  # $envs: one -x per word
    line=$(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "${NP:-4}" $envs "./$bin" "$d" "$it" 2>&1 | tail -1)
    w=$(echo "$line" | sed -E 's/.*: ([0-9.]+) ms\/call.*/\1/'); u=$(echo "$line" | sed -E 's/.*user ([0-9.]+) ms.*/\1/')
    echo "$c $w $u"
  done
done > /tmp/probe/ab_out.txt
python3 - <<'PY'
import statistics,collections
d=collections.defaultdict(list)
for l in open('/tmp/probe/ab_out.txt'):
    c,t,u=l.split(); d[c].append((float(t),float(u)))
base=next(iter(d.values()))
for c,v in d.items():
    w=[x[0] for x in v]; us=[x[1] for x in v]
    rw=statistics.median(x[0]/y[0] for x,y in zip(v,base)); ru=statistics.median(x[1]/y[1] for x,y in zip(v,base))
    print(f"{c:30s} wall median {statistics.median(w):6.2f} user {statistics.median(us):6.2f}  "
          f"paired ratio wall {rw:.3f} cpu {ru:.3f}  all {' '.join(f'{x:.1f}' for x in w)}")
PY
