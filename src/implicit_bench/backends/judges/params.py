"""The `judge` section of params.yaml."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from implicit_bench.params import SafeName, StrictModel
from implicit_bench.protocol.judge_tasks import (
    task_registry,
)
from implicit_bench.protocol.tables import (
    IMAGES_DIR,
    JUDGEMENTS_PATH,
    UNITS_PATH,
)
from implicit_bench.runtime.failures import (
    DEFAULT_MAX_FAILURE_RATE,
    FailureRate,
)


class TaskSelect(StrictModel):
    """Which judges, configurations and variants a task covers (null: all)."""

    judges: list[str] | None = None
    configs: list[SafeName] | None = None
    variants: list[str] | None = None
    # config -> the judges asked about that configuration's images instead of ``judges`` (the
    # paper: both rubric judges on Qwen-Image, Qwen3-VL alone on SD3's construction run)
    judges_by_config: dict[SafeName, list[str]] = {}


class JudgeStageParams(StrictModel):
    """The ``judge`` section of params.yaml."""

    judges: dict[str, dict[str, Any]]
    tasks: dict[str, TaskSelect | None]  # keys: registered tasks with a prompt (judge_tasks.py)
    configs: list[SafeName] | None = None  # image stores under images_dir; null: every store there
    # hash: one order per image; both: "sa" and "as"; cyclic3: the three cyclic orders of s, a
    # and neither (When the Judge Acts), asked with prompts/judges/blind_cyclic.yaml
    blind_orders: Literal["hash", "both", "cyclic3"] = "hash"
    # blind_orders hash: the images of the first N units (by a hash of the unit id) are asked
    # under both orders too, the order audit on a stated subset (docs/audits.md); 0: none
    both_orders_units: Annotated[int, Field(ge=0)] = 0
    units: str = UNITS_PATH
    images_dir: str = IMAGES_DIR
    # config -> the folder holding its store, where it is not images_dir (the benchmark phase
    # judges construction stores and its own: docs/experiments.md, "Two phases")
    config_dirs: dict[SafeName, str] = {}
    # images of units outside the units table are skipped (the benchmark phase's fixed unit set
    # asks about the construction images of its units only), not an error
    only_listed_units: bool = False
    out: str = JUDGEMENTS_PATH
    metrics: str = "metrics/judge.json"
    cache: str = "cache/judge.sqlite"
    executor: dict[str, Any] = {}
    progress: bool = True
    # more failed calls than this share (or all of them): exit 1, write nothing (docs/errors.md)
    max_failure_rate: FailureRate = DEFAULT_MAX_FAILURE_RATE

    @field_validator("tasks")
    @classmethod
    def _registered(cls, tasks: dict[str, TaskSelect | None]) -> dict[str, TaskSelect | None]:
        registry = task_registry()
        unknown = [t for t in tasks if t not in registry.names()]
        if unknown:
            raise ValueError(
                f"unknown task(s) {unknown}; registered: {', '.join(registry.asked())}"
            )
        unasked = [t for t in tasks if not registry.get(t).asked]
        if unasked:
            producers = ", ".join(f"{t} by the {registry.get(t).producer} stage" for t in unasked)
            raise ValueError(f"task(s) {unasked} are not asked of a judge (written {producers})")
        for name, select in tasks.items():
            allowed = registry.get(name).variants
            if select is not None and select.variants is not None and allowed is not None:
                outside = [v for v in select.variants if v not in allowed]
                if outside:
                    raise ValueError(
                        f"{name}.variants {outside}: task {name} describes only {allowed}"
                    )
        return tasks
