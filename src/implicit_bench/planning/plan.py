"""``implicit-bench plan``: size a run before booking a GPU (docs/experiments.md).

For the current params (or params with a profile merged over them) it prints, per stage that
calls a model: what one item is, the items the plan holds, how many are already stored or
cached, and the model calls that remain. It reads only params, the committed metrics and what
the workspace already holds (the units table, image stores, caches), loads no model and makes
no network call, so it works on a fresh clone, where ``dvc repro --dry`` cannot.

Counts are exact when the units table on disk matches the plan's unit count; otherwise the
unit count comes from ``subset.max_units`` and the committed ``metrics/triplets.json`` and
the cached column is unknown ("-"): nothing can be cached for units not built yet. Refusals are
not known in advance: every planned image counts as judged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench.errors import ConfigError
from implicit_bench.params import (
    SubsetParams,
    catalogue,
    check_references,
    load_params,
    section,
)
from implicit_bench.protocol.schema import VARIANTS
from implicit_bench.protocol.tables import (
    DEBIAS_IMAGES_DIR,
    DEBIAS_JUDGEMENTS_DIR,
    IMAGES_DIR,
    PAIRS_PATH,
    TRIPLETS_PATH,
    UNITS,
    UNITS_PATH,
    columnar,
)


@dataclass
class StagePlan:
    """One stage's share of a run."""

    stage: str
    item: str  # what one item is
    items: int  # items the plan holds
    cached: int | None  # already stored / cached (None: unknown before upstream stages run)
    model_calls: int  # requests that remain: items not cached
    note: str = ""
    calls_by_model: dict[str, int] = field(
        default_factory=dict
    )  # catalogue entry -> its share of model_calls
    hours: float | None = (
        None  # model_calls x seconds_per_item of each model (None: no figure given)
    )
    usd: float | None = None  # model_calls x usd_per_item of each model (None: no price given)
    gpu: bool = True  # the hours are GPU time (a local model), not an API's wall time
    no_seconds: list[str] = field(default_factory=list)  # models with calls and no seconds_per_item
    no_price: list[str] = field(default_factory=list)  # models with calls and no usd_per_item
    phase: str = "construction"  # construction | benchmark (docs/experiments.md, "Two phases")


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


# The UNITS columns the retrieve / debias plan counts from (retrieval texts, the subset's ids).
DEBIAS_PLAN_COLUMNS = (
    "unit_id",
    "head",
    "relation",
    "stereotype",
    "anti_stereotype",
    "prompt_neutral",
)


class PlanUnits:
    """A units table as the plan reads it: only the columns it counts from, read once (a
    column projection, checked: ``columnar.read_columns``), as Arrow. The whole
    table (``frame``) is read only for the exact lookups of stores or caches that exist."""

    def __init__(self, path: Path, require: tuple[str, ...], columns: tuple[str, ...]):
        self.path = path
        self.require = require
        self.table = columnar.read_columns(UNITS, path, columns, require=require)
        self._frame: pd.DataFrame | None = None

    def __len__(self) -> int:
        return int(self.table.num_rows)

    def has(self, name: str) -> bool:
        return name in self.table.column_names

    def column(self, name: str) -> Any:
        return self.table.column(name)

    def written(self, name: str) -> int:
        """Rows of a checked nullable text column that hold a value (blank cells are null)."""
        column = self.table.column(name)
        return len(column) - column.null_count

    def frame(self) -> pd.DataFrame:
        """The whole validated table (``UNITS.read``), read on first use."""
        if self._frame is None:
            self._frame = UNITS.read(self.path, require=self.require)
        return self._frame


def _extra_prompt_columns(params: dict[str, Any]) -> tuple[str, ...]:
    """The prompt columns of the render plan's extra variants (counted where written)."""
    variants = (params.get("render") or {}).get("variants") or []
    if not isinstance(variants, list):
        return ()
    return tuple(f"prompt_{v}" for v in variants if isinstance(v, str) and v not in VARIANTS)


def _debias_units_path(params: dict[str, Any], root: Path) -> Path | None:
    """The debias stage's units table (None: no debias block, or one the stage refuses)."""
    if "debias" not in params:
        return None
    from implicit_bench.debias.stage import DebiasParams

    try:
        return root / DebiasParams.model_validate(params["debias"]).units
    except Exception:  # noqa: BLE001 - _debias reports the invalid block
        return None


def _same_file(a: Path, b: Path | None) -> bool:
    return b is not None and a.exists() and b.exists() and a.resolve() == b.resolve()


def plan_units(
    params: dict[str, Any], root: Path, assume: dict[str, int] | None = None
) -> tuple[PlanUnits | None, int, str]:
    """(the units table when it matches the plan, the unit count, where the count comes from);
    ``assume``: ``candidates`` given (``plan --assume``), nothing read."""
    _, units, count, source = _read_plan_units(params, root, assume=assume)
    return units, count, source


def _read_plan_units(
    params: dict[str, Any],
    root: Path,
    columns: tuple[str, ...] = (),
    require: tuple[str, ...] = ("unit_id",),
    assume: dict[str, int] | None = None,
) -> tuple[PlanUnits | None, PlanUnits | None, int, str]:
    """(the units table read, that table when it matches the plan, the unit count, where the
    count comes from); the table holds ``unit_id``, the extra variants' prompt columns and
    ``columns`` (each read once, checked; ``require``: columns that must be present)."""
    if assume and "candidates" in assume:
        return None, None, int(assume["candidates"]), "--assume candidates"
    max_units = section(params, "subset", SubsetParams).max_units
    total = _read_json(root / "metrics/triplets.json").get("triplets_total")
    triplets = root / TRIPLETS_PATH
    if triplets.exists():
        import pyarrow.parquet as pq

        # a row count: one column read, not validated
        total = pq.read_table(triplets, columns=["unit_id"]).num_rows
    count = max_units if max_units and (total is None or max_units < total) else total
    path = root / UNITS_PATH
    if path.exists():
        wanted = tuple(dict.fromkeys(("unit_id", *_extra_prompt_columns(params), *columns)))
        read = PlanUnits(path, tuple(require), wanted)
        if count is None or len(read) == count:
            return read, read, len(read), UNITS_PATH
    else:
        read = None
    if count is None:
        raise ConfigError("no unit count: set subset.max_units or run the triplets stage once")
    return read, None, int(count), "subset.max_units / metrics/triplets.json (estimated)"


def _images_per_config(
    units: PlanUnits | None, n_units: int, seeds: list[int], variants: list[str]
) -> dict[str, int]:
    """Planned images per variant of one configuration (an extra variant only where written)."""
    out = {}
    for variant in variants:
        if units is not None and variant not in VARIANTS and units.has(f"prompt_{variant}"):
            written = units.written(f"prompt_{variant}")
        else:
            written = n_units
        out[variant] = written * len(seeds)
    return out


