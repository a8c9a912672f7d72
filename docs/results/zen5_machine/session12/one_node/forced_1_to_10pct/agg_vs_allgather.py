# Forced aggregator against forced allgather per cell (per run), and auto / fastest forced.
# Usage: python3 agg_vs_allgather.py DIR NP... (DIR holds npNP_run*.json)
import json, glob, statistics as st, sys
d = sys.argv[1]
for np in sys.argv[2:]:
    cells = {}
    for f in sorted(glob.glob(f"{d}/np{np}_run*.json")):
        for r in json.load(open(f))["rows"]:
            c = cells.setdefault((r["size"], r["density"]), [])
            c.append((r["forced_aggregator_avg_us"], r["forced_allgather_avg_us"], r["forced_dense_avg_us"], r["sparse_avg_us"], r["algorithm_name"] if "algorithm_name" in r else r["algorithm"]))
    print(f"np {np}: size density  agg/allgather (per run)  auto/best  auto ran")
    for k in sorted(cells):
        v = cells[k]
        ratios = [a / g for a, g, *_ in v]
        ab = [s / min(a, g, dd) for a, g, dd, s, _ in v]
        print(f"  {k[0]>>10:6d}K {k[1]:5}  " + " ".join(f"{x:.2f}" for x in ratios) + "   " + " ".join(f"{x:.2f}" for x in ab) + "  " + ",".join(str(x[4]) for x in v))
