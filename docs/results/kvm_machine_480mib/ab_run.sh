#!/bin/bash
# A/B: old (/tmp/old/build) vs new (/work/main/build), alternated; sizes and densities from args
sizes=$1; dens=$2; rounds=${3:-3}; iters=${4:-50}
for r in $(seq 1 $rounds); do
  for v in old new; do
    root=/work/main; [ $v = old ] && root=/tmp/old
    MPIX_SPARSE_ALGORITHM=aggregator mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x MPIX_SPARSE_ALGORITHM \
      $root/build/bench/osu_sparse_allreduce -m $sizes --density $dens -i $iters -x 5 --json /tmp/ab/${v}_$r.json > /dev/null 2>&1
  done
done
python3 - "$rounds" <<'PY'
import json, sys, statistics
rounds = int(sys.argv[1])
rows = {}
for r in range(1, rounds + 1):
    for v in ("old", "new"):
        for row in json.load(open(f"/tmp/ab/{v}_{r}.json"))["rows"]:
            rows.setdefault((row["size"], row["density"]), {}).setdefault(v, []).append(row["sparse_avg_us"])
for (size, d), t in sorted(rows.items()):
    ratios = [n / o for n, o in zip(t["new"], t["old"])]
    print(f"{size>>20:>3} MiB {d:<5} old {' '.join(f'{x/1000:6.2f}' for x in t['old'])}  new {' '.join(f'{x/1000:6.2f}' for x in t['new'])}  new/old median {statistics.median(ratios):.3f}")
PY
