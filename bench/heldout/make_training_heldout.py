#!/usr/bin/env python3
"""Held-out training runs (not in validation/training.json, never used to fit anything), transcribed
from published tables as an llmsim validation file. Run: python3 make_training_heldout.py (writes
training-heldout.json next to this script), then `llmsim validate bench/heldout/training-heldout.json`;
`llmsim validate --json ... > v.json; python3 make_training_heldout.py --summary v.json` prints the
per-group table of docs/accuracy.md.

Every number below is copied from the source named in its table's SRC string; `measured.step_time_s` is
derived as validation/training.json derives it (global_batch * seq_len / (tokens/s/GPU * GPUs), or the
iteration time where the source gives it, or model FLOPs / (TFLOP/s/GPU * GPUs) where only that is given).
What the source does not state is in each case's `assumed`, with the reason.

Runs already in validation/training.json are not repeated (MBRIDGE-01..03: Megatron-Bridge 25.11 H100
rows; NEMO2407-03..12; MOSAIC-H100-01..08; PALM-540B; MLM21; KOR22). Rows whose precision llmsim cannot
express (NVFP4), systems not in `llmsim hw list` (GB300, B300) and models it has no shape for (MLA:
DeepSeek-V3, Kimi-K2; hybrid Mamba: Nemotron-3) are left out.
"""
import json, os

CASES = []
CATEGORY = {}  # id -> summary group (docs/accuracy.md); not a validation-file key


def add(cid, category, source, scenario, step_time_s, derived, assumed):
    scenario = dict(scenario)
    scenario["name"] = cid
    CATEGORY[cid] = category
    CASES.append({"id": cid, "source": source, "scenario": scenario,
                  "measured": {"step_time_s": step_time_s}, "derived": derived, "assumed": assumed})


TOKENS_DERIVED = "global_batch*seq/(tokens/s/GPU*GPUs)"

# ---------------------------------------------------------------------------------------------------
# 1. Megatron-Bridge performance summaries (NVIDIA NeMo containers 25.09 .. 26.08)
MB_COMMIT = "067f987df03b8355b03192d88d70f1709fedf51a"
MB_ARCHIVE = f"NVIDIA-NeMo/Megatron-Bridge @ {MB_COMMIT} : docs/performance-summary-archive.md"
MB_HEAD = f"NVIDIA-NeMo/Megatron-Bridge @ {MB_COMMIT} : docs/performance-summary.md"
MB_TPOVL = ("tp_comm_overlap = (tp > 1): the performance scripts set it so, "
            f"NVIDIA-NeMo/Megatron-Bridge @ {MB_COMMIT} : scripts/performance/utils/overrides.py:193")
SYS = {"DGX-GB200": "gb200-nvl72", "DGX-B200": "dgx-b200", "DGX-H100": "dgx-h100"}
MODEL = {"LLAMA3_8B": "llama-3-8b", "LLAMA3_70B": "llama-3-70b", "LLAMA3.1_405B": "llama-3.1-405b",
         "Qwen3_30B_a3B": "qwen3-30b-a3b"}
