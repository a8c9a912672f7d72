# Per cell: what auto ran and auto's mean time over the fastest forced algorithm's, pooled over the
# runs given for each variant (A_run*.json, B_run*.json in DIR). Usage: python3 cmp.py DIR
import glob, json, statistics as st, sys
d = sys.argv[1]
def load(v):
    cells = {}
    for f in sorted(glob.glob(f"{d}/{v}_run*.json")):
        for r in json.load(open(f))["rows"]:
            c = cells.setdefault((r["size"], r["density"]), {"ran": set(), "ratio": []})
            c["ran"] |= set(r.get("auto_call_algorithms", []))
            best = min(r[f"forced_{a}_avg_us"] for a in ("dense", "aggregator", "allgather"))
            c["ratio"].append(r["sparse_avg_us"] / best)
    return cells
A, B = load("A"), load("B")
print("| size | density | A ran | A auto/best | B ran | B auto/best |")
print("|---|---|---|---|---|---|")
outA = outB = 0
for k in sorted(A):
    a, b = A[k], B.get(k)
    ma, mb = st.median(a["ratio"]), st.median(b["ratio"])
    outA += ma > 1.10; outB += mb > 1.10
    print(f"| {k[0]//1024} KiB | {k[1]} | {'/'.join(sorted(a['ran']))} | {ma:.2f} | {'/'.join(sorted(b['ran']))} | {mb:.2f} |")
print(f"cells above 1.10 (median over runs): A {outA}, B {outB} of {len(A)}")