def _render(
    params: dict[str, Any], units: PlanUnits | None, n_units: int, root: Path
) -> tuple[list[StagePlan], dict[str, dict[str, int]]]:
    from implicit_bench.backends.generators import settings_hash
    from implicit_bench.render.images import ImageStore
    from implicit_bench.render.params import RenderParams
    from implicit_bench.render.stage import config_signatures, done_keys, plan_items

    render = section(params, "render", RenderParams, attach={"generators": "configs"})
    plans, per_config = [], {}
    for name in render.selected():
        counts = _images_per_config(units, n_units, render.seeds, render.variants)
        per_config[name] = counts
        items = sum(counts.values())
        cached = None
        store_dir = root / IMAGES_DIR / name
        if units is not None:
            cached = 0
            if (store_dir / "journal.jsonl").exists():
                cfg = render.configs[name]
                store = ImageStore(store_dir)
                try:
                    intact = store.done_keys(verify=False)
                    settings = settings_hash(cfg)
                    for frame in _unit_chunks(units.path, render.variants):
                        planned = plan_items(frame, name, render.seeds, render.variants)
                        signatures = config_signatures(cfg, planned)
                        cached += len(
                            done_keys(
                                store,
                                planned,
                                settings,
                                False,
                                render.retry_failed,
                                signatures,
                                intact,
                            )
                        )
                finally:
                    store.close()
        plans.append(
            StagePlan(
                f"render {name}",
                "image",
                items,
                cached,
                items - (cached or 0),
                calls_by_model={f"generators.{name}": items - (cached or 0)},
            )
        )
    return plans, per_config


CHUNK_UNITS = 50_000  # units planned at a time where a store is looked up (bounded memory)


def _unit_chunks(path: Path, variants: Sequence[str]) -> Iterator[pd.DataFrame]:
    """The units table's id, bias type and prompt columns of ``variants``, ``CHUNK_UNITS``
    rows at a time (read once, checked, as Arrow; a chunk at a time in pandas): the render
    plan of 10^6 units never holds every planned item at once (it held 9 million, 4.3 GB).
    An extra variant whose prompt column the table lacks plans no item, as a blank one."""
    prompts = [f"prompt_{v}" for v in variants]
    table = columnar.read_columns(UNITS, path, ("unit_id", "bias_type", *prompts), ("unit_id",))
    for start in range(0, table.num_rows, CHUNK_UNITS):
        frame = table.slice(start, CHUNK_UNITS).to_pandas()
        for column in prompts:
            if column not in frame.columns:
                frame[column] = None
        yield frame


def _judge_formula(judge: Any, per_config: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """config -> judge -> requests, counting every planned image (refusals not known); the
    judge stage's own selection (``task_selection``) and orders (``orders_per_image``)."""
    from implicit_bench.backends.judges.stage import config_judges, orders_per_image, task_selection
    from implicit_bench.protocol.judge_tasks import load_task

    configs = judge.configs if judge.configs is not None else list(per_config)
    out: dict[str, dict[str, int]] = {}
    for task in judge.tasks:
        spec = load_task(task)
        judges, task_configs, wanted = task_selection(judge, task, spec, configs)
        orders = orders_per_image(judge, spec)
        for config in task_configs:
            images = sum(
                n for v, n in per_config.get(config, {}).items() if wanted is None or v in wanted
            )
            for name in config_judges(judge.tasks[task], config, judges):
                out.setdefault(config, {})[name] = (
                    out.get(config, {}).get(name, 0) + images * orders
                )
    return out


def _judge(
    params: dict[str, Any],
    units: PlanUnits | None,
    per_config: dict[str, dict[str, int]],
    root: Path,
) -> StagePlan:
    from implicit_bench.backends.judges import judge_params
    from implicit_bench.backends.judges.params import JudgeStageParams

    judge = section(params, "judge", JudgeStageParams, attach={"judges": "judges"})
    for name, cfg in judge.judges.items():  # refuse what the judge stage would refuse
        judge_params(cfg, f"judges.{name}")
    formula = _judge_formula(judge, per_config)
    exact = _judge_exact(judge, units, root, params) if units is not None else None
    return _judge_plan("judge", judge, formula, per_config, exact)


def _judge_plan(
    stage: str,
    judge: Any,
    formula: dict[str, dict[str, int]],
    per_config: dict[str, dict[str, int]],
    exact: JudgeLookup | None,
) -> StagePlan:
    """Requests of the images published (refused ones not judged, every answer looked up in the
    cache) plus, for planned images not rendered yet, every one counted."""
    by_model: dict[str, int] = {}
    if exact is None:
        items = sum(n for per_judge in formula.values() for n in per_judge.values())
        for per_judge in formula.values():
            for name, n in per_judge.items():
                by_model[f"judges.{name}"] = by_model.get(f"judges.{name}", 0) + n
        return StagePlan(
            stage,
            "judge answer",
            items,
            None,
            items,
            "images not rendered yet: refusals unknown, every one counted",
            calls_by_model=by_model,
        )
    pending = 0
    for config, per_judge in formula.items():
        planned_images = sum(per_config.get(config, {}).values())
        missing = planned_images - exact.covered.get(
            config, 0
        )  # planned images not in the store's index
        if planned_images and missing > 0:
            for name, n in per_judge.items():
                extra = round(n * missing / planned_images)
                pending += extra
                by_model[f"judges.{name}"] = by_model.get(f"judges.{name}", 0) + extra
    for name, n in exact.missing_by_judge.items():
        by_model[f"judges.{name}"] = by_model.get(f"judges.{name}", 0) + n
    items = exact.distinct + pending
    note = f"refused images not judged; {exact.refused} refused" + (
        f"; {pending:,} for images not rendered yet" if pending else ""
    )
    return StagePlan(
        stage,
        "judge answer",
        items,
        exact.cached,
        items - exact.cached,
        note,
        calls_by_model={k: v for k, v in by_model.items() if v},
    )


@dataclass
class JudgeLookup:
    """The judge requests of the images published in the stores' indexes, looked up in the cache."""

    distinct: int  # distinct request keys (identical requests are asked once)
    cached: int
    missing_by_judge: dict[str, int]
    covered: dict[str, int]  # config -> planned images present in its index (any status)
    refused: int


def _judge_exact(
    judge: Any,
    units: PlanUnits,
    root: Path,
    params: dict[str, Any] | None = None,
    planned_keys: Callable[[], set[tuple[str, str, str, int]]] | None = None,
) -> JudgeLookup | None:
    """``JudgeLookup`` for the images the stores' indexes publish (None: not resolvable yet).
    The units' rows are read only once a judge resolves and a store exists."""
    from implicit_bench.backends.judges.stage import judge_backends, plan_judgements, store_configs
    from implicit_bench.runtime.cache import DiskCache

    try:
        _, identities = judge_backends(judge.judges)
        configs = store_configs(judge, root)  # no store: nothing published to look up
        by_id = unit_rows(units)
        planned, image_counts, _ = plan_judgements(judge, by_id, identities, root)
    except Exception:  # noqa: BLE001 - stores not rendered yet or a judge not resolvable offline
        return None
    from implicit_bench.render.images import read_index

    covered, refused = {}, 0
    wanted = (
        planned_keys()
        if planned_keys is not None
        else _render_plan_keys(params, by_id)
        if params
        else None
    )
    for config in configs:
        store = judge.config_dirs.get(config, judge.images_dir)
        index = read_index((root / store / config).resolve())
        keep = [
            wanted is None or (config, str(r.unit_id), r.variant, int(r.seed)) in wanted
            for r in index.itertuples(index=False)
        ]
        covered[config] = sum(keep)
        refused += int(((index["status"] == "refused") & pd.Series(keep, index=index.index)).sum())
    if wanted is not None:
        planned = [p for p in planned if (p.config, p.unit_id, p.variant, int(p.seed)) in wanted]
    first: dict[str, str] = {}
    for p in planned:
        first.setdefault(p.key, p.judge)
    cache = DiskCache(root / judge.cache)
    try:
        found = cache.get_many(list(first))
    finally:
        cache.close()
    missing_by_judge: dict[str, int] = {}
    for key, name in first.items():
        if key not in found:
            missing_by_judge[name] = missing_by_judge.get(name, 0) + 1
    return JudgeLookup(len(first), len(found), missing_by_judge, covered, refused)


class UnitRows(Mapping[str, dict[str, Any]]):
    """unit id -> its row of a Parquet units table, built on demand from one checked Arrow
    read: the judge plan looks up the units of published images only (a dict per unit of
    10^6 units, and their pandas frame, took gigabytes)."""

    def __init__(self, path: Path):
        import pyarrow.parquet as pq

        names = pq.ParquetFile(path).schema_arrow.names
        self.table = columnar.read_columns(UNITS, path, names, ("unit_id",))
        self.columns = set(self.table.column_names)
        ids = self.table.column("unit_id").to_pylist()
        self._at = {str(u): i for i, u in enumerate(ids)}

    def __getitem__(self, unit_id: str) -> dict[str, Any]:
        row = self.table.slice(self._at[unit_id], 1).to_pylist()[0]
        return {**row, "unit_id": unit_id}

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)