# (section, task, system, model, gpus, precision as printed, GBS, MBS, seq, FSDP, TP, PP, CP, VP, EP,
#  tokens/s/GPU, note). FSDP column: 0 = DDP with the distributed optimizer, >0 = Megatron-FSDP.
MB = [
 ("25.09 NeMo Container / DGX-GB200", "pretrain", "DGX-GB200", "LLAMA3_70B", 64, "FP8-CS", 128, 2, 8192, 64, 1, 1, 1, None, 1, 3986, ""),
 ("25.09 NeMo Container / DGX-GB200", "pretrain", "DGX-GB200", "LLAMA3_70B", 64, "FP8-MX", 128, 1, 8192, 0, 2, 4, 1, 5, 1, 3546,
  "parenthesised layout; MBS column prints 2 for both, GA 16 = 128/(MBS*DP 8) gives MBS 1"),
 ("25.09 NeMo Container / DGX-GB200", "pretrain", "DGX-GB200", "LLAMA3.1_405B", 128, "FP8-CS", 64, 1, 8192, 64, 2, 1, 1, None, 1, 729, ""),
 ("25.09 NeMo Container / DGX-GB200", "pretrain", "DGX-GB200", "LLAMA3.1_405B", 128, "FP8-MX", 64, 1, 8192, 0, 4, 8, 2, 8, 1, 578,
  "parenthesised layout"),
 ("25.11 NeMo Container / DGX-GB200", "pretrain", "DGX-GB200", "LLAMA3_8B", 8, "FP8-CS", 128, 2, 8192, 0, 1, 1, 1, None, 1, 31508, ""),
 ("25.11 NeMo Container / DGX-B200", "pretrain", "DGX-B200", "LLAMA3_8B", 8, "FP8-CS", 128, 2, 8192, 0, 1, 1, 1, None, 1, 30624, ""),
 ("25.11 NeMo Container / DGX-B200", "pretrain", "DGX-B200", "LLAMA3.1_405B", 128, "FP8-CS", 64, 1, 8192, 0, 4, 8, 2, 8, 1, 661, ""),
 ("26.04.01 NeMo Container / LLAMA3_70B", "pretrain", "DGX-GB200", "LLAMA3_70B", 64, "FP8", 256, 2, 8192, 64, 1, 1, 1, None, 1, 4224, ""),
 ("26.04.01 NeMo Container / LLAMA3_70B", "pretrain", "DGX-GB200", "LLAMA3_70B", 64, "MXFP8", 256, 1, 8192, 0, 2, 4, 1, 5, 1, 3712, ""),
 ("26.04.01 NeMo Container / LLAMA3_70B", "pretrain", "DGX-H100", "LLAMA3_70B", 64, "FP8", 256, 1, 8192, 0, 4, 8, 1, 5, 1, 1664, ""),
 ("26.04.01 NeMo Container / Qwen3_30B_a3B", "pretrain", "DGX-B200", "Qwen3_30B_a3B", 8, "MXFP8", 512, 4, 4096, 0, 1, 1, 1, None, 8, 27136, ""),
 ("26.06 NeMo Container / LLAMA3.1_405B", "pretrain", "DGX-GB200", "LLAMA3.1_405B", 256, "FP8", 1536, 1, 8192, 0, 4, 16, 1, 4, 1, 843, ""),
 ("26.06 NeMo Container / LLAMA3.1_405B", "pretrain", "DGX-GB200", "LLAMA3.1_405B", 256, "MXFP8", 1536, 1, 8192, 0, 4, 16, 1, 8, 1, 783, ""),
 ("26.06 NeMo Container / LLAMA3.1_405B", "pretrain", "DGX-H100", "LLAMA3.1_405B", 1024, "FP8", 1536, 1, 8192, 0, 8, 8, 2, 8, 1, 326, ""),
 ("26.06 NeMo Container / Qwen3_30B_a3B", "pretrain", "DGX-H100", "Qwen3_30B_a3B", 16, "FP8", 1024, 1, 4096, 0, 1, 1, 1, None, 16, 8826, ""),
 ("26.06 NeMo Container / SFT LLAMA3_70B", "sft", "DGX-GB200", "LLAMA3_70B", 32, "FP8", 32, 1, 4096, 0, 1, 8, 1, 10, 1, 3864, ""),
 ("26.06 NeMo Container / SFT LLAMA3_70B", "sft", "DGX-H100", "LLAMA3_70B", 32, "FP8", 32, 1, 4096, 0, 4, 4, 1, 5, 1, 1638, ""),
 ("26.06 NeMo Container / LoRA LLAMA3_70B", "lora", "DGX-GB200", "LLAMA3_70B", 8, "FP8", 32, 1, 4096, 0, 1, 2, 1, 20, 1, 6206, ""),
 ("26.06 NeMo Container / LoRA LLAMA3_70B", "lora", "DGX-H100", "LLAMA3_70B", 8, "FP8", 32, 1, 4096, 0, 2, 4, 1, 20, 1, 2643, ""),
 ("26.08 NeMo Container / Qwen3_30B_a3B", "pretrain", "DGX-GB200", "Qwen3_30B_a3B", 8, "MXFP8", 512, 4, 4096, 0, 1, 1, 1, None, 8, 39936, ""),
]


# The recipe revision of each container (Megatron-Bridge docs/releases/software-versions.md and docs/versions1.json
# @ MB_COMMIT; the 25.09 perf scripts were cherry-picked into v0.1.0rc4) and where it sets grad_reduce_in_fp32 = False
# (bf16 main gradients and reduction; mixed_precision.setup() copies it onto the DDP config).
MB_REV = {"25.09": "v0.1.0rc4", "25.11": "v0.2.0", "26.04.01": "v0.4.2", "26.06": "v0.5.0", "26.08": "v0.6.0"}
MB_GRAD = {
    ("25.09", "LLAMA3_70B"): "scripts/performance/configs/llama3/llama3_70b_llm_pretrain.yaml:42-43",
    ("25.09", "LLAMA3.1_405B"): "scripts/performance/configs/llama31/llama31_405b_llm_pretrain.yaml:43-44",
    ("25.11", "LLAMA3_8B"): "scripts/performance/configs/llama3/llama3_llm_pretrain.py:46-47",
    ("25.11", "LLAMA3.1_405B"): "scripts/performance/configs/llama31/llama31_llm_pretrain.py:45-46",
    ("26.04.01", "LLAMA3_70B"): "scripts/performance/configs/llama/llama3_llm_pretrain.py:43-44",
    ("26.04.01", "Qwen3_30B_a3B"): "scripts/performance/configs/qwen/qwen3_llm_pretrain.py:41-42",
    ("26.06", "LLAMA3.1_405B"): "scripts/performance/configs/llama/llama31_llm_pretrain.py:42-43",
    ("26.06", "Qwen3_30B_a3B"): "scripts/performance/configs/qwen/qwen3_llm_pretrain.py:42-43",
    ("26.06", "LLAMA3_70B"): "scripts/performance/configs/llama/llama3_llm_finetune.py:43-44",
    ("26.08", "Qwen3_30B_a3B"): "src/megatron/bridge/perf_recipes/_common.py:70-72",
}
# The FP8 mixed-precision presets the recipes use (bf16_with_fp8_current_scaling_mixed, bf16_with_mxfp8_mixed) set
# fp8_param_gather = True: the layers' weights are FP8 parameters.
MB_FP8PG = {"v0.1.0rc4": "227-231 (MXFP8), 262-268 (current scaling)", "v0.2.0": "242-252, 272-289",
            "v0.4.2": "261-271, 291-308", "v0.5.0": "255-265, 285-302", "v0.6.0": "255-265, 285-302"}
