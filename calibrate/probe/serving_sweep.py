#!/usr/bin/env python3
"""GEMMs of serving iterations, measured with PyTorch on one GPU: the linear layers of Llama-2-70B
(tensor parallel 1 and 2), Llama-3-8B and Mixtral-8x7B's experts, at the token counts a continuous-
batching iteration has (16 .. 8192 rows: decodes plus prompt chunks), in FP8 (torch._scaled_mm, e4m3
operands with per-tensor scales, bf16 output: what FP8 serving engines run), with Hopper's fast FP8
accumulation ("fp8-fast": use_fast_accum, the CUTLASS FP8FastAccum schedules vLLM's scaled_mm runs)
and without ("fp8": periodic promotion to FP32, torch's default), and bf16 (F.linear).

Each row times one GEMM with CUDA events: `ms` is the median over repetitions of `inner` back-to-back
calls divided by `inner` (the launch overlaps the previous kernel, as in a serving step), over weight
copies rotated so that the weights come from HBM (each copy set > 2x the L2). An expert row times
`experts` GEMMs of rows x top_k / experts rows each (the tokens routed evenly), back to back, as a
grouped MoE GEMM's work.

  python3 calibrate/probe/serving_sweep.py --out serving-sweep.json [--seconds 240]
Rewrites the output after every shape (a timeout leaves what was measured).
"""
import argparse
import datetime
import json
import platform
import time

import torch
import torch.nn.functional as F

DEV = "cuda"
# (label, N out features, K in features): one GEMM of a layer per row.
SHAPES = [
    ("llama-2-70b-tp2-qkv", 5120, 8192),
    ("llama-2-70b-tp2-o", 8192, 4096),
    ("llama-2-70b-tp2-gate-up", 28672, 8192),
    ("llama-2-70b-tp2-down", 8192, 14336),
    ("llama-2-70b-tp1-gate-up", 57344, 8192),
    ("llama-2-70b-tp1-down", 8192, 28672),
    ("llama-3-8b-qkv", 6144, 4096),
    ("llama-3-8b-gate-up", 28672, 4096),
    ("llama-3-8b-down", 4096, 14336),
]
# Mixtral-8x7B experts (h 4096, expert ffn 14336, 8 experts, top 2).
EXPERTS = [("mixtral-expert-gate-up", 28672, 4096), ("mixtral-expert-down", 4096, 14336)]
ROWS = [16, 64, 128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192]
L2_BYTES = 50 * 2**20


def med(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def time_ms(fn, reps=7, inner=10):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(inner):
            fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / inner)
    return med(out)


def weights(n, k, dtype, copies_min=1):
    elem = 1 if dtype == torch.float8_e4m3fn else 2
    copies = max(copies_min, int((2 * L2_BYTES) // (n * k * elem)) + 1)
    ws = []
    for _ in range(min(copies, 8)):
        w = torch.randn(n, k, device=DEV, dtype=torch.bfloat16)
        ws.append(w.to(dtype) if dtype != torch.bfloat16 else w)
    return ws


class Rotor:
    def __init__(self, items):
        self.items, self.i = items, 0

    def next(self):
        x = self.items[self.i]
        self.i = (self.i + 1) % len(self.items)
        return x


def gemm_fn(m, n, k, precision):
    if precision.startswith("fp8"):
        fast = precision == "fp8-fast"
        a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16).to(torch.float8_e4m3fn)
        rot = Rotor(weights(n, k, torch.float8_e4m3fn))
        one = torch.ones((), device=DEV, dtype=torch.float32)
        return lambda: torch._scaled_mm(a, rot.next().t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                        use_fast_accum=fast)
    a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
    rot = Rotor(weights(n, k, torch.bfloat16))
    return lambda: F.linear(a, rot.next())


def expert_fn(m, n, k, precision, experts=8, top_k=2):
    per = max(1, (m * top_k) // experts)
    fns = [gemm_fn(per, n, k, precision) for _ in range(experts)]

    def run():
        for f in fns:
            f()

    return run, per


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=240)
    ap.add_argument("--precisions", default="fp8,fp8-fast,bf16")
    a = ap.parse_args()
    t0 = time.time()
    p = torch.cuda.get_device_properties(0)
    res = dict(llmsim_serving_sweep=1, date=datetime.datetime.now(datetime.timezone.utc).isoformat(), host=platform.node(),
               gpu=p.name, sm_count=p.multi_processor_count, memory_bytes=p.total_memory, torch=torch.__version__,
               cuda=torch.version.cuda, method=__doc__.strip().split("\n\n")[1], rows=[])

    def save():
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)

    for precision in a.precisions.split(","):
        for label, n, k in SHAPES + EXPERTS:
            for m in ROWS:
                if time.time() - t0 > a.seconds:
                    res["stopped"] = f"time budget of {a.seconds} s reached"
                    save()
                    return
                try:
                    if label.startswith("mixtral-expert"):
                        fn, per = expert_fn(m, n, k, precision)
                        ms = time_ms(fn, inner=4)
                        flops = 2.0 * per * 8 * n * k
                        row = dict(label=label, precision=precision, tokens=m, rows_per_expert=per, experts=8,
                                   n=n, k=k, ms=ms, tflops=flops / ms / 1e9)
                    else:
                        fn = gemm_fn(m, n, k, precision)
                        ms = time_ms(fn)
                        row = dict(label=label, precision=precision, m=m, n=n, k=k, ms=ms,
                                   tflops=2.0 * m * n * k / ms / 1e9)
                except Exception as e:   # a shape the library refuses: recorded, not fatal
                    row = dict(label=label, precision=precision, m=m, n=n, k=k, error=f"{type(e).__name__}: {e}"[:200])
                res["rows"].append(row)
                torch.cuda.empty_cache()
            save()
    res["seconds"] = round(time.time() - t0, 1)
    save()


if __name__ == "__main__":
    main()
