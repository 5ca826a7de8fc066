#!/usr/bin/env python3
"""Extracts measured GEMM times into bench/gemm/measured-gemms.csv (read by llmsim_gemm_regimes and
tests/test_gemm_regimes.cpp). Standard library only.

Sources (each row's `source` column):
  probe-h100-2026-11-22  hardware_db/profiles/h100-sxm5-80gb-2026-11-22/probe-raw.json (this project's probe)
  probe-h100-2026-11-26  hardware_db/profiles/h100-sxm5-80gb-2026-11-26/probe-raw.json (second H100 SXM)
  probe-h200-2026-11-26  hardware_db/profiles/h200-sxm-141gb-2026-11-26/probe-raw.json
  vidur-h100, vidur-a100 github.com/microsoft/vidur @ 7d47513363ec447a741ac5e47241580b47724fbf,
                         data/profiling/compute/{h100,a100}/meta-llama/Llama-2-{7b,70b}-hf/mlp.csv

Probe rows: cuBLASLt, operands N(0,1), rotated past L2, median of 20 timings of back-to-back launches between
CUDA events ("stream": the kernel plus the GPU's gap to the next queued kernel).
Vidur rows: the median over 20 layers of the CUDA kernel time the PyTorch profiler attributes to each linear
layer (fp16, sarathi ColumnParallelLinear/RowParallelLinear on one GPU, no communication): "kernel", no
launch gap. Shapes: attn_pre_proj N=(heads+2kv)·d/tp, K=h; attn_post_proj N=h, K=heads·d/tp; mlp_up_proj
N=2f/tp, K=h (gated); mlp_down_proj N=h, K=f/tp; M = num_tokens.

usage: extract.py PROBE_H100_1122 PROBE_H100_1126 PROBE_H200 VIDUR_DIR > measured-gemms.csv
  (VIDUR_DIR holds {h100,a100}-Llama-2-{7b,70b}-hf.csv, i.e. `git show HEAD:data/profiling/...` of the above)
"""
import csv
import json
import sys

VIDUR_TOKENS = [1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096]


def probe_rows(path, source, accel):
    d = json.load(open(path))
    for g in d["gemm"]:
        yield [source, accel, g["precision"], g["label"], g["m"], g["n"], g["k"], g["batch"],
               "%.4f" % g["time_us"], "stream"]


def vidur_rows(path, source, accel, model):
    seen = set()   # Vidur's token grid lists 2048 and 4096 twice; the first row is kept
    for r in csv.DictReader(open(path)):
        m = int(r["num_tokens"])
        tp = int(r["num_tensor_parallel_workers"])
        if m not in VIDUR_TOKENS or (m, tp) in seen:
            continue
        seen.add((m, tp))
        h, f = int(r["n_embd"]), int(r["n_expanded_embd"])
        heads, kv = int(r["n_head"]), int(r["n_kv_head"])
        d = h // heads
        gate = 2 if r["use_gated_mlp"] == "True" else 1
        ops = {
            "attn_pre_proj": ((heads + 2 * kv) * d // tp, h),
            "attn_post_proj": (h, heads * d // tp),
            "mlp_up_proj": (gate * f // tp, h),
            "mlp_down_proj": (h, f // tp),
        }
        for op, (n, k) in ops.items():
            ms = float(r["time_stats.%s.median" % op])
            yield [source, accel, "fp16", "%s %s tp%d" % (model, op, tp), m, n, k, 1, "%.4f" % (ms * 1e3), "kernel"]


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["source", "accelerator", "precision", "label", "m", "n", "k", "batch", "time_us", "timing"])
    for path, source, accel in [(sys.argv[1], "probe-h100-2026-11-22", "h100-sxm"),
                                (sys.argv[2], "probe-h100-2026-11-26", "h100-sxm"),
                                (sys.argv[3], "probe-h200-2026-11-26", "h200-sxm")]:
        for row in probe_rows(path, source, accel):
            w.writerow(row)
    for gpu, accel in [("h100", "h100-sxm"), ("a100", "a100-sxm-80gb")]:
        for model in ["Llama-2-7b-hf", "Llama-2-70b-hf"]:
            for row in vidur_rows("%s/%s-%s.csv" % (sys.argv[4], gpu, model), "vidur-" + gpu, accel, model):
                w.writerow(row)


if __name__ == "__main__":
    main()
