#!/usr/bin/env python3
"""Whole serving iterations, layer by layer, measured with PyTorch on one GPU: the mixes of decodes and
prompts a continuous-batching engine runs near its capacity (hundreds of decoding sequences plus a few
prompts), for Llama-2-70B whole (TP 1, as on one H200) and its tensor-parallel-2 shard, Mixtral-8x7B at
TP 1 and Llama-3-8B, FP8 weights (e4m3, per-tensor scales, torch._scaled_mm with fast accumulation, bf16
out), bf16 activations and bf16 K/V.

A layer is what an engine runs: RMSNorm, FP8 quantisation of the GEMM input, QKV GEMM, RoPE on q and k,
the prompts' causal attention and the decodes' attention over their cached K/V (SDPA, GQA native),
O GEMM, residual, RMSNorm, quantisation, gate-up GEMM, SiLU·mul, quantisation, down GEMM, residual
(Mixtral: router GEMM, top-2, the tokens permuted to their experts, 8 expert GEMM pairs, weighted
combine). Each mix is timed three ways, every one as a CUDA graph of `LAYERS` layers cycling over
`COPIES` copies of the weights and of the K/V cache (so both come from HBM), median of 7 replays:
`layer_ms` the whole layer, `gemm_ms` its GEMMs alone (inputs already quantised), `attn_ms` its two
attention calls alone. `rest_ms` = layer − gemm − attn is everything else (norms, RoPE, quantisation,
activation, routing, residuals): eager PyTorch kernels, unfused, so an upper bound for an engine.

  python3 calibrate/probe/serving_iteration.py --out serving-iteration.json [--compiled]
Rewrites the output after every row (a timeout leaves what was measured).
"""
import argparse
import collections
import datetime
import json
import platform

import torch
import torch.nn.functional as F

DEV = "cuda"
FP8 = torch.float8_e4m3fn
LAYERS, COPIES = 8, 4

MODELS = {
    # hidden, q heads, kv heads (this rank), head dim, ffn (this rank), experts, top_k
    "llama-2-70b-tp1": dict(h=8192, qh=64, kvh=8, hd=128, ffn=28672, experts=0, top_k=0),
    "llama-2-70b-tp2": dict(h=8192, qh=32, kvh=4, hd=128, ffn=14336, experts=0, top_k=0),
    "mixtral-8x7b-tp1": dict(h=4096, qh=32, kvh=8, hd=128, ffn=14336, experts=8, top_k=2),
    "llama-3-8b-tp1": dict(h=4096, qh=32, kvh=8, hd=128, ffn=14336, experts=0, top_k=0),
}
# (model, decoding sequences, their context, prompts, prompt length)
MIXES = [
    # Llama-2-70B whole on one H200 (MLPerf v4.1 H200 Server, TP1): llmsim's state at 14.5 req/s on one GPU
    # (605 running, ~370 tokens of context: 222 prompt + half of 291 output, ~2 prompts an iteration).
    ("llama-2-70b-tp1", 605, 370, 2, 222),
    ("llama-2-70b-tp1", 282, 370, 1, 222),   # llmsim's state at 8 GPUs' published 12.6 req/s per GPU
    ("llama-2-70b-tp1", 256, 370, 0, 0),
    ("llama-2-70b-tp1", 512, 370, 0, 0),
    ("llama-2-70b-tp1", 850, 370, 0, 0),
    ("llama-2-70b-tp1", 0, 0, 4, 1024),
    ("llama-2-70b-tp2", 704, 458, 2, 256),
    ("llama-2-70b-tp2", 254, 458, 1, 208),
    ("llama-2-70b-tp2", 256, 458, 0, 0),
    ("llama-2-70b-tp2", 512, 458, 0, 0),
    ("llama-2-70b-tp2", 896, 458, 0, 0),
    ("llama-2-70b-tp2", 0, 0, 8, 256),
    ("llama-2-70b-tp2", 0, 0, 4, 1024),
    ("mixtral-8x7b-tp1", 613, 520, 4, 448),
    ("mixtral-8x7b-tp1", 613, 520, 0, 0),
    ("mixtral-8x7b-tp1", 256, 520, 1, 448),
    ("mixtral-8x7b-tp1", 0, 0, 8, 512),
    ("llama-3-8b-tp1", 512, 600, 2, 512),
    ("llama-3-8b-tp1", 1024, 600, 0, 0),
]


