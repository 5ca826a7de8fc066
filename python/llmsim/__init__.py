"""llmsim: analytical performance and capacity planning for LLM training and serving.

The functions take a scenario (docs/scenario.md) as a dict, a path (str or os.PathLike) or JSON text,
and return exactly what the CLI's ``--json`` prints, parsed: ``llmsim.estimate(s)`` is
``llmsim estimate --scenario s --json``. Units are the scenario contract's: seconds (``*_s``), bytes
(``*_bytes``), FLOPs, tokens, requests per second. Bad input raises :class:`ScenarioError` with the
CLI's lines. Long computations release the GIL (threads simulate at once) and stop on Ctrl-C
(KeyboardInterrupt). Nothing is printed.

    >>> import llmsim
    >>> llmsim.estimate("scenarios/gpt3-175b-a100-1024.json")["step_time_s"]
"""

from __future__ import annotations

import json as _json
import os as _os
from collections.abc import Mapping as _Mapping

from . import _core
from ._errors import ScenarioError

__all__ = [
    "ScenarioError",
    "estimate",
    "memory",
    "flops",
    "search",
    "serving",
    "validate",
    "calc",
    "sweep",
    "sweep_text",
]
__version__ = getattr(_core, "__version__", "0")


def _source(scenario):
    """(source, is_path, base_dir, origin) for _core: a path is read there; a dict or JSON text is sent as
    text with the current folder for relative paths inside it."""
    if isinstance(scenario, _os.PathLike):
        return _os.fspath(scenario), True, "", ""
    if isinstance(scenario, bytes):
        scenario = scenario.decode("utf-8")
    if isinstance(scenario, str):
        if scenario.lstrip()[:1] in ("{", "["):
            return scenario, False, ".", ""
        return scenario, True, "", ""
    if isinstance(scenario, (_Mapping, list)):
        return _json.dumps(scenario), False, ".", ""
    raise TypeError(
        f"scenario: {type(scenario).__name__}: expected a dict, a path or JSON text (docs/scenario.md)"
    )


def _loads(text):
    return _json.loads(text)


def estimate(scenario, *, fast=False):
    """Step time, MFU, breakdown and memory of a training scenario, or latency and throughput of a
    serving one: ``llmsim estimate --scenario S --json [--fast]``."""
    return _loads(_core.estimate(*_source(scenario), bool(fast)))


def memory(scenario):
    """Per-GPU memory in bytes: ``llmsim memory --scenario S --json``."""
    return _loads(_core.memory(*_source(scenario)))


def flops(scenario):
    """FLOPs per step and per token, model against hardware: ``llmsim flops --scenario S --json``."""
    return _loads(_core.flops(*_source(scenario)))


def _count(name, value, lowest, highest=2**31 - 1):
    """An integer argument in [lowest, highest], as the CLI's flag reads it: a float, a bool or a value out
    of range raises ValueError naming it (max_gpus=0 searched 64 GPUs and top_k=1.5 ran as 1)."""
    if isinstance(value, bool) or not isinstance(value, int) or not lowest <= value <= highest:
        raise ValueError(f"{name}: {value!r}: expected an integer in [{lowest}, {highest}]")
    return value


def search(scenario, *, top_k=None, confirm=None, threads=0, max_gpus=None):
    """The best layouts of a training scenario with a "search" block (docs/search.md); for a serving one,
    the fewest GPUs meeting its SLO at its qps, or with ``qps: "max"`` each replica layout's largest rate
    meeting the SLO and that rate per GPU (requests/s); for a disaggregated one (``inference.disaggregation``)
    the fewest GPUs of its pools beside the colocated answer, or each split's capacity:
    ``llmsim search --scenario S --json``."""
    return _loads(
        _core.search(
            *_source(scenario),
            0 if top_k is None else _count("top_k", top_k, 1, 100000),
            -1 if confirm is None else _count("confirm", confirm, 0, 100000),
            _count("threads", threads, 0, 1024),
            0 if max_gpus is None else _count("max_gpus", max_gpus, 1, 1 << 20),
        )
    )