# Megatron-Core cpu_offloading_num_layers in the recipe (the other rows offload nothing).
MB_OFFLOAD = {
    ("25.09", "DGX-GB200", "LLAMA3_70B", "FP8-CS"): (40, "scripts/performance/configs/llama3/llama3_70b_llm_pretrain.yaml:146"),
    ("25.09", "DGX-GB200", "LLAMA3.1_405B", "FP8-CS"): (95, "scripts/performance/configs/llama31/llama31_405b_llm_pretrain.yaml:123"),
    ("26.04.01", "DGX-GB200", "LLAMA3_70B", "FP8"): (40, "scripts/performance/configs/llama/llama3_workload_base_configs.py:241-246"),
}


def megatron_bridge():
    n = 0
    for (sec, task, system, model, gpus, prec, gbs, mbs, seq, fsdp, tp, pp, cp, vp, ep, tps, note) in MB:
        n += 1
        cid = f"MB-{system.split('-')[1]}-{model}-{gpus}-{prec}-{sec.split()[0]}" + ("" if task == "pretrain" else f"-{task.upper()}")
        ver = sec.split()[0]
        rev = MB_REV[ver]
        assumed = [f"recompute none: the performance recipe at {rev} sets none (the table does not state it)",
                   f"grad_precision bf16: grad_reduce_in_fp32 = False, {rev}:{MB_GRAD[(ver, model)]}"]
        if fsdp == 0:
            assumed.append("zero 1 (FSDP 0 = DDP; the recipes use Megatron's distributed optimizer)")
        if tp > 1:
            assumed.append("sequence_parallel (Megatron recipes enable it with tp > 1)")
        if prec in ("FP8-MX", "MXFP8"):
            assumed.append("MXFP8 (32-element block scaling) modelled as llmsim's fp8")
        if vp is None and pp > 1:
            assumed.append("vp 1 (n/a in the table)")
        if note:
            assumed.append(note)
        par = {"tp": tp, "pp": pp, "cp": cp, "ep": ep, "vp": vp or 1, "sequence_parallel": tp > 1,
               "zero": 3 if fsdp else 1, "tp_comm_overlap": tp > 1}
        tr = {"seq_len": seq, "micro_batch": mbs, "global_batch": gbs, "precision": "fp8", "grad_precision": "bf16",
              "fp8_params": True, "recompute": "none", "flash_attention": True, "optimizer": "adam", "offload": "none"}
        assumed.append(f"fp8_params: fp8_param_gather = True in the recipe's FP8 preset, "
                       f"{rev}:src/megatron/bridge/training/mixed_precision.py:{MB_FP8PG[rev]}")
        if (ver, system, model, prec) in MB_OFFLOAD:
            n, where = MB_OFFLOAD[(ver, system, model, prec)]
            tr["activation_offload_layers"] = n
            assumed.append(f"activation_offload_layers {n}: cpu_offloading_num_layers = {n}, {rev}:{where}")
        if task == "lora":
            tr["finetune"] = {"method": "lora", "rank": 16, "targets": ["q", "k", "v"]}
            assumed.append(f"LoRA dim 16 on linear_qkv only: {rev}:src/megatron/bridge/recipes/llama/llama3.py:2470-2475 "
                           f"(dim) and {rev}:scripts/performance/configs/llama/llama3_llm_finetune.py:260,354 (targets)")
        if task != "pretrain":
            assumed.append("seq_len tokens per micro-batch: the perf launcher's default mock data is one unpacked "
                           f"sequence of seq_len ({rev}:scripts/performance/argument_parser.py, --data mock), packed "
                           "SQuAD would be one packed sequence of seq_len; the docs do not say which ran")
        src = (MB_HEAD if sec.startswith("26.08") else MB_ARCHIVE) + f", '{sec}', {task}, {system}"
        cat = "B200/GB200" if system != "DGX-H100" else ("FP8 >= 1k H100" if gpus >= 1000 else "H100 Megatron (other)")
        add(cid, cat, src, {"model": MODEL[model], "system": SYS[system], "gpus": gpus, "parallel": par,
                            "training": tr}, gbs * seq / (tps * gpus),
            TOKENS_DERIVED + f" (tokens/s/GPU {tps}); tp_comm_overlap: {MB_TPOVL}", assumed)


# ---------------------------------------------------------------------------------------------------
# 2. NeMo 24.07 rows not in validation/training.json (NEMO2407-03..12 are there)
NEMO_SRC = ("NVIDIA/NeMo @ 070a0bb168d405d653b9734c0017cf5078e77c0d : docs/source/performance/performance_summary.md"
            " (NeMo 24.07, DGX-H100, FP8)")
GPT3 = {"GPT3-5B": {"layers": 24, "hidden": 4096, "heads": 32, "ffn_hidden": 16384, "vocab": 51200, "mlp": "gelu"},
        "GPT3-20B": {"layers": 44, "hidden": 6144, "heads": 48, "ffn_hidden": 24576, "vocab": 51200, "mlp": "gelu"},
        "Nemotron-8B": {"layers": 32, "hidden": 4096, "heads": 32, "ffn_hidden": 16384, "vocab": 256000, "mlp": "gelu",
                        "position": "rope", "bias": False, "dropout": False},
        "Nemotron-22B": {"layers": 40, "hidden": 6144, "heads": 48, "ffn_hidden": 24576, "vocab": 256000, "mlp": "gelu",
                         "position": "rope", "bias": False, "dropout": False},
        "LLAMA2-7B": "llama-2-7b", "LLAMA2-13B": "llama-2-13b", "LLAMA2-70B": "llama-2-70b"}