def pad_rows(x, experts):
    # FP8 GEMMs take rows in multiples of 16; a MoE layer's even split gives each expert m·k/E of them.
    q = 16 * (experts // 2 if experts else 1)
    return (x + q - 1) // q * q


class Weights:
    def __init__(self, c):
        h, hd = c["h"], c["hd"]
        qkv = (c["qh"] + 2 * c["kvh"]) * hd

        def w(n, k):   # [N, K] row-major, used transposed (column-major K x N) by _scaled_mm
            return (torch.randn(n, k, device=DEV) * 0.02).to(FP8)

        self.qkv = w(qkv, h)
        self.o = w(h, c["qh"] * hd)
        if c["experts"]:
            self.router = torch.randn(c["experts"], h, device=DEV, dtype=torch.bfloat16) * 0.02
            self.gu = [w(2 * c["ffn"], h) for _ in range(c["experts"])]
            self.down = [w(h, c["ffn"]) for _ in range(c["experts"])]
        else:
            self.gu = w(2 * c["ffn"], h)
            self.down = w(h, c["ffn"])
        self.n1 = torch.ones(h, device=DEV, dtype=torch.bfloat16)
        self.n2 = torch.ones(h, device=DEV, dtype=torch.bfloat16)


ONE = None


def mm(x8, w):
    return torch._scaled_mm(x8, w.t(), scale_a=ONE, scale_b=ONE, out_dtype=torch.bfloat16, use_fast_accum=True)


def quant(x):
    return (x * 1.0).to(FP8)


def rope(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


class Mix:
    def __init__(self, c, dec, ctx, npre, lpre):
        self.c, self.dec, self.ctx, self.npre, self.lpre = c, dec, ctx, npre, lpre
        self.tokens = dec + npre * lpre
        self.m = pad_rows(self.tokens, c["experts"])
        hd = c["hd"]
        self.x = torch.randn(self.m, c["h"], device=DEV, dtype=torch.bfloat16)
        self.x8 = self.x.to(FP8)
        self.kv = []
        for _ in range(COPIES):
            k = torch.randn(dec, c["kvh"], ctx, hd, device=DEV, dtype=torch.bfloat16) if dec else None
            v = torch.randn(dec, c["kvh"], ctx, hd, device=DEV, dtype=torch.bfloat16) if dec else None
            self.kv.append((k, v))
        self.cos = torch.ones(self.m, 1, hd // 2, device=DEV, dtype=torch.bfloat16)
        self.sin = torch.zeros(self.m, 1, hd // 2, device=DEV, dtype=torch.bfloat16)
        if c["experts"]:
            self.f8 = torch.randn(self.m * c["top_k"] // c["experts"] + 16, c["ffn"], device=DEV).to(FP8)
        else:
            self.f8 = torch.randn(self.m, c["ffn"], device=DEV).to(FP8)
        self.q_dec = torch.randn(max(dec, 1), c["qh"], 1, hd, device=DEV, dtype=torch.bfloat16)
        self.q_pre = torch.randn(max(npre, 1), c["qh"], max(lpre, 1), hd, device=DEV, dtype=torch.bfloat16)
        self.k_pre = torch.randn(max(npre, 1), c["kvh"], max(lpre, 1), hd, device=DEV, dtype=torch.bfloat16)
        self.a8 = torch.randn(self.m, c["qh"] * hd, device=DEV).to(FP8)

    def attention(self, q, k, v, kc, vc):
        c, hd = self.c, self.c["hd"]
        outs = []
        if self.npre:
            qp = q[: self.npre * self.lpre].view(self.npre, self.lpre, c["qh"], hd).transpose(1, 2)
            kp = k[: self.npre * self.lpre].view(self.npre, self.lpre, c["kvh"], hd).transpose(1, 2)
            vp = v[: self.npre * self.lpre].view(self.npre, self.lpre, c["kvh"], hd).transpose(1, 2)
            o = F.scaled_dot_product_attention(qp, kp, vp, is_causal=True, enable_gqa=True)
            outs.append(o.transpose(1, 2).reshape(self.npre * self.lpre, c["qh"] * hd))
        if self.dec:
            qd = q[self.npre * self.lpre : self.tokens].view(self.dec, c["qh"], 1, hd)
            o = F.scaled_dot_product_attention(qd, kc, vc, enable_gqa=True)
            outs.append(o.reshape(self.dec, c["qh"] * hd))
        pad = self.m - self.tokens
        if pad:
            outs.append(torch.zeros(pad, c["qh"] * hd, device=DEV, dtype=torch.bfloat16))
        return torch.cat(outs)

    def mlp(self, x, w):
        c = self.c
        if not c["experts"]:
            gu = mm(quant(x), w.gu)
            g, u = gu.chunk(2, dim=-1)
            return mm(quant(F.silu(g) * u), w.down)
        logits = x @ w.router.t()
        p, e = torch.topk(torch.softmax(logits.float(), dim=-1), c["top_k"], dim=-1)
        flat = e.flatten()
        order = torch.argsort(flat)
        tok = order // c["top_k"]
        xs = x.index_select(0, tok)
        per = self.m * c["top_k"] // c["experts"]   # the tokens routed evenly, as a graph needs fixed shapes
        out = torch.zeros_like(x)
        for j in range(c["experts"]):
            xj = quant(xs[j * per : (j + 1) * per])
            gu = mm(xj, w.gu[j])
            g, u = gu.chunk(2, dim=-1)
            yj = mm(quant(F.silu(g) * u), w.down[j])
            out.index_add_(0, tok[j * per : (j + 1) * per], yj * p.flatten()[order[j * per : (j + 1) * per], None].to(yj.dtype))
        return out

    def layer(self, x, w, kc, vc):
        c, hd = self.c, self.c["hd"]
        y = F.rms_norm(x, (c["h"],), w.n1)
        qkv = mm(quant(y), w.qkv)
        q, k, v = qkv.split([c["qh"] * hd, c["kvh"] * hd, c["kvh"] * hd], dim=-1)
        q = rope(q.view(self.m, c["qh"], hd), self.cos, self.sin)
        k = rope(k.view(self.m, c["kvh"], hd), self.cos, self.sin)
        v = v.reshape(self.m, c["kvh"], hd)
        a = self.attention(q, k, v, kc, vc)
        x = x + mm(quant(a), w.o)
        y = F.rms_norm(x, (c["h"],), w.n2)
        return x + self.mlp(y, w)

    def gemms(self, w):
        c = self.c
        mm(self.x8, w.qkv)
        mm(self.a8, w.o)
        if c["experts"]:
            per = self.m * c["top_k"] // c["experts"]
            for j in range(c["experts"]):
                mm(self.x8[:per], w.gu[j])
                mm(self.f8[:per], w.down[j])
        else:
            mm(self.x8, w.gu)
            mm(self.f8, w.down)

    def attn_only(self, i):
        c, hd = self.c, self.c["hd"]
        if self.npre:
            F.scaled_dot_product_attention(self.q_pre, self.k_pre, self.k_pre, is_causal=True, enable_gqa=True)
        if self.dec:
            kc, vc = self.kv[i % COPIES]
            F.scaled_dot_product_attention(self.q_dec, kc, vc, enable_gqa=True)


# The rows timed a fourth way (--compiled): the whole layer through torch.compile (Inductor fuses the norms,
# quantisation, RoPE and SiLU·mul into a few kernels, as an engine does), `layer_compiled_ms`; dense models.
COMPILED = [
    ("llama-2-70b-tp1", 605, 370, 2, 222),
    ("llama-2-70b-tp2", 704, 458, 2, 256),
    ("llama-3-8b-tp1", 512, 600, 2, 512),
]
Dense = collections.namedtuple("Dense", "qkv o gu down n1 n2")


def compiled_ms(mix, ws):
    """The whole layer compiled once (its weights and K/V passed as tensors, so one graph serves every copy)."""
    f = torch.compile(lambda x, q, o, gu, d, n1, n2, kc, vc: mix.layer(x, Dense(q, o, gu, d, n1, n2), kc, vc),
                      dynamic=False)

    def args(i):
        w = ws[i % COPIES]
        return (w.qkv, w.o, w.gu, w.down, w.n1, w.n2, *mix.kv[i % COPIES])

    f(mix.x, *args(0))
    torch.cuda.synchronize()

    def whole():
        x = mix.x
        for i in range(LAYERS):
            x = f(x, *args(i))

    return graph_ms(whole)


def capture(fn):
    """`fn` captured as a CUDA graph after two warm-up calls on a side stream, replayed once."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    g.replay()
    torch.cuda.synchronize()
    return g


def replay_ms(g, per):
    """Median of 7 timed replays of graph `g`, divided by `per` (its layers)."""
    out = []
    for _ in range(7):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b) / per)
    return sorted(out)[len(out) // 2]


def graph_ms(fn):
    g = capture(fn)
    ms = replay_ms(g, LAYERS)
    del g
    return ms


def provenance(doc):
    """What a measurement file says about itself: its script's first paragraph, when, on what."""
    return {
        "what": doc.split("\n\n")[0],
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "gpu": torch.cuda.get_device_properties(0).name,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "host": platform.node(),
        "layers_per_graph": LAYERS,
        "copies": COPIES,
    }


def main():
    global ONE
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--compiled", action="store_true", help="also time COMPILED's rows through torch.compile")
    args = ap.parse_args()
    torch.manual_seed(0)
    ONE = torch.ones((), device=DEV)
    doc = {
        **provenance(__doc__),
        "rows": [],
    }
    weights = {}
    for name, dec, ctx, npre, lpre in MIXES:
        c = MODELS[name]
        if name not in weights:
            weights.clear()
            torch.cuda.empty_cache()
            weights[name] = [Weights(c) for _ in range(COPIES)]
        ws = weights[name]
        row = dict(model=name, decode_seqs=dec, context=ctx, prompts=npre, prompt_len=lpre)
        try:
            mix = Mix(c, dec, ctx, npre, lpre)
            row["tokens"] = mix.tokens
            row["rows_padded"] = mix.m

            def whole():
                x = mix.x
                for i in range(LAYERS):
                    x = mix.layer(x, ws[i % COPIES], *mix.kv[i % COPIES])

            def gem():
                for i in range(LAYERS):
                    mix.gemms(ws[i % COPIES])

            def att():
                for i in range(LAYERS):
                    mix.attn_only(i)

            row["layer_ms"] = graph_ms(whole)
            row["gemm_ms"] = graph_ms(gem)
            row["attn_ms"] = graph_ms(att)
            row["rest_ms"] = row["layer_ms"] - row["gemm_ms"] - row["attn_ms"]
            del mix
        except Exception as e:   # a row that fails says why; the others still run
            row["error"] = repr(e)[:300]
        torch.cuda.empty_cache()
        doc["rows"].append(row)
        print(json.dumps(row), flush=True)
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
    for name, dec, ctx, npre, lpre in COMPILED if args.compiled else []:
        c = MODELS[name]
        weights.clear()
        torch.cuda.empty_cache()
        ws = [Weights(c) for _ in range(COPIES)]
        row = dict(model=name, decode_seqs=dec, context=ctx, prompts=npre, prompt_len=lpre, compiled=True)
        try:
            mix = Mix(c, dec, ctx, npre, lpre)
            row["layer_compiled_ms"] = compiled_ms(mix, ws)
            del mix
        except Exception as e:
            row["error"] = repr(e)[:300]
        del ws
        torch.cuda.empty_cache()
        doc["rows"].append(row)
        print(json.dumps(row), flush=True)
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