class _FrameRows(dict):
    """unit id -> row of a (small) units frame, with the frame's ``columns``."""

    def __init__(self, frame: pd.DataFrame):
        super().__init__(
            (str(r["unit_id"]), {**r, "unit_id": str(r["unit_id"])})
            for r in frame.to_dict("records")
        )
        self.columns = set(frame.columns)


def unit_rows(units: Any) -> Mapping[str, dict[str, Any]]:
    """The rows ``plan_judgements`` looks units up in: on demand for a Parquet table on disk
    (:class:`UnitRows`), else the frame's rows."""
    path = getattr(units, "path", None)
    if path is not None and Path(path).suffix.lower() in (".parquet", ".pq"):
        return UnitRows(Path(path))
    return _FrameRows(units.frame())


class RenderPlanKeys:
    """Whether ``(config, unit, variant, seed)`` is an image of the render plan, answered from
    the plan's configs, seeds and variants and the units' rows, never by listing every key
    (10^6 units x 3 variants x 3 seeds x 2 configs was a set of 18 million tuples)."""

    def __init__(self, render: Any, rows: Mapping[str, dict[str, Any]]):
        self.configs = set(render.selected())
        self.seeds = {int(s) for s in render.seeds}
        self.variants = set(render.variants)
        self.rows = rows

    def __contains__(self, key: object) -> bool:
        config, unit_id, variant, seed = key  # type: ignore[misc]
        if (
            config not in self.configs
            or int(seed) not in self.seeds
            or variant not in self.variants
            or unit_id not in self.rows
        ):
            return False
        if variant in VARIANTS:
            return True
        prompt = self.rows[unit_id].get(f"prompt_{variant}")
        return prompt is not None and not pd.isna(prompt) and bool(str(prompt).strip())


def _render_plan_keys(
    params: dict[str, Any], rows: Mapping[str, dict[str, Any]]
) -> RenderPlanKeys | None:
    """The images the render plan holds, as a membership test (None: a units table without
    some variant's prompt column, or render params that do not resolve: no filter)."""
    from implicit_bench.render.params import RenderParams

    try:
        render = section(params, "render", RenderParams, attach={"generators": "configs"})
    except Exception:  # noqa: BLE001 - the render row reports an invalid block
        return None
    if any(f"prompt_{v}" not in getattr(rows, "columns", ()) for v in render.variants):
        return None
    return RenderPlanKeys(render, rows)


def _clip(
    params: dict[str, Any],
    units: PlanUnits | None,
    per_config: dict[str, dict[str, int]],
    root: Path,
) -> StagePlan:
    """Images to embed: the ok images of the published stores, looked up in the CLIP cache."""
    images = sum(sum(c.values()) for c in per_config.values())
    exact = _clip_exact(params, units, root) if units is not None else None
    if exact is None:
        return StagePlan(
            "clip",
            "image embedding",
            images,
            None,
            images,
            "images not rendered yet: every one counted",
            calls_by_model={"clip.model": images},
        )
    distinct, cached, covered = exact
    pending = max(0, images - covered)
    items = distinct + pending
    return StagePlan(
        "clip",
        "image embedding",
        items,
        cached,
        items - cached,
        "ok images only" + (f"; {pending:,} not rendered yet" if pending else ""),
        calls_by_model={"clip.model": items - cached},
    )


def _clip_exact(
    params: dict[str, Any], units: PlanUnits, root: Path
) -> tuple[int, int, int] | None:
    from implicit_bench.backends.clip import create
    from implicit_bench.backends.clip.params import ClipStageParams
    from implicit_bench.render.images import published_stores, read_index
    from implicit_bench.runtime.cache import DiskCache, model_key

    try:
        clip = section(params, "clip", ClipStageParams)
        identity = create(clip.model).identity()
        stores = [Path(p) for p in clip.image_stores] or published_stores(root / clip.images_root)
    except Exception:  # noqa: BLE001 - a backend not importable here
        return None
    wanted, unit_ids = None, {}
    if stores:  # the units' rows only for published stores
        unit_ids = unit_rows(units)
        wanted = _render_plan_keys(params, unit_ids)
    shas, covered = [], 0
    for store_dir in stores:
        index = read_index(store_dir)
        for r in index.itertuples(index=False):
            if (
                wanted is not None
                and (r.config, str(r.unit_id), r.variant, int(r.seed)) not in wanted
            ):
                continue
            covered += 1
            if r.status == "ok" and str(r.unit_id) in unit_ids:
                shas.append(r.sha256)
    keys = list(
        dict.fromkeys(model_key("clip_image", identity, item=sha) for sha in dict.fromkeys(shas))
    )
    cache = DiskCache(root / clip.cache)
    try:
        found = cache.get_many(keys)
    finally:
        cache.close()
    return len(keys), len(found), covered


# ----- the benchmark phase (docs/experiments.md, "Two phases") ------------------------------------
def bench_units(
    params: dict[str, Any], root: Path, assume: dict[str, int] | None, n_candidates: int
) -> tuple[pd.DataFrame | None, int, str]:
    """(the fixed unit set's table when it exists, its unit count, where the count comes from):
    ``--assume selected=N`` first, then the ``bench.units`` table, else at most the candidates."""
    from implicit_bench.bench.params import BenchParams

    bench = section(params, "bench", BenchParams)
    if assume and "selected" in assume:
        return None, int(assume["selected"]), "--assume selected"
    path = root / bench.units
    if path.exists():
        table = UNITS.read(path, require=("unit_id",))
        return table, len(table), bench.units
    return None, n_candidates, f"{bench.units} not built yet: at most the candidates"


