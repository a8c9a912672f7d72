#!/usr/bin/env bash
# torch_losses.sh PYTHON EXAMPLE MPIRUN...: the PyTorch example (examples/python/torch_embedding_bag.py)
# on 4 ranks for $STEPS (200) steps with each gradient backend, mpix_sparse and MPI_Allreduce, compared:
#   --reduce-dtype float64: the gradient summed in float64, exact in any order: loss curves bitwise equal;
#   --reduce-dtype float32 (the example's default): the two sum the ranks' contributions in different
#     orders, so a loss may differ in its last bits: every step within a relative 1e-6.
# Prints each run's median time per step. MPIRUN... is the launcher with its environment arguments.
set -euo pipefail
python=$1 example=$2
shift 2
steps=${STEPS:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for dtype in float64 float32; do
  for backend in mpix mpi; do
    "$@" -np 4 "$python" "$example" --backend "$backend" --reduce-dtype "$dtype" --steps "$steps" --print-every 50 \
      --out "$work/$backend.$dtype.txt"
  done
done
"$python" - "$work" <<'PY'
import sys

work = sys.argv[1]
def curve(backend, dtype):
    with open(f"{work}/{backend}.{dtype}.txt") as f:
        return [float(line) for line in f]

failed = False
for dtype, tolerance in (("float64", 0.0), ("float32", 1e-6)):
    a, b = curve("mpix", dtype), curve("mpi", dtype)
    differing = sum(x != y for x, y in zip(a, b))
    worst = max(abs(x - y) / abs(y) for x, y in zip(a, b))
    ok = len(a) == len(b) > 0 and worst <= tolerance
    learned = sum(a[-20:]) < sum(a[:20]) - 20 * 0.02  # the model trains: the loss falls
    ok = ok and learned
    failed |= not ok
    print(f"torch_losses: reduce {dtype}: {len(a)} steps, {differing} differ, largest relative difference {worst:.3g} "
          f"(allowed {tolerance:g}), loss {a[0]:.4f} -> {a[-1]:.4f}: {'ok' if ok else 'FAILED'}")
sys.exit(1 if failed else 0)
PY
