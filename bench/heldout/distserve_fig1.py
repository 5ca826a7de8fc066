#!/usr/bin/env python3
"""DistServe's motivating experiment against llmsim's disaggregated pools (docs/serving.md, "Disaggregated
prefill and decode"; never used to fit anything).

Source: Zhong et al., "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized Large Language
Model Serving", OSDI 2024 (arXiv 2401.09670), Sec. 2.3 and Figure 1, and the authors' blog post
(hao-ai-lab.github.io/blogs/distserve, its Figure 6): a 13B model on one A100-80GB, Poisson arrivals, input
512 and output 64 tokens, SLO P90 TTFT 0.4 s and P90 TPOT 0.04 s. Colocated (vLLM): the TTFT target holds to
about 2.3 req/s and the TPOT target to 1.6, so the goodput is 1.6 req/s per GPU; a prefill-only GPU holds
5.6 req/s, a decode-only GPU 10; two prefill GPUs and one decode GPU (2P1D) hold min(2 x 5.6, 10) = 10 req/s,
3.3 per GPU, 2.1 times the colocated goodput.

llmsim's side: gpt3-13b (OPT-13B's shape: 40 layers, hidden 5,120, 40 heads, FFN 20,480) in bf16 on
dgx-a100-80gb with the vLLM 0.2.7 engine (prefill-first, whole prompts; DistServe's baseline), one GPU
colocated and 2P1D with replicas of tp 1, each asked for its capacity (qps "max") under the same P90 targets
(slo ttft_p90_s / tpot_p90_s): the largest Poisson rate meeting both in steady state.

    python3 bench/heldout/distserve_fig1.py [path/to/llmsim]
"""
import json
import subprocess
import sys
import tempfile

PUBLISHED = {"colocated_per_gpu": 1.6, "prefill_per_gpu": 5.6, "decode_per_gpu": 10.0, "pd_per_gpu": 10.0 / 3}
TTFT_P90_S, TPOT_P90_S = 0.4, 0.04


def scenario(prefill_gpus):
    d = {"model": "gpt3-13b", "system": "dgx-a100-80gb", "gpus": 1 + prefill_gpus, "parallel": {"tp": 1},
         "inference": {"batching": "continuous", "weight_precision": "bf16", "kv_precision": "bf16",
                       "input_len": 512, "output_len": 64, "qps": "max",
                       "slo": {"ttft_p90_s": TTFT_P90_S, "tpot_p90_s": TPOT_P90_S},
                       "engine": {"name": "vllm", "version": "0.2.7"}}}
    if prefill_gpus:
        d["inference"]["disaggregation"] = {"prefill_gpus": prefill_gpus, "prefill_tp": 1}
    return d


def capacity(llmsim, prefill_gpus):
    """The deployment's largest rate meeting the P90 targets (req/s, all its GPUs)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(scenario(prefill_gpus), f)
        f.flush()
        out = subprocess.run([llmsim, "estimate", f.name, "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["capacity"]["qps"]


def main():
    llmsim = sys.argv[1] if len(sys.argv) > 1 else "build/llmsim"
    colocated = capacity(llmsim, 0)
    pd = capacity(llmsim, 2)
    rows = [("colocated, req/s per GPU", colocated, PUBLISHED["colocated_per_gpu"]),
            ("2P1D, req/s per GPU", pd / 3, PUBLISHED["pd_per_gpu"]),
            ("2P1D over colocated", pd / 3 / colocated, PUBLISHED["pd_per_gpu"] / PUBLISHED["colocated_per_gpu"])]
    print(f"{'quantity':28} {'llmsim':>8} {'DistServe':>10} {'ratio':>7}")
    for name, ours, theirs in rows:
        print(f"{name:28} {ours:8.2f} {theirs:10.2f} {ours / theirs:7.2f}")


if __name__ == "__main__":
    main()