def _bench(
    params: dict[str, Any],
    per_config: dict[str, dict[str, int]],
    n_selected: int,
    selected: pd.DataFrame | None,
    root: Path,
) -> list[StagePlan]:
    """``bench_render`` per bench generator (its variants x seeds over its unit set) and
    ``bench_judge`` (bench.tasks over those stores and the construction stores' images of the
    unit set; refusals unknown, every planned image counted)."""
    from implicit_bench.backends.judges.stage import config_judges
    from implicit_bench.bench.params import SELECTED, BenchParams
    from implicit_bench.protocol.judge_tasks import load_task

    bench = section(params, "bench", BenchParams)
    render = params.get("render") or {}
    construction_seeds = len(render.get("seeds") or [])
    plans, images = [], {}
    for name in bench.selected():
        entry = bench.generators[name]
        n_units = n_selected
        if entry.units != SELECTED:
            n_units = (
                len(bench.unit_set(selected, entry.units))
                if selected is not None and "bias_type" in selected.columns
                else min(n_selected, entry_cap(bench, entry.units))
            )
        counts = {v: n_units * len(entry.seeds) for v in entry.variants}
        images[name] = counts
        items = sum(counts.values())
        cached = _bench_cached(params, name, selected, root) if entry.units == SELECTED else None
        plans.append(
            StagePlan(
                f"bench_render {name}",
                "image",
                items,
                cached,
                items - (cached or 0),
                f"{entry.units}: {n_units:,} units x {len(entry.variants)} variants x "
                f"{len(entry.seeds)} seeds",
                calls_by_model={f"generators.{bench.generator_of(name)}": items - (cached or 0)},
                phase="benchmark",
            )
        )
    for task, select in bench.tasks.items():
        spec = load_task(task)
        judges = select.judges if select is not None and select.judges is not None else None
        configs = (
            select.configs if select is not None and select.configs is not None else list(images)
        )
        wanted = set(select.variants) if select is not None and select.variants else None
        by_judge: dict[str, int] = {}
        for config in configs:
            if config in images:
                counts = images[config]
            else:  # a construction store: its images of the unit set
                counts = {v: n_selected * construction_seeds for v in per_config.get(config, {})}
            n = sum(c for v, c in counts.items() if wanted is None or v in wanted)
            if spec.option_order:
                orders = 2 if bench.blind_orders == "both" else 1
                audit = min(bench.both_orders_units, n_selected) if orders == 1 else 0
                share = audit / n_selected if n_selected else 0
                n = n * orders + round(n * share)
            names = judges if judges is not None else list(catalogue(params, "judges"))
            for judge in config_judges(select, config, names):
                by_judge[judge] = by_judge.get(judge, 0) + n
        for judge, n in by_judge.items():
            plans.append(
                StagePlan(
                    f"bench_judge {task} {judge}",
                    "judge answer",
                    n,
                    None,
                    n,
                    f"{', '.join(configs)}: the unit set's images, every planned one counted",
                    calls_by_model={f"judges.{judge}": n},
                    phase="benchmark",
                )
            )
    return plans


B6_ASSUME = ("b6_subset", "b6_baseline", "b6_unreturned")


def _b6(
    params: dict[str, Any],
    assume: dict[str, int],
    n_selected: int,
    selected: pd.DataFrame | None,
    root: Path,
) -> list[StagePlan]:
    """Stage ``b6``: the third judge's rubric answers (Appendix B.6). The subset's size is
    ``--assume b6_subset=N`` (the "all generators returned" rule needs the stores), else the
    rule on the unit set and the stores' indexes when both exist, else its bound (the cap x
    the bias types); the baseline's ``b6_baseline`` else the subset plus human_eval's
    sample_size; ``b6_unreturned`` images the other generators never returned (else 0: every
    planned image counted)."""
    from implicit_bench.bench.b6 import b6_subset, plan_images, returned_units, store_dir
    from implicit_bench.bench.params import B6Params, BenchParams
    from implicit_bench.human_eval.bundle import HumanEvalParams
    from implicit_bench.protocol.schema import BIAS_TYPES
    from implicit_bench.render.images import read_index

    if "b6" not in params:
        return []
    b6 = section(params, "b6", B6Params)
    if not b6.enabled:
        return []
    bench = section(params, "bench", BenchParams)
    stores = [b6.baseline, *b6.generators]
    source = "--assume b6_subset"
    n_subset = assume.get("b6_subset")
    subset: pd.DataFrame | None = None  # the rule's ids, when the stores exist
    if n_subset is None:
        dirs = [root / store_dir(params, b6, s) / s / "index.parquet" for s in stores]
        if selected is not None and "bias_type" in selected and all(d.exists() for d in dirs):
            returned = {
                s: returned_units(read_index(d.parent)) for s, d in zip(stores, dirs, strict=True)
            }
            subset = b6_subset(selected, returned, b6.max_per_bias_type, b6.seed)
            n_subset = len(subset)
            source = "the rule on the unit set and the stores"
        else:
            n_subset = min(n_selected, b6.max_per_bias_type * len(BIAS_TYPES))
            source = "at most the cap x the bias types"
    human = section(params, "human_eval", HumanEvalParams).sample_size if b6.human_eval else 0
    n_baseline = assume.get("b6_baseline", min(n_selected, n_subset + human))

    def seeds_of(name: str) -> list[int]:
        if name in bench.generators:
            return list(bench.generators[name].seeds)
        return list((params.get("render") or {}).get("seeds") or [])

    debias_seeds = len((params.get("debias") or {}).get("seeds") or [])
    images = plan_images(
        n_subset,
        n_baseline,
        len(seeds_of(b6.baseline)),
        [len(seeds_of(g)) for g in b6.generators],
        debias_seeds,
        len(b6.debias_configs),
        assume.get("b6_unreturned", 0),
    )
    n = sum(images.values())
    note = (
        f"B.6: {n_subset:,} subset ids ({source}), {n_baseline:,} baseline ids; baseline "
        f"{images['baseline']:,} + generators {images['generators']:,} + debiasing "
        f"{images['debias']:,} images"
    )
    exact = _b6_exact(params, b6, selected, subset, root) if subset is not None else None
    if exact is not None:  # the stage's own requests, looked up in the judge cache
        distinct, cached = exact
        note = f"{note}; the stage's requests looked up in the judge cache"
        return [
            StagePlan(
                f"b6 rubric {b6.judge}",
                "judge answer",
                distinct,
                cached,
                distinct - cached,
                note,
                calls_by_model={f"judges.{b6.judge}": distinct - cached},
                phase="benchmark",
            )
        ]
    return [
        StagePlan(
            f"b6 rubric {b6.judge}",
            "judge answer",
            n,
            None,
            n,
            note,
            calls_by_model={f"judges.{b6.judge}": n},
            phase="benchmark",
        )
    ]


