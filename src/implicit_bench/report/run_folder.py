"""The HTML report of one ``implicit-bench run`` (``run --report DIR``): this run's outputs only.

A workspace's ``metrics/`` also holds other stages' files (committed ones of the default
profile, earlier experiments'); the report of a run on a fixed unit set must not show them. So
the outputs that dvc.yaml declares for the stages the run executed (``bench_render``,
``bench_judge``, ``evaluate``) are copied into ``runs/NAME/`` (an ``analyze``-shaped folder:
``metrics/``, ``plots/``, ``tables/``; what ``implicit-bench report A B`` merges), and ``DIR/``
gets the report of that folder, as ``implicit-bench report runs/NAME --units ... --judgements
...`` would write it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from implicit_bench._util.dirswap import check_owned, staged_dir
from implicit_bench.protocol.tables import BENCH_IMAGES_DIR
from implicit_bench.runtime.dvc import dvc_stages, stage_outs

#: the stages whose outputs make a benchmark-phase run's report
RUN_STAGES = ("bench_render", "bench_judge", "evaluate")
#: where ``run --report`` keeps each run's own outputs (git-ignored)
RUNS_DIR = "runs"


def stage_outputs(dvc_file: str | Path, stages: tuple[str, ...] = RUN_STAGES) -> list[str]:
    """The ``metrics/``, ``plots/`` and ``tables`` outputs dvc.yaml declares for ``stages``."""
    declared = dvc_stages(dvc_file)
    return [
        path
        for name in stages
        for path in stage_outs(declared.get(name, {}))
        if path.split("/", 1)[0] in ("metrics", "plots", "tables")
    ]


def write_run_report(
    params: dict[str, Any], out: str | Path, label: str, root: str | Path = "."
) -> Path:
    """Copy this run's declared outputs into ``runs/<label>`` and write its report to ``out``."""
    from implicit_bench.report.runs import params_for
    from implicit_bench.report.stage import build_report

    root, out = Path(root), Path(out)
    folder = root / RUNS_DIR / label
    outputs = stage_outputs(root / "dvc.yaml")
    # replaced whole and atomically; a folder holding files the run did not write is refused
    check_owned(folder, [f"{re.escape(rel)}(/.*)?" for rel in outputs], "run --report")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with staged_dir(folder) as staged:
        for rel in outputs:
            source = root / rel
            if source.is_dir():
                shutil.copytree(source, staged / rel)
            elif source.is_file():
                (staged / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, staged / rel)
    evaluate = params.get("evaluate") or {}
    units = str(root / evaluate.get("units", ""))
    judgements = tuple(str(root / j) for j in evaluate.get("judgements") or [])
    report_params, base = params_for(folder, out, units, judgements)
    bench = params.get("bench") or {}
    report_params = report_params.model_copy(
        update={"image_roots": [str((root / BENCH_IMAGES_DIR).resolve())]}
        if bench.get("run")
        else {}
    )
    build_report(report_params, base, others=[], label=label)
    return out / "index.html"


__all__ = ["RUNS_DIR", "RUN_STAGES", "stage_outputs", "write_run_report"]
