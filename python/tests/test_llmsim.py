"""The Python module against the CLI and the numbers the C++ tests derive by hand (docs/python.md)."""

import json
import os
import threading
import time

import pytest

import llmsim

GPT3 = "scenarios/gpt3-175b-a100-1024.json"
LLAMA8B = {"model": "llama-3-8b", "system": "dgx-h100", "gpus": 1}


def serving(**inference):
    return {**LLAMA8B, "inference": inference}


def test_estimate_is_the_clis_json(cli):
    rc, out, _ = cli("estimate", "--scenario", GPT3, "--json")
    assert rc == 0
    assert llmsim.estimate(GPT3) == json.loads(out)
    # The README's line: the same number as the CLI.
    assert llmsim.estimate(GPT3)["step_time_s"] == json.loads(out)["step_time_s"]


def test_scenario_as_path_dict_or_text_gives_one_answer():
    with open(GPT3, encoding="utf-8") as f:
        text = f.read()
    by_path = llmsim.estimate(GPT3, fast=True)
    assert llmsim.estimate(json.loads(text), fast=True) == by_path
    assert llmsim.estimate(text, fast=True) == by_path
    import pathlib

    assert llmsim.estimate(pathlib.Path(GPT3), fast=True) == by_path
    assert by_path["method_note"] == "closed form (--fast)"


def test_memory_flops_search_validate_are_the_clis_json(cli):
    for name, fn in (("memory", llmsim.memory), ("flops", llmsim.flops)):
        rc, out, _ = cli(name, "--scenario", GPT3, "--json")
        assert rc == 0
        assert fn(GPT3) == json.loads(out)
    rc, out, _ = cli("validate", "validation/inference.json", "--json")
    assert rc == 0
    assert llmsim.validate("validation/inference.json") == json.loads(out)


def test_gpt3_175b_memory_by_hand():
    # test_scenarios_smoke: 174.6B / (tp 8 · pp 8) params per GPU, 6 + 12/16 bytes each under ZeRO-1.
    r = llmsim.memory(GPT3)
    m = r["memory"]
    assert r["scenario"]["parallel"]["dp"] == 16
    assert m["fits"] is True
    states = m["weights_bytes"] + m["gradients_bytes"] + m["optimizer_bytes"]
    assert states == pytest.approx(m["params_on_gpu"] * (6.0 + 12.0 / 16), rel=1e-9)


def test_gpt3_175b_flops_by_hand():
    # test_flops: Megatron's count, 72·B·s·l·h²·(1 + s/12h + V/12hl) for 1536 x 2048 tokens.
    f = llmsim.flops(GPT3)["flops"]
    B, s, l, h, V = 1536, 2048, 96, 12288, 50257
    assert f["model_flops_per_step"] == pytest.approx(
        72.0 * B * s * l * h * h * (1 + s / (12.0 * h) + V / (12.0 * h * l)), rel=1e-12
    )
    assert f["model_flops_per_token"] == pytest.approx(1.0619e12, rel=1e-3)
    assert f["tokens_per_step"] == B * s


def test_serving_flops_and_kv_cache_by_hand():
    # test_serving_cli: 32 layers x 4·32·128 = 524,288 FLOPs per token of context; GEMMs 15,009,316,864.
    f = llmsim.flops(serving(input_len=1000, output_len=250))["flops"]
    assert f["generated_token"]["context_tokens"] == 1125.0
    assert f["generated_token"]["attention_flops"] == 524288.0 * 1125
    assert f["prefill_token"]["attention_flops"] == 524288.0 * 500
    assert f["prefill_token"]["gemm_flops"] == 15009316864.0
    assert f["two_n_active_flops"] == 2.0 * 8030261248.0
    # test_memory: 2 · 32 layers · 8 KV heads · 128 · 2 bytes = 128 KiB per token.
    m = llmsim.memory(serving(batch=4, input_len=1000, output_len=24))["memory"]
    assert m["kv_bytes_per_token"] == 2.0 * 32 * 8 * 128 * 2
    assert m["kv_cache_bytes"] == 4.0 * 1024 * 131072


