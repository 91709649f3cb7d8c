#!/usr/bin/env python3
"""The Decoder's split count against a sweep of split counts (every figure modeled).

For each case of mla-perf's default Kimi-K3 TP8 table (qlen 1, 2, 4; B 64, 128, 256, 448 at
ISL 8K; B 1, 4, 8 at 32K and 128K) runs `mla-perf` (emulator timing mode, whole-GPU
estimate, plain build) once with the Decoder's split count (no `splits=`) and then with
`splits=` over a candidate set around it, under both answers to the LDS-DMA counter
question (`--dma-lgkmcnt 1` and `0`). The candidates of a case whose longest request has
`blocks` 128-token blocks (all capped at min(blocks, 256)):

  - the powers of two 1, 2, 4, ..., 256 (with power-of-two block counts these are the
    smallest NS of each chunk size, the only NS worth having: a larger NS with the same
    chunk only adds empty CTAs and combine slots);
  - the Decoder's choice, half of it and twice it;
  - for k = 1 .. 8 waves, the largest NS whose attention grid (B NS rounded up to the 8
    XCDs, times the head groups G) fits k x 256 CTAs, so that the grid is a whole number
    of waves of one CTA a CU.

Prints a Markdown table: the case, the Decoder's NS and modeled total us, the best NS of
the sweep and its total, and the ratio chosen / best, under each answer; with
--update-doc FILE it writes the table between `<!-- split-sweep:begin -->` and
`<!-- split-sweep:end -->` of FILE. mla-perf runs one process at a time under `nice`
with several `--case` arguments a call, with a fresh kernel cache (a temp dir) unless
--cache is given.

    python3 bench/perf/split_sweep.py --perf build/bin/mla-perf \
        --update-doc docs/performance.md

With --mixed it does the same for mixed-length batches that look like serving decode
batches (MIXED below, mla-perf's `lens=` syntax), the longest request's blocks in place
of `blocks` and the request count in place of B in the candidates, plus every NS within
MIXED_WINDOW of the choice, minus the NS at or below a quarter of the choice;
its table goes between `<!-- split-sweep-mixed:begin -->` and `<!-- split-sweep-mixed:end
-->`, with a column of the Decoder's attention CTA classes (simulated CTAs).

    python3 bench/perf/split_sweep.py --perf build/bin/mla-perf --mixed \
        --update-doc docs/performance.md
"""
import argparse
import csv
import math
import os
import re
import subprocess
import sys
import tempfile

from doc_markers import replace_between_markers

CASES = ([(q, b, 8192) for q in (1, 2, 4) for b in (64, 128, 256, 448)] +
         [(q, b, isl) for q in (1, 2, 4) for isl in (32768, 131072) for b in (1, 4, 8)])
# Sorted as mla-perf's defaultCases() prints them.
CASES.sort(key=lambda c: ((1, 2, 4).index(c[0]), c[2] != 8192,
                          (8192, 32768, 131072).index(c[2]), c[1]))
# Mixed-length batches, Kimi-K3 TP8 (12 heads): (qlen, mla-perf lens= text). LO..HIxN
# spreads N lengths geometrically from LO to HI; shuffle=S permutes them (seeded).
MIXED_LENS = (
    "1K..32Kx64,shuffle=1",  # B 64, lengths spread 1K..32K in random order
    "128Kx1+2Kx63",          # one 128K request first, 63 short ones
    "2Kx63+128Kx1",          # the same batch, the long request last in dispatch order
    "8Kx56+64Kx8,shuffle=4", # B 64, eight 64K requests among 8K ones
    "32Kx1+1Kx7",            # B 8: one long, seven short
)
# qlen 4 leaves out the spread, to keep the whole sweep short: its 64 distinct lengths
# times 3 head groups make up to a few hundred simulated CTAs at every NS.
MIXED = [(q, lens) for q in (1, 2, 4) for lens in MIXED_LENS
         if q < 4 or not lens.startswith("1K..32K")]
