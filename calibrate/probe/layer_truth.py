#!/usr/bin/env python3
"""Ground truth for llmsim's per-layer predictions, measured with PyTorch on one GPU.

Times, in bf16 with CUDA events (warm-up, then the median of the repetitions):
  * one Llama-3 decoder layer's forward and forward+backward (RMSNorm, fused QKV, RoPE, causal GQA
    attention through scaled_dot_product_attention, output projection, SwiGLU MLP, residuals), eager
    and under torch.compile (which fuses the elementwise work as Transformer Engine does);
  * the layer's GEMMs one by one (forward, activation gradient, weight gradient);
  * the attention kernel alone for each SDPA backend (flash, cuDNN, memory-efficient);
  * a decode step (one new token per sequence against a KV cache) at batch 1..256, replayed from a
    CUDA graph as serving engines do, eager and with the elementwise work fused by torch.compile
    (as vLLM does): all of Llama-3-8B (32 layers, final norm, LM head), and 8 Llama-3-70B layers
    with the LM head; the kernels per step are counted with the PyTorch profiler;
  * optionally (--sustained SECONDS) a 70B layer's fwd+bwd back to back, per 1-s window.

Writes one JSON file (rewritten after each section, so a failure leaves what was measured):
  python3 calibrate/probe/layer_truth.py --out torch-truth.json [--quick]
"""
import argparse
import datetime
import json
import math
import platform
import sys
import time
import traceback

import torch
import torch.nn.functional as F

MODELS = {
    "llama-3-8b": dict(h=4096, heads=32, kv=8, d=128, ffn=14336, layers=32, vocab=128256),
    "llama-3-70b": dict(h=8192, heads=64, kv=8, d=128, ffn=28672, layers=80, vocab=128256),
}
DT = torch.bfloat16
DEV = "cuda"


