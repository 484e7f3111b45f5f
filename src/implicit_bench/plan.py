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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import click
import pandas as pd

from implicit_bench.params import check_references, load_params, section
from implicit_bench.schema import VARIANTS
from implicit_bench.tables import DEBIAS_IMAGES_DIR, IMAGES_DIR, TRIPLETS_PATH, UNITS, UNITS_PATH


@dataclass
class StagePlan:
    """One stage's share of a run."""

    stage: str
    item: str  # what one item is
    items: int  # items the plan holds
    cached: int | None  # already stored / cached (None: unknown before upstream stages run)
    model_calls: int  # requests that remain: items not cached
    note: str = ""


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def plan_units(params: dict[str, Any], root: Path) -> tuple[pd.DataFrame | None, int, str]:
    """(the units table when it matches the plan, the unit count, where the count comes from)."""
    max_units = int((params.get("subset") or {}).get("max_units") or 0)
    total = _read_json(root / "metrics/triplets.json").get("triplets_total")
    triplets = root / TRIPLETS_PATH
    if triplets.exists():
        total = len(pd.read_parquet(triplets, columns=["unit_id"]))  # a row count: no need to validate
    count = max_units if max_units and (total is None or max_units < total) else total
    path = root / UNITS_PATH
    if path.exists():
        units = UNITS.read(path, require=("unit_id",))
        if count is None or len(units) == count:
            return units, len(units), UNITS_PATH
    if count is None:
        raise click.ClickException("no unit count: set subset.max_units or run the triplets stage once")
    return None, int(count), "subset.max_units / metrics/triplets.json (estimated)"


def _images_per_config(units: pd.DataFrame | None, n_units: int, seeds: list[int], variants: list[str]) -> dict[str, int]:
    """Planned images per variant of one configuration (an extra variant only where written)."""
    out = {}
    for variant in variants:
        if units is not None and variant not in VARIANTS and f"prompt_{variant}" in units.columns:
            column = units[f"prompt_{variant}"]
            written = int((column.notna() & (column.astype(str).str.strip() != "")).sum())
        else:
            written = n_units
        out[variant] = written * len(seeds)
    return out


def _render(params: dict[str, Any], units: pd.DataFrame | None, n_units: int, root: Path) -> tuple[list[StagePlan], dict[str, dict[str, int]]]:
    from implicit_bench.generators import settings_hash, validate_config
    from implicit_bench.images import ImageStore
    from implicit_bench.render.stage import RenderParams, done_keys, plan_items

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
                cfg = validate_config(render.configs[name], where=f"generators.{name}")
                planned = plan_items(units, name, render.seeds, render.variants)
                store = ImageStore(store_dir)
                try:
                    cached = len(done_keys(store, planned, settings_hash(cfg), False, render.retry_failed))
                finally:
                    store.close()
        plans.append(StagePlan(f"render {name}", "image", items, cached, items - (cached or 0)))
    return plans, per_config


def _judge(params: dict[str, Any], units: pd.DataFrame | None, per_config: dict[str, dict[str, int]], root: Path) -> StagePlan:
    from implicit_bench.judge_tasks import load_task
    from implicit_bench.judges import judge_params
    from implicit_bench.judges.stage import JudgeStageParams, orders_per_image, task_selection

    judge = section(params, "judge", JudgeStageParams, attach={"judges": "judges"})
    for name, cfg in judge.judges.items():  # refuse what the judge stage would refuse
        judge_params(cfg, f"judges.{name}")
    configs = judge.configs if judge.configs is not None else list(per_config)
    items = 0
    for task in judge.tasks:  # the judge stage's own selection and orders
        spec = load_task(task)
        judges, task_configs, wanted = task_selection(judge, task, spec, configs)
        orders = orders_per_image(judge, spec)
        for config in task_configs:
            images = sum(n for v, n in per_config.get(config, {}).items() if wanted is None or v in wanted)
            items += images * orders * len(judges)
    cached = _judge_cached(judge, units, root) if units is not None else None
    return StagePlan("judge", "judge answer", items, cached, items - (cached or 0),
                     "cached: answers for images rendered already")


def _judge_cached(judge: Any, units: pd.DataFrame, root: Path) -> int | None:
    """Planned judge requests (of images already published) whose answer is in the cache."""
    from implicit_bench.cache import DiskCache
    from implicit_bench.judges.stage import judge_backends, plan_judgements

    if not (root / judge.cache).exists():
        return 0
    try:
        _, identities = judge_backends(judge.judges)
        by_id = {str(r["unit_id"]): {**r, "unit_id": str(r["unit_id"])} for r in units.to_dict("records")}
        planned, _, _ = plan_judgements(judge, by_id, identities, root)
    except Exception:  # noqa: BLE001 - stores not rendered yet or a judge not resolvable offline
        return None
    cache = DiskCache(root / judge.cache)
    try:
        return len(cache.get_many([p.key for p in planned]))
    finally:
        cache.close()