# (table, model, gpus, GBS, MBS, seq, TP, PP, CP, VP, tokens/s/GPU)
NEMO = [("Pretraining", "GPT3-5B", 64, 2048, 4, 2048, 1, 1, 1, 1, 22521),
        ("Pretraining", "GPT3-20B", 64, 256, 2, 2048, 2, 1, 1, 1, 5851),
        ("Pretraining", "Nemotron-8B", 64, 256, 4, 4096, 2, 1, 1, 1, 12701),
        ("Pretraining", "Nemotron-22B", 64, 256, 2, 4096, 2, 4, 1, 10, 4256),
        ("Finetuning SFT", "LLAMA2-7B", 8, 32, 1, 4096, 1, 1, 1, 1, 17120),
        ("Finetuning SFT", "LLAMA2-13B", 8, 32, 1, 4096, 1, 4, 1, 1, 9741),
        ("Finetuning SFT", "LLAMA2-70B", 16, 32, 1, 4096, 4, 4, 1, 1, 1833)]


# The 24.07 launcher's H100 SFT example scripts (the table's layouts, GBS 32, MBS 1, packed 4096-token
# sequences): NVIDIA/NeMo-Framework-Launcher @ tag 24.07, examples/peft/llama/h100/{7b_1node,13b_1node,70b_2node}.sh
# set virtual_pipeline_model_parallel_size (13B: 10, 70B: 20) and fp8_params=true.
NEMO_SFT = {"LLAMA2-7B": ("7b_1node.sh", 1), "LLAMA2-13B": ("13b_1node.sh", 10), "LLAMA2-70B": ("70b_2node.sh", 20)}


def nemo2407():
    for (table, model, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps) in NEMO:
        cid = f"NEMO2407-{model}-{gpus}" + ("-SFT" if table.endswith("SFT") else "")
        m = GPT3[model]
        assumed = ["recompute none", "zero 1 (distributed optimizer)"]
        if tp > 1:
            assumed += ["sequence_parallel", "tp_comm_overlap (NVIDIA performance recipes enable userbuffers TP overlap)"]
        if isinstance(m, dict):
            assumed.append("model shape from NeMo's gpt3/nemotron configs (the table names the model only)")
            if model.startswith("Nemotron"):
                assumed.append("squared-ReLU MLP as llmsim's two-matrix 'gelu'; kv_heads = heads")
                assumed.append("bias false, dropout 0 (hidden, attention, ffn): NVIDIA/NeMo-Framework-Launcher @ 24.07 : "
                               f"launcher_scripts/conf/training/nemotron/nemotron_{model.split('-')[1].lower()}.yaml:73-86")
        fp8_params = False
        if table.endswith("SFT"):
            script, vp = NEMO_SFT[model]
            fp8_params = True
            assumed.append("packed SQuAD sequences of 4096 tokens (packed_sequence=true, max_seq_length=4096)")
            assumed.append(f"vp {vp} and fp8_params (not in the SFT table): NVIDIA/NeMo-Framework-Launcher @ 24.07 : "
                           f"examples/peft/llama/h100/{script}, the table's layout, GBS and MBS")
        add(cid, "H100 Megatron (other)", NEMO_SRC + f", '{table}'",
            {"model": m, "system": "dgx-h100", "gpus": gpus,
             "parallel": {"tp": tp, "pp": pp, "cp": cp, "ep": 1, "vp": vp, "sequence_parallel": tp > 1, "zero": 1,
                          "tp_comm_overlap": tp > 1},
             "training": {"seq_len": seq, "micro_batch": mbs, "global_batch": gbs, "precision": "fp8",
                          "fp8_params": fp8_params, "recompute": "none", "flash_attention": True, "optimizer": "adam",
                          "offload": "none"}},
            gbs * seq / (tps * gpus), TOKENS_DERIVED + f" (tokens/s/GPU {tps})", assumed)


# ---------------------------------------------------------------------------------------------------
# 3. Thousands of H100s: Llama 3 405B (arXiv 2407.21783, Sec. 3.3.2, Table 4) and Nemotron-4 340B
#    (arXiv 2406.11704, Sec. 2.x, Table 2: iteration time given directly)
LLAMA3_SRC = "Llama Team 2024, The Llama 3 Herd of Models (arXiv 2407.21783), Sec. 3.3.2 Table 4"
# (GPUs, TP, CP, PP, DP, seq, batch size/DP, TFLOPs/GPU)
LLAMA3 = [(8192, 8, 1, 16, 64, 8192, 32, 430), (16384, 8, 1, 16, 128, 8192, 16, 400),
          (16384, 8, 16, 16, 8, 131072, 16, 380)]
L405 = {"layers": 126, "hidden": 16384, "heads": 128, "params": 405.85e9}  # llmsim zoo llama-3.1-405b