MIXED_WINDOW = 4  # mixed batches: also every NS within this of the choice
ANSWERS = (1, 0)  # LDS DMA counted on lgkmcnt (the timing parameters' default), vmcnt only
ANSWER_NAME = {1: "DMA on lgkmcnt", 0: "DMA on vmcnt only"}
HEADS, BLOCK_TOKENS, MAX_SPLITS, CUS, XCDS, MAX_WAVES = 12, 128, 256, 256, 8, 8
# | qlen | B | ISL | NS | attention CTAs (simulated) | combine CTAs | attention us |
# combine us | total us | TB/s | ... (one answer, plain build).
# mla-perf --policy: the split policy's estimate of the row's call.
POLICY = re.compile(r"^policy estimate .* total ([\d.]+) us$")
# The ISL column of a mixed batch is its lens= text ("1K..32Kx64 shuffle=1").
ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*([^|]*?)\s*\|\s*(\d+)\s*\|\s*\d+ \((\d+)\)\s*\|"
                 r"\s*\d+\s*\|"
                 r"\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|")


def isl_text(isl):
    return f"{isl // 1024}K" if isl % 1024 == 0 else str(isl)


def is_mixed(case):
    return isinstance(case[1], str)


def tokens(text):
    text = text.strip()
    return int(text[:-1]) * 1024 if text[-1:] in "kK" else int(text)


def mixed_lengths(lens):
    """(request count, longest length) of an mla-perf lens= text (PerfCase::parse)."""
    count, longest = 0, 0
    for term in lens.split(",")[0].split("+"):
        rng, _, n = term.partition("x")
        count += int(n) if n else 1
        longest = max(longest, tokens(rng.split("..")[-1]))
    return count, longest


def case_shape(case):
    """(qlen, B, longest request's tokens) of a case."""
    if is_mixed(case):
        return (case[0],) + mixed_lengths(case[1])
    return case


def case_arg(case):
    if is_mixed(case):
        return f"qlen={case[0]},lens={case[1]}"
    q, b, isl = case
    return f"qlen={q},B={b},isl={isl}"


def case_columns(case):
    """What mla-perf prints in its qlen, B and ISL columns for the case."""
    q, b, longest = case_shape(case)
    if is_mixed(case):
        return (q, b, case[1].replace(",shuffle=", " shuffle="))
    return (q, b, isl_text(longest))


