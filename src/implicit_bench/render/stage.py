"""Render every prompt of every unit on every seed into one ImageStore per configuration.

The plan of a configuration is the full list of items (unit, seed, variant) in a fixed order;
it is cut into batches of ``batch_size`` **before** looking at what is already done, so an
image is always computed in the same batch (same numerics) whether the run is fresh, resumed
or spread over Ray actors. A batch runs when any of its items is missing; items already done
are not written again.

An item counts as done when its journal entry is intact (bytes present and, with ``verify``,
re-hashed), its prompt equals the planned prompt and its settings hash equals the current
config's (so a changed prompt or sampler setting re-renders it). Items recorded as failed are
tried again on the next run when ``retry_failed`` is set; refusals are final. With fixed
batches (every backend whose answers depend on their batch) an item also records its batch's
signature (``batch_signature``: its members) and counts as done only in the same batch: a
grown or shrunk plan re-renders the items whose batch changed, so an image's bytes never
depend on an earlier plan.

A store holds the current plan only (``ImageStore.finalize`` compacts it); the items it drops
are kept in a pool under the model-call cache directory (``pool_dir``), and a later plan adopts
from it the items that would count as done (same prompt, settings and batch).
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench._util.files import write_json
from implicit_bench._util.hashing import sha256_bytes
from implicit_bench._util.redact import redact
from implicit_bench.backends.generators import (
    GENERATORS,
    GeneratorParams,
    RenderRequest,
    RenderResult,
    create_generator,
    settings_hash,
)
from implicit_bench.protocol.schema import VARIANTS
from implicit_bench.render.images import ImageKey, ImageRecord, ImageStore, unpublish
from implicit_bench.render.params import RenderParams
from implicit_bench.runtime.execution import ExecutorConfig, Outcome, RunStats, WorkItem, run_items


@dataclass(frozen=True)
class PlannedItem:
    key: ImageKey
    prompt: str
    bias_type: str | None


def unit_columns(variants: Sequence[str]) -> tuple[str, ...]:
    """The UNITS columns render reads: ``unit_id`` and one ``prompt_<variant>`` per variant
    (``tables.UNITS.read(path, require=unit_columns(variants))``; the three core prompts may
    not be blank, an extra variant's null prompt is skipped by ``plan_items``)."""
    return ("unit_id", *(f"prompt_{v}" for v in variants))


def plan_items(
    units: pd.DataFrame, config: str, seeds: Sequence[int], variants: Sequence[str]
) -> list[PlannedItem]:
    """Every (unit, seed, variant) of a config, ordered by unit id, seed, then variant."""
    bias = units["bias_type"] if "bias_type" in units.columns else pd.Series([None] * len(units))
    rows = sorted(
        zip(units["unit_id"], bias, *(units[f"prompt_{v}"] for v in variants), strict=True),
        key=lambda r: r[0],
    )
    planned = []
    for unit_id, bias_type, *prompts in rows:
        for seed in seeds:
            for variant, prompt in zip(variants, prompts, strict=True):
                if variant not in VARIANTS and (
                    prompt is None or pd.isna(prompt) or not str(prompt).strip()
                ):
                    continue  # an extra variant whose prompt was not written or failed its check
                planned.append(
                    PlannedItem(
                        ImageKey(config, unit_id, variant, int(seed)), str(prompt), bias_type
                    )
                )
    return planned


def batch_plan(planned: Sequence[PlannedItem], batch_size: int) -> list[list[PlannedItem]]:
    """Batches of at most ``batch_size`` items that never span two (unit, seed) pairs: a
    batch is a function of one unit's prompts at one seed, so adding or removing seeds, units
    or other items of the plan leaves every other item's batch (and its bits) as it was
    (docs/contracts.md, "Batch- and history-invariant numbers")."""
    size = max(1, int(batch_size))
    batches: list[list[PlannedItem]] = []
    group: list[PlannedItem] = []
    for item in planned:  # plan order: unit, seed, variant
        if group and (group[0].key.unit_id, group[0].key.seed) != (item.key.unit_id, item.key.seed):
            batches += [group[i : i + size] for i in range(0, len(group), size)]
            group = []
        group.append(item)
    batches += [group[i : i + size] for i in range(0, len(group), size)]
    return batches


POOL_FOLDER = "image_pool"  # <cache dir>/image_pool/<store path>: items no plan holds now


def pool_dir(store_dir: str | Path) -> Path | None:
    """The pool of a store under the working directory (``<cache dir>/image_pool/<its path>``);
    None for a store elsewhere (no pool: its dropped items are deleted)."""
    from implicit_bench.runtime.cache_location import cache_dir

    here = Path.cwd().resolve()
    try:
        relative = Path(store_dir).resolve().relative_to(here)
    except ValueError:
        return None
    return cache_dir(here) / POOL_FOLDER / relative


def batch_signature(batch: Sequence[PlannedItem]) -> str:
    """Which batch an item was computed in: its members' ids (a batched forward pass gives a
    row the same bits whatever the other rows hold at equal shapes, but not at another batch
    size or position, so a neighbour's changed prompt does not re-render an item)."""
    text = "\n".join(i.key.item_id for i in batch)
    return sha256_bytes(text.encode("utf-8"))[:16]


def batch_signatures(
    planned: Sequence[PlannedItem], batch_size: int, fixed_batches: bool
) -> dict[ImageKey, str]:
    """Each planned item's batch signature (empty without fixed batches)."""
    if not fixed_batches:
        return {}
    return {
        i.key: sig
        for b in batch_plan(planned, batch_size)
        for sig in [batch_signature(b)]
        for i in b
    }


def _current(
    record: ImageRecord | None,
    item: PlannedItem,
    settings: str,
    retry_failed: bool,
    signatures: dict[ImageKey, str],
) -> bool:
    if (
        record is None
        or record.prompt != item.prompt
        or record.extra.get("settings") != settings
        or record.extra.get("batch") != signatures.get(item.key)
    ):
        return False
    return not (record.status == "failed" and retry_failed)


def done_keys(
    store: ImageStore,
    planned: Sequence[PlannedItem],
    settings: str,
    verify: bool,
    retry_failed: bool,
    signatures: dict[ImageKey, str] | None = None,
    intact: set[ImageKey] | None = None,
) -> set[ImageKey]:
    """Planned keys whose stored result is intact and current (see module docstring).
    ``intact``: ``store.done_keys(verify)`` computed once by a caller that asks chunk by
    chunk (``plan``)."""
    intact = store.done_keys(verify=verify) if intact is None else intact
    signatures = signatures or {}
    return {
        item.key
        for item in planned
        if item.key in intact
        and _current(store.get(item.key), item, settings, retry_failed, signatures)
    }


def adopt_from_pool(
    store: ImageStore,
    pool: str | Path | None,
    planned: Sequence[PlannedItem],
    settings: str,
    retry_failed: bool,
    signatures: dict[ImageKey, str],
) -> int:
    """Copy into ``store`` the pooled items that would count as done; the number copied."""
    if pool is None or not (Path(pool) / "journal.jsonl").exists():
        return 0
    by_key = {i.key: i for i in planned}
    source = ImageStore(pool)
    try:
        return store.adopt(
            source,
            list(by_key),
            lambda r: (
                r.status != "failed"
                and _current(r, by_key[r.key], settings, retry_failed, signatures)
            ),
        )
    finally:
        source.close()


def generate_worker(
    config: GeneratorParams,
) -> Callable[[list[RenderRequest]], list[RenderResult]]:
    """Executor worker factory: load the generator once, return its batch method."""
    return create_generator(config).generate


def generator_name(config: GeneratorParams) -> str:
    return f"{config.backend}:{getattr(config, 'model', '')}"


def render_plan(
    store: ImageStore,
    planned: Sequence[PlannedItem],
    make_worker: Callable[[], Callable[[list[RenderRequest]], list[RenderResult]]],
    *,
    generator: str,
    settings: str,
    batch_size: int,
    executor: ExecutorConfig,
    verify: bool = True,
    retry_failed: bool = True,
    payloads: dict[ImageKey, Any] | None = None,
    fixed_batches: bool = True,
    desc: str = "render",
    concurrency: int = 1,
    pool: str | Path | None = None,
) -> dict[str, Any]:
    """Render the missing items of ``planned`` into ``store``; return run statistics.

    ``make_worker`` is any picklable factory returning ``worker(requests) -> results``; plain
    renders use the generator's ``generate``; steering renders (engineer "debias") pass their own
    worker and per-item ``payloads``. Only the driver writes to the store.

    ``fixed_batches``: cut the whole plan into batches (an image's numerics do not depend on
    the run); False for backends whose answers do not depend on their batch (HTTP APIs): only
    the missing items are sent, so finished images are never requested (paid for) again.

    ``concurrency`` > 1 (HTTP APIs: the backend's ``concurrency``) streams the batches through
    the executor: that many in flight at all times, each image written as it arrives.

    ``pool``: a store of earlier plans' items (``pool_dir``) to adopt done items from.
    """
    signatures = batch_signatures(planned, batch_size, fixed_batches)
    adopted = adopt_from_pool(store, pool, planned, settings, retry_failed, signatures)
    done = done_keys(store, planned, settings, verify, retry_failed, signatures)
    skipped = sum(1 for item in planned if item.key in done)
    if fixed_batches:
        batches = [b for b in batch_plan(planned, batch_size) if any(i.key not in done for i in b)]
    else:
        # no fixed batches (HTTP APIs, vendor batches): the missing items in plain chunks
        todo = [i for i in planned if i.key not in done]
        size = max(1, int(batch_size))
        batches = [todo[i : i + size] for i in range(0, len(todo), size)]
    payloads = payloads or {}
    work = [
        WorkItem(
            f"{b[0].key.item_id} (+{len(b) - 1})",
            [RenderRequest(i.key.item_id, i.prompt, i.key.seed, payloads.get(i.key)) for i in b],
        )
        for b in batches
    ]
    by_id = {w.id: b for w, b in zip(work, batches, strict=True)}
    written: Counter[str] = Counter()

    def write(outcome: Outcome) -> None:
        batch = by_id[outcome.item.id]
        results = outcome.value if outcome.ok else None
        if results is not None and len(results) != len(batch):
            results, outcome.error = (
                None,
                f"worker returned {len(results)} results for {len(batch)} requests",
            )
        rows = []
        for pos, item in enumerate(batch):
            if item.key in done:
                continue
            extra = {"settings": settings}
            if item.key in signatures:
                extra["batch"] = signatures[item.key]
            if results is None:
                record = ImageRecord(
                    item.key,
                    generator,
                    item.prompt,
                    "failed",
                    redact(outcome.error),
                    attempts=outcome.attempts,
                    extra=extra,
                )
                rows.append((record, None))
            else:
                res = results[pos]
                record = ImageRecord(
                    item.key,
                    generator,
                    item.prompt,
                    res.status,
                    redact(res.reason),  # secrets never reach the journal or the index
                    width=res.width,
                    height=res.height,
                    attempts=res.attempts or outcome.attempts,
                    extra=extra,
                )
                rows.append((record, res.png if res.status == "ok" else None))
            written[record.status] += 1
        store.put_many(rows)

    start = time.perf_counter()
    stats: RunStats = run_items(
        work, make_worker, executor, on_outcome=write, desc=desc, concurrency=concurrency
    )
    seconds = time.perf_counter() - start
    rendered = written["ok"]
    return {
        "planned": len(planned),
        "skipped_done": skipped,
        "adopted_from_pool": adopted,
        "batches_run": len(work),
        "written": dict(sorted(written.items())),
        "retries": stats.retries,
        "seconds": round(seconds, 3),
        "images_per_s": round(rendered / seconds, 4) if seconds > 0 and rendered else 0.0,
        "first_errors": stats.errors,
    }


def summarize(index: pd.DataFrame, planned: Sequence[PlannedItem]) -> dict[str, Any]:
    """Counts by status and refusals per bias type (refused / all planned items of the type)."""
    bias = {i.key: i.bias_type for i in planned}
    frame = index.assign(
        bias_type=[
            bias.get(ImageKey(r.config, r.unit_id, r.variant, int(r.seed)))
            for r in index.itertuples(index=False)
        ]
    )
    counts = {s: int((frame["status"] == s).sum()) for s in ("ok", "refused", "failed")}
    per_type: dict[str, Any] = {}
    for bias_type, group in frame.groupby(frame["bias_type"].fillna("unknown"), sort=True):
        refused = int((group["status"] == "refused").sum())
        per_type[str(bias_type)] = {
            "items": len(group),
            "refused": refused,
            "refusal_rate": round(refused / len(group), 6) if len(group) else 0.0,
        }
    return {"items": len(frame), "by_status": counts, "refusals_by_bias_type": per_type}


def batching(cfg: GeneratorParams) -> tuple[bool, int, int]:
    """How ``render_config`` batches a config: (fixed batches, batch size, streams)."""
    invariant = getattr(GENERATORS.resolve(cfg.backend), "BATCH_INVARIANT", False)
    streams = int(getattr(cfg, "concurrency", 1) or 1) if invariant else 1  # HTTP APIs: streamed
    if invariant and bool(getattr(cfg, "batch", False)):
        # vendor batch APIs: chunks of batch_max_requests, each one vendor batch, several in flight
        return False, int(cfg.batch_max_requests), int(cfg.batch_concurrency)
    return not invariant, 1 if streams > 1 else cfg.batch_size, streams


def config_signatures(cfg: GeneratorParams, planned: Sequence[PlannedItem]) -> dict[ImageKey, str]:
    """The batch signatures ``render_config`` gives the planned items of ``cfg``."""
    fixed, size, _ = batching(cfg)
    return batch_signatures(planned, size, fixed)


def check_render_failures(stage: str, index: pd.DataFrame, max_rate: float) -> None:
    """Exit non-zero (``LLMUnavailableError``, so DVC records nothing) when every planned item
    of a store failed or more than ``max_rate`` of them did, with the first failure's reason;
    refusals are answers, not failures. The store keeps what was rendered (resumable)."""
    from implicit_bench.runtime.failures import check_failure_rate

    failed = index[index["status"] == "failed"]
    first = None if failed.empty else str(failed["reason"].iloc[0])
    check_failure_rate(stage, len(failed), len(index), max_rate, first, kind="render")


def render_config(
    name: str,
    cfg: GeneratorParams,
    units: pd.DataFrame,
    store_dir: str | Path,
    params: RenderParams,
) -> dict[str, Any]:
    """Render one named config of ``params`` into ``store_dir``; write its index; its metrics."""
    planned = plan_items(units, name, params.seeds, params.variants)
    fixed, size, streams = batching(cfg)
    pool = pool_dir(store_dir)
    with ImageStore(store_dir) as store:
        store.acquire_writer()  # one writer per store: a second render is refused (docs/errors.md)
        run = render_plan(
            store,
            planned,
            functools.partial(generate_worker, cfg),
            generator=generator_name(cfg),
            settings=settings_hash(cfg),
            batch_size=size,
            executor=params.executor_for(name),
            verify=params.verify,
            retry_failed=params.retry_failed,
            fixed_batches=fixed,
            desc=f"render {name}",
            concurrency=streams,
            pool=pool,
        )
        index = store.finalize(keys=[i.key for i in planned], pool=pool)
    check_render_failures(f"render {name}", index, params.max_failure_rate)
    return {
        "generator": generator_name(cfg),
        "model": getattr(cfg, "model", None),
        "settings_hash": settings_hash(cfg),
        "batch_size": cfg.batch_size,
        **summarize(index, planned),
        "run": run,
    }


#: the file an image folder with no store holds (DVC keeps no empty folder as an output)
STORES_MANIFEST = "stores.json"


def render_all(
    params: RenderParams, units: pd.DataFrame, images_dir: str | Path
) -> dict[str, dict[str, Any]]:
    """Render every selected config into ``images_dir/<config>`` (all configs checked first).

    A folder under ``images_dir`` whose config is no longer selected is removed (its items
    moved to its pool), so the folder holds the current plan's stores only.
    """
    selected = params.selected()  # every config was validated with the params
    root = Path(images_dir)
    for store_dir in sorted(root.iterdir()) if root.is_dir() else []:
        if store_dir.is_dir() and store_dir.name not in selected:
            unpublish(store_dir, pool_dir(store_dir))
    if not selected:  # `render.run: []` (a run on a fixed unit set): the output still exists
        root.mkdir(parents=True, exist_ok=True)
        write_json(root / STORES_MANIFEST, {"stores": []})
    return {
        name: render_config(name, params.configs[name], units, Path(images_dir) / name, params)
        for name in selected
    }


def render_metrics(
    params: RenderParams, results: dict[str, dict[str, Any]], profile: str | None
) -> dict[str, Any]:
    """``metrics/render.json``: per config counts, refusals per bias type, speed, provenance."""
    from implicit_bench.runtime.provenance import provenance

    return {
        "seeds": list(params.seeds),
        "variants": list(params.variants),
        "configs": results,
        "provenance": provenance(
            [(f"generator:{name}", res["model"]) for name, res in results.items()], profile=profile
        ),
    }