class _Frame:
    """A units frame in the shape ``_judge_exact`` reads (``frame()``)."""

    def __init__(self, frame: pd.DataFrame):
        self._frame = frame

    def frame(self) -> pd.DataFrame:
        return self._frame


def _b6_exact(
    params: dict[str, Any],
    b6: Any,
    selected: pd.DataFrame,
    subset: pd.DataFrame,
    root: Path,
) -> tuple[int, int] | None:
    """(distinct requests, cached) of the b6 stage's two judge runs (the baseline's three
    variants, the subset's neutral images) when the stores exist, the requests planned exactly
    as the stage plans them; None when a store or judge does not resolve here."""
    from implicit_bench.bench.b6 import (
        B6_DIR,
        BASELINE,
        SUBSET,
        b6_judge_params,
        baseline_units,
        human_eval_ids,
    )

    try:
        extra = human_eval_ids(params, b6, root) if b6.human_eval else set()
        frames = {SUBSET: subset, BASELINE: baseline_units(selected, subset, extra)}
        distinct = cached = 0
        for part, frame in frames.items():
            stage_params = b6_judge_params(params, b6, part, f"{B6_DIR}/{part}_units.parquet")
            found = _judge_exact(stage_params, _Frame(frame), root)  # type: ignore[arg-type]
            if found is None:
                return None
            distinct, cached = distinct + found.distinct, cached + found.cached
    except Exception:  # noqa: BLE001 - an invalid b6 or judge block: the stage reports it
        return None
    return distinct, cached


def entry_cap(bench: Any, name: str) -> int:
    """An upper bound on a named subset's units before the unit set exists: its cap per bias
    type times the bias types (schema.BIAS_TYPES)."""
    from implicit_bench.protocol.schema import BIAS_TYPES

    return bench.subsets[name].max_per_bias_type * len(BIAS_TYPES)


def _bench_cached(
    params: dict[str, Any], name: str, selected: pd.DataFrame | None, root: Path
) -> int | None:
    """Images of a bench generator already stored and current (None: the unit set not built)."""
    if selected is None:
        return None
    from implicit_bench.backends.generators import settings_hash
    from implicit_bench.bench.stage import bench_render_params
    from implicit_bench.protocol.tables import BENCH_IMAGES_DIR
    from implicit_bench.render.images import ImageStore
    from implicit_bench.render.stage import done_keys, plan_items, unit_columns

    store_dir = root / BENCH_IMAGES_DIR / name
    if not (store_dir / "journal.jsonl").exists():
        return 0
    try:
        render = bench_render_params(params, name)
        from implicit_bench.bench.params import BenchParams

        path = root / section(params, "bench", BenchParams).units
        units = UNITS.read(path, require=unit_columns(render.variants))
    except Exception:  # noqa: BLE001 - a unit set without a variant's prompt: the stage says so
        return None
    planned = plan_items(units, name, render.seeds, render.variants)
    store = ImageStore(store_dir)
    try:
        return len(
            done_keys(
                store, planned, settings_hash(render.configs[name]), False, render.retry_failed
            )
        )
    finally:
        store.close()


def _debias(
    params: dict[str, Any],
    root: Path,
    n_units: int,
    units: PlanUnits | None = None,
    assumed: bool = False,
) -> list[StagePlan]:
    """``units``: the plan's units table when it is also the debias stage's (read once);
    ``assumed``: ``n_units`` was given (``plan --assume``); the tables on disk are not read."""
    from implicit_bench.backends.embedders import CachedEmbedder
    from implicit_bench.debias.stage import KG_COLUMNS, DebiasParams, needed_llm_work, subset_units

    if "debias" not in params:
        return []
    debias = DebiasParams.model_validate(params["debias"])
    kg_path = root / debias.units
    kg = None if assumed else units
    if kg is None and not assumed and kg_path.exists():
        kg = PlanUnits(kg_path, KG_COLUMNS, DEBIAS_PLAN_COLUMNS)
    n_kg = len(kg) if kg is not None else None
    plans = []
    if kg is not None:
        from implicit_bench.debias.retrieval_columns import distinct_texts

        # the cache the stage would use: relative to the workspace root, not to the CWD
        has_cache = (root / debias.embedder.cache).exists()
        n_texts, distinct = distinct_texts(kg.table, debias.retrieval, want_texts=has_cache)
        cached = 0
        if has_cache:
            embedder = CachedEmbedder(
                debias.embedder.model_copy(update={"cache": str(root / debias.embedder.cache)})
            )
            texts = distinct.to_pylist()  # one key per distinct text
            cached = len(embedder.cache.get_many({embedder.key(t) for t in texts}))
        plans.append(
            StagePlan(
                "retrieve",
                "text embedding",
                n_texts,
                cached,
                n_texts - cached,
                calls_by_model={"debias.embedder": n_texts - cached},
            )
        )
    subset_frame: list[pd.DataFrame] = []

    def subset() -> pd.DataFrame:  # the subset's ids, drawn only where stores need them
        if not subset_frame and kg is not None:
            ids = pd.DataFrame({"unit_id": kg.column("unit_id").to_pylist()})
            subset_frame.append(subset_units(ids, debias.subset))
        return subset_frame[0]

    bound = ""  # the KG is not built yet: at most the plan's units
    if kg is not None:
        m = debias.subset.max_units
        n_subset = len(kg) if m == 0 or m >= len(kg) else m  # subset_units' size
    else:
        n_subset = min(debias.subset.max_units, n_units) if debias.subset.max_units else n_units
        bound = "at most; "
    rewrite_infos, pair_infos = needed_llm_work(debias)
    calls = n_subset * (len(rewrite_infos) + len(pair_infos))
    if calls:
        plans.append(
            StagePlan(
                "rewrite",
                "LLM answer",
                calls,
                None,
                calls,
                f"{bound}LLM cache checked at run time",
                calls_by_model={f"llms.{debias.rewriter}": calls},
            )
        )
    seeds = list(debias.seeds)
    for name in debias.configs:
        items = n_subset * len(seeds)
        cached = None
        store_dir = root / DEBIAS_IMAGES_DIR / name
        if kg is not None:
            cached = 0
            if (store_dir / "journal.jsonl").exists():
                from implicit_bench.render.images import ImageStore

                wanted = {(u, s) for u in subset()["unit_id"] for s in seeds}
                store = ImageStore(store_dir)
                try:
                    done = store.done_keys()
                    cached = sum(
                        1 for k in done if (k.unit_id, k.seed) in wanted and k.variant == "neutral"
                    )
                finally:
                    store.close()
        plans.append(
            StagePlan(
                f"debias_render@{name}",
                "image",
                items,
                cached,
                items - (cached or 0),
                f"{bound}stored images counted; settings checked at run time",
                calls_by_model={f"generators.{debias.generator}": items - (cached or 0)},
            )
        )
        plans.append(_debias_judge(params, debias, name, kg, subset, seeds, items, bound, root))
    if n_kg is None:
        texts = 2 * n_units
        plans.insert(
            0,
            StagePlan(
                "retrieve",
                "text embedding",
                texts,
                None,
                texts,
                f"at most; {debias.units} not built yet",
                calls_by_model={"debias.embedder": texts},
            ),
        )
    return plans


