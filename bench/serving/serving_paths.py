"""Figures for the Decoder's two entry points on the emulator (prints them; no pass/fail).

    PYTHONPATH=build/python /usr/bin/python3 bench/serving/serving_paths.py [--pool-mb N]

1. 256 empty requests asked for 64 splits (the reliability review's case: it used to
   launch 16,384 CTAs and fill a host partials vector it never used): wall time, the
   plan's split count and workspace, and the process's peak RSS.
2. One 512-token request against a KV pool of --pool-mb MiB: the host path (validates,
   allocates, uploads the whole pool, runs, downloads) against the device path (pool
   resident, plan once, run + synchronise), per call. Emulator times are dominated by
   the kernels' emulation; the difference is what the host path adds per call.
3. plan() from host lengths, per call (no kernel runs): schedule="host" (the split
   policy's NS) against "auto" (the host, device and range estimates, the fastest
   taken), for 64 requests of 8K and 4096 mixed requests (64..8K tokens).
"""
import argparse
import resource
import time

import numpy as np

import mla


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pool-mb", type=int, default=220)
    parser.add_argument("--calls", type=int, default=3)
    args = parser.parse_args()
    dec = mla.Decoder(12, 1, "emu")
    dev = dec.device

    q = np.full((256, 12, 576), 0x3F80, np.uint16)
    kv = np.zeros((1, 576), np.uint8)
    indptr = np.zeros(257, np.int32)
    plan = dec.plan(indptr, 1, num_splits=64)
    start = time.perf_counter()
    dec(q, kv, np.zeros(0, np.int32), indptr, 0.1, 1.0, num_splits=64)
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"256 empty requests, num_splits=64: {seconds:.3f} s; plan: {plan.num_splits} "
          f"split(s), workspace {plan.workspace_bytes} bytes; peak RSS so far {rss:.0f} MiB")

    slots = args.pool_mb * 2**20 // 576
    p = mla.reference.make_problem(12, 1, [512], seed=1, extra_slots=slots - 512)
    host_args = (p["q"], p["kv"], p["pages"], p["indptr"], p["scale"], p["vscale"])
    times = []
    for _ in range(args.calls):
        start = time.perf_counter()
        out, lse = dec(*host_args)
        times.append(time.perf_counter() - start)
    print(f"host path, {p['kv'].nbytes / 2**20:.0f} MiB pool, 512 tokens: "
          f"{min(times) * 1e3:.1f} ms per call (best of {args.calls})")

    bufs = [dev.upload(p[k]) for k in ("q", "kv", "pages", "indptr")]
    out_buf, lse_buf = dev.alloc(12 * 512 * 2), dev.alloc(12 * 4)
    plan = dec.plan(p["indptr"], p["kv"].shape[0])
    ws = dev.alloc(plan.workspace_bytes)
    stream = dev.create_stream()
    times = []
    for _ in range(args.calls):
        start = time.perf_counter()
        dec.run(plan, *bufs, out_buf, lse_buf, scale=p["scale"], vscale=p["vscale"],
                workspace=ws, stream=stream)
        dev.synchronize(stream)
        times.append(time.perf_counter() - start)
    same = np.array_equal(dev.download(out_buf, np.uint16, (1, 12, 512)), mla.bf16(out))
    print(f"device path, same call, pool resident: {min(times) * 1e3:.1f} ms per call "
          f"(best of {args.calls}); result {'identical' if same else 'DIFFERENT'}")

    rng = np.random.default_rng(7)
    batches = {"64 x 8K": np.full(64, 8192),
               "4096 mixed (64..8K)": np.exp(rng.uniform(np.log(64), np.log(8192), 4096))}
    for name, lengths in batches.items():
        indptr = np.concatenate(([0], np.cumsum(lengths.astype(np.int64)))).astype(np.int32)
        slots = int(indptr[-1])
        for schedule in ("host", "auto"):
            plan = dec.plan(indptr, slots, schedule=schedule)
            calls = 20
            start = time.perf_counter()
            for _ in range(calls):
                dec.plan(indptr, slots, schedule=schedule)
            per_call = (time.perf_counter() - start) / calls
            print(f"plan({name}, schedule={schedule!r}): {per_call * 1e3:.2f} ms per call "
                  f"(mean of {calls}); takes {plan.schedule}")


if __name__ == "__main__":
    main()
