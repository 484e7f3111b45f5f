"""What a run folder says about itself, for publishing: its leaderboard, headline flags,
params, lean statistics, git commit and the tables its metrics were computed from."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from implicit_bench._util.nested import dig
from implicit_bench._util.yamlsafe import load_yaml_file
from implicit_bench.errors import InputError
from implicit_bench.protocol.summary_file import SummaryFile
from implicit_bench.report.compare.results import benchmark_hash
from implicit_bench.report.runs import run_of


@dataclass
class RunDir:
    """A run folder (a repository root after ``dvc repro`` or an ``analyze`` output)."""

    root: Path
    benchmark: dict[str, Any]
    summary: dict[str, Any] = field(default_factory=dict)
    lean: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    simulated: bool = False
    random_init: bool = False
    commit: str | None = None
    dirty: bool | None = None

    @property
    def board(self) -> dict[str, Any]:
        return self.benchmark.get("leaderboard") or {}

    @property
    def benchmark_sha256(self) -> str | None:
        return benchmark_hash(self.board)

    @property
    def rows(self) -> list[dict[str, Any]]:
        return list(self.board.get("rows") or [])


def _json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(path, None, None, f"not valid JSON: {exc}") from None
    return value if isinstance(value, dict) else {}


def _git(root: Path, *args: str) -> str | None:
    try:
        res = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=False, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return res.stdout.strip() if res.returncode == 0 else None


def load_run(root: str | Path) -> RunDir:
    """Read ``root``'s metrics (``metrics/benchmark.json`` is required and checked as the
    report checks it) and params; one line naming the file when something is missing."""
    root = Path(root)
    bench = run_of(root, root.name).benchmark or {}
    if not dig(bench, "leaderboard", "rows"):
        raise InputError(
            root / "metrics" / "benchmark.json",
            None,
            "leaderboard.rows",
            "no generator rows to publish (an evaluate or analyze run with judgements)",
        )
    summary = _json(root / "metrics" / "summary.json")
    flags = SummaryFile.from_json(summary, root / "metrics" / "summary.json")
    params = load_yaml_file(root / "params.yaml") if (root / "params.yaml").exists() else {}
    prov = bench.get("provenance") or {}
    in_git = _git(root, "rev-parse", "--show-toplevel")
    same_repo = in_git is not None and Path(in_git).resolve() == root.resolve()
    status = _git(root, "status", "--porcelain", "--untracked-files=no") if same_repo else None
    return RunDir(
        root=root,
        benchmark=bench,
        summary=summary,
        lean=_json(root / "metrics" / "lean.json"),
        params=params if isinstance(params, dict) else {},
        simulated=bool(flags.simulated or prov.get("simulated")),
        random_init=bool(flags.random_init or prov.get("random_init")),
        commit=_git(root, "rev-parse", "HEAD") if same_repo else None,
        dirty=None if status is None else bool(status),
    )


def tool_version() -> str:
    try:
        return metadata.version("implicit-bench")
    except metadata.PackageNotFoundError:
        return "unknown"


def tool_commit() -> str | None:
    """The git commit of the implicit-bench code that runs (its checkout, when it is one)."""
    here = Path(__file__).resolve().parent
    return _git(here, "rev-parse", "HEAD")


def input_files(run: RunDir, kind: str) -> list[Path]:
    """The tables of ``kind`` (units, judgements, images) the metrics name: a relative path
    against the run folder (a repository's outputs), else as given (an ``analyze`` run names
    its inputs as its command line did, relative to where it ran)."""
    out = []
    for name in dig(run.benchmark, "inputs", "files", kind) or []:
        path = Path(str(name))
        inside = run.root / path
        out.append(path if path.is_absolute() or not inside.exists() else inside)
    return out
