#!/usr/bin/env python3
"""The small-batch / long-context table of docs/performance.md (issue 14), before and after.

Runs `mla-perf` (emulator timing mode, every figure modeled) for Kimi-K3 TP8, qlen 1 and 4,
B = 1 and 8 at 32K and 128K tokens, with two builds: BEFORE (a build of the tree before
the change) and AFTER (this tree), both under LDS DMA on lgkmcnt (the timing parameters'
default). Prints a Markdown table (split count, attention, combine, call time, modeled
TB/s, the combine's share of the call) and, with --update-doc, writes it between the
markers `<!-- small-batch:begin -->` and `<!-- small-batch:end -->` of the given file.

    python3 bench/perf/small_batch_table.py --before OLD/build/bin/mla-perf \
        --after build/bin/mla-perf --update-doc docs/performance.md
"""
import argparse
import os
import re
import subprocess
import sys

from doc_markers import replace_between_markers

CASES = [(q, b, isl) for q in (1, 4) for b in (1, 8) for isl in ("32K", "128K")]
# Targets of issue 14, TB/s.
TARGETS = {(1, "32K"): 2.5, (1, "128K"): 3.5, (8, "32K"): 5.0, (8, "128K"): 5.0}
ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\w+)\s*\|\s*(\d+)\s*\|[^|]*\|\s*(\d+)\s*\|"
                 r"\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|")


def run(perf, cache):
    args = [perf, "--dma-lgkmcnt", "1"]
    # The default parameter set only (an mla-perf from before issue 21 has no sets).
    if "--params-set" in subprocess.run([perf, "--help"], capture_output=True, text=True).stdout:
        args += ["--params-set", "default"]
    for q, b, isl in CASES:
        args += ["--case", f"qlen={q},B={b},isl={isl}"]
    env = dict(os.environ, MLA_CACHE_DIR=cache)
    out = subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            q, b, isl, ns, comb_ctas = int(m[1]), int(m[2]), m[3], int(m[4]), int(m[5])
            att, comb, total, tbps = (float(m[i]) for i in range(6, 10))
            rows[(q, b, isl)] = dict(ns=ns, att=att, comb=comb, total=total, tbps=tbps)
    missing = [c for c in CASES if c not in rows]
    if missing:
        sys.exit(f"small_batch_table: {perf} printed no row for {missing}:\n{out}")
    return rows


def table(before, after, command):
    lines = [
        f"Produced by `{command}` (every figure **modeled** by the emulator's timing mode, "
        "docs/timing-model.md, default parameters, LDS DMA on lgkmcnt; mla-perf's whole-GPU "
        "estimate; splits as each tree's Decoder chooses). \"Before\": the tree before "
        "issue 14 (one-wave combine with a serial split loop, split heuristic capped at 64, "
        "a combine at NS = 1); \"after\": this tree. Times in us; TB/s = B x ISL x 576 B over "
        "the call, launches included; combine share = combine / call.",
        "",
        "| qlen | B | ISL | target TB/s | NS before / after | attention us | combine us "
        "| call us | TB/s | combine share |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for q, b, isl in CASES:
        x, y = before[(q, b, isl)], after[(q, b, isl)]
        share = lambda r: 100.0 * r["comb"] / r["total"]
        lines.append(
            f"| {q} | {b} | {isl} | {TARGETS[(b, isl)]:.1f} | {x['ns']} / {y['ns']} "
            f"| {x['att']:.1f} / {y['att']:.1f} | {x['comb']:.1f} / {y['comb']:.1f} "
            f"| {x['total']:.1f} / {y['total']:.1f} | {x['tbps']:.2f} / **{y['tbps']:.2f}** "
            f"| {share(x):.0f}% / {share(y):.0f}% |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--before", required=True, help="mla-perf of the tree before the change")
    p.add_argument("--after", required=True, help="mla-perf of this tree")
    p.add_argument("--update-doc", metavar="FILE")
    p.add_argument("--cache", default="/tmp/mla-small-batch-cache",
                   help="kernel cache directory (one per build is made under it)")
    a = p.parse_args()
    before = run(a.before, os.path.join(a.cache, "before"))
    after = run(a.after, os.path.join(a.cache, "after"))
    command = ("python3 bench/perf/small_batch_table.py --before BEFORE/build/bin/mla-perf "
               "--after build/bin/mla-perf" + (f" --update-doc {a.update_doc}" if a.update_doc else ""))
    text = table(before, after, command)
    print(text)
    if a.update_doc:
        replace_between_markers(a.update_doc, "small-batch", text, "small_batch_table")


if __name__ == "__main__":
    main()