def _debias(params: dict[str, Any], root: Path, n_units: int) -> list[StagePlan]:
    from implicit_bench.debias.params import DebiasParams
    from implicit_bench.debias.rewriting import needed_llm_work
    from implicit_bench.debias.units import KG_COLUMNS, subset_units
    from implicit_bench.embedders import CachedEmbedder

    if "debias" not in params:
        return []
    debias = DebiasParams.model_validate(params["debias"])
    kg_path = root / debias.units
    kg = UNITS.read_if_present(kg_path, require=KG_COLUMNS)
    n_kg = len(kg) if kg is not None else None
    plans = []
    if kg is not None:
        from implicit_bench.debias.retrieval import query_text, unit_text

        records = kg.to_dict("records")
        texts = list(dict.fromkeys([unit_text(r, debias.retrieval) for r in records]
                                   + [query_text(r["prompt_neutral"], debias.retrieval) for r in records]))
        cached = 0
        if Path(debias.embedder.cache).exists() or (root / debias.embedder.cache).exists():
            embedder = CachedEmbedder(debias.embedder.model_copy(update={"cache": str(root / debias.embedder.cache)}))
            cached = len(embedder.cache.get_many({embedder.key(t) for t in texts}))
        plans.append(StagePlan("retrieve", "text embedding", len(texts), cached, len(texts) - cached))
    subset = subset_units(kg, debias.subset) if kg is not None else None
    bound = ""  # the KG is not built yet: at most the plan's units
    if subset is not None:
        n_subset = len(subset)
    else:
        n_subset = min(debias.subset.max_units, n_units) if debias.subset.max_units else n_units
        bound = "at most; "
    rewrite_infos, pair_infos = needed_llm_work(debias)
    calls = n_subset * (len(rewrite_infos) + len(pair_infos))
    if calls:
        plans.append(StagePlan("rewrite", "LLM answer", calls, None, calls, f"{bound}LLM cache checked at run time"))
    seeds = list(debias.seeds)
    rubric_and_alignment = 2
    for name in debias.configs:
        items = n_subset * len(seeds)
        cached = None
        store_dir = root / DEBIAS_IMAGES_DIR / name
        if subset is not None:
            cached = 0
            if (store_dir / "journal.jsonl").exists():
                from implicit_bench.images import ImageStore

                wanted = {(u, s) for u in subset["unit_id"] for s in seeds}
                store = ImageStore(store_dir)
                try:
                    done = store.done_keys()
                    cached = sum(1 for k in done if (k.unit_id, k.seed) in wanted and k.variant == "neutral")
                finally:
                    store.close()
        plans.append(StagePlan(f"debias_render@{name}", "image", items, cached, items - (cached or 0),
                               f"{bound}stored images counted; settings checked at run time"))
        plans.append(StagePlan(f"debias_judge@{name}", "judge answer", items * rubric_and_alignment, None,
                               items * rubric_and_alignment, f"{bound}rubric + alignment"))
    if n_kg is None:
        texts = 2 * n_units
        plans.insert(0, StagePlan("retrieve", "text embedding", texts, None, texts,
                                  f"at most; {debias.units} not built yet"))
    return plans


def _llm_stages(params: dict[str, Any], root: Path) -> list[StagePlan]:
    plans = []
    kg = params.get("kg") or {}
    if kg.get("extractor") == "llm":
        pairs = _read_json(root / "metrics/sources.json").get("pairs_total")
        max_pairs = int(kg.get("max_pairs") or 0)
        n = min(max_pairs, pairs) if max_pairs and pairs else (max_pairs or pairs or 0)
        plans.append(StagePlan("kg", "LLM answer", n, None, n, "one extraction per sentence pair"))
    triplets = params.get("triplets") or {}
    if triplets.get("writer") == "llm":
        units = _read_json(root / "metrics/kg.json").get("units_total") or 0
        plans.append(StagePlan("triplets", "LLM answer", units, None, units, "one triplet per KG unit"))
    return plans


def build_plan(params: dict[str, Any], root: str | Path = ".") -> tuple[list[StagePlan], dict[str, Any]]:
    """Per stage that calls a model: items, cached, model calls; and the plan's sizes."""
    root = Path(root)
    units, n_units, source = plan_units(params, root)
    plans = _llm_stages(params, root)
    render_plans, per_config = _render(params, units, n_units, root)
    plans += render_plans
    plans.append(_judge(params, units, per_config, root))
    clip_images = sum(sum(c.values()) for c in per_config.values())
    if "clip" in params:
        plans.append(StagePlan("clip", "image embedding", clip_images, None, clip_images,
                               "embedding cache checked at run time"))
    plans += _debias(params, root, n_units)
    seeds = (params.get("render") or {}).get("seeds") or []
    info = {"units": n_units, "units_from": source, "seeds": list(seeds), "configs": list(per_config)}
    return plans, info


def format_plan(plans: list[StagePlan], info: dict[str, Any]) -> str:
    lines = [
        f"units: {info['units']} ({info['units_from']}); render seeds: {info['seeds']}; configs: {', '.join(info['configs'])}",
        "",
        f"{'stage':<34} {'item':<16} {'items':>9} {'cached':>9} {'model calls':>12}",
    ]
    for p in plans:
        cached = "-" if p.cached is None else f"{p.cached:,}"
        note = f"  ({p.note})" if p.note else ""
        lines.append(f"{p.stage:<34} {p.item:<16} {p.items:>9,} {cached:>9} {p.model_calls:>12,}{note}")
    total = sum(p.model_calls for p in plans)
    lines.append(f"{'total model calls':<34} {'':<16} {'':>9} {'':>9} {total:>12,}")
    return "\n".join(lines)


@click.command("plan")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--profile", default=None, help="Merge profiles/NAME.yaml over --params first (nothing is written).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan_command(params_path: str, profile: str | None, as_json: bool) -> None:
    """Per stage: the items to compute, the items already cached, the model calls implied."""
    if profile is not None:
        from implicit_bench.profiles import apply_profile

        params = apply_profile(profile, params_path)
    else:
        params = load_params(params_path)
        check_references(params, params_path)  # every catalogue name in use exists
    plans, info = build_plan(params)
    if as_json:
        click.echo(json.dumps({**info, "stages": [asdict(p) for p in plans]}, indent=2))
    else:
        click.echo(format_plan(plans, info))


__all__ = ["StagePlan", "build_plan", "format_plan", "plan_command", "plan_units"]
