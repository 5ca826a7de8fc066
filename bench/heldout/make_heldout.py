#!/usr/bin/env python3
"""Held-out serving runs (not in validation/, never used to fit anything): TensorRT-LLM's published
tables, transcribed here as llmsim validation files. Run: python3 make_heldout.py (writes the JSON next
to this script), then `llmsim validate bench/heldout/trtllm-*.json`.

Source: github.com/NVIDIA/TensorRT-LLM @ 258c7540c03517def55d9a5aadfa9288af474e1b,
docs/source/performance/perf-overview.md: 'Throughput Measurements' (v0.17, trtllm-bench throughput,
fixed lengths, all requests queued at once; H200/H100 FP8 weights and KV, A100 FP16) and 'Online
Serving Measurements' (v0.14, Triton TensorRT-LLM backend, 500 requests, BF16, Poisson at QPS).
"""
import json, os

SRC = ("github.com/NVIDIA/TensorRT-LLM @ 258c7540c03517def55d9a5aadfa9288af474e1b : "
       "docs/source/performance/perf-overview.md")
LENS = [(128, 128), (128, 2048), (128, 4096), (500, 2000), (1000, 1000), (2048, 128), (2048, 2048),
        (5000, 500), (20000, 2000)]
REQS = {(128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (2048, 128): 3000, (2048, 2048): 1500,
        (5000, 500): 1500, (1000, 1000): 3000, (500, 2000): 3000, (20000, 2000): 1000}
GPUS = [("hgx-h200", "fp8"), ("dgx-h100", "fp8"), ("dgx-a100-80gb", "fp16")]
# model, tp, then one row per LENS entry: (H200, H100, A100) output tokens/s of the TP group; None = blank
T = {
 ("llama-3.1-8b", 1): [(29526.04, 28836.77, 6627.27), (25398.86, 21109.38, 5255.99), (17370.8, 13593.65, 3453.79),
   (21020.81, 16500.69, 4276.58), (17537.96, 15244.78, 3786.83), (3794.14, 3556.73, 799.61),
   (11968.5, 9488.42, 2424.16), (3987.79, 3559.36, 825.13), (1804.1, 1401.31, 330.04)],
 ("llama-3.1-70b", 1): [(4020.75, 3378.03, None), (4165.68, 911.62, None), (2651.75, 426.32, None),
   (3018.39, 775.57, None), (2823.45, 839.97, None), (465.99, 343.29, None), (1913.8, None, None),
   (560.16, 245.34, None), (279.52, None, None)],
 ("llama-3.1-70b", 2): [(6823.01, 6645.12, 1313.96), (8290.35, 6169.58, 531.26), (6526.67, 3897.06, None),
   (6848.02, 4972.57, 439.41), (5164.76, 4390.53, 472.94), (809, 772.66, 148.96), (4183.88, 2898.16, 261.1),
   (1025.38, 919.73, 121.47), (640.62, 443.01, None)],
 ("llama-3.1-70b", 4): [(11098.63, 11127.53, 2733.48), (14156, 11511.93, 2811.27), (10574.06, 7439.41, 1976.49),
   (12452.79, 9836.7, 2275.79), (8911.29, 7430.99, 1921.77), (1358.06, 1302.6, 325.15), (7130.44, 5480.03, 1393.64),
   (1811.55, 1602.78, 392.62), (1199.68, 920.19, 212.08)],
 ("llama-3.1-70b", 8): [(15355.84, 14730.69, 4717.62), (21195.88, 17061.82, 5241.5), (16941.52, 14171.43, 3724.67),
   (17278.4, 14679.33, 4445.37), (13181.24, 11451.16, 3320.41), (1983.03, 1923.41, 542.38),
   (11142.47, 8801.95, 2553.71), (2717.83, 2457.42, 696.34), (1920.45, 1512.6, 413.38)],
 ("llama-3.1-405b", 8): [(3874.19, None, None), (5938.09, None, None), (5168.37, None, None), (5084.29, None, None),
   (3399.69, None, None), (463.42, None, None), (2940.62, None, None), (669.13, None, None), (535.31, None, None)],
 ("mistral-7b", 1): [(31938.12, 31674.49, 6982.53), (27409.3, 23496.42, 5630.62), (18505.03, 14350.99, 3591.22),
   (22354.67, 18026.27, 4400.48), (18426.16, 16035.66, 3896.58), (3834.43, 3642.48, 808.58),
   (12347.37, 9958.17, 2489.77), (4041.59, 3591.33, 844.64), (1822.69, 1373.24, 332.3)],
 ("mixtral-8x7b", 1): [(17157.72, 15962.49, None), (15095.21, 8290.13, None), (9534.62, 4784.86, None),
   (12105.27, 6800.6, None), (10371.36, 6868.52, None), (2009.67, 1892.81, None), (6940.32, 3983.1, None),
   (2309.1, 1764.7, None), (1151.78, 673.7, None)],
 ("mixtral-8x7b", 4): [(42551.59, 41068.23, 10324.28), (52291.78, 41164.73, 10911.86), (39513.73, 27912.48, 7666.51),
   (43818.99, 34489.34, 8456.21), (33580.9, 27784.74, 7122.84), (5467.62, 5234.98, 1237.62),
   (24980.93, 19432.08, 5222.98), (7084.94, 6401.56, 1500.55), (4236.84, 3303.83, 829.59)],
 ("mixtral-8x7b", 8): [(53212.55, 50849.55, 17043.54), (68608.45, 61607.7, 20277.88), (54827.78, 48280.37, 15282.89),
   (58706.39, 52583.65, 17184.24), (44705.48, 40631.71, 12851.44), (7554.38, 6988.18, 2165.52),
   (36193.64, 30983.35, 9809.76), (10271.8, 9210.11, 2761.28), (6835.53, 5602.43, 1592.53)],
 ("mixtral-8x22b", 8): [(22948.57, 21876.08, 6381.95), (32415.81, 25150.03, 6685.99), (25753.14, 18387.4, 4789.13),
   (27429.6, 21421.86, 5648.46), (19712.35, 16573.24, 4549.46), (2899.84, 2794.97, 761.56),
   (15798.59, 12244.93, 3521.98), (4031.79, 3645.27, 959.14), (2815.76, 2227.63, 575.02)],
}
# Rows in validation/serving.json already (not held out): skip them.
IN_VALIDATION = {("llama-3.1-70b", 1, "dgx-h100", (1000, 1000)), ("llama-3.1-70b", 2, "dgx-h100", (1000, 1000)),
                 ("llama-3.1-70b", 4, "dgx-h100", (1000, 1000)), ("llama-3.1-70b", 8, "dgx-h100", (1000, 1000)),
                 ("llama-3.1-70b", 1, "hgx-h200", (1000, 1000)), ("llama-3.1-8b", 1, "dgx-h100", (128, 128)),
                 ("llama-3.1-8b", 1, "dgx-a100-80gb", (128, 128))}

def throughput():
    cases = []
    for (model, tp), rows in T.items():
        for (isl, osl), vals in zip(LENS, rows):
            for (system, prec), v in zip(GPUS, vals):
                if v is None or (model, tp, system, (isl, osl)) in IN_VALIDATION:
                    continue
                kv = "fp8" if prec == "fp8" else "bf16"
                cid = f"T017-{model}-tp{tp}-{system}-{isl}-{osl}"
                cases.append({"id": cid, "source": SRC + " 'Throughput Measurements' (v0.17)",
                    "scenario": {"name": cid, "model": model, "system": system, "gpus": tp,
                                 "parallel": {"tp": tp, "pp": 1},
                                 "inference": {"weight_precision": prec, "kv_precision": kv,
                                               "batching": "continuous", "input_len": isl, "output_len": osl,
                                               "requests": min(REQS[(isl, osl)], 20000)}},
                    "measured": {"output_tokens_per_s_per_gpu": v / tp},
                    "derived": "table value (tokens/s of the TP group, output tokens) / tp"})
    return cases

# Online: model, system, tp, (isl, osl), rows of (qps or None, req/s, TTFT ms, ITL ms, output tok/s)
O = [
 ("llama-3.1-70b", "dgx-h100", 4, (467, 256), [(2, 2, 62, 21, 498), (4, 4, 68, 24, 973), (8, 7, 92, 32, 1860),
   (16, 12, 175, 66, 3164), (32, 16, 1229, 86, 4083), (None, 16, 9123, 85, 4103)]),
 ("llama-3.1-70b", "dgx-h100", 4, (467, 16), [(2, 2, 53, 18, 28), (4, 4, 58, 20, 63), (8, 8, 71, 24, 126),
   (16, 16, 109, 38, 248), (32, 28, 1197, 482, 452), (None, 28, 9126, 548, 454)]),
 ("llama-3.1-70b", "dgx-h100", 4, (202, 214), [(2, 2, 48, 20, 401), (4, 4, 51, 22, 771), (8, 7, 57, 25, 1390),
   (16, 11, 74, 32, 2245), (32, 14, 116, 42, 3003), (None, 16, 4482, 50, 3459)]),
 ("llama-3.1-8b", "dgx-h100", 1, (467, 256), [(2, 2, 23, 8, 504), (4, 4, 24, 9, 929), (8, 8, 26, 9, 1959),
   (16, 15, 30, 11, 3765), (32, 26, 50, 19, 6774), (None, 37, 3335, 39, 9420)]),
 ("llama-3.1-8b", "dgx-h100", 1, (467, 16), [(2, 2, 19, 7, 32), (4, 4, 20, 7, 63), (8, 8, 22, 7, 126),
   (16, 16, 24, 8, 251), (32, 31, 29, 10, 493), (None, 79, 3280, 193, 1269)]),
 ("llama-3.1-8b", "dgx-h100", 1, (202, 214), [(2, 2, 19, 7, 416), (4, 4, 20, 8, 816), (8, 7, 21, 9, 1568),
   (16, 13, 23, 10, 2879), (32, 23, 27, 11, 4825), (None, 39, 1657, 21, 8291)]),
 ("llama-3.1-70b", "hgx-h200", 4, (467, 256), [(2, 2, 58, 18, 499), (4, 4, 63, 20, 980), (8, 7, 84, 27, 1886),
   (16, 13, 165, 60, 3264), (32, 16, 1279, 83, 4176), (None, 16, 9222, 83, 4185)]),
 ("llama-3.1-70b", "hgx-h200", 4, (467, 16), [(2, 2, 50, 15, 32), (4, 4, 55, 16, 63), (8, 8, 67, 20, 126),
   (16, 16, 103, 33, 248), (32, 28, 1259, 485, 450), (None, 29, 9074, 546, 457)]),
 ("llama-3.1-70b", "hgx-h200", 4, (202, 214), [(2, 2, 43, 17, 408), (4, 4, 46, 18, 784), (8, 7, 51, 21, 1438),
   (16, 11, 67, 28, 2386), (32, 15, 112, 39, 3235), (None, 17, 4480, 48, 3719)]),
 ("llama-3.1-8b", "hgx-h200", 1, (467, 256), [(2, 2, 21, 6, 504), (4, 4, 23, 7, 1001), (8, 8, 24, 7, 1971),
   (16, 15, 27, 9, 3809), (32, 27, 44, 16, 7025), (None, 40, 3237, 36, 10121)]),
 ("llama-3.1-8b", "hgx-h200", 1, (467, 16), [(2, 2, 18, 5, 32), (4, 4, 19, 6, 63), (8, 8, 20, 6, 126),
   (16, 16, 22, 7, 250), (32, 31, 27, 9, 494), (None, 81, 3227, 190, 1291)]),
 ("llama-3.1-8b", "hgx-h200", 1, (202, 214), [(2, 2, 17, 6, 418), (4, 4, 18, 6, 822), (8, 7, 19, 7, 1589),
   (16, 14, 20, 8, 2969), (32, 24, 24, 9, 5109), (None, 43, 1665, 19, 9189)]),
]

def online():
    cases = []
    for model, system, tp, (isl, osl), rows in O:
        for qps, rps, ttft, itl, out in rows:
            if model == "llama-3.1-70b" and system == "dgx-h100" and (isl, osl) == (467, 256):
                continue   # in validation/serving.json (TRTLLM-ONLINE-01..06)
            q = "INF" if qps is None else str(qps)
            cid = f"O014-{model}-{system}-{isl}-{osl}-qps{q}"
            inf = {"weight_precision": "bf16", "kv_precision": "bf16", "batching": "continuous",
                   "input_len": isl, "output_len": osl, "requests": 500}
            if qps is not None:
                inf["qps"] = float(qps)
            cases.append({"id": cid, "source": SRC + " 'Online Serving Measurements' (v0.14)",
                "scenario": {"name": cid, "model": model, "system": system, "gpus": tp,
                             "parallel": {"tp": tp, "pp": 1}, "inference": inf},
                "measured": {"output_tokens_per_s_per_gpu": out / tp, "ttft_s": ttft / 1000.0,
                             "tpot_s": itl / 1000.0},
                "derived": "Output Tput / tp; Mean TTFT (ms) / 1000; Mean ITL (ms) / 1000 as the mean TPOT"})
    return cases

here = os.path.dirname(os.path.abspath(__file__))
for name, cases in (("trtllm-0.17-throughput.json", throughput()), ("trtllm-0.14-online.json", online())):
    with open(os.path.join(here, name), "w") as f:
        json.dump({"cases": cases}, f, indent=1)
        f.write("\n")
    print(name, len(cases), "cases")