def llama3():
    for (gpus, tp, cp, pp, dp, seq, bdp, tflops) in LLAMA3:
        gbs = bdp * dp
        tokens = gbs * seq
        # MFU as Chowdhery et al. (PaLM, App. B), which the paper cites: 6N + 12*L*H*Q*T FLOPs per token
        flops = tokens * (6 * L405["params"] + 12 * L405["layers"] * L405["hidden"] * seq)
        assumed = ["FLOPs count: PaLM App. B (6N + 12LHQT per token, N = 405.85e9 with embeddings) since the paper "
                   "cites Chowdhery et al. for MFU and does not print its formula",
                   "vp 8: Sec. 3.3.2 uses 'an interleaved schedule (Narayanan et al., 2021) with V pipeline stages "
                   "on one pipeline rank' and, to balance it, removes one Transformer layer from the first and the "
                   "last stage so that 'the first model chunk on the first stage has only the embedding, and the last "
                   "model chunk on the last stage has only output projection and loss': one layer per chunk, "
                   "126 layers + 2 = 16 ranks x V = 8 chunks (the paper does not print V)",
                   "micro_batch 1, zero 1", "recompute none",
                   "sequence_parallel, no TP comm overlap (not stated)",
                   "Grand Teton 8x H100 80GB 700W, 400 Gbps RoCE per GPU as dgx-h100"]
        if cp > 1:
            assumed.append("dp 8: the PDF prints DP 4, which contradicts GPUs 16,384 = 8*16*16*DP and "
                           "16M tokens = 16*DP*131,072; other transcriptions print 8")
        cid = f"LLAMA3-405B-{gpus}-cp{cp}"
        add(cid, ">= 1k H100 BF16", LLAMA3_SRC,
            {"model": "llama-3.1-405b", "system": "dgx-h100", "gpus": gpus,
             "parallel": {"tp": tp, "pp": pp, "cp": cp, "dp": dp, "ep": 1, "vp": 8, "sequence_parallel": True, "zero": 1},
             "training": {"seq_len": seq, "micro_batch": 1, "global_batch": gbs, "precision": "bf16",
                          "recompute": "none", "flash_attention": True, "optimizer": "adam", "offload": "none"}},
            flops / (tflops * 1e12 * gpus),
            f"tokens*(6N+12*L*h*s)/(TFLOPs/GPU {tflops} * GPUs); tokens = batch/DP*DP*seq", assumed)


NEM4_SRC = "Nvidia 2024, Nemotron-4 340B Technical Report (arXiv 2406.11704), Sec. 2.3 Table 2"
# (DP, GPUs, iteration time s, MFU %, batch size); TP 8, PP 12 with interleaving stated in the text
NEM4 = [(16, 1536, 10.3, 42.4, 768), (32, 3072, 10.3, 42.3, 1536), (64, 6144, 8.0, 41.0, 2304)]


def nemotron4():
    for (dp, gpus, it, mfu, gbs) in NEM4:
        add(f"NEMOTRON4-340B-{gpus}", ">= 1k H100 BF16", NEM4_SRC,
            {"model": "nemotron-4-340b", "system": "dgx-h100", "gpus": gpus,
             "parallel": {"tp": 8, "pp": 12, "dp": dp, "cp": 1, "ep": 1, "vp": 8, "sequence_parallel": True, "zero": 1},
             "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": gbs, "precision": "bf16",
                          "recompute": "none", "flash_attention": True, "optimizer": "adam", "offload": "none"}},
            it, f"iteration time as printed (MFU {mfu}% in the same row)",
            ["vp 8 (interleaving stated, chunks not: one layer per chunk as NVIDIA's 340B recipes)",
             "micro_batch 1, recompute none, zero 1 (distributed optimizer), sequence_parallel",
             "precision bf16 (the report trains in BF16)"])


# ---------------------------------------------------------------------------------------------------
# 4. torchtitan (FSDP2 / TP / PP / CP), framework "torchtitan"
TT_H100_SRC = ("pytorch/torchtitan @ bf835b59d6897949ee5d1cb9ce7aa2b6dc84860c : docs/performance.md "
               "(torch 1963fc8, torchtitan 9dec370, Grand Teton H100 96GB HBM2e 500 W)")
TT_A100_SRC = "pytorch/torchtitan @ 041336434916bdc0f88c1f89fda176fd3c2092e4 : docs/performance.md (64 A100 80GB)"
GT_H100 = {"preset": "dgx-h100", "name": "grand-teton-h100-96gb",
           "gpu": {"hbm_capacity_GiB": 89.4, "hbm_GBps": 2400}}
GT_NOTE = ("system: dgx-h100 with the source's 96 GB (89.4 GiB) HBM2e at 2.4 TB/s; dense peak left at the SXM "
           "value although the GPUs run at 500 W (the source: between SXM and NVL, exact value unknown)")