def test_published_serving_runs_predicted():
    r = llmsim.validate("validation/inference.json")
    assert r["failed"] == 0
    assert r["primary_quantity"] == "output_tokens_per_s_per_gpu"
    assert r["all"]["cases"] == 8
    for case in r["cases"]:
        assert case["error"] == pytest.approx(case["predicted"] / case["measured"] - 1, rel=1e-9, abs=1e-12)


def test_serving_rate_and_capacity(cli):
    base = serving(input_len=1000, output_len=250, requests=400, weight_precision="fp8", kv_precision="fp8")
    rc, out, _ = cli(
        "estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--input-len", "1000", "--output-len",
        "250", "--requests", "400", "--weight-precision", "fp8", "--kv-precision", "fp8", "--qps", "20", "--json",
    )
    assert rc == 0
    at20 = llmsim.serving(base, qps=20)
    assert at20 == json.loads(out)
    assert at20["method"] == "continuous batching, discrete-event simulation"
    assert at20["requests"] == 400
    # qps "max": the largest rate meeting the SLO, confirmed and missed 5% above.
    cap = llmsim.serving(base, qps="max", slo_ttft_p99_s=0.5, slo_tpot_p99_s=0.03)
    assert cap["slo_capacity_qps"] > 0
    assert cap["capacity"]["above_qps"] == pytest.approx(1.05 * cap["slo_capacity_qps"], rel=1e-9)
    assert cap["slo_met"] is True


def test_search_is_the_clis_json(cli):
    scenario = {
        "model": "llama-3-8b",
        "system": "dgx-h100",
        "gpus": 8,
        "training": {"seq_len": 4096, "global_batch": 64, "precision": "bf16"},
        "search": {"top_k": 3},
    }
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"llmsim-search-{os.getpid()}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(scenario, f)
    try:
        rc, out, _ = cli("search", "--scenario", path, "--confirm", "1", "--json")
        assert rc == 0
        drop = ("wall_s", "threads")
        want = {k: v for k, v in json.loads(out).items() if k not in drop}
        got = {k: v for k, v in llmsim.search(scenario, confirm=1).items() if k not in drop}
        assert got == want
        assert len(got["results"]) == 3
        assert got["results"][0]["step_time_s"] <= got["results"][1]["step_time_s"]
    finally:
        os.remove(path)


def test_bad_input_raises_scenario_error_with_the_clis_lines(cli):
    bad = {"model": "llama-3-8b", "system": "dgx-h100", "gpus": 8, "parallel": {"tp": 3}}
    with pytest.raises(llmsim.ScenarioError) as e:
        llmsim.estimate(bad)
    assert isinstance(e.value, ValueError)
    assert e.value.problems and all(p.startswith("/") for p in e.value.problems)
    assert any(p.startswith("/parallel/tp: 3") for p in e.value.problems)
    # From a file: the lines name it, as the CLI's do.
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"llmsim-bad-{os.getpid()}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(bad, f)
    try:
        with pytest.raises(llmsim.ScenarioError) as e:
            llmsim.estimate(path)
        rc, out, err = cli("estimate", "--scenario", path, "--json")
        assert rc == 2 and out == ""
        assert [line[len("error: ") :] for line in err.splitlines()] == e.value.problems
        assert e.value.pointers[0].startswith(path + "#/")
    finally:
        os.remove(path)
    with pytest.raises(llmsim.ScenarioError, match="malformed JSON"):
        llmsim.estimate("{not json")
    with pytest.raises(llmsim.ScenarioError, match="no/such/scenario.json: cannot open file"):
        llmsim.estimate("no/such/scenario.json")
    with pytest.raises(TypeError):
        llmsim.estimate(42)


def test_result_round_trips_through_json():
    for r in (llmsim.estimate(GPT3, fast=True), llmsim.serving(serving(input_len=500, output_len=100), qps=5)):
        assert json.loads(json.dumps(r)) == r


