"""mla's decode attention inside a serving engine's step, from Python (README.md here).

    PYTHONPATH=build/python /usr/bin/python3 examples/serving/serving.py --device emu

once:      a Decoder, each layer's paged KV pool resident on the device, one workspace,
           a stream;
per step:  the new tokens' KV rows written into the pools, the token-granular page table
           built from the block table and uploaded with indptr, plan() once;
per layer: Decoder.run(plan, ...) on device memory and the stream (enqueue only).

With --graph the layers are captured once, with a plan made without lengths
(plan(max_requests=B, slots=N)), and every step only rewrites the page table, indptr
and q in device memory and replays the graph (docs/decoder.md, "Graph capture").

Each step's results are checked against the host path (the Decoder call on host
arrays, which validates everything, with the plan's split count) bit for bit, and
against the kernel model; the script exits 1 on any difference. With torch installed,
the host-path check passes torch tensors (bfloat16 q, bfloat16 out written in place).
"""
import argparse
import sys

import numpy as np

import mla

BLOCK_SIZE = 16  # the engine's KV block (page) size in tokens


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="emu", help="emu, hip, hip:N or auto")
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--qlen", type=int, default=1)
    parser.add_argument("--graph", action="store_true",
                        help="capture the layers once and replay the graph every step")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        torch = None

    # --- once ---
    dec = mla.Decoder(heads=args.heads, qlen=args.qlen, device=args.device)
    dev = dec.device
    print("device:", dev.note)
    rng = np.random.default_rng(7)
    context = [500, 0, 130, 33]
    requests, max_tokens = len(context), 1024
    blocks_per_request = max_tokens // BLOCK_SIZE
    num_blocks = requests * blocks_per_request
    slots = num_blocks * BLOCK_SIZE
    block_table = [[(j * requests + b) * 7919 % num_blocks for j in range(blocks_per_request)]
                   for b in range(requests)]
    # E4M3FN values of magnitude < 4, as uint8 bits (torch.float8_e4m3fn where it exists).
    pools = [mla.e4m3(rng.uniform(-3, 3, (slots, 576)).astype(np.float32))
             for _ in range(args.layers)]
    device_pools = [dev.upload(pool) for pool in pools]
    workspace = dev.alloc(dec.workspace_bytes(requests))
    rows_max = requests * args.qlen
    outs = [dev.alloc(rows_max * args.heads * 512 * 2) for _ in range(args.layers)]
    lses = [dev.alloc(rows_max * args.heads * 4) for _ in range(args.layers)]
    pages_buf = dev.alloc(requests * max_tokens * 4)
    indptr_buf = dev.alloc((requests + 1) * 4)
    q_bufs = [dev.alloc(rows_max * args.heads * 576 * 2) for _ in range(args.layers)]
    stream = dev.create_stream()
    softmax_scale, k_scale, v_scale = 1 / 24, 0.5, 2.0

    def enqueue_layers(plan):
        for layer in range(args.layers):
            dec.run(plan, q_bufs[layer], device_pools[layer], pages_buf, indptr_buf,
                    outs[layer], lses[layer], scale=softmax_scale * k_scale,
                    vscale=v_scale, workspace=workspace, stream=stream)

    graph = None
    if args.graph:
        # One plan for every step of `requests` requests, whatever their lengths; the
        # captured launches read the lengths from indptr_buf when replayed.
        plan = dec.plan(max_requests=requests, slots=slots)
        dev.begin_capture(stream)
        try:
            enqueue_layers(plan)
        finally:
            graph = dev.end_capture(stream)

    ok = True
    for step in range(args.steps):
        # --- per step ---
        context = [n + args.qlen for n in context]
        pages, indptr = [], [0]
        for b, n in enumerate(context):
            pages += [block_table[b][t // BLOCK_SIZE] * BLOCK_SIZE + t % BLOCK_SIZE
                      for t in range(n)]
            indptr.append(len(pages))
            for layer in range(args.layers):  # the engine's cache write of the new rows
                for t in range(n - args.qlen, n):
                    slot = pages[indptr[b] + t]
                    pools[layer][slot] = mla.e4m3(rng.uniform(-3, 3, 576).astype(np.float32))
                    dev.upload(pools[layer][slot], device_pools[layer], slot * 576)
        pages = np.array(pages, np.int32)
        indptr = np.array(indptr, np.int32)
        dev.upload(pages, pages_buf)
        dev.upload(indptr, indptr_buf)
        if graph is None:
            plan = dec.plan(indptr, slots)
        print(f"step {step}: {requests} requests, {pages.size} tokens, {plan.num_splits} "
              f"split(s){' + combine' if plan.combine else ''}, workspace "
              f"{plan.workspace_bytes} bytes{', graph replay' if graph else ''}")

        # --- per layer ---
        rows = plan.rows
        qs = [mla.bf16(rng.standard_normal((rows, args.heads, 576)).astype(np.float32))
              for _ in range(args.layers)]
        for layer in range(args.layers):
            dev.upload(qs[layer], q_bufs[layer])  # in an engine, q is already there
        if graph is None:
            enqueue_layers(plan)
        else:
            dev.launch_graph(graph, stream)
        dev.synchronize(stream)

        # --- the check ---
        for layer in range(args.layers):
            out = dev.download(outs[layer], np.uint16, (rows, args.heads, 512))
            lse = dev.download(lses[layer], np.float32, (rows, args.heads))
            host_args = (qs[layer], pools[layer], pages, indptr, softmax_scale * k_scale,
                         v_scale)
            if torch is not None:  # the same call with tensors, bf16 out in place
                expect = torch.empty((rows, args.heads, 512), dtype=torch.bfloat16)
                expect_lse = torch.empty((rows, args.heads))
                q_t = torch.from_numpy(mla.from_bf16(qs[layer])).to(torch.bfloat16)
                dec(q_t, torch.from_numpy(pools[layer]), torch.from_numpy(pages),
                    torch.from_numpy(indptr), *host_args[4:], num_splits=plan.num_splits,
                    out=expect, lse=expect_lse)
                expect = expect.view(torch.int16).numpy().view(np.uint16)
                expect_lse = expect_lse.numpy()
            else:
                expect = np.empty((rows, args.heads, 512), np.uint16)
                expect_lse = np.empty((rows, args.heads), np.float32)
                dec(*host_args, num_splits=plan.num_splits, out=expect, lse=expect_lse)
            model_out, _ = mla.reference.model(*host_args, num_splits=plan.num_splits,
                                               qlen=args.qlen)
            same = (np.array_equal(out, expect)
                    and np.array_equal(lse.view(np.uint32), expect_lse.view(np.uint32)))
            model_ok = np.array_equal(mla.from_bf16(out), model_out)
            print(f"  layer {layer}: "
                  f"{'matches the host path' if same else 'DIFFERS from the host path'}, "
                  f"{'equals the kernel model' if model_ok else 'DIFFERS from the model'}")
            ok &= same and model_ok
    if graph is not None:
        dev.destroy_graph(graph)
    dev.destroy_stream(stream)
    if not ok:
        print("serving example: some layer differs")
        return 1
    print("serving example: every layer matches the host path and the kernel model")
    return 0


if __name__ == "__main__":
    sys.exit(main())