# (table, model, gpus, fsdp(dp), tp, pp, cp, vp, local batch, seq, precision, AC, asyncTP, tokens/s/GPU, label)
TT = [
 ("Table 1", "llama-3.1-8b", 8, 8, 1, 1, 1, 1, 2, 8192, "bf16", "selective", False, 5762, "FSDP"),
 ("Table 1", "llama-3.1-8b", 8, 8, 1, 1, 1, 1, 2, 8192, "bf16", "selective", False, 6667, "FSDP + torch.compile"),
 ("Table 1", "llama-3.1-8b", 8, 8, 1, 1, 1, 1, 2, 8192, "fp8", "selective", False, 8532, "FSDP + torch.compile + Float8"),
 ("Table 2", "llama-3.1-8b", 8, 8, 1, 1, 1, 1, 1, 32768, "fp8", "full", False, 3890, "FSDP 8, CP 1"),
 ("Table 2", "llama-3.1-8b", 8, 4, 1, 1, 2, 1, 1, 65536, "fp8", "full", False, 2540, "FSDP 4, CP 2"),
 ("Table 2", "llama-3.1-8b", 8, 2, 1, 1, 4, 1, 1, 131072, "fp8", "full", False, 1071, "FSDP 2, CP 4"),
 ("Table 2", "llama-3.1-8b", 8, 1, 1, 1, 8, 1, 1, 262144, "fp8", "full", False, 548, "FSDP 1, CP 8"),
 ("Table 3", "llama-3.1-8b", 128, 128, 1, 1, 1, 1, 2, 8192, "bf16", "selective", False, 5605, "FSDP"),
 ("Table 3", "llama-3.1-8b", 128, 128, 1, 1, 1, 1, 2, 8192, "bf16", "selective", False, 6514, "FSDP + torch.compile"),
 ("Table 3", "llama-3.1-8b", 128, 128, 1, 1, 1, 1, 2, 8192, "fp8", "selective", False, 8380, "FSDP + torch.compile + Float8"),
 ("Table 4", "llama-3.1-70b", 256, 32, 8, 1, 1, 1, 16, 8192, "fp8", "full", False, 829, "2D"),
 ("Table 4", "llama-3.1-70b", 256, 32, 8, 1, 1, 1, 16, 8192, "fp8", "full", True, 876, "2D + AsyncTP"),
 ("Table 5", "llama-3.1-405b", 512, 8, 8, 8, 1, 1, 32, 8192, "fp8", "full", True, 100, "1F1B"),
 ("Table 5", "llama-3.1-405b", 512, 8, 8, 8, 1, 2, 32, 8192, "fp8", "full", True, 128, "Interleaved 1F1B"),
 ("Table 6", "llama-3.1-405b", 512, 8, 8, 8, 1, 1, 8, 32768, "fp8", "full", True, 76, "FSDP 8, CP 1"),
 ("Table 6", "llama-3.1-405b", 512, 4, 8, 8, 2, 1, 8, 65536, "fp8", "full", True, 47, "FSDP 4, CP 2"),
 ("Table 6", "llama-3.1-405b", 512, 2, 8, 8, 4, 1, 8, 131072, "fp8", "full", True, 31, "FSDP 2, CP 4"),
 ("Table 6", "llama-3.1-405b", 512, 1, 8, 8, 8, 1, 8, 262144, "fp8", "full", True, 16, "FSDP 1, CP 8"),
]
# A100 tables: (table, model, local batch, seq, AC, WPS = tokens/s/GPU, label); 64 GPUs, FSDP 64
TT_A100 = [("Llama 3", "llama-3-8b", 1, 8192, "selective", 2973, "8B selective op"),
           ("Llama 3", "llama-3-70b", 1, 8192, "full", 331, "70B full"),
           ("Llama 2", "llama-2-13b", 2, 4096, "none", 2162, "13B no AC"),
           ("Llama 2", "llama-2-13b", 2, 4096, "selective", 1904, "13B selective op"),
           ("Llama 2", "llama-2-70b", 1, 4096, "selective", 355, "70B selective op"),
           ("Llama 2", "llama-2-70b", 2, 4096, "full", 353, "70B full")]


def torchtitan():
    for (table, model, gpus, dp, tp, pp, cp, vp, lbs, seq, prec, ac, atp, tps, label) in TT:
        gbs = lbs * dp
        assumed = [GT_NOTE]
        mb = lbs
        if pp > 1:
            # torchtitan 9dec370 (the commit the tables name, 2024-12-26): build_pipeline_schedule sets
            # n_microbatches = experimental.pipeline_parallel_microbatches, default None ->
            # pipeline_parallel_degree (torchtitan/parallelisms/pipelining_utils.py); the later
            # pipeline_parallel_microbatch_size key (default 1) did not exist yet.
            mb = lbs // pp
            assumed.append(f"micro_batch {mb}: the local batch {lbs} in pp = {pp} micro-batches (torchtitan 9dec370 "
                           "pipelining_utils.py: n_microbatches defaults to pipeline_parallel_degree; the table does "
                           "not set it)")
        if vp > 1:
            assumed.append("vp 2 (Interleaved 1F1B with torchtitan's default two stages per rank)")
        if table in ("Table 1", "Table 3"):
            assumed.append("seq_len 8192 (torchtitan's llama3_8b.toml; the table does not print it)")
        if table in ("Table 4", "Table 5", "Table 6") and not atp:
            pass
        if prec == "fp8":
            assumed.append("Float8 on nn.Linear only (attention stays bf16) modelled as llmsim's fp8 training")
        if tp > 1:
            assumed.append("sequence_parallel (torchtitan's TP plan shards norms/activations along the sequence)")
        # Tables 2, 4, 5 and 6 say torch.compile in their titles; Tables 1 and 3 name it per row, and their
        # plain "FSDP" row is eager.
        compiled = label != "FSDP"
        cid = f"TT-{model}-{gpus}-{label.replace(' + ', '+').replace(', ', '-').replace(' ', '')}"
        add(cid, "other frameworks", TT_H100_SRC + f", {table} '{label}'",
            {"model": model, "system": GT_H100, "gpus": gpus,
             "parallel": {"tp": tp, "pp": pp, "cp": cp, "dp": dp, "ep": 1, "vp": vp, "sequence_parallel": tp > 1,
                          "zero": 3, "framework": "torchtitan", "tp_comm_overlap": atp, "torch_compile": compiled},
             "training": {"seq_len": seq, "micro_batch": mb, "global_batch": gbs, "precision": prec,
                          "recompute": ac, "flash_attention": True, "optimizer": "adamw", "offload": "none"}},
            gbs * seq / (tps * gpus), TOKENS_DERIVED + f" (TPS/GPU {tps}; global batch = local batch * FSDP degree)",
            assumed)
    for (table, model, lbs, seq, ac, wps, label) in TT_A100:
        assumed = ["eager mode: torch_compile false (the tables do not name torch.compile, off by default)"]
        if "selective" in label:
            assumed.append("selective op AC as llmsim's selective recompute")
        add(f"TT-A100-{model}-{label.replace(' ', '')}", "other frameworks", TT_A100_SRC + f", {table} table '{label}'",
            {"model": model, "system": "dgx-a100-80gb", "gpus": 64,
             "parallel": {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "vp": 1, "zero": 3, "framework": "torchtitan",
                          "torch_compile": False},
             "training": {"seq_len": seq, "micro_batch": lbs, "global_batch": lbs * 64, "precision": "bf16",
                          "recompute": ac, "flash_attention": True, "optimizer": "adamw", "offload": "none"}},
            lbs * 64 * seq / (wps * 64), TOKENS_DERIVED + f" (WPS {wps} per GPU; global batch = local batch * 64)",
            assumed)


