#!/usr/bin/env bash
# Where the time goes (issue #13): the main job's rows (4 ranks, 64 MiB of floats, random 1%, 10%,
# 50%, 100%) with the library's phase profile, RUNS times; prints the median of each column over
# the runs (ratios are taken within each run, then the median). NP=ranks (4), TYPE=element type
# (float; float16 and bfloat16 for the 16-bit rows); set MPIX_SPARSE_* in the environment to try
# settings, and BENCH_ARGS for more options of osu_sparse_allreduce (e.g. --alloc-mem).
# Usage: bench/scripts/phase_profile.sh [RUNS] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
out=${2:-out/phase_profile}
mkdir -p "$out"
env_args=()
for v in $(env | grep -o '^MPIX_SPARSE_[A-Z_]*' || true); do env_args+=(-x "$v"); done
for ((i = 1; i <= runs; ++i)); do
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np "${NP:-4}" "${env_args[@]}" \
    build/bench/osu_sparse_allreduce --type "${TYPE:-float}" -m 67108864:67108864 --density 0.01,0.1,0.5,1 -i 20 -x 3 \
    --validate --profile ${BENCH_ARGS:-} --json "$out/run$i.json" > "$out/run$i.txt"
done
python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
rows = {}
for i in range(1, runs + 1):
    for r in json.load(open(f"{out}/run{i}.json"))["rows"]:
        rows.setdefault(r["density"], []).append(r)
cols = ["mpi_allreduce_avg_us", "sparse_avg_us", "floor_avg_us", "profile_scan_us", "profile_agreement_us",
        "profile_allgather_us", "profile_stream_us", "profile_reduce_us", "profile_result_write_us", "profile_barrier_us", "profile_dense_us"]
print(f"# median of {runs} runs; times in ms per call (phases: mean over ranks)")
print("density  speedup  ours/floor  mpi  ours  floor  scan  agree  gather  stream  reduce  write  barrier  dense  valid")
for d, rs in sorted(rows.items()):
    med = {c: statistics.median(r[c] for r in rs) / 1000 for c in cols}
    speedup = statistics.median(r["mpi_allreduce_avg_us"] / r["sparse_avg_us"] for r in rs)
    floor = statistics.median(r["sparse_avg_us"] / r["floor_avg_us"] for r in rs)
    valid = all(r.get("valid", False) for r in rs)
    print(f"{d:<7g} {speedup:7.2f} {floor:10.2f} " + " ".join(f"{med[c]:6.1f}" for c in cols) + f"  {valid}")
PY