def head_groups(qlen):
    # kernel::headGroups: 16 rows a CTA hold 16 // qlen heads.
    return math.ceil(HEADS / (16 // qlen))


def candidates(case, choice):
    q, b, isl = case_shape(case)
    limit = min(math.ceil(isl / BLOCK_TOKENS), MAX_SPLITS)
    ns = {1 << i for i in range(9)}
    ns |= {choice, max(choice // 2, 1), choice * 2}
    if is_mixed(case):
        # Placement makes a mixed batch's time jagged in NS: every NS near the choice.
        ns |= set(range(choice - MIXED_WINDOW, choice + MIXED_WINDOW + 1))
    g = head_groups(q)
    for k in range(1, MAX_WAVES + 1):
        fits = [n for n in range(1, limit + 1)
                if math.ceil(b * n / XCDS) * XCDS * g <= k * CUS]
        if fits:
            ns.add(max(fits))
    if is_mixed(case):
        # NS at or below a quarter of the choice are left out: they are the slowest points
        # to simulate (long CTAs, a class per distinct length), and the sweeps of these
        # batches that still had them (2026-11-30) found every one at least 1.31 x the best.
        ns = {n for n in ns if 4 * n > choice}
    return sorted(n for n in ns if 1 <= n <= limit)


def run(perf, cache, answer, specs, build):
    """mla-perf over `specs` (case, NS or None) with the attention build `build`;
    {(case, NS or None): row}."""
    args = ["nice", perf, "--dma-lgkmcnt", str(answer), "--build", build, "--policy",
            "--params-set", "default"]
    for case, ns in specs:
        args += ["--case", case_arg(case) + (f",splits={ns}" if ns else "")]
    env = dict(os.environ, MLA_CACHE_DIR=cache)
    proc = subprocess.run(args, env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"split_sweep: {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    rows = [ROW.match(line) for line in proc.stdout.splitlines()]
    rows = [m for m in rows if m]
    estimates = [POLICY.match(line) for line in proc.stdout.splitlines()]
    estimates = [float(m[1]) for m in estimates if m]
    if len(estimates) != len(specs):
        sys.exit(f"split_sweep: {perf} printed {len(estimates)} policy estimates for "
                 f"{len(specs)} cases:\n{proc.stdout}")
    if len(rows) != len(specs):
        sys.exit(f"split_sweep: {perf} printed {len(rows)} rows for {len(specs)} cases:\n"
                 f"{proc.stdout}")
    out = {}
    for spec, m, estimate in zip(specs, rows, estimates):
        case, ns = spec
        if (int(m[1]), int(m[2]), m[3]) != case_columns(case) or (ns and int(m[4]) != ns):
            sys.exit(f"split_sweep: row {m[0]} does not match the case {spec}")
        out[spec] = dict(ns=int(m[4]), classes=int(m[5]), att=float(m[6]), comb=float(m[7]),
                         total=float(m[8]), estimate=estimate)
    return out


def sweep(perf, cache, answer, cases, build):
    chosen = run(perf, cache, answer, [(c, None) for c in cases], build)
    specs = [(c, ns) for c in cases for ns in candidates(c, chosen[(c, None)]["ns"])]
    swept = run(perf, cache, answer, specs, build)
    result = {}
    for c in cases:
        mine = chosen[(c, None)]
        points = {ns: r["total"] for (cc, ns), r in swept.items() if cc == c}
        estimates = {ns: r["estimate"] for (cc, ns), r in swept.items() if cc == c}
        # The choice is one of the candidates: the same call, the same modeled time.
        if abs(points[mine["ns"]] - mine["total"]) > 0.051:
            sys.exit(f"split_sweep: {c} NS {mine['ns']}: {points[mine['ns']]} with splits= "
                     f"but {mine['total']} as the Decoder's choice")
        best = min(points, key=lambda n: (points[n], n))
        result[c] = dict(ns=mine["ns"], total=mine["total"], best=best,
                         best_total=points[best], points=points, estimates=estimates,
                         classes=mine["classes"], best_classes=swept[(c, best)]["classes"])
    return result


def table(results, answers, command, cases, build):
    mixed = any(is_mixed(c) for c in cases)
    if mixed:
        lines = [
            f"Produced by `{command}` (every figure **modeled** by the emulator's timing "
            "mode, docs/timing-model.md, default parameters but the LDS-DMA counter answer; "
            f"mla-perf's whole-GPU estimate, {build} build, each attention CTA simulated with "
            "its own request's tokens). \"lengths\": mla-perf's `lens=` text (LO..HIxN: N "
            "lengths spread geometrically from LO to HI; shuffle=S: in a seeded random "
            "order). \"Decoder\": the split count `chooseNumSplits` picks, the call's total "
            "us with it and the attention CTAs simulated (the classes, twice with a partial "
            "last wave); \"best\": the fastest split count of the sweep (the powers of two "
            f"up to the longest request's blocks and 256, the choice, every NS within "
            f"{MIXED_WINDOW} of it, half and twice it, "
            "and the largest NS whose attention grid fits k x 256 CTAs for k = 1..8, all "
            "above a quarter of the choice) and its "
            "total; ratio = Decoder / best; \"policy's estimate\": the split policy's cost "
            "model (`rt::estimateSplitCost`, calibrated constants, which the Decoder "
            "minimises) for the Decoder's NS and the best NS.",
            "",
        ]
        head, rule = "| qlen | B | lengths |", "|---|---|---|"
    else:
        lines = [
            f"Produced by `{command}` (every figure **modeled** by the emulator's timing "
            "mode, docs/timing-model.md, default parameters but the LDS-DMA counter answer; "
            f"mla-perf's whole-GPU estimate, {build} build). \"Decoder\": the split count "
            "`chooseNumSplits` picks and the call's total us with it; \"best\": the fastest "
            "split count of the sweep (the powers of two up to the blocks of a request and "
            "256, the choice, half and twice it, and the largest NS whose attention grid "
            "fits k x 256 CTAs for k = 1..8) and its total; ratio = Decoder / best.",
            "",
        ]
        head, rule = "| qlen | B | ISL |", "|---|---|---|"
    for a in answers:
        n = ANSWER_NAME[a]
        head += f" Decoder NS ({n}) | us |" + (" CTAs simulated |" if mixed else "")
        head += " best NS | us | ratio |" + (" policy's estimate us: Decoder / best NS |"
                                             if mixed else "")
        rule += "---|---|" + ("---|" if mixed else "") + "---|---|---|" + ("---|" if mixed else "")
    lines += [head, rule]
    for c in cases:
        q, b, text = case_columns(c)
        row = f"| {q} | {b} | {text} |"
        for a in answers:
            r = results[a][c]
            ratio = r["total"] / r["best_total"]
            mark = f"**{ratio:.3f}**" if ratio > 1.05 else f"{ratio:.3f}"
            row += f" {r['ns']} | {r['total']:.1f} |" + (f" {r['classes']} |" if mixed else "")
            row += f" {r['best']} | {r['best_total']:.1f} | {mark} |"
            if mixed:
                est = r["estimates"]
                row += f" {est[r['ns']]:.1f} / {est[r['best']]:.1f} |"
        lines.append(row)
    lines.append("")
    for a in answers:
        ratios = [r["total"] / r["best_total"] for r in results[a].values()]
        worse = sum(x > 1.05 for x in ratios)
        lines.append(f"{ANSWER_NAME[a]}: largest ratio {max(ratios):.3f}, geometric mean "
                     f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}, "
                     f"{worse} of {len(ratios)} cases more than 5 % slower than the best.")
        lines.append("")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--perf", default="build/bin/mla-perf", help="the mla-perf binary")
    p.add_argument("--cache", help="kernel cache directory (default: a fresh temp dir)")
    p.add_argument("--dma-lgkmcnt", choices=("0", "1", "both"), default="both")
    p.add_argument("--mixed", action="store_true",
                   help="the mixed-length batches (MIXED) instead of the default table")
    p.add_argument("--case", action="append", metavar="QLEN,B,ISL | QLEN:LENS",
                   help="only these cases of the table (e.g. 4,1,131072); with --mixed any "
                        "mixed batch (e.g. 1:128Kx1+2Kx63); repeatable")
    p.add_argument("--points", metavar="FILE",
                   help="also write every swept point (case, answer, NS, total us) as CSV")
    p.add_argument("--build", choices=("plain", "wspec"), default="plain",
                   help="the attention build (wspec: the warp-specialised kernel, whose "
                        "times do not depend on the counter answer; its tables go between "
                        "the markers with a -wspec suffix)")
    p.add_argument("--update-doc", metavar="FILE")
    a = p.parse_args()
    answers = ANSWERS if a.dma_lgkmcnt == "both" else (int(a.dma_lgkmcnt),)
    cases = MIXED if a.mixed else CASES
    if a.case and a.mixed:
        try:
            cases = [(int(s.split(":", 1)[0]), s.split(":", 1)[1]) for s in a.case]
            for c in cases:
                mixed_lengths(c[1])
        except (ValueError, IndexError):
            sys.exit(f"split_sweep: --case {a.case}: expected QLEN:LENS (mla-perf's lens= "
                     "text, e.g. 1:128Kx1+2Kx63)")
    elif a.case:
        try:
            cases = [tuple(int(x) for x in s.split(",")) for s in a.case]
        except ValueError:
            sys.exit(f"split_sweep: --case {a.case}: expected QLEN,B,ISL integers")
        unknown = [c for c in cases if c not in CASES]
        if unknown:
            sys.exit(f"split_sweep: {unknown} not in the default table")
    cache = a.cache or tempfile.mkdtemp(prefix="mla-split-sweep-")
    results = {ans: sweep(a.perf, cache, ans, cases, a.build) for ans in answers}
    command = "python3 bench/perf/split_sweep.py --perf build/bin/mla-perf" + (
        " --mixed" if a.mixed else "") + (
        f" --build {a.build}" if a.build != "plain" else "") + (
        f" --dma-lgkmcnt {a.dma_lgkmcnt}" if a.dma_lgkmcnt != "both" else "") + (
        f" --update-doc {a.update_doc}" if a.update_doc else "")
    text = table(results, answers, command, cases, a.build)
    print(text)
    if a.points:
        with open(a.points, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["qlen", "B", "isl_or_lens", "lds_dma_on_lgkmcnt", "ns",
                          "decoder_choice", "total_us", "policy_estimate_us"])
            for ans in answers:
                for c, r in results[ans].items():
                    q, b, _ = case_columns(c)
                    for ns, t in sorted(r["points"].items()):
                        out.writerow([q, b, c[1] if is_mixed(c) else c[2], ans, ns,
                                      int(ns == r["ns"]), t, r["estimates"][ns]])
    if a.update_doc:
        marker = ("split-sweep-mixed" if a.mixed else "split-sweep") + (
            "-wspec" if a.build == "wspec" else "")
        replace_between_markers(a.update_doc, marker, text, "split_sweep")


if __name__ == "__main__":
    main()