# ---------------------------------------------------------------------------------------------------
# 5. llm-foundry (Composer FSDP FULL_SHARD) scaling tables, rows not in validation (MOSAIC-H100-01..08)
MOSAIC_SRC = "mosaicml/llm-foundry @ 061f2c7ce64e655100286584a7629e2a09f827ba : scripts/train/benchmarking/README.md"
MPT = {"760m": (24, 1536, 12), "1b": (24, 2048, 16), "3b": (32, 2560, 32), "7b": (32, 4096, 32),
       "13b": (40, 5120, 40), "30b": (48, 7168, 64), "70b": (80, 8192, 64)}
# (table, model, seq, gpus, MicroBatchSize, GlobalBatchSize, Throughput (T/s), Activation Checkpointing)
MOSAIC = [
 ("H100 80GB BF16", "13b", 2048, 16, 2, 32, 76280, False), ("H100 80GB BF16", "13b", 2048, 32, 2, 64, 153960, False),
 ("H100 80GB BF16", "13b", 2048, 64, 2, 128, 307209, False),
 ("H100 80GB BF16", "1b", 2048, 8, 14, 112, 363645, False), ("H100 80GB BF16", "1b", 2048, 16, 20, 320, 736596, False),
 ("H100 80GB BF16", "1b", 2048, 32, 20, 640, 1444183, False),
 ("H100 80GB BF16", "30b", 2048, 16, 10, 480, 36209, True), ("H100 80GB BF16", "70b", 2048, 32, 2, 1024, 28242, True),
 ("H100 80GB FP8", "3b", 2048, 8, 10, 480, 244692, False), ("H100 80GB FP8", "1b", 512, 8, 56, 1792, 562523, False),
 ("A100 40GB", "13b", 2048, 16, 10, 160, 31900, True), ("A100 40GB", "13b", 2048, 32, 14, 448, 63946, True),
 ("A100 40GB", "13b", 2048, 64, 16, 1024, 126479, True), ("A100 40GB", "13b", 2048, 128, 16, 2048, 252444, True),
 ("A100 40GB", "7b", 2048, 16, 16, 256, 58322, True), ("A100 40GB", "7b", 2048, 32, 18, 576, 119202, True),
 ("A100 40GB", "7b", 2048, 64, 18, 1152, 234614, True), ("A100 40GB", "7b", 2048, 128, 18, 2304, 463749, True),
 ("A100 40GB", "30b", 2048, 32, 4, 128, 27431, True), ("A100 40GB", "30b", 2048, 128, 6, 768, 110803, True),
 ("A100 40GB", "70b", 2048, 64, 2, 128, 17672, True), ("A100 40GB", "70b", 2048, 128, 4, 512, 48194, True),
]
MOSAIC_SYS = {"H100 80GB BF16": ("dgx-h100", "bf16"), "H100 80GB FP8": ("dgx-h100", "fp8"),
              "A100 40GB": ("dgx-a100-40gb", "bf16")}


def mosaic():
    for (table, m, seq, gpus, mbs, gbs, tput, ac) in MOSAIC:
        layers, hidden, heads = MPT[m]
        system, prec = MOSAIC_SYS[table]
        assumed = ["model dims from MPT configs (as validation MOSAIC-H100-*)",
                   "dropout 0: the MPT yamls (scripts/train/yamls/pretrain/mpt-*.yaml) set no pdrop and llm-foundry's "
                   "defaults are resid_pdrop = emb_pdrop = attn_pdrop = 0.0 (llmfoundry/models/layers/blocks.py MPTBlock, "
                   "models/utils/config_defaults.py attn_config_defaults)",
                   "tied embeddings: the table's NumParams (13b at seq 2048: 12,853,954,560) counts one vocab matrix "
                   "(40 x 12 x 5120^2 + 50368 x 5120 + 2048 x 5120 learned positions = 12.851e9)"]
        assumed.append("framework llm-foundry: the tables come from sweep.sh, which never sets --attn_impl, so "
                       "submit_benchmarks.py's default 'triton' (MPT's Triton FlashAttention kernel, not written for "
                       "Hopper) attends, in the image mosaicml/pytorch:2.0.1_cu118 (scripts/train/benchmarking/"
                       "sweep.sh and submit_benchmarks.py at the same commit): FlashAttention-2-class kernels")
        if table == "A100 40GB":
            assumed += ["'bf16 PURE' (bf16 parameters and reductions) modelled as standard mixed precision",
                        "1600 Gbps RoCE per node as dgx-a100-40gb's network"]
        if prec == "fp8":
            assumed.append("amp_fp8 (TransformerEngine linears) as llmsim's fp8")
        add(f"MOSAIC-{table.split()[0]}{'-FP8' if prec == 'fp8' else ''}-{m}-{seq}-{gpus}", "ZeRO-3/FSDP scaling",
            MOSAIC_SRC + f" ({table} table)",
            {"model": {"layers": layers, "hidden": hidden, "heads": heads, "kv_heads": heads,
                       "ffn_hidden": 4 * hidden, "vocab": 50368, "mlp": "gelu", "dropout": False,
                       "tied_embeddings": True},
             "system": system, "gpus": gpus,
             "parallel": {"tp": 1, "pp": 1, "dp": gpus, "cp": 1, "ep": 1, "vp": 1, "sequence_parallel": False,
                          "zero": 3, "framework": "llm-foundry"},
             "training": {"seq_len": seq, "micro_batch": mbs, "global_batch": gbs, "precision": prec,
                          "recompute": "full" if ac else "none", "flash_attention": True, "optimizer": "adam",
                          "offload": "none"}},
            gbs * seq / tput, f"global_batch*seq/Throughput(T/s) (T/s {tput})", assumed)