def med(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def time_ms(fn, warmup=3, reps=10, inner=1):
    """Median milliseconds of one call of fn (inner calls per sample, CUDA events)."""
    for _ in range(warmup):
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


class Layer:
    def __init__(self, c):
        h, H, kv, d, ffn = c["h"], c["heads"], c["kv"], c["d"], c["ffn"]
        self.c = c

        def w(*shape):
            return (torch.randn(*shape, device=DEV, dtype=DT) * 0.02).requires_grad_()

        self.n1 = torch.ones(h, device=DEV, dtype=DT, requires_grad=True)
        self.qkv = w(H * d + 2 * kv * d, h)
        self.o = w(h, H * d)
        self.n2 = torch.ones(h, device=DEV, dtype=DT, requires_grad=True)
        self.gu = w(2 * ffn, h)
        self.down = w(h, ffn)

    def params(self):
        return [self.n1, self.qkv, self.o, self.n2, self.gu, self.down]


def rope_tables(s, d):
    inv = 1.0 / (500000.0 ** (torch.arange(0, d, 2, device=DEV, dtype=torch.float32) / d))
    f = torch.outer(torch.arange(s, device=DEV, dtype=torch.float32), inv)
    emb = torch.cat((f, f), -1)
    return emb.cos().to(DT), emb.sin().to(DT)


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    rot = torch.cat((-x[..., half:], x[..., :half]), -1)
    return x * cos + rot * sin


ATTN = {"gqa": True}


def attention(q, k, v, causal):
    if ATTN["gqa"]:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    g = q.shape[1] // k.shape[1]
    return F.scaled_dot_product_attention(
        q, k.repeat_interleave(g, 1), v.repeat_interleave(g, 1), is_causal=causal
    )


def layer_forward(L, x, cos, sin):
    c = L.c
    b, s, h = x.shape
    H, kv, d = c["heads"], c["kv"], c["d"]
    y = F.rms_norm(x, (h,), L.n1, eps=1e-5)
    q, k, v = F.linear(y, L.qkv).split([H * d, kv * d, kv * d], -1)
    q = rope(q.view(b, s, H, d).transpose(1, 2), cos, sin)
    k = rope(k.view(b, s, kv, d).transpose(1, 2), cos, sin)
    v = v.view(b, s, kv, d).transpose(1, 2)
    o = attention(q, k, v, True).transpose(1, 2).reshape(b, s, H * d)
    x = x + F.linear(o, L.o)
    y = F.rms_norm(x, (h,), L.n2, eps=1e-5)
    g, u = F.linear(y, L.gu).chunk(2, -1)
    return x + F.linear(F.silu(g) * u, L.down)


def section(res, name, fn, path):
    t0 = time.time()
    try:
        res[name] = fn()
    except Exception as e:  # keep what was measured; say what failed
        res.setdefault("errors", []).append(f"{name}: {type(e).__name__}: {e}")
        traceback.print_exc()
    res.setdefault("section_seconds", {})[name] = round(time.time() - t0, 2)
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print(f"layer_truth: {name} done in {time.time() - t0:.1f} s", file=sys.stderr, flush=True)


def measure_layers(models, seq, mb, reps):
    rows = []
    for name in models:
        c = MODELS[name]
        L = Layer(c)
        cos, sin = rope_tables(seq, c["d"])
        x = torch.randn(mb, seq, c["h"], device=DEV, dtype=DT, requires_grad=True)
        dy = torch.randn_like(x)
        ps = L.params()
        variants = [("eager", layer_forward)]
        try:
            variants.append(("compiled", torch.compile(layer_forward, dynamic=False)))
        except Exception as e:
            print(f"torch.compile unavailable: {e}", file=sys.stderr)
        for mode, f in variants:
            try:
                def fwd():
                    with torch.no_grad():
                        return f(L, x, cos, sin)

                def fwd_graph():
                    return f(L, x, cos, sin)

                def fwd_bwd():
                    out = f(L, x, cos, sin)
                    torch.autograd.grad(out, [x] + ps, dy)

                t_fb = time_ms(fwd_bwd, warmup=3, reps=reps)
                t_f = time_ms(fwd_graph, warmup=2, reps=reps)
                t_f_ng = time_ms(fwd, warmup=2, reps=reps)
                rows.append(dict(model=name, mode=mode, seq_len=seq, micro_batch=mb, tokens=seq * mb,
                                 fwd_ms=t_f, fwd_no_grad_ms=t_f_ng, fwd_bwd_ms=t_fb, bwd_ms=t_fb - t_f))
            except Exception as e:
                rows.append(dict(model=name, mode=mode, error=f"{type(e).__name__}: {e}"))
                traceback.print_exc()
        del L, x, dy
        torch.cuda.empty_cache()
    return rows


def measure_gemms(models, tokens, reps):
    rows = []
    for name in models:
        c = MODELS[name]
        h, H, kv, d, ffn = c["h"], c["heads"], c["kv"], c["d"], c["ffn"]
        ops = [("qkv", h, H * d + 2 * kv * d), ("attn_out", H * d, h), ("mlp_fc1", h, 2 * ffn), ("mlp_fc2", ffn, h)]
        for op, fin, fout in ops:
            X = torch.randn(tokens, fin, device=DEV, dtype=DT)
            W = torch.randn(fout, fin, device=DEV, dtype=DT)
            dY = torch.randn(tokens, fout, device=DEV, dtype=DT)
            cases = [
                ("fwd", lambda: F.linear(X, W), tokens, fout, fin),
                ("dgrad", lambda: torch.matmul(dY, W), tokens, fin, fout),
                ("wgrad", lambda: torch.matmul(dY.t(), X), fout, fin, tokens),
            ]
            for p, fn, m, n, k in cases:
                ms = time_ms(fn, warmup=3, reps=reps, inner=5)
                rows.append(dict(model=name, op=op, pass_=p, m=m, n=n, k=k, ms=ms,
                                 tflops=2.0 * m * n * k / (ms * 1e-3) / 1e12))
            del X, W, dY
    for r in rows:
        r["pass"] = r.pop("pass_")
    return rows


def measure_attention(models, seq, reps):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    rows = []
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
    for name in models:
        c = MODELS[name]
        H, kv, d = c["heads"], c["kv"], c["d"]
        q = torch.randn(1, H, seq, d, device=DEV, dtype=DT, requires_grad=True)
        k = torch.randn(1, kv, seq, d, device=DEV, dtype=DT, requires_grad=True)
        v = torch.randn(1, kv, seq, d, device=DEV, dtype=DT, requires_grad=True)
        do = torch.randn(1, H, seq, d, device=DEV, dtype=DT)
        flops_fwd = 4.0 * H * seq * seq * d * 0.5  # causal: half the blocks
        for bname, be in backends:
            for gqa in (True, False):
                try:
                    with sdpa_kernel(be):
                        if gqa:
                            def f():
                                return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
                        else:
                            kk = k.detach().repeat_interleave(H // kv, 1).requires_grad_()
                            vv = v.detach().repeat_interleave(H // kv, 1).requires_grad_()

                            def f():
                                return F.scaled_dot_product_attention(q, kk, vv, is_causal=True)

                        def fb():
                            o = f()
                            torch.autograd.grad(o, [q], do)

                        def fo():
                            with torch.no_grad():
                                return f()

                        t_f = time_ms(fo, warmup=3, reps=reps)
                        t_fb = time_ms(fb, warmup=3, reps=reps)
                    rows.append(dict(model=name, backend=bname, gqa_native=gqa, seq_len=seq, heads=H, kv_heads=kv,
                                     head_dim=d, fwd_ms=t_f, fwd_bwd_ms=t_fb, bwd_ms=t_fb - t_f,
                                     fwd_tflops=flops_fwd / (t_f * 1e-3) / 1e12,
                                     bwd_tflops=2.5 * flops_fwd / ((t_fb - t_f) * 1e-3) / 1e12))
                    break  # native GQA worked: no need for the expanded form
                except Exception as e:
                    rows.append(dict(model=name, backend=bname, gqa_native=gqa, error=f"{type(e).__name__}: {e}"[:300]))
        del q, k, v, do
        torch.cuda.empty_cache()
    return rows


def _pre(x, n1, wqkv, cos, sin, H: int, kv: int, d: int):
    b, h = x.shape
    y = F.rms_norm(x, (h,), n1, eps=1e-5)
    q, k, v = F.linear(y, wqkv).split([H * d, kv * d, kv * d], -1)
    return rope(q.view(b, H, d), cos, sin), rope(k.view(b, kv, d), cos, sin), v.view(b, kv, d)


def _post(x, o, wo, n2, wgu, wdown):
    b, h = x.shape
    x = x + F.linear(o, wo)
    y = F.rms_norm(x, (h,), n2, eps=1e-5)
    gg, u = F.linear(y, wgu).chunk(2, -1)
    return x + F.linear(F.silu(gg) * u, wdown)


PIECES = {"pre": _pre, "post": _post}


class DecodeModel:
    """n Llama layers (+ final norm and LM head when lm_head) with a KV cache of `context` tokens."""

    def __init__(self, c, n_layers, lm_head):
        self.c = c
        self.n = n_layers
        h, H, kv, d, ffn = c["h"], c["heads"], c["kv"], c["d"], c["ffn"]

        def w(*shape):
            return torch.randn(*shape, device=DEV, dtype=DT) * 0.02

        self.layers = [dict(n1=torch.ones(h, device=DEV, dtype=DT), qkv=w(H * d + 2 * kv * d, h), o=w(h, H * d),
                            n2=torch.ones(h, device=DEV, dtype=DT), gu=w(2 * ffn, h), down=w(h, ffn))
                       for _ in range(n_layers)]
        self.lm_head = w(c["vocab"], h) if lm_head else None
        self.emb = w(c["vocab"], h) if lm_head else None
        self.nf = torch.ones(h, device=DEV, dtype=DT)

    def weight_bytes(self):
        n = sum(t.numel() for L in self.layers for t in L.values())
        if self.lm_head is not None:
            n += self.lm_head.numel()
        return 2 * n

    def step(self, tok_or_x, kc, vc, pos, cos, sin):
        c = self.c
        h, H, kv, d = c["h"], c["heads"], c["kv"], c["d"]
        g = H // kv
        x = self.emb[tok_or_x] if self.emb is not None else tok_or_x  # (b, h)
        b = x.shape[0]
        pre, post = PIECES["pre"], PIECES["post"]
        for i, L in enumerate(self.layers):
            q, k, v = pre(x, L["n1"], L["qkv"], cos, sin, H, kv, d)
            kc[i][:, :, pos] = k
            vc[i][:, :, pos] = v
            # One query per sequence: the g query heads of a KV group attend to the same K/V, so they
            # go through SDPA as g "positions" of that group (exact for one new token, no KV copy).
            o = F.scaled_dot_product_attention(q.view(b, kv, g, d), kc[i], vc[i])
            x = post(x, o.reshape(b, H * d), L["o"], L["n2"], L["gu"], L["down"])
        if self.lm_head is not None:
            x = F.rms_norm(x, (h,), self.nf, eps=1e-5)
            return F.linear(x, self.lm_head).argmax(-1)
        return x


def count_kernels(fn):
    """CUDA kernels (and memcpy/memset) one call of fn launches, from the PyTorch profiler."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type.name == "CUDA")


def measure_graph_kernels(reps):
    """Per-kernel time inside a CUDA graph: 200 in-place adds over tensors of 4 KiB .. 64 MiB, replayed;
    time per kernel = fixed cost + bytes moved / bandwidth (a line fit by the reader)."""
    rows = []
    for nbytes in [4096, 65536, 1 << 20, 8 << 20, 64 << 20]:
        x = torch.zeros(nbytes // 2, device=DEV, dtype=DT)
        n = 200
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            x.add_(1)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(n):
                x.add_(1)
        ms = time_ms(g.replay, warmup=3, reps=reps)
        rows.append(dict(bytes_per_kernel=nbytes, bytes_moved_per_kernel=2 * nbytes, kernels=n,
                         per_kernel_us=ms * 1e3 / n))
        del g, x
    return rows


def measure_decode(name, n_layers, lm_head, batches, context, reps, compiled=False):
    if compiled:
        PIECES["pre"] = torch.compile(_pre, dynamic=False)
        PIECES["post"] = torch.compile(_post, dynamic=False)
    else:
        PIECES["pre"], PIECES["post"] = _pre, _post
    c = MODELS[name]
    m = DecodeModel(c, n_layers, lm_head)
    rows = []
    cos, sin = rope_tables(context + 1, c["d"])
    cos, sin = cos[context], sin[context]
    for b in batches:
        try:
            # KV cache of context + 1 positions (the last one is written by this step), all attended.
            kc = [torch.randn(b, c["kv"], context + 1, c["d"], device=DEV, dtype=DT) for _ in range(n_layers)]
            vc = [torch.randn(b, c["kv"], context + 1, c["d"], device=DEV, dtype=DT) for _ in range(n_layers)]
            inp = (torch.randint(0, c["vocab"], (b,), device=DEV) if lm_head
                   else torch.randn(b, c["h"], device=DEV, dtype=DT))
            with torch.no_grad():
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s):
                    for _ in range(3):
                        m.step(inp, kc, vc, context, cos, sin)
                torch.cuda.current_stream().wait_stream(s)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    m.step(inp, kc, vc, context, cos, sin)
                eager_ms = time_ms(lambda: m.step(inp, kc, vc, context, cos, sin), warmup=2, reps=reps)
                graph_ms = time_ms(graph.replay, warmup=3, reps=reps)
                try:
                    kernels = count_kernels(lambda: m.step(inp, kc, vc, context, cos, sin))
                except Exception as e:
                    kernels = None
                    print(f"kernel count failed: {e}", file=sys.stderr)
            kv_bytes = 2 * n_layers * b * c["kv"] * (context + 1) * c["d"] * 2
            rows.append(dict(model=name, layers=n_layers, lm_head=lm_head, batch=b, context=context,
                             mode="compiled" if compiled else "eager", kernels_per_step=kernels,
                             step_ms=graph_ms, eager_step_ms=eager_ms, per_layer_ms=graph_ms / n_layers if not lm_head else None,
                             weight_bytes=m.weight_bytes(), kv_bytes=kv_bytes,
                             hbm_GBps_implied=(m.weight_bytes() + kv_bytes) / (graph_ms * 1e-3) / 1e9))
            del kc, vc, graph
            torch.cuda.empty_cache()
        except Exception as e:
            rows.append(dict(model=name, batch=b, error=f"{type(e).__name__}: {e}"[:300]))
            traceback.print_exc()
            torch.cuda.empty_cache()
    del m
    torch.cuda.empty_cache()
    return rows


def measure_sustained(name, seq, seconds):
    """fwd+bwd of one compiled layer back to back for `seconds`: per-window time per iteration, to see
    what power and clock limits do to a GPU kept busy (what a training step sees)."""
    c = MODELS[name]
    L = Layer(c)
    cos, sin = rope_tables(seq, c["d"])
    x = torch.randn(1, seq, c["h"], device=DEV, dtype=DT, requires_grad=True)
    dy = torch.randn_like(x)
    ps = L.params()
    f = torch.compile(layer_forward, dynamic=False)

    def fb():
        out = f(L, x, cos, sin)
        torch.autograd.grad(out, [x] + ps, dy)

    for _ in range(3):
        fb()
    torch.cuda.synchronize()
    t0 = time.time()
    windows = []
    while time.time() - t0 < seconds:
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        n = 0
        w0 = time.time()
        while time.time() - w0 < 1.0:
            fb()
            n += 1
            if n % 4 == 0:
                torch.cuda.current_stream().synchronize()
        b.record()
        b.synchronize()
        windows.append(dict(t_s=round(time.time() - t0, 2), iterations=n, ms_per_iter=a.elapsed_time(b) / n))
    first = med([w["ms_per_iter"] for w in windows[:3]])
    last = med([w["ms_per_iter"] for w in windows[-5:]])
    return dict(model=name, seq_len=seq, seconds=seconds, windows=windows, first_ms=first, last_ms=last,
                slowdown=last / first)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seq", type=int, default=8192)
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--sustained", type=float, default=0, help="seconds of back-to-back layer fwd+bwd (0: skip)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("layer_truth: no CUDA GPU visible", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    reps = 5 if a.quick else 15
    p = torch.cuda.get_device_properties(0)
    res = dict(
        llmsim_layer_truth=1,
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        host=platform.node(),
        gpu=torch.cuda.get_device_name(0), sm_count=p.multi_processor_count,
        memory_bytes=p.total_memory, torch=torch.__version__, cuda=torch.version.cuda,
        cudnn=torch.backends.cudnn.version(), command=" ".join(sys.argv),
        settings=dict(dtype="bf16", reps=reps, seq_len=a.seq, micro_batch=1, decode_context=a.context,
                      timing="CUDA events, median of reps after warm-up"),
    )
    models = ["llama-3-8b", "llama-3-70b"]
    # One compiled graph per decode batch size and model: more than dynamo's default limit of 8.
    torch._dynamo.config.recompile_limit = 64
    torch._dynamo.config.cache_size_limit = 64
    section(res, "graph_kernels", lambda: measure_graph_kernels(reps), a.out)
    section(res, "attention", lambda: measure_attention(models, a.seq, reps), a.out)
    # Native GQA in SDPA when the default backend takes it; else K/V are expanded (noted).
    try:
        q = torch.randn(1, 32, 128, 128, device=DEV, dtype=DT)
        kk = torch.randn(1, 8, 128, 128, device=DEV, dtype=DT)
        F.scaled_dot_product_attention(q, kk, kk, is_causal=True, enable_gqa=True)
    except Exception as e:
        ATTN["gqa"] = False
        res.setdefault("notes", []).append(f"enable_gqa failed ({e}); layers expand K/V with repeat_interleave")
    section(res, "gemms", lambda: measure_gemms(models, a.seq, reps), a.out)
    section(res, "layers", lambda: measure_layers(models, a.seq, 1, reps), a.out)
    batches = [1, 2, 4, 8, 16, 32, 64, 128, 256] if not a.quick else [1, 16, 128]
    for compiled in (False, True):
        tag = "_compiled" if compiled else ""
        section(res, "decode_8b" + tag,
                lambda: measure_decode("llama-3-8b", 32, True, batches, a.context, reps, compiled), a.out)
        section(res, "decode_70b_layers" + tag,
                lambda: measure_decode("llama-3-70b", 8, True, batches, a.context, reps, compiled), a.out)
    if a.sustained > 0:
        section(res, "sustained", lambda: measure_sustained("llama-3-70b", a.seq, a.sustained), a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