def _debias_judge(
    params: dict[str, Any],
    debias: Any,
    name: str,
    kg: PlanUnits | None,
    subset: Callable[[], pd.DataFrame],
    seeds: list[int],
    images: int,
    bound: str,
    root: Path,
) -> StagePlan:
    """Rubric + alignment answers of one debiasing configuration, looked up in the judge cache."""
    from implicit_bench.backends.judges.params import JudgeStageParams
    from implicit_bench.debias.judging import judge_stage_params

    stage = f"debias_judge@{name}"
    rubric, alignment = debias.scoring.rubric_judge, debias.scoring.alignment_judge
    formula = {
        name: {rubric: images, alignment: images} if rubric != alignment else {rubric: 2 * images}
    }
    exact = None
    if kg is not None:
        try:
            judge = section(params, "judge", JudgeStageParams, attach={"judges": "judges"})
            stage_params = judge_stage_params(
                name, debias, judge, DEBIAS_IMAGES_DIR, DEBIAS_JUDGEMENTS_DIR
            )
        except Exception:  # noqa: BLE001 - an invalid scoring block: the stage reports it
            stage_params = None
        if stage_params is not None:
            exact = _judge_exact(
                stage_params,
                kg,
                root,
                planned_keys=lambda: {
                    (name, str(u), "neutral", int(s)) for u in subset()["unit_id"] for s in seeds
                },
            )
    plan = _judge_plan(stage, None, formula, {name: {"neutral": images}}, exact)
    if bound:
        plan.note = f"{bound}{plan.note}"
    return plan


def llm_cache_lookup(
    block: dict[str, Any],
    where: str,
    requests: list[Any],
    schema: Any = None,
    root: Path = Path("."),
) -> tuple[int, int] | None:
    """(distinct requests, how many the LLM's disk cache answers) under the stage's own keys
    (``LLMClient.key``; ``schema``: the answer model of ``chat_json_many``). No model is loaded
    (clients load lazily) and no cache file is created. None: the block does not resolve here."""
    from implicit_bench.backends.llm import build_llm
    from implicit_bench.backends.llm.structured import answer_schema
    from implicit_bench.runtime.cache import DiskCache
    from implicit_bench.runtime.cache_location import resolve as resolve_cache_path

    try:
        client = build_llm({**block, "cache": None}, where)
    except Exception:  # noqa: BLE001 - a backend not importable here, a model not resolvable offline
        return None
    json_schema = answer_schema(schema) if schema is not None else None
    keys = list(dict.fromkeys(client.key(m, None, json_schema) for m in requests))
    cache_path = block.get("cache", "cache/llm.sqlite")
    path = resolve_cache_path(cache_path, root) if cache_path is not None else None
    if path is None or not path.exists():
        return len(keys), 0
    cache = DiskCache(path)
    try:
        return len(keys), len(cache.get_many(keys))
    finally:
        cache.close()


def _kg_plan(params: dict[str, Any], root: Path) -> StagePlan:
    """One extraction per sentence pair; looked up in the LLM cache when the pairs table exists."""
    kg = params.get("kg") or {}
    where = f"llms.{kg['llm']}" if kg.get("llm") else None
    max_pairs = int(kg.get("max_pairs") or 0)
    pairs_path = root / PAIRS_PATH
    if pairs_path.exists() and where is not None:
        from implicit_bench.construction.kg.llm_extractor import ExtractionAnswer, messages_for
        from implicit_bench.construction.kg.params import KGParams
        from implicit_bench.construction.kg.stage import kg_llm_block, read_pairs

        pairs = read_pairs(pairs_path)
        pairs = pairs[:max_pairs] if max_pairs else pairs
        try:
            block = kg_llm_block(section(params, "kg", KGParams), catalogue(params, "llms"))
        except Exception:  # noqa: BLE001 - an invalid kg block: the stage reports it
            block = None
        found = (
            llm_cache_lookup(block, where, [messages_for(p) for p in pairs], ExtractionAnswer, root)
            if block
            else None
        )
        if found is not None:
            distinct, cached = found
            return StagePlan(
                "kg",
                "LLM answer",
                distinct,
                cached,
                distinct - cached,
                "one extraction per sentence pair",
                calls_by_model={where: distinct - cached},
            )
    pairs_total = _read_json(root / "metrics/sources.json").get("pairs_total")
    n = (
        min(max_pairs, pairs_total)
        if max_pairs and pairs_total
        else (max_pairs or pairs_total or 0)
    )
    return StagePlan(
        "kg",
        "LLM answer",
        n,
        None,
        n,
        "one extraction per sentence pair",
        calls_by_model={where: n} if where else {},
    )


def _triplets_lookup(params: dict[str, Any], root: Path) -> StagePlan | None:
    """One triplet per KG unit, the stage's own requests looked up in the LLM cache (None: the
    KG units or pairs table is not built yet, or the LLM does not resolve here)."""
    from implicit_bench.construction.kg.table import units_from_frame
    from implicit_bench.construction.triplets.llm_writer import TripletAnswer, messages_for
    from implicit_bench.construction.triplets.params import TripletsParams
    from implicit_bench.construction.triplets.stage import PAIR_COLUMNS_USED, writer_params
    from implicit_bench.protocol.tables import KG_UNITS, KG_UNITS_PATH, PAIRS

    units_path, pairs_path = root / KG_UNITS_PATH, root / PAIRS_PATH
    if not (units_path.exists() and pairs_path.exists()):
        return None
    try:
        block = writer_params(
            section(params, "triplets", TripletsParams), catalogue(params, "llms")
        )
    except Exception:  # noqa: BLE001 - an invalid triplets block: the stage reports it
        return None
    where = block.pop("_where")
    units = units_from_frame(KG_UNITS.read(units_path), units_path)
    pairs = PAIRS.read(pairs_path, require=PAIR_COLUMNS_USED)
    sentences = dict(
        zip(
            pairs["pair_id"],
            zip(pairs["stereotype_sentence"], pairs["anti_stereotype_sentence"], strict=True),
            strict=True,
        )
    )
    requests = [messages_for(u, sentences.get(u.source_pair_id, ("", ""))) for u in units]
    found = llm_cache_lookup(block, where, requests, TripletAnswer, root)
    if found is None:
        return None
    distinct, cached = found
    return StagePlan(
        "triplets",
        "LLM answer",
        distinct,
        cached,
        distinct - cached,
        "one triplet per KG unit",
        calls_by_model={where: distinct - cached},
    )


def _llm_stages(params: dict[str, Any], root: Path) -> list[StagePlan]:
    plans = []
    kg = params.get("kg") or {}
    if kg.get("extractor") == "llm":
        plans.append(_kg_plan(params, root))
    triplets = params.get("triplets") or {}
    if (
        triplets.get("writer") == "llm"
        and (looked_up := _triplets_lookup(params, root)) is not None
    ):
        plans.append(looked_up)
    elif triplets.get("writer") == "llm":
        units = _read_json(root / "metrics/kg.json").get("units_total") or 0
        plans.append(
            StagePlan(
                "triplets",
                "LLM answer",
                units,
                None,
                units,
                "one triplet per KG unit",
                calls_by_model={f"llms.{triplets['llm']}": units} if triplets.get("llm") else {},
            )
        )
    return plans


