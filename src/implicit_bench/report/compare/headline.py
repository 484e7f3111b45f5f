"""The headline files of a revision for ``implicit-bench diff`` and ``exps`` (docs/compare.md):
``metrics/summary.json``, its interval level, the flattened ``params.yaml`` and their cells."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from implicit_bench._util.yamlsafe import load_yaml_file
from implicit_bench.errors import ConfigError
from implicit_bench.protocol.benchmark_file import BenchmarkFile
from implicit_bench.protocol.summary_file import SummaryFile
from implicit_bench.report.compare.diff import LEVEL
from implicit_bench.report.compare.revs import WORKSPACE, read_json, resolve

SUMMARY = "metrics/summary.json"
BENCHMARK = "metrics/benchmark.json"
#: the headline columns of ``exps`` (value [lo, hi] where the summary has an interval)
EXPS_COLUMNS = (
    "units_analysed",
    "n_seeds",
    "default_rate_pct",
    "success_stereotype_pct",
    "success_anti_pct",
    "gap_pct",
    "hedges_g_max",
    "refusal_pct",
    "debias_best_dS_own",
)


def _where(rev: str, path: str) -> str:
    return f"{path} in the workspace" if rev == WORKSPACE else f"{path} at {rev}"


def summary_if_any(root: Path, rev: str) -> dict[str, Any] | None:
    """``metrics/summary.json`` at ``rev``, checked against its contract
    (``protocol.summary_file``); None when it is not there."""
    data = read_json(root, rev, SUMMARY)
    if data is not None:
        SummaryFile.from_json(data, _where(rev, SUMMARY))
    return data


def summary_at(root: Path, rev: str) -> dict[str, Any]:
    """``metrics/summary.json`` at ``rev`` (a ConfigError when it is not there)."""
    data = summary_if_any(root, rev)
    if data is None:
        raise ConfigError(
            f"{SUMMARY}: not found at {rev} (run dvc repro and commit, or name another revision)"
        )
    return data


def level_at(root: Path, rev: str) -> float:
    """The bootstrap interval level of ``metrics/benchmark.json`` at ``rev``."""
    data = read_json(root, rev, BENCHMARK)
    if data is None:
        return LEVEL
    boot = BenchmarkFile.from_json(data, _where(rev, BENCHMARK)).bootstrap
    return float((boot.level if boot else None) or LEVEL)


def flat_params(obj: Any, prefix: str = "") -> dict[str, Any]:
    """A nested mapping as ``{"a.b.c": value}``."""
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out.update(flat_params(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: obj}


def params_at(root: Path, rev: str) -> dict[str, Any]:
    """``params.yaml`` at ``rev``, flattened to dotted keys ({} when git has none there)."""
    import subprocess

    path = root / "params.yaml"
    if rev == WORKSPACE:
        # the strict loader: one line naming the file
        return flat_params(load_yaml_file(path) or {})
    res = subprocess.run(
        ["git", "show", f"{resolve(root, rev)}:params.yaml"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if res.returncode != 0:
        return {}
    return flat_params(load_yaml_file(path, res.stdout, f" at {rev}") or {})


def changed_params(base: dict[str, Any], other: dict[str, Any]) -> list[str]:
    """``key=value`` for every flattened param that differs from ``base``."""
    return [
        f"{k}={json.dumps(other.get(k))}"
        for k in sorted(set(base) | set(other))
        if base.get(k) != other.get(k)
    ]


def cell(summary: dict[str, Any], key: str) -> str:
    """A headline value with its interval, ``v [lo, hi]`` (``-`` when missing)."""
    v = summary.get(key)
    if v is None:
        return "-"
    lo, hi = summary.get(f"{key}_lo"), summary.get(f"{key}_hi")
    return (
        f"{v:g} [{lo:g}, {hi:g}]"
        if isinstance(lo, int | float) and isinstance(hi, int | float)
        else str(v)
    )
