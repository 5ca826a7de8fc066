# Type stubs of llmsim (docs/python.md). Every function returns what the CLI's --json prints, parsed.
# Units (the scenario contract's, docs/scenario.md): seconds in keys ending _s, bytes in keys ending
# _bytes, FLOPs in keys holding "flops", tokens and tokens/s in keys holding "tokens", requests/s in
# qps and requests_per_s; fractions (mfu, hfu, bubble_fraction, errors) are 0..1, not percentages.
import os
from collections.abc import Mapping
from typing import Any, Literal, Optional, Sequence, Union, overload

from ._errors import ScenarioError as ScenarioError

Scenario = Union[Mapping[str, Any], str, bytes, os.PathLike[str]]
"""A scenario or run document: a dict, JSON text, or a path to a JSON file (its folder resolves the
relative paths inside it, and errors name it)."""

Result = dict[str, Any]
__version__: str

def estimate(scenario: Scenario, *, fast: bool = False) -> Result:
    """``llmsim estimate --scenario S --json``. Training: step_time_s (s), tokens_per_s (tokens/s),
    mfu and hfu (fractions of the dense peak), breakdown_s (s per part), memory (bytes per GPU),
    flops (FLOPs per step and per token). Serving: ttft_s, tpot_s, e2e_latency_s (s; mean, and
    _p50_s/_p90_s/_p99_s percentiles under continuous batching), requests_per_s (requests/s),
    output_tokens_per_s (tokens/s), kv_cache_bytes (bytes). ``fast``: the closed form only, no
    discrete-event simulation of the training step. Raises ScenarioError on bad input."""

def memory(scenario: Scenario) -> Result:
    """``llmsim memory --scenario S --json``: {"memory": per-GPU bytes of weights, gradients, optimizer,
    activations, other, total, capacity; fits, headroom_bytes}, "scenario": resolved}."""

def flops(scenario: Scenario) -> Result:
    """``llmsim flops --scenario S --json``: model and hardware FLOPs per step and per token (FLOPs),
    params and active_params (counts); serving: FLOPs per prefill and per generated token."""

def search(
    scenario: Scenario,
    *,
    top_k: Optional[int] = None,
    confirm: Optional[int] = None,
    threads: int = 0,
    max_gpus: Optional[int] = None,
) -> Result:
    """``llmsim search --scenario S --json``. Training (a "search" block, docs/search.md): results (best
    first: gpus, layout, step_time_s in s, tokens_per_s, mfu fraction, memory bytes), pareto, rejected
    counts; ``top_k`` layouts reported (default 10), ``confirm`` best re-ranked on the simulator
    (default 5; 0: closed form only), ``threads`` (0: every core). Serving (an "inference" block with
    qps and slo): the fewest GPUs meeting the SLO, per tp/pp/precision, up to ``max_gpus`` (default 64);
    ttft_p99_s and tpot_p99_s in s, requests_per_s in requests/s. With qps "max": per replica layout
    slo_capacity_qps and slo_capacity_qps_per_gpu (requests/s), best per GPU first."""

def serving(
    scenario: Scenario,
    *,
    qps: Union[float, Literal["max"], None] = None,
    requests: Optional[int] = None,
    slo_ttft_p99_s: Optional[float] = None,
    slo_tpot_p99_s: Optional[float] = None,
) -> Result:
    """A serving estimate with the stream set as the CLI's flags set it: ``qps`` the Poisson arrival rate
    in requests/s, or "max": the largest rate meeting the SLO (slo_capacity_qps and "capacity" in the
    result); ``requests`` simulated; the SLO's p99 time to first token and time per output token in
    seconds. Setting any of them asks for continuous batching unless the scenario names its batching.
    Latencies in s, throughputs in requests/s and output tokens/s."""

def validate(files: Union[None, str, os.PathLike[str], Sequence[Union[str, os.PathLike[str]]]] = None) -> Result:
    """``llmsim validate [FILES] --json``: per case and quantity the predicted and measured values and the
    error predicted/measured - 1 (a fraction); mean, median and worst |error| per quantity over all and
    over exact cases. Without files, the published runs in validation/ (compiled in)."""

def calc(name: str, **inputs: Any) -> Result:
    """``llmsim calc NAME --json``: a worked calculation (title, given, steps with formula, numbers, value
    and unit, answer {value, unit, label}). ``inputs`` are the subcommand's flags with underscores:
    calc("kv", model="llama-3-70b", gpu="h100-sxm", context=8192); sizes and counts accept the CLI's
    suffixes as strings ("350GB", "70B")."""

def sweep_text(
    run: Scenario,
    *,
    fast: bool = False,
    threads: int = 0,
    shard: Union[None, str, tuple[int, int]] = None,
    strided: bool = False,
    format: Literal["jsonl", "csv"] = "jsonl",
) -> str:
    """The rows ``llmsim run RUN -o rows.jsonl`` (or .csv) writes, byte for byte (docs/runs.md). ``shard``
    "K/N" or (K, N): slice K of N, contiguous unless ``strided``; ``threads`` 0: every core."""

@overload
def sweep(
    run: Scenario,
    *,
    fast: bool = False,
    threads: int = 0,
    shard: Union[None, str, tuple[int, int]] = None,
    strided: bool = False,
    frame: Literal[False],
) -> list[Result]: ...
@overload
def sweep(
    run: Scenario,
    *,
    fast: bool = False,
    threads: int = 0,
    shard: Union[None, str, tuple[int, int]] = None,
    strided: bool = False,
    frame: Optional[bool] = None,
) -> Any:
    """A run file (a scenario, {"scenarios": [...]} or a sweep over dotted paths, docs/runs.md) on every
    core: one row per scenario as `llmsim run` writes it (index, of, origin, ok, swept, result | error,
    scenario; the result is estimate's less its per-stage lists, in the same units). A pandas DataFrame
    (a column per swept path and per dotted result key) when pandas is importable and ``frame`` is not
    False, else a list of dicts."""