def build_plan(
    params: dict[str, Any], root: str | Path = ".", assume: dict[str, int] | None = None
) -> tuple[list[StagePlan], dict[str, Any]]:
    """Per stage that calls a model: items, cached, model calls; and the plan's sizes.
    ``assume``: unit counts before construction ran (``candidates``, ``selected``)."""
    from implicit_bench.bench.params import BenchParams
    from implicit_bench.debias.units import KG_COLUMNS
    from implicit_bench.protocol.tables import SELECTED_UNITS_PATH

    root = Path(root)
    bench_mode = _benchmark(params)
    if bench_mode is not None:  # the release's units: construction (kg .. select) skipped
        params, units, source, bench_info = bench_mode
        n_units = len(units)
        plans: list[StagePlan] = []
        per_config: dict[str, dict[str, int]] = {}
        selected, n_selected, selected_from = units, n_units, source
        pilot, n_pilot, pilot_from = bench_units(params, root, None, n_units)
        if pilot is not None and n_pilot < n_units:  # run --units N: a pilot of the release
            selected, n_selected = pilot, n_pilot
            selected_from = f"{pilot_from}: a pilot of {n_units:,} units ({source})"
        read, shared = None, False
    else:
        debias_path = _debias_units_path(params, root)
        shared = _same_file(root / UNITS_PATH, debias_path)  # one read serves both
        read, units, n_units, source = _read_plan_units(
            params,
            root,
            DEBIAS_PLAN_COLUMNS if shared else (),
            KG_COLUMNS if shared else ("unit_id",),
            assume,
        )
        plans = _llm_stages(params, root)
        render_plans, per_config = _render(params, units, n_units, root)
        plans += render_plans
        plans.append(_judge(params, units, per_config, root))
        if "clip" in params:
            plans.append(_clip(params, units, per_config, root))
        selected, n_selected, selected_from = bench_units(params, root, assume, n_units)
    plans += _bench(params, per_config, n_selected, selected, root)
    debias_units = (params.get("debias") or {}).get("units")
    on_selection = debias_units in {
        SELECTED_UNITS_PATH,
        section(params, "bench", BenchParams).units,
    }
    debias_plans = _debias(
        params,
        root,
        n_selected if on_selection else n_units,
        read if shared and not on_selection else None,
        bool(assume) and (on_selection and "selected" in assume or "candidates" in assume),
    )
    for p in debias_plans:
        p.phase = "benchmark"
    plans += debias_plans
    plans += _b6(params, assume or {}, n_selected, selected, root)
    add_costs(plans, params)
    seeds = (params.get("render") or {}).get("seeds") or []
    info = {
        "units": n_units,
        "units_from": source,
        "selected": n_selected,
        "selected_from": selected_from,
        "seeds": list(seeds),
        "configs": list(per_config),
    }
    if bench_mode is not None:
        info["benchmark"] = bench_info
        info["seeds"] = bench_info["seeds"]
        info["configs"] = list(bench_info["variants"])
    return plans, info


def _benchmark(
    params: dict[str, Any],
) -> tuple[dict[str, Any], pd.DataFrame, str, dict[str, Any]] | None:
    """With ``benchmark.path`` set: (params whose bench generators render the release's variants
    only, the release's units: the benchmark phase's unit set, where they come from, the
    benchmark's counts)."""
    from implicit_bench.errors import InputError
    from implicit_bench.release.benchmark import (
        benchmark_counts,
        benchmark_params,
        benchmark_units,
        benchmark_variants,
    )

    bench_params = benchmark_params(params)
    if bench_params.path is None:
        return None
    try:
        bench = benchmark_units(bench_params.path)
    except InputError as exc:
        raise ConfigError(str(exc)) from None
    phase = dict(params.get("bench") or {})
    generators = {}
    for name, entry in (phase.get("generators") or {}).items():
        entry = dict(entry or {})
        entry["variants"] = benchmark_variants(
            bench_params, list(entry.get("variants") or VARIANTS)
        )
        generators[name] = entry
    params = {**params, "bench": {**phase, "generators": generators}}
    from implicit_bench.bench.params import BenchParams

    rendered = section(params, "bench", BenchParams)
    run = rendered.selected()  # the entries bench_render renders (bench.run)
    seeds = sorted({int(s) for name in run for s in rendered.generators[name].seeds})
    info = benchmark_counts(bench, seeds or sorted(bench.seeds))
    info["variants"] = {name: generators[name]["variants"] for name in run}
    source = f"benchmark {bench_params.path} (sha256 {bench.sha256[:12]})"
    return params, bench.units, source, info


ASSUME_KEYS = ("candidates", "selected", *B6_ASSUME)


def model_block(params: dict[str, Any], ref: str) -> dict[str, Any]:
    """The params block a ``calls_by_model`` reference names (``judges.gpt54``, ``clip.model``)."""
    node: Any = params
    for part in ref.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def add_costs(
    plans: list[StagePlan], params: dict[str, Any], measured: dict[str, float] | None = None
) -> None:
    """Hours and money per stage from each model's ``seconds_per_item`` / ``usd_per_item``
    (catalogue keys the user supplies; ``measured``: seconds per item from ``--calibrate``)."""
    from implicit_bench.runtime.preflight.backends import is_http, load_registries

    load_registries()

    for plan in plans:
        hours = usd = 0.0
        known_h = known_usd = bool(plan.calls_by_model)
        for ref, calls in plan.calls_by_model.items():
            block = model_block(params, ref)
            seconds = (measured or {}).get(ref, block.get("seconds_per_item"))
            price = block.get("usd_per_item")
            plan.gpu = plan.gpu and not is_http(ref, block)
            if calls == 0:
                continue
            if seconds is None:
                known_h = False
                plan.no_seconds.append(ref)
            else:
                hours += calls * float(seconds) / 3600
            if price is None:
                known_usd = False
                plan.no_price.append(ref)
            else:
                usd += calls * float(price)
        plan.hours = round(hours, 3) if known_h or plan.model_calls == 0 else None
        plan.usd = round(usd, 2) if known_usd or plan.model_calls == 0 else None


def totals(plans: list[StagePlan]) -> dict[str, Any]:
    """Calls, GPU-hours (local models), API hours, money; ``unpriced``: stages without a figure."""
    return {
        "model_calls": sum(p.model_calls for p in plans),
        "gpu_hours": round(sum(p.hours or 0 for p in plans if p.gpu), 2),
        "api_hours": round(sum(p.hours or 0 for p in plans if not p.gpu), 2),
        "usd": round(sum(p.usd or 0 for p in plans), 2),
        "no_seconds": sorted({r for p in plans for r in p.no_seconds}),
        "no_price": sorted({r for p in plans for r in p.no_price}),
    }


