#!/usr/bin/env python3
"""Fit inference.host_per_sequence_us, the serving engine's host time per running sequence per
iteration, on validation/serving.json's throughput cases, with its leave-one-out error, and score the
fitted value on the held-out TensorRT-LLM tables (never used to fit). docs/serving.md, "Host time per
sequence", records the output.

    python3 bench/heldout/fit_host_per_sequence.py [--llmsim build/llmsim]

The fit is a grid over 0..10 us in 0.5 us steps and 12.5, 15, 20, 30 us minimising the mean |relative error| of
output_tokens_per_s_per_gpu; leave-one-out refits the grid without each case in turn and predicts it,
leave-one-source-out without every case of one source (an MLPerf round, TensorRT-LLM's tables).
Standard library only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
QUANTITY = "output_tokens_per_s_per_gpu"
GRID = [0.5 * i for i in range(21)] + [12.5, 15.0, 20.0, 30.0]


def errors(llmsim, path, us):
    """Relative error of each case's throughput with host_per_sequence_us = us."""
    with open(path) as f:
        data = json.load(f)
    for case in data["cases"]:
        case["scenario"].setdefault("inference", {})["host_per_sequence_us"] = us
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as tmp:
        json.dump(data, tmp)
    try:
        out = subprocess.run([llmsim, "validate", tmp.name, "--json"], capture_output=True, text=True, check=True)
    finally:
        os.unlink(tmp.name)
    return {c["id"]: c["error"] for c in json.loads(out.stdout)["cases"] if c["quantity"] == QUANTITY}


def mean_abs(errs, skip=None):
    """Mean |error| over the cases; `skip`: one id or a set of ids left out."""
    skipped = skip if isinstance(skip, set) else {skip}
    values = [abs(e) for i, e in errs.items() if i not in skipped]
    return sum(values) / len(values)


def source_key(source):
    """The source a case's `source` names, as calibrate/sustained_fit.cpp source_key groups runs: the
    repository (an MLPerf round's results repository, TensorRT-LLM's docs) or the paper."""
    first = source.split(" ")[0]
    if "/" in first:
        return first
    return source.split(",")[0].split(" (")[0].strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llmsim", default=os.path.join(ROOT, "build", "llmsim"))
    args = ap.parse_args()
    fit_set = os.path.join(ROOT, "validation", "serving.json")
    by_us = {us: errors(args.llmsim, fit_set, us) for us in GRID}
    best = min(GRID, key=lambda us: mean_abs(by_us[us]))
    print(f"fit on {fit_set} ({len(by_us[best])} throughput cases)")
    for us in GRID:
        print(f"  {us:4.1f} us: mean |error| {100 * mean_abs(by_us[us]):5.2f}%" + ("  <- fitted" if us == best else ""))
    loo = []
    for case in sorted(by_us[best]):
        us = min(GRID, key=lambda u: mean_abs(by_us[u], skip=case))
        loo.append((case, us, by_us[us][case]))
    print(f"leave-one-out: mean |error| {100 * sum(abs(e) for _, _, e in loo) / len(loo):.2f}%, "
          f"fitted value per fold {sorted(set(u for _, u, _ in loo))} us")
    # Leave one source out: refit without every case of a source, predict that source's cases.
    with open(fit_set) as f:
        sources = {c["id"]: source_key(c["source"]) for c in json.load(f)["cases"]}
    loso = []
    for src in sorted(set(sources[i] for i in by_us[best])):
        ids = {i for i in by_us[best] if sources[i] == src}
        us = min(GRID, key=lambda u: mean_abs(by_us[u], skip=ids))
        errs = [by_us[us][i] for i in ids]
        loso += errs
        print(f"  without {src} ({len(ids)} cases): {us} us; its cases {100 * sum(map(abs, errs)) / len(errs):.2f}%")
    print(f"leave-one-source-out: mean |error| {100 * sum(map(abs, loso)) / len(loso):.2f}%")
    for name in ("trtllm-0.17-throughput.json", "trtllm-0.14-online.json"):
        path = os.path.join(HERE, name)
        before, after = errors(args.llmsim, path, 0.0), errors(args.llmsim, path, best)
        print(f"held out {name} ({len(after)} cases): mean |error| {100 * mean_abs(before):.1f}% at 0 us -> "
              f"{100 * mean_abs(after):.1f}% at {best} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
