#!/usr/bin/env python3
"""Serving iterations kept up back to back, as a deployment at its capacity keeps its GPUs: the same
layers as serving_iteration.py (its mixes, FP8 weights, CUDA graphs of `LAYERS` layers over `COPIES`
weight and K/V copies), first as a burst (median of 7 replays after an idle pause, what
serving_iteration.py reports) and then replayed without pause for `seconds`, timed per ~0.2-s window
with the SM clock, board power, temperature and the clock-event reasons (NVML) read after each window.
`steady_ms` is the median over the second half of the windows; `slowdown` = steady / burst. A dense
8192^3 FP8 GEMM is kept up the same way as the heaviest load.

What it answers: whether the power limit (700 W on an H100 SXM) lowers the SM clock under serving's
FP8 GEMM-heavy iterations, and by how much for each kind of mix (decode-heavy mixes read the KV cache;
mixed and prefill mixes are compute-bound).

  python3 calibrate/probe/serving_sustained.py --out serving-sustained.json [--scale 1.0]
Rewrites the output after every row (a timeout leaves what was measured).
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serving_iteration as si  # noqa: E402

# (label, model, decoding sequences, their context, prompts, prompt length, seconds whole, seconds GEMMs)
ROWS = [
    ("70b-tp1-server-state", "llama-2-70b-tp1", 605, 370, 2, 222, 35, 20),   # the H200 Server runs' layout
    ("70b-tp2-server-state", "llama-2-70b-tp2", 704, 458, 2, 256, 35, 20),
    ("mixtral-tp1-server-state", "mixtral-8x7b-tp1", 613, 520, 4, 448, 35, 20),
    ("70b-tp2-decode-256", "llama-2-70b-tp2", 256, 458, 0, 0, 20, 0),
    ("8b-decode-1024", "llama-3-8b-tp1", 1024, 600, 0, 0, 20, 0),
    ("70b-tp2-prefill-4x1024", "llama-2-70b-tp2", 0, 0, 4, 1024, 20, 0),
]


class Nvml:
    def __init__(self):
        self.h = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self.nv = pynvml
            self.h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        except Exception as e:   # no NVML: times only
            self.error = repr(e)[:200]

    def read(self):
        if self.h is None:
            return {}
        nv, h, r = self.nv, self.h, {}
        for key, fn in (
            ("sm_MHz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
            ("mem_MHz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
            ("power_W", lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000.0),
            ("temp_C", lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
            ("reasons", lambda: hex(getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons",
                                            getattr(nv, "nvmlDeviceGetCurrentClocksThrottleReasons", None))(h))),
        ):
            try:
                r[key] = fn()
            except Exception:
                pass
        return r

    def limit_W(self):
        try:
            return self.nv.nvmlDeviceGetEnforcedPowerLimit(self.h) / 1000.0
        except Exception:
            return None


def burst_ms(g, per):
    time.sleep(3.0)   # idle: the clock back at its maximum
    return si.replay_ms(g, per)


def sustained(g, per, seconds, nvml):
    one = burst_ms(g, 1)
    k = max(1, int(200.0 / max(one, 1e-3)))   # replays per ~0.2-s window
    windows, t0 = [], time.time()
    while time.time() - t0 < seconds:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(k):
            g.replay()
        b.record()
        b.synchronize()
        w = dict(t_s=round(time.time() - t0, 2), ms=a.elapsed_time(b) / (k * per))
        w.update(nvml.read())
        windows.append(w)
    half = [w for w in windows if w["t_s"] >= seconds / 2] or windows
    med = lambda xs: sorted(xs)[len(xs) // 2] if xs else None   # noqa: E731
    res = dict(seconds=seconds, replays_per_window=k, windows=windows, steady_ms=med([w["ms"] for w in half]))
    if half and "sm_MHz" in half[0]:
        res["steady_sm_MHz"] = med([w["sm_MHz"] for w in half])
        res["steady_power_W"] = med([w["power_W"] for w in half if "power_W" in w])
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every row's seconds")
    args = ap.parse_args()
    torch.manual_seed(0)
    si.ONE = torch.ones((), device=si.DEV)
    nvml = Nvml()
    doc = {
        **si.provenance(__doc__),
        "power_limit_W": nvml.limit_W(),
        "nvml_error": getattr(nvml, "error", None),
        "idle": nvml.read(),
        "rows": [],
    }

    def save(row):
        doc["rows"].append(row)
        brief = {k: v for k, v in row.items() if not isinstance(v, dict)}
        for part in ("whole", "gemms"):
            if part in row:
                brief[part] = {k: v for k, v in row[part].items() if k != "windows"}
        print(json.dumps(brief), flush=True)
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)

    weights, loaded = None, None
    for label, name, dec, ctx, npre, lpre, s_whole, s_gemm in ROWS:
        c = si.MODELS[name]
        row = dict(label=label, model=name, decode_seqs=dec, context=ctx, prompts=npre, prompt_len=lpre)
        try:
            if loaded != name:
                weights = None
                torch.cuda.empty_cache()
                weights, loaded = [si.Weights(c) for _ in range(si.COPIES)], name
            ws = weights
            mix = si.Mix(c, dec, ctx, npre, lpre)
            row["tokens"] = mix.tokens

            def whole():
                x = mix.x
                for i in range(si.LAYERS):
                    x = mix.layer(x, ws[i % si.COPIES], *mix.kv[i % si.COPIES])

            def gem():
                for i in range(si.LAYERS):
                    mix.gemms(ws[i % si.COPIES])

            g = si.capture(whole)
            row["whole"] = dict(burst_ms=burst_ms(g, si.LAYERS))
            row["whole"].update(sustained(g, si.LAYERS, s_whole * args.scale, nvml))
            row["whole"]["slowdown"] = row["whole"]["steady_ms"] / row["whole"]["burst_ms"]
            del g
            if s_gemm > 0:
                g = si.capture(gem)
                row["gemms"] = dict(burst_ms=burst_ms(g, si.LAYERS))
                row["gemms"].update(sustained(g, si.LAYERS, s_gemm * args.scale, nvml))
                row["gemms"]["slowdown"] = row["gemms"]["steady_ms"] / row["gemms"]["burst_ms"]
                del g
            del mix
        except Exception as e:   # a row that fails says why; the others still run
            row["error"] = repr(e)[:300]
        torch.cuda.empty_cache()
        save(row)

    # The heaviest load: one dense FP8 GEMM, 8192^3, back to back.
    weights = None
    torch.cuda.empty_cache()
    row = dict(label="fp8-gemm-8192", model="dense", m=8192, n=8192, k=8192)
    try:
        a8 = torch.randn(8192, 8192, device=si.DEV).to(si.FP8)
        b8 = torch.randn(8192, 8192, device=si.DEV).to(si.FP8)
        g = si.capture(lambda: si.mm(a8, b8))
        row["whole"] = dict(burst_ms=burst_ms(g, 1))
        row["whole"].update(sustained(g, 1, 20 * args.scale, nvml))
        row["whole"]["slowdown"] = row["whole"]["steady_ms"] / row["whole"]["burst_ms"]
        row["whole"]["burst_TFLOPs"] = 2 * 8192**3 / (row["whole"]["burst_ms"] * 1e-3) / 1e12
        row["whole"]["steady_TFLOPs"] = 2 * 8192**3 / (row["whole"]["steady_ms"] * 1e-3) / 1e12
    except Exception as e:
        row["error"] = repr(e)[:300]
    save(row)


if __name__ == "__main__":
    main()