def test_two_threads_simulate_at_once():
    # One serving simulation of ~0.3-1 s per thread: with the GIL released their calls overlap; held, the
    # second thread could not even enter its call before the first returned.
    scenario = serving(input_len=1000, output_len=250, requests=3000, qps=40, batching="continuous")
    spans = {}

    def work(name):
        start = time.monotonic()
        llmsim.estimate(scenario)
        spans[name] = (start, time.monotonic())

    threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (a0, a1), (b0, b1) = spans["a"], spans["b"]
    overlap = min(a1, b1) - max(a0, b0)
    assert overlap > 0.5 * min(a1 - a0, b1 - b0)


def test_sweep_rows_are_the_clis_rows(cli, tmp_path):
    run = "scenarios/sweeps/llama3-70b-tp-pp.json"
    out = tmp_path / "rows.jsonl"
    rc, _, _ = cli("run", run, "--fast", "-o", str(out))
    assert rc == 0
    text = out.read_text(encoding="utf-8")
    assert llmsim.sweep_text(run, fast=True) == text
    rows = llmsim.sweep(run, fast=True, frame=False)
    assert rows == [json.loads(line) for line in text.splitlines()]
    # Shards partition the run.
    parts = [llmsim.sweep(run, fast=True, shard=(k, 3), strided=True, frame=False) for k in (1, 2, 3)]
    assert sorted(r["index"] for p in parts for r in p) == list(range(len(rows)))


def test_sweep_frame_when_pandas_is_there():
    pandas = pytest.importorskip("pandas")
    doc = {**LLAMA8B, "inference": {"input_len": 500, "output_len": 100, "requests": 200, "batching": "continuous"},
           "sweep": {"inference.qps": [2, 4]}}
    df = llmsim.sweep(doc)
    assert isinstance(df, pandas.DataFrame)
    assert list(df["inference.qps"]) == [2, 4]
    assert (df["ok"]).all()
    assert "ttft_p99_s" in df.columns and "memory.total_bytes" in df.columns


def test_interrupt_stops_a_long_simulation():
    # Ctrl-C: SIGINT to the process while the main thread simulates raises KeyboardInterrupt promptly.
    import signal

    long = serving(input_len=2000, output_len=1000, requests=200000, qps=1000, batching="continuous")
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        llmsim.estimate(long)
    timer.join()
    assert time.monotonic() - start < 5


