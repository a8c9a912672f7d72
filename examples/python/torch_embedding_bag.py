#!/usr/bin/env python3
"""Data-parallel training of an embedding-bag model on CPU tensors, its sparse embedding gradient
allreduced through mpix_sparse or through MPI_Allreduce (mpi4py), to compare loss curves and time.

    mpirun -np 4 python3 examples/python/torch_embedding_bag.py --backend mpix --steps 200 --out mpix.txt
    mpirun -np 4 python3 examples/python/torch_embedding_bag.py --backend mpi  --steps 200 --out mpi.txt
    # with --reduce-dtype float64 on both: cmp mpix.txt mpi.txt (bitwise identical)

Model: nn.EmbeddingBag(rows, dim, mode="sum", sparse=True) -> nn.Linear(dim, 1), binary labels from
a hidden per-row score; every rank draws its own batches (skewed ids: popular rows are shared across
ranks, as in recommendation data); the same initial weights everywhere (fixed seed). Each step:
forward, backward, the averaged gradient, plain SGD (sparse update where the gradient is sparse).

The embedding gradient (a sparse COO tensor: one row of `dim` values per id in the batch) goes
  --backend mpi    densified to rows x dim and summed with MPI_Allreduce (mpi4py's Allreduce);
  --backend mpix   through mpix_sparse:
     --mpix-path elements (default): the coalesced rows as (index, value) pairs of the flattened
                  table, mpix_sparse.allreduce_elements; the result (the union of the rows, whole
                  rows, sorted) becomes a sparse gradient again. Work and traffic scale with the
                  rows touched, not with the table.
     --mpix-path blocks: densified like the mpi backend, then mpix_sparse.allreduce in place on a
                  communicator whose block is one row (mpix_sparse_block_size = dim): only the
                  touched rows travel, but the table is still zeroed, scanned and updated whole
                  (faster than elements for small tables: 60 against 109 ms per step at 100k rows;
                  2.2 times slower at 1M rows, on 4 ranks of a 2-core machine).
The Linear layer's gradient goes through MPI_Allreduce in both backends.

--reduce-dtype float64 sums the float32 gradient in float64 (then rounds to float32): the sum of a
few float32 values is then exact in any order (unless their magnitudes span more than 2^29, when it
is still within 2^-53), so the result no longer depends on the order in which
MPI_Allreduce and mpix_sparse add the ranks' contributions, and the two backends' loss curves are
bitwise identical. With float32 sums the order differs (mpix_sparse reduces each block in a fixed
rank order; MPI's order depends on its algorithm), so values may differ in the last bit.

Prints the loss (mean over ranks) every --print-every steps on rank 0, then the median time per step
and per gradient allreduce; --out writes one loss per line (repr, full precision) for comparison.
"""

import argparse
import statistics
import sys
import time

import numpy as np
import torch
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
mpix_sparse = None  # imported by main() for --backend mpix


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=["mpix", "mpi"], required=True)
    p.add_argument("--mpix-path", choices=["elements", "blocks"], default="elements")
    p.add_argument("--reduce-dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--batch", type=int, default=256, help="bags per rank and step")
    p.add_argument("--bag", type=int, default=20, help="ids per bag")
    p.add_argument("--hot-rows", type=int, default=1000, help="rows that decide the labels")
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--print-every", type=int, default=25)
    p.add_argument("--out", help="write the loss curve here (rank 0)")
    return p.parse_args()


class Model(torch.nn.Module):
    def __init__(self, rows, dim):
        super().__init__()
        self.embedding = torch.nn.EmbeddingBag(rows, dim, mode="sum", sparse=True)
        torch.nn.init.normal_(self.embedding.weight, std=0.1)
        self.linear = torch.nn.Linear(dim, 1)

    def forward(self, ids, offsets):
        return self.linear(self.embedding(ids, offsets)).squeeze(1)


class Batches:
    """This rank's synthetic batches: skewed ids (row = rows * u^3, u uniform), label = sign of the
    bag's summed hidden score; hidden scores (the same on every rank) are non-zero on the --hot-rows
    most popular rows only, so that the model learns within a few hundred steps."""

    def __init__(self, args):
        self.args = args
        self.scores = torch.randn(args.rows, generator=torch.Generator().manual_seed(args.seed + 12345))
        self.scores[args.hot_rows:] = 0
        self.generator = torch.Generator().manual_seed(args.seed * 1_000_003 + 7919 * rank)
        self.offsets = torch.arange(0, args.batch * args.bag, args.bag)

    def next(self):
        a = self.args
        u = torch.rand(a.batch * a.bag, generator=self.generator)
        ids = (u.pow(3) * a.rows).long().clamp_(max=a.rows - 1)
        labels = (self.scores[ids].view(a.batch, a.bag).sum(1) > 0).float()
        return ids, self.offsets, labels


