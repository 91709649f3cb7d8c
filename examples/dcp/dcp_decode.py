#!/usr/bin/python3
"""Decode context parallelism (DCP) across N processes on torch.distributed (gloo).

Starts N processes with torch.multiprocessing, each with its own gfx950 emulator device,
joined in a gloo process group over the loopback interface (127.0.0.1 only). Each rank
holds its shard of the KV of a batch of Kimi-K3 requests (token p on rank p % N, its own
pool and page table) and its 12 TP8 query heads; mla.distributed.decode_step gathers
the query heads (12 N), attends the shard and merges the ranks' partials, all-to-all
or all-gather of LSE + reduce-scatter (--merge). Each rank then checks its heads of the
merged result against the unsharded Decoder call and the fp64 reference.

    PYTHONPATH=build/python /usr/bin/python3 examples/dcp/dcp_decode.py --ranks 2
    PYTHONPATH=build/python /usr/bin/python3 examples/dcp/dcp_decode.py --ranks 4 \\
        --merge reduce_scatter --collectives list

Prints "dcp example: every rank matches the unsharded call" and exits 0 on success.
"""

import argparse
import datetime
import os
import queue as queue_module
import socket
import sys
import time
import traceback

import numpy as np

TP_HEADS = 12  # Kimi-K3 at tensor parallelism 8: 12 query heads a GPU


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def problem(args, ranks):
    import mla
    return mla.reference.make_problem(TP_HEADS * ranks, args.qlen, args.lengths,
                                      seed=args.seed, pages="shuffled")


def row_relative(got, want):
    """max over (row, head) of max|got - want| / max|want| (0/0 = 0)."""
    err = np.abs(got.astype(np.float64) - want).max(axis=-1)
    scale = np.abs(want).max(axis=-1)
    return float(np.max(np.where(scale > 0, err / np.where(scale > 0, scale, 1),
                                 np.where(err > 0, np.inf, 0.0)), initial=0.0))


def worker(rank, ranks, port, args, results):
    try:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(port)
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        import torch.distributed as dist
        import mla
        import mla.distributed
        dist.init_process_group("gloo", rank=rank, world_size=ranks,
                                timeout=datetime.timedelta(seconds=args.timeout))
        p = problem(args, ranks)
        heads = TP_HEADS * ranks
        mine = slice(rank * TP_HEADS, (rank + 1) * TP_HEADS)
        shard = mla.reference.shard(p["q"], p["kv"], p["pages"], p["indptr"], ranks, rank)
        dec = mla.Decoder(heads, args.qlen, "emu", build=args.build)
        start = time.time()
        out, lse = mla.distributed.decode_step(
            dec, p["q"][:, mine], shard["kv"], shard["pages"], shard["indptr"],
            shard["seq_lens"], p["scale"], p["vscale"], merge=args.merge,
            gather_heads=True, collectives=args.collectives)
        step = time.time() - start
        dist.barrier()
        dist.destroy_process_group()

        # This rank's heads of the merged result: [S, heads / N] with heads / N = 12.
        full_out, full_lse = dec(p["q"], p["kv"], p["pages"], p["indptr"], p["scale"],
                                 p["vscale"])
        exact_out, exact_lse = mla.reference.exact(p["q"], p["kv"], p["pages"], p["indptr"],
                                                   p["scale"], p["vscale"])
        # numerics.md's bound for the longest shard (one split at most) plus one bf16
        # rounding for the rank partials; twice it against the unsharded call.
        n = max(shard["indptr"][1:] - shard["indptr"][:-1], default=0)
        bound = 2.0**-7 + n * 2.0**-17 + 2.0**-9
        eps = 2.0**-8 + n * 2.0**-18
        lse_bound = eps + eps * eps + 2.0**-16
        seen = ~np.isinf(exact_lse[:, mine])
        lse_error = np.abs(lse[seen] - exact_lse[:, mine][seen])
        checks = {
            "out vs exact": (row_relative(out, exact_out[:, mine]), bound),
            "out vs unsharded": (row_relative(out, full_out[:, mine]), 2 * bound),
            "lse vs exact": (float(np.max(lse_error, initial=0.0)), lse_bound),
        }
        ok = all(v <= b for v, b in checks.values())
        ok = ok and bool(np.array_equal(np.isinf(lse), np.isinf(exact_lse[:, mine])))
        ok = ok and not np.isnan(out).any() and not np.isnan(lse).any()
        detail = ", ".join(f"{k} {v:.2e} (bound {b:.2e})" for k, (v, b) in checks.items())
        results.put((rank, ok, f"rank {rank}: step {step:.1f} s; {detail}"))
    except Exception:
        results.put((rank, False, f"rank {rank}: " + traceback.format_exc()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--merge", choices=("all_to_all", "reduce_scatter"),
                        default="all_to_all")
    parser.add_argument("--collectives", choices=("auto", "tensor", "list"), default="auto")
    parser.add_argument("--qlen", type=int, default=1)
    parser.add_argument("--build", choices=("auto", "plain", "wspec"), default="auto")
    parser.add_argument("--lengths", type=lambda s: [int(x) for x in s.split(",")],
                        default=[0, 1, 3, 130, 517, 1000], help="global lengths, comma-separated")
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--timeout", type=float, default=500.0,
                        help="seconds for the whole run (and the process group's timeout)")
    args = parser.parse_args()

    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=worker, args=(r, args.ranks, port, args, results))
             for r in range(args.ranks)]
    for proc in procs:
        proc.start()
    deadline = time.time() + args.timeout
    reports = {}
    while len(reports) < args.ranks and time.time() < deadline:
        try:
            rank, ok, message = results.get(timeout=1.0)
            reports[rank] = (ok, message)
        except queue_module.Empty:
            if all(not proc.is_alive() for proc in procs) and results.empty():
                break
    for proc in procs:
        proc.join(timeout=max(deadline - time.time(), 1.0))
        if proc.is_alive():
            proc.terminate()
            proc.join()
    for rank in range(args.ranks):
        ok, message = reports.get(rank, (False, f"rank {rank}: no report (timed out or died)"))
        print(message)
    if len(reports) == args.ranks and all(ok for ok, _ in reports.values()):
        print(f"dcp example: every rank matches the unsharded call (N = {args.ranks}, "
              f"merge {args.merge}, collectives {args.collectives})")
        return 0
    print("dcp example: FAILED")
    return 1


if __name__ == "__main__":
    sys.exit(main())