def test_module_never_prints(capfd):
    llmsim.estimate(GPT3, fast=True)
    with pytest.raises(llmsim.ScenarioError):
        llmsim.estimate({"model": "nope", "system": "dgx-h100"})
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_calc_is_the_clis_json(cli):
    rc, out, _ = cli("calc", "kv", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--context", "8192", "--json")
    assert rc == 0
    kv = llmsim.calc("kv", model="llama-3-70b", gpu="h100-sxm", context=8192)
    assert kv == json.loads(out)
    # By hand: 2 (K, V) x 80 layers x 8 KV heads x 128 x 2 bytes = 327.68 KB per token; x 8192 tokens.
    assert kv["steps"][0]["value"] == pytest.approx(2 * 80 * 8 * 128 * 2 / 1e3, rel=1e-12)
    assert kv["answer"] == {"value": pytest.approx(2 * 80 * 8 * 128 * 2 * 8192 / 1e9, rel=1e-12), "unit": "GB",
                            "label": "for the batch"}
    # Flags with dashes, bare flags, suffixed sizes.
    rc, out, _ = cli("calc", "tp-comm", "--model", "llama-3-8b", "--tp", "8", "--sp", "--json")
    assert llmsim.calc("tp-comm", model="llama-3-8b", tp=8, sp=True) == json.loads(out)
    rc, out, _ = cli("calc", "allreduce", "--bytes", "350GB", "--ranks", "1024", "--GBps", "100", "--json")
    assert llmsim.calc("allreduce", bytes="350GB", ranks=1024, GBps=100) == json.loads(out)


def test_calc_errors_are_the_clis(cli):
    rc, _, err = cli("calc", "allreduce", "--ranks", "1", "--GBps", "100", "--bytes", "1GB", "--json")
    assert rc == 2
    with pytest.raises(llmsim.ScenarioError) as e:
        llmsim.calc("allreduce", ranks=1, GBps=100, bytes="1GB")
    assert e.value.problems == [line[len("error: ") :] for line in err.splitlines()]
    with pytest.raises(llmsim.ScenarioError, match="--k is required"):
        llmsim.calc("gemm", gpu="h100-sxm", m=1, n=1)
    with pytest.raises(llmsim.ScenarioError, match="expected one of allreduce, gemm"):
        llmsim.calc("no-such-calc")


def test_serving_from_a_file_is_the_clis_flags(cli, tmp_path):
    path = tmp_path / "deployment.json"
    path.write_text(json.dumps(serving(input_len=1000, output_len=250, requests=300)), encoding="utf-8")
    rc, out, _ = cli("estimate", "--scenario", str(path), "--qps", "15", "--slo-ttft-p99", "0.5", "--json")
    assert rc == 0
    assert llmsim.serving(path, qps=15, slo_ttft_p99_s=0.5) == json.loads(out)
    # The changed document keeps its file's name in problems; reading problems are the library's.
    with pytest.raises(llmsim.ScenarioError) as e:
        llmsim.serving(str(path), qps=-1)
    assert e.value.pointers == [f"{path}#/inference/qps"]
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    with pytest.raises(llmsim.ScenarioError, match="malformed JSON"):
        llmsim.serving(str(tmp_path / "broken.json"), qps=1)
    with pytest.raises(llmsim.ScenarioError, match="cannot open file"):
        llmsim.serving(str(tmp_path / "missing.json"), qps=1)


def test_search_capacity_per_gpu_is_the_clis_json(cli, tmp_path):
    # qps "max": each replica layout's largest rate within the SLO, per GPU (one GPU: one layout).
    path = tmp_path / "max.json"
    doc = serving(input_len=1000, output_len=250, weight_precision="fp8", kv_precision="fp8", qps="max",
                  batching="continuous",
                  slo={"ttft_p99_s": 0.5, "tpot_p99_s": 0.05})
    path.write_text(json.dumps(doc), encoding="utf-8")
    rc, out, _ = cli("search", "--scenario", str(path), "--max-gpus", "1", "--json")
    assert rc == 0
    got = llmsim.search(doc, max_gpus=1)
    assert got == json.loads(out)
    row = got["results"][0]
    assert row["gpus"] == 1 and row["slo_capacity_qps_per_gpu"] == row["slo_capacity_qps"] > 0


def test_search_of_pools_is_the_clis_json(cli):
    # A disaggregated scenario: the fewest GPUs of its pools beside the colocated answer, and with qps "max"
    # each split's capacity; the same JSON as the CLI's (one dispatch, report::serving_search_json).
    path = "scenarios/llama3-70b-h100-disaggregated.json"
    rc, out, _ = cli("search", "--scenario", path, "--max-gpus", "8", "--json")
    assert rc == 0
    got = llmsim.search(path, max_gpus=8)
    assert got == json.loads(out)
    pools = got["disaggregated"]
    assert pools["gpus"] == pools["prefill"]["gpus"] + pools["decode"]["gpus"] <= 8 and pools["slo_met"]
    assert "results" in got["colocated"]


def test_search_counts_are_read_strictly():
    # max_gpus=0 searched 64 GPUs, top_k=1.5 ran as 1 and threads=-1 was taken where the CLI exits 2.
    path = "scenarios/llama31-70b-chat-slo.json"
    for kwargs in ({"max_gpus": 0}, {"max_gpus": -1}, {"max_gpus": 1.5}, {"top_k": 0}, {"top_k": 1.5},
                   {"confirm": -1}, {"threads": -1}, {"top_k": True}):
        with pytest.raises(ValueError) as e:
            llmsim.search(path, **kwargs)
        assert str(e.value).startswith(next(iter(kwargs)) + ": ")