# Megatron-Bridge splits 126 layers + embedding + loss into pp*vp = 128 chunks; llmsim's reader refuses
# pp*vp > layers ("expected pp·vp at most layers").
# Layouts the reader refused when transcribed; empty since pp·vp may reach layers + 2 (the embedding and the
# loss chunks of Megatron-Core's pipeline split), which admitted GB200 405B at pp 16 x vp 8.
REFUSED = set()

megatron_bridge()
nemo2407()
llama3()
nemotron4()
torchtitan()
mosaic()

GROUPS = ["B200/GB200", "FP8 >= 1k H100", ">= 1k H100 BF16", "ZeRO-3/FSDP scaling", "other frameworks",
          "H100 Megatron (other)"]


# Peak memory per GPU the torchtitan tables print (GiB; the most loaded GPU, torchtitan's memory monitor:
# the caching allocator's peak reserved memory), by case id. Not a validation quantity: `--summary` compares
# llmsim's memory per GPU (the most loaded one) with it.
TT_MEMORY_GiB = {
    "TT-llama-3.1-8b-8-FSDP": 82.4, "TT-llama-3.1-8b-8-FSDP+torch.compile": 77.0,
    "TT-llama-3.1-8b-8-FSDP+torch.compile+Float8": 76.8,
    "TT-llama-3.1-8b-8-FSDP8-CP1": 83.9, "TT-llama-3.1-8b-8-FSDP4-CP2": 84.2,
    "TT-llama-3.1-8b-8-FSDP2-CP4": 84.0, "TT-llama-3.1-8b-8-FSDP1-CP8": 84.5,
    "TT-llama-3.1-8b-128-FSDP": 67.0, "TT-llama-3.1-8b-128-FSDP+torch.compile": 62.0,
    "TT-llama-3.1-8b-128-FSDP+torch.compile+Float8": 61.8,
    "TT-llama-3.1-70b-256-2D": 71.9, "TT-llama-3.1-70b-256-2D+AsyncTP": 67.6,
    "TT-llama-3.1-405b-512-1F1B": 82.5, "TT-llama-3.1-405b-512-Interleaved1F1B": 72.7,
    "TT-llama-3.1-405b-512-FSDP8-CP1": 75.3, "TT-llama-3.1-405b-512-FSDP4-CP2": 75.9,
    "TT-llama-3.1-405b-512-FSDP2-CP4": 77.1, "TT-llama-3.1-405b-512-FSDP1-CP8": 84.9,
}


def summary(validate_json):
    """The per-group table of docs/accuracy.md from `llmsim validate --json` output."""
    import statistics
    rows = json.load(open(validate_json))["cases"]
    print("| group | cases | mean |error| | median | worst | fit in memory |")
    held_out = "all but the Blackwell calibration rows"
    for g in GROUPS + ["all", held_out]:
        rs = [r for r in rows if g == "all" or CATEGORY.get(r["id"]) == g or
              (g == held_out and CATEGORY.get(r["id"]) != "B200/GB200")]
        e = [abs(r["error"]) * 100 for r in rs]
        w = max(rs, key=lambda r: abs(r["error"]))
        print(f"| {g} | {len(rs)} | {statistics.mean(e):.1f}% | {statistics.median(e):.1f}% | "
              f"{w['error'] * 100:+.1f}% ({w['id']}) | {sum(r['fits'] for r in rs)} of {len(rs)} |")
    by_id = {r["id"]: r for r in rows}
    err = [(i, by_id[i]["memory_bytes"] / 2**30 / gib - 1) for i, gib in TT_MEMORY_GiB.items() if i in by_id]
    if err:
        worst = max(err, key=lambda x: abs(x[1]))
        print(f"\ntorchtitan peak memory per GPU ({len(err)} rows): mean |error| "
              f"{statistics.mean(abs(e) for _, e in err) * 100:.1f}%, median "
              f"{statistics.median(abs(e) for _, e in err) * 100:.1f}%, worst {worst[1] * 100:+.1f}% ({worst[0]})")


if __name__ == "__main__":
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "--summary":
        summary(sys.argv[2])
        sys.exit(0)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "training-heldout.json")
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate ids"
    # Layouts llmsim's scenario reader refuses (the whole file would fail to load) go to a file of their own,
    # kept so the refusal is visible: `llmsim validate` on it prints the message.
    refused = [c for c in CASES if c["id"] in REFUSED]
    kept = [c for c in CASES if c["id"] not in REFUSED]
    for name, cases in (("training-heldout.json", kept), ("training-heldout-refused.json", refused)):
        if not cases and name != "training-heldout.json":
            continue
        with open(os.path.join(os.path.dirname(out), name), "w") as f:
            json.dump({"cases": cases}, f, indent=1)
            f.write("\n")
    print(f"{len(kept)} cases -> {out}; {len(refused)} refused by the reader -> training-heldout-refused.json")
