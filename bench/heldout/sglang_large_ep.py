#!/usr/bin/env python3
"""SGLang's DeepSeek-V3 deployment with large-scale expert parallelism against llmsim's expert-parallel serving
(docs/serving.md, "Expert parallelism"; never used to fit anything).

Source: The SGLang Team, "Deploying DeepSeek with PD Disaggregation and Large-scale Expert Parallelism on 96
H100 GPUs", LMSYS blog, 2025-05-05 (lmsys.org/blog/2025-05-05-large-scale-ep; its Markdown in
github.com/lm-sys/lm-sys.github.io @ 2db4e4042b31f3c3c9f4f93068ae80946d25a115, blog/2025-05-05-large-scale-ep.md,
"Evaluation"). DeepSeek-V3 (FP8 weights; DeepEP dispatch and combine, DeepGEMM, DP attention, two-batch
overlap) on nodes of 8 H100s joined by InfiniBand, each phase measured alone:
  - prefill on 4 nodes (EP32), 16,384 tokens per GPU: 57,674 / 54,543 / 50,302 input tokens/s per node at
    1K / 2K / 4K-token prompts with the default expert placement; 59,337 at 4K with a simulated perfect
    EPLB (balanced experts); two-batch overlap worth +27-35% in prefill (its ablation);
  - decode on 9 nodes (EP72 over 288 expert slots: 256 experts and 32 redundant, 4 per GPU), 256 sequences
    per GPU at a 2,000-token KV cache: 22,282 output tokens/s per node.

llmsim's side: deepseek-v3 on dgx-h100, tp 1, the experts over ep GPUs (/parallel/ep), weights fp8, KV bf16
(SGLang's default for MLA), two-batch overlap on (inference.expert_parallel). Prefill: a static batch of
16,384 / L prompts of L tokens per GPU, its time to first token, on 32 GPUs at ep 32, with the experts
balanced (load_imbalance 1) for the perfect-EPLB row and uniform routing's own spread for the others. Decode:
ep 72 on 9 nodes with 32 redundant experts (288 slots, 4 per GPU) balanced, a continuous offline stream
capped at 256 sequences per replica whose 2,000-token prompts are all in the prefix cache (prefix_cache_hit
0.999: the KV is there, little prefill runs), 100 output tokens each; its output tokens/s per GPU x 8.

    python3 bench/heldout/sglang_large_ep.py [path/to/llmsim]
"""
import json
import subprocess
import sys
import tempfile

PREFILL = [  # prompt tokens, balanced experts, SGLang's input tokens/s per node
    (1000, False, 57674.0), (2000, False, 54543.0), (4096, False, 50302.0), (4096, True, 59337.0)]
DECODE_PER_NODE = 22282.0
TBO_PREFILL_GAIN = (1.27, 1.35)


def run(llmsim, scenario):
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(scenario, f)
        f.flush()
        out = subprocess.run([llmsim, "estimate", f.name, "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def prefill(llmsim, prompt, balanced, overlap=True):
    """Input tokens/s per node of 4 nodes at ep 32, 16,384 prompt tokens per GPU."""
    ep = {"two_batch_overlap": overlap}
    if balanced:
        ep["load_imbalance"] = 1.0
    batch = 16384 // prompt
    d = {"model": "deepseek-v3", "system": "dgx-h100", "gpus": 32, "parallel": {"tp": 1, "ep": 32},
         "inference": {"batch": batch, "input_len": prompt, "output_len": 2, "weight_precision": "fp8",
                       "kv_precision": "bf16", "expert_parallel": ep}}
    return 8 * batch * prompt / run(llmsim, d)["ttft_s"]


def decode(llmsim):
    """Output tokens/s per node at 256 sequences per GPU, 2,000 tokens of KV."""
    d = {"model": "deepseek-v3", "system": "dgx-h100", "gpus": 72, "parallel": {"tp": 1, "ep": 72},
         "inference": {"batching": "continuous", "input_len": 2000, "output_len": 100, "prefix_cache_hit": 0.999,
                       "max_batch": 256, "requests": 200000, "weight_precision": "fp8", "kv_precision": "bf16",
                       "expert_parallel": {"two_batch_overlap": True, "load_imbalance": 1.0,
                                           "redundant_experts": 32}}}
    r = run(llmsim, d)
    return 8 * r["output_tokens_per_s_per_gpu"], r["mean_batch"]


def main():
    llmsim = sys.argv[1] if len(sys.argv) > 1 else "build/llmsim"
    print(f"{'quantity (per node of 8 H100s)':44} {'llmsim':>9} {'SGLang':>9} {'error':>7}")
    for prompt, balanced, theirs in PREFILL:
        ours = prefill(llmsim, prompt, balanced)
        name = f"prefill {prompt} tokens, input tok/s{' (balanced)' if balanced else ''}"
        print(f"{name:44} {ours:9.0f} {theirs:9.0f} {ours / theirs - 1:+7.1%}")
    gain = prefill(llmsim, 4096, False) / prefill(llmsim, 4096, False, overlap=False)
    print(f"{'prefill 4096: two-batch overlap gain':44} {gain:9.2f} {'1.27-1.35':>9}")
    ours, batch = decode(llmsim)
    print(f"{'decode 2000 KV, output tok/s (batch %.0f)' % batch:44} {ours:9.0f} {DECODE_PER_NODE:9.0f} "
          f"{ours / DECODE_PER_NODE - 1:+7.1%}")


if __name__ == "__main__":
    main()