def reduce_type(args):
    return np.float64 if args.reduce_dtype == "float64" else np.float32


class DenseGradient:
    """The densified gradient, in buffers reused from step to step (a fresh rows x dim tensor each step
    would add page faults to both dense paths)."""

    def __init__(self, args):
        self.sum = torch.zeros(args.rows, args.dim, dtype=getattr(torch, args.reduce_dtype))
        self.out = self.sum if args.reduce_dtype == "float32" else torch.zeros(args.rows, args.dim)

    def allreduce(self, grad, reduce):
        """reduce(array): sums the numpy view of the dense buffer in place; returns the float32 result."""
        self.sum.zero_()
        self.sum.index_copy_(0, grad.indices()[0], grad.values().to(self.sum.dtype))
        reduce(self.sum.numpy())
        if self.out is not self.sum:
            self.out.copy_(self.sum)
        return self.out


def embedding_grad_elements(grad, args):
    """The coalesced rows as pairs of the flattened table; the union comes back as whole rows."""
    rows = grad.indices()[0].numpy()
    values = grad.values().contiguous().numpy().astype(reduce_type(args), copy=False).reshape(-1)
    indices = (rows[:, None] * args.dim + np.arange(args.dim)[None, :]).reshape(-1)
    out_indices, out_values = mpix_sparse.allreduce_elements(indices, values, args.rows * args.dim)
    union_rows = torch.from_numpy(out_indices[::args.dim] // args.dim)
    row_values = torch.from_numpy(out_values.reshape(-1, args.dim)).to(torch.float32)
    return torch.sparse_coo_tensor(union_rows[None, :], row_values, (args.rows, args.dim))  # unique rows


def main():
    args = parse()
    torch.set_num_threads(1)  # several ranks share the cores
    torch.manual_seed(args.seed)
    model = Model(args.rows, args.dim)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    batches = Batches(args)
    block_comm = None
    if args.backend == "mpix":
        global mpix_sparse
        import mpix_sparse

        if args.mpix_path == "blocks":
            block_comm = mpix_sparse.comm_create(comm, info={"mpix_sparse_block_size": str(args.dim)})
    dense = DenseGradient(args) if args.backend == "mpi" or args.mpix_path == "blocks" else None
    dense_params = [model.linear.weight, model.linear.bias]
    losses, step_times, comm_times = [], [], []
    for step in range(args.steps):
        t0 = time.perf_counter()
        ids, offsets, labels = batches.next()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(ids, offsets), labels)
        loss.backward()
        t1 = time.perf_counter()
        grad = model.embedding.weight.grad.coalesce()  # duplicates summed in one order for both backends
        if args.backend == "mpi":
            total = dense.allreduce(grad, lambda a: comm.Allreduce(MPI.IN_PLACE, a))
        elif args.mpix_path == "blocks":
            total = dense.allreduce(grad, lambda a: mpix_sparse.allreduce(MPI.IN_PLACE, a, comm=block_comm))
        else:
            total = embedding_grad_elements(grad, args)
        model.embedding.weight.grad = total.div_(size) if not total.is_sparse else total / size
        t2 = time.perf_counter()
        flat = torch.cat([p.grad.reshape(-1) for p in dense_params])
        comm.Allreduce(MPI.IN_PLACE, flat.numpy())
        flat.div_(size)
        offset = 0
        for p in dense_params:
            p.grad.copy_(flat[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
        optimizer.step()
        losses.append(comm.allreduce(loss.item()) / size)
        step_times.append(time.perf_counter() - t0)
        comm_times.append(t2 - t1)
        if rank == 0 and (step % args.print_every == 0 or step == args.steps - 1):
            print(f"step {step:4d} loss {losses[-1]:.6f}", flush=True)
    if block_comm is not None:
        mpix_sparse.comm_free(block_comm)
    # Median over the ranks' slowest (a step is as slow as its slowest rank), first steps left out.
    skip = min(5, max(0, args.steps - 1))
    slowest = np.array([step_times[skip:], comm_times[skip:]])
    comm.Allreduce(MPI.IN_PLACE, slowest, op=MPI.MAX)
    step_time, comm_time = (statistics.median(row) for row in slowest)
    if rank == 0:
        label = args.backend + (f" ({args.mpix_path})" if args.backend == "mpix" else "")
        print(f"{label}: {size} ranks, {args.rows} x {args.dim} table, reduce {args.reduce_dtype}: median "
              f"{step_time * 1e3:.2f} ms per step, {comm_time * 1e3:.2f} ms of it the embedding gradient's "
              f"allreduce; final loss {losses[-1]:.6f}", flush=True)
        if args.out:
            with open(args.out, "w") as f:
                f.writelines(f"{x!r}\n" for x in losses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