def _plan_line(p: StagePlan) -> str:
    cached = "-" if p.cached is None else f"{p.cached:,}"
    hours = "-" if p.hours is None else f"{p.hours:,.2f}"
    usd = "-" if p.usd is None else f"{p.usd:,.2f}"
    note = f"  ({p.note})" if p.note else ""
    return (
        f"{p.stage:<34} {p.item:<16} {p.items:>9,} {cached:>9} "
        f"{p.model_calls:>12,} {hours:>9} {usd:>10}{note}"
    )


PHASES = {
    "construction": "construction (candidates: render, rubric judges, selection)",
    "benchmark": "benchmark phase (the fixed unit set: bench_render, bench_judge, debiasing)",
}


def format_plan(plans: list[StagePlan], info: dict[str, Any]) -> str:
    lines = [
        f"units: {info['units']} ({info['units_from']}); render seeds: "
        f"{info['seeds']}; configs: {', '.join(info['configs'])}",
    ]
    if "benchmark" in info:
        b = info["benchmark"]
        seeds = ", ".join(f"{s} -> {i}" for s, i in b["seed_index"].items()) or "none"
        lines.append(
            f"benchmark: the authors' release, {b['units']:,} units, sha256 {b['sha256']}; "
            f"release seed index {seeds}; construction and selection skipped"
        )
        distinct = {tuple(v) for v in b["variants"].values()}
        rendered = (
            ", ".join(next(iter(distinct)))  # every bench generator renders the same prompts
            if len(distinct) == 1
            else "; ".join(f"{n}: {', '.join(v)}" for n, v in b["variants"].items())
        )
        lines.append(
            f"  per generator: Table 4 row (neutral) {b['table4_images_per_generator']:,} "
            f"images, every table (3 prompts) {b['all_tables_images_per_generator']:,}; "
            f"rendered here: {rendered or 'no bench generator (run --generator adds one)'}"
        )
        if b["seeds_without_release_counterpart"]:
            lines.append(
                "  seeds the release never used (no paired release judgement): "
                + ", ".join(map(str, b["seeds_without_release_counterpart"]))
            )
    if "selected" in info:
        lines.append(f"benchmark unit set: {info['selected']} ({info['selected_from']})")
    header = (
        f"{'stage':<34} {'item':<16} {'items':>9} {'cached':>9} "
        f"{'model calls':>12} {'hours':>9} {'USD':>10}"
    )
    for phase, title in PHASES.items():
        rows = [p for p in plans if p.phase == phase]
        if not rows:
            continue
        t = totals(rows)
        lines += ["", f"== {title}", header, *(_plan_line(p) for p in rows)]
        lines.append(
            f"{phase} subtotal: {t['model_calls']:,} model calls; GPU-hours "
            f"{t['gpu_hours']:,.2f}; API hours {t['api_hours']:,.2f}; money ${t['usd']:,.2f}"
        )
    t = totals(plans)
    lines.append("")
    lines.append(f"{'total model calls':<34} {'':<16} {'':>9} {'':>9} {t['model_calls']:>12,}")
    lines.append(
        f"GPU-hours (local models): {t['gpu_hours']:,.2f}; API hours: "
        f"{t['api_hours']:,.2f}; money: ${t['usd']:,.2f}"
    )
    if t["no_seconds"] or t["no_price"]:
        lines.append(
            "no seconds_per_item (hours '-'; or `plan --calibrate N`): "
            f"{', '.join(t['no_seconds']) or 'none'}"
        )
        lines.append(f"no usd_per_item (USD '-'): {', '.join(t['no_price']) or 'none'}")
    return "\n".join(lines)


CALIBRATION_PROMPTS = (
    "a photo of a doctor",
    "a photo of a nurse",
    "a photo of an engineer",
    "a photo of a teacher",
)


def calibrate(params: dict[str, Any], plans: list[StagePlan], n: int) -> dict[str, float]:
    """Seconds per item, measured: N images from each generator the plan renders and N answers
    from each judge it asks (about the first calibration image), after one warm-up item each
    (the model load is not counted). Makes real model calls; caches nothing."""
    import time

    from implicit_bench.backends.generators import create_generator
    from implicit_bench.backends.generators.base import RenderRequest
    from implicit_bench.backends.judges import build_judge
    from implicit_bench.backends.judges.base import JudgeRequest

    wanted = {ref for p in plans for ref, calls in p.calls_by_model.items() if calls}
    measured: dict[str, float] = {}
    image: bytes | None = None
    prompts = [CALIBRATION_PROMPTS[i % len(CALIBRATION_PROMPTS)] for i in range(n)]
    for ref in sorted(r for r in wanted if r.startswith("generators.")):
        generator = create_generator(model_block(params, ref))
        try:
            generator.generate([RenderRequest("calibrate-warmup", prompts[0], 0)])
            start = time.perf_counter()
            results = generator.generate(
                [RenderRequest(f"calibrate-{i}", p, i) for i, p in enumerate(prompts)]
            )
            measured[ref] = (time.perf_counter() - start) / n
            image = image or next((r.png for r in results if r.png), None)
        finally:
            generator.close()
    if image is None:
        from PIL import Image

        from implicit_bench.backends.generators.base import png_bytes

        image = png_bytes(Image.new("RGB", (512, 512), (128, 128, 128)))
    question = 'Describe the person. Respond with a JSON object only: {"score": <0-5>}'
    for ref in sorted(r for r in wanted if r.startswith("judges.")):
        judge = build_judge(model_block(params, ref), ref)
        judge.load()
        judge.answer([JudgeRequest(question, image)])
        start = time.perf_counter()
        judge.answer([JudgeRequest(question, image) for _ in range(n)])
        measured[ref] = (time.perf_counter() - start) / n
    return measured


def images_still_to_render(params: dict[str, Any], root: str | Path = ".") -> dict[str, int]:
    """generators name -> images the plan renders that are not stored yet (from ``plan``)."""
    plans, _ = build_plan(params, root)
    return {p.stage.split(" ", 1)[1]: p.model_calls for p in plans if p.stage.startswith("render ")}


def plan_params(
    params_path: str, profile: str | None = None, benchmark_path: str | None = None
) -> dict[str, Any]:
    """The params a plan sizes: ``params_path`` (every catalogue name checked), or with
    ``profile`` merged over it (nothing written); ``benchmark_path`` sets ``benchmark.path``."""
    if profile is not None:
        from implicit_bench.params.profiles import apply_profile

        params = apply_profile(profile, params_path)
    else:
        params = load_params(params_path)
        check_references(params, params_path)  # every catalogue name in use exists
    if benchmark_path is not None:
        bench = params.get("benchmark")
        bench = dict(bench) if isinstance(bench, dict) else {}
        params = {**params, "benchmark": {**bench, "path": benchmark_path}}
    return params


def recost(params: dict[str, Any], plans: list[StagePlan], n: int) -> dict[str, float]:
    """Measure seconds per item on ``n`` items (:func:`calibrate`) and cost ``plans`` with the
    measured times instead of the params' estimates; returns the measured seconds per item."""
    measured = calibrate(params, plans, n)
    for p in plans:
        p.no_seconds, p.no_price = [], []
    add_costs(plans, params, measured)
    return measured


__all__ = [
    "StagePlan",
    "build_plan",
    "format_plan",
    "images_still_to_render",
    "plan_params",
    "plan_units",
]
