"""The HTML report of one ``implicit-bench run`` (``run --report DIR``): this run's outputs only.

A workspace's ``metrics/`` also holds other stages' files (committed ones of the default
profile, earlier experiments'); the report of a run on a fixed unit set must not show them. So
the outputs that dvc.yaml declares for the stages the run executed (``bench_render``,
``bench_judge``, ``evaluate``) are copied into ``DIR/run/`` (an ``analyze``-shaped folder:
``metrics/``, ``plots/``, ``tables/``), and ``DIR/`` gets the report of that folder, as
``implicit-bench report DIR/run --units ... --judgements ...`` would write it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from implicit_bench._util.yamlsafe import load_yaml
from implicit_bench.protocol.tables import BENCH_IMAGES_DIR

#: the stages whose outputs make a benchmark-phase run's report
RUN_STAGES = ("bench_render", "bench_judge", "evaluate")


def stage_outputs(dvc_file: str | Path, stages: tuple[str, ...] = RUN_STAGES) -> list[str]:
    """The ``metrics/``, ``plots/`` and ``tables`` outputs dvc.yaml declares for ``stages``."""
    document = load_yaml(Path(dvc_file).read_text(encoding="utf-8"))
    declared = document.get("stages") if isinstance(document, dict) else None
    found: list[str] = []
    for name in stages:
        stage = declared.get(name) if isinstance(declared, dict) else None
        for out in stage.get("outs", []) if isinstance(stage, dict) else []:
            path = next(iter(out)) if isinstance(out, dict) else str(out)
            if path.split("/", 1)[0] in ("metrics", "plots", "tables"):
                found.append(path)
    return found


def write_run_report(
    params: dict[str, Any], out: str | Path, label: str, root: str | Path = "."
) -> Path:
    """Copy this run's declared outputs into ``out/run`` and write its report to ``out``."""
    from implicit_bench.report.runs import params_for
    from implicit_bench.report.stage import build_report

    root, out = Path(root), Path(out)
    folder = out / "run"
    if folder.exists():
        shutil.rmtree(folder)
    for rel in stage_outputs(root / "dvc.yaml"):
        source = root / rel
        if source.is_dir():
            shutil.copytree(source, folder / rel)
        elif source.is_file():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / rel)
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


__all__ = ["RUN_STAGES", "stage_outputs", "write_run_report"]
