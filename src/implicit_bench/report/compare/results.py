"""A results file per run, as lm-evaluation-harness writes one: ``implicit-bench results``.

One JSON file that says what was run and what came out: the headline (``metrics/summary.json``)
and the leaderboard rows, the params, package versions, every model the params name (backend,
model id, revision where pinned) and the models the metrics' provenance blocks list, the git
commit (and whether the work tree was dirty), the run log's timings and model-call counts per
stage (``logs/runs.jsonl``, last run of each stage) and where the per-sample records are
(judgement tables with raw answers, image indexes: path, rows, sha256).

It holds wall-clock figures, so it is not a DVC output: it goes to ``logs/`` (gitignored) by
default, named after the commit. ``simulated`` / ``random_init`` come from the summary.
"""

from __future__ import annotations

import glob
import hashlib
import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from implicit_bench._util.nested import dig
from implicit_bench._util.redact import tree as redact_tree
from implicit_bench._util.yamlsafe import load_yaml_file
from implicit_bench.protocol.benchmark_file import BenchmarkFile
from implicit_bench.protocol.summary_file import SummaryFile
from implicit_bench.protocol.tables import (
    DEBIAS_IMAGES_DIR,
    DEBIAS_JUDGEMENTS_DIR,
    IMAGE_INDEX_GLOB,
    JUDGEMENTS_DIR,
    SELECTED_UNITS_PATH,
    UNITS_PATH,
)
from implicit_bench.runtime.runlog import RUN_LOG

PACKAGES = (
    "implicit-bench",
    "numpy",
    "pandas",
    "scipy",
    "scikit-learn",
    "pyarrow",
    "pydantic",
    "dvc",
    "torch",
    "torchvision",
    "diffusers",
    "transformers",
    "sentence-transformers",
    "open-clip-torch",
    "vllm",
    "ray",
    "httpx",
)
#: per-sample records: (what, glob) relative to the repository root
SAMPLES = (
    ("judgements (every answer, raw text kept)", f"{JUDGEMENTS_DIR}/*.parquet"),
    ("debiasing judgements", f"{DEBIAS_JUDGEMENTS_DIR}/*.parquet"),
    ("image indexes (status, refusal reason, sha256)", IMAGE_INDEX_GLOB),
    ("debiasing image indexes", f"{DEBIAS_IMAGES_DIR}/*/index.parquet"),
    ("units analysed", UNITS_PATH),
    ("selected units", SELECTED_UNITS_PATH),
)
CATALOGUES = ("generators", "judges", "llms")


def _git(root: Path, *args: str) -> str | None:
    res = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    return res.stdout.strip() if res.returncode == 0 else None


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def models(params: dict[str, Any], metrics_dir: Path) -> dict[str, Any]:
    """Every catalogue entry (backend, model, revision) and the provenance the metrics record."""
    catalogue = {  # an old run's params, read as they are (not validated: a record)
        kind: {
            name: {k: entry.get(k) for k in ("backend", "model", "revision") if k in entry}
            for name, entry in (params.get(kind) or {}).items()
            if isinstance(entry, dict)
        }
        for kind in CATALOGUES
    }
    provenance: dict[str, Any] = {}
    for path in sorted(metrics_dir.glob("*.json")):
        try:
            prov = json.loads(path.read_text(encoding="utf-8")).get("provenance")
        except (ValueError, AttributeError):
            continue
        if isinstance(prov, dict) and (
            prov.get("models") or prov.get("simulated_models") or prov.get("random_init_models")
        ):
            provenance[path.name] = {
                k: prov.get(k)
                for k in ("models", "simulated_models", "random_init_models")
                if prov.get(k)
            }
    return {"catalogues": catalogue, "provenance": provenance}


def run_log(path: Path) -> dict[str, Any]:
    """The last run of each stage in the run log: when, seconds and model / cache counts."""
    last: dict[str, Any] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and "stage" in entry:
                last[str(entry["stage"])] = entry
    return {"file": str(path), "stages": last}


def _rows(path: Path) -> int | None:
    try:
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    except Exception:  # noqa: BLE001 - a file that is not Parquet: no count
        return None


def samples(root: Path) -> list[dict[str, Any]]:
    out = []
    for what, pattern in SAMPLES:
        for file in sorted(glob.glob(str(root / pattern))):
            path = Path(file)
            out.append(
                {
                    "what": what,
                    "path": path.relative_to(root).as_posix(),
                    "rows": _rows(path),
                    "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                }
            )
    return out


def results(root: str | Path = ".") -> dict[str, Any]:
    """The results document of the run in ``root`` (its current outputs and run log)."""
    root = Path(root)
    params = (
        load_yaml_file(root / "params.yaml")  # the strict loader: one line naming the file
        if (root / "params.yaml").exists()
        else {}
    )
    summary_path = root / "metrics" / "summary.json"
    summary = (
        json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.exists() else None
    )
    typed = None if summary is None else SummaryFile.from_json(summary, summary_path)
    bench_path = root / "metrics" / "benchmark.json"
    bench = json.loads(bench_path.read_text(encoding="utf-8")) if bench_path.exists() else None
    if bench is not None:
        BenchmarkFile.from_json(bench, bench_path)  # the leaderboard as the report reads it
    board = bench.get("leaderboard") if bench is not None else None
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    # every string redacted (an old run's params may hold a user:password@ URL, its metrics an
    # error text): secrets stay out of every file the tool writes, not only off the screen
    return redact_tree(
        {
            # the benchmark the units came from (SHA-256 of the release's benchmark file; null: the
            # project's own construction): `implicit-bench report` merges runs of one benchmark only
            "benchmark_sha256": benchmark_hash(board),
            "simulated": bool(typed and typed.simulated),
            "random_init": bool(typed and typed.random_init),
            "results": summary,
            "leaderboard": board,
            "git": {
                "commit": _git(root, "rev-parse", "HEAD"),
                "branch": _git(root, "rev-parse", "--abbrev-ref", "HEAD"),
                "dirty": None if status is None else bool(status),
            },
            "params": params,
            "versions": versions(),
            "models": models(params or {}, root / "metrics"),
            "run_log": run_log(root / RUN_LOG),
            "samples": samples(root),
        }
    )


def benchmark_hash(board: dict[str, Any] | None) -> str | None:
    """The benchmark SHA-256 a leaderboard names (its units', else its beside-release block's)."""
    if not isinstance(board, dict):
        return None
    sha = board.get("benchmark_sha256")
    beside = board.get("beside_release")
    if sha is None and isinstance(beside, dict):
        sha = dig(beside, "benchmark", "sha256")
    return sha if isinstance(sha, str) and sha else None


def default_path(doc: dict[str, Any]) -> Path:
    commit = (doc["git"]["commit"] or "nogit")[:12]
    return Path("logs") / f"results_{commit}{'_dirty' if doc['git']['dirty'] else ''}.json"