def serving(scenario, *, qps=None, requests=None, slo_ttft_p99_s=None, slo_tpot_p99_s=None):
    """A serving deployment's estimate (``estimate``) with the stream's arrival rate, request count and
    SLO set as the CLI's ``--qps``, ``--requests``, ``--slo-ttft-p99`` and ``--slo-tpot-p99`` set them: a
    stream asks for continuous batching unless the scenario says otherwise. ``qps`` in requests/s, or
    ``"max"``: the largest Poisson rate meeting the SLO (``slo_capacity_qps``, docs/serving.md)."""
    source, is_path, base_dir, origin = _source(scenario)
    # Read by the library's reader (a missing file or malformed JSON raises ScenarioError as estimate
    # does); a changed document keeps its file's folder and name for paths and errors.
    doc = _json.loads(_core.read_json(source, is_path))
    if is_path:
        base_dir, origin = _core.directory_of(source), source
    if not isinstance(doc, dict):
        return estimate(scenario)
    inference = doc.setdefault("inference", {})
    given = any(v is not None for v in (qps, requests, slo_ttft_p99_s, slo_tpot_p99_s))
    if isinstance(inference, dict) and given:
        for key, value in (("qps", qps), ("requests", requests)):
            if value is not None:
                inference[key] = value
        for key, value in (("ttft_p99_s", slo_ttft_p99_s), ("tpot_p99_s", slo_tpot_p99_s)):
            if value is not None:
                inference.setdefault("slo", {})[key] = value
        inference.setdefault("batching", "continuous")
    return _loads(_core.estimate(_json.dumps(doc), False, base_dir, origin, False))


def validate(files=None):
    """Accuracy against published runs: ``llmsim validate [FILES] --json``; without files, the runs in
    validation/ compiled into the library. Error statistics are fractions (0.05 = 5%)."""
    if files is None:
        files = []
    elif isinstance(files, (str, _os.PathLike)):
        files = [files]
    return _loads(_core.validate([_os.fspath(f) for f in files]))


def _calc_args(inputs):
    """The command line of ``llmsim calc NAME`` for keyword inputs: ``kv_precision="fp8"`` is
    ``--kv-precision fp8``; ``True`` a bare flag (``sp=True``: ``--sp``), ``False`` or ``None`` nothing."""
    args = []
    for key, value in inputs.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        else:
            args += [flag, repr(value) if isinstance(value, float) else str(value)]
    return args


def calc(name, **inputs):
    """A worked calculation (``llmsim calc NAME --json``): title, given, steps (label, formula, numbers,
    value in its unit, why) and answer {value, unit, label}. ``inputs`` are the subcommand's flags with
    underscores for dashes (``calc("kv", model="llama-3-70b", gpu="h100-sxm", context=8192)``); sizes and
    counts take the CLI's suffixes as strings (``bytes="350GB"``, ``params="70B"``). Bad inputs raise
    ScenarioError with the CLI parser's message."""
    return _loads(_core.calc(str(name), _calc_args(inputs)))


def _shard_text(shard):
    if shard is None:
        return ""
    if isinstance(shard, str):
        return shard
    k, n = shard
    return f"{int(k)}/{int(n)}"


def sweep_text(run, *, fast=False, threads=0, shard=None, strided=False, format="jsonl"):
    """The rows ``llmsim run RUN -o rows.jsonl`` (or ``.csv``) writes, as text, byte for byte."""
    if format not in ("jsonl", "csv"):
        raise ValueError(f"format: {format!r}: expected 'jsonl' or 'csv'")
    return _core.run(*_source(run), bool(fast), int(threads), _shard_text(shard), bool(strided), format)


def _flatten(prefix, value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}{k}.", v, out)
    else:
        out[prefix[:-1]] = value


def _frame(rows):
    import pandas

    records = []
    for row in rows:
        rec = {"index": row["index"], "origin": row["origin"], "ok": row["ok"], "error": row.get("error")}
        rec.update(row.get("swept", {}))
        _flatten("", row.get("result", {}), rec)
        rec["scenario"] = row["scenario"]
        records.append(rec)
    return pandas.DataFrame.from_records(records)


def sweep(run, *, fast=False, threads=0, shard=None, strided=False, frame=None):
    """Runs a run file (a scenario, ``{"scenarios": [...]}`` or a sweep; docs/runs.md) on every core:
    one row per scenario, as ``llmsim run RUN -o rows.jsonl`` writes them (``index``, ``of``, ``origin``,
    ``ok``, ``swept``, ``result`` or ``error``, ``scenario``). A pandas DataFrame (one column per swept
    path and per result key, dotted: ``memory.total_bytes``) when pandas is importable, else a list of
    dicts; ``frame=False`` always gives the list, ``frame=True`` requires pandas."""
    text = sweep_text(run, fast=fast, threads=threads, shard=shard, strided=strided)
    rows = [_json.loads(line) for line in text.splitlines() if line]
    if frame is False:
        return rows
    if frame is None:
        try:
            import pandas  # noqa: F401
        except ImportError:
            return rows
    return _frame(rows)
