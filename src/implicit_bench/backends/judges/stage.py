"""The judge stage's library: plan judgements, answer the uncached ones, write the table.

1. plan: for every task, every judge selected for it, and every ``ok`` image of the published
   index of each selected configuration's store (exactly the render plan's items, never the
   other items the persistent store keeps for reuse), one request (prompt text filled from the unit,
   image sha256); the blind task gets one request per option order (``blind_orders``:
   ``hash`` = the order hashed from (unit, seed, variant), ``both`` = "sa" and "as",
   ``cyclic3`` = the three cyclic orders of s, a and neither).
2. cache: each request is keyed by ``model_key("judge", judge identity, task, prompt, image sha256,
   decoding)``; answers (raw text) found in ``cache/judge.sqlite`` are not asked again.
3. answer: the missing keys go, batch by batch, to one worker per judge (model loaded once
   per worker) through an executor; every finished batch is written to the cache at once, so
   a killed run resumes where it stopped. An HTTP judge (a ``concurrency`` key) is streamed:
   one request per item, ``concurrency`` in flight at all times, each answer cached as it
   arrives (:mod:`implicit_bench._util.streaming`).
4. assemble: every planned request becomes one JUDGEMENTS row, parsed from its cached answer
   (strict then lenient, :mod:`implicit_bench.protocol.judge_tasks`); unreadable answers and failed
   calls are invalid rows (value null, raw kept, error), counted in the metrics.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from implicit_bench._util.files import write_json
from implicit_bench._util.hashing import stable_hash
from implicit_bench._util.redact import redact
from implicit_bench.backends.judges import judge_from_params, judge_params
from implicit_bench.backends.judges.base import JudgeBackend, JudgeRequest, peak_gpu_gib
from implicit_bench.backends.judges.params import JudgeStageParams, TaskSelect
from implicit_bench.errors import ConfigError, InputError
from implicit_bench.params import check_refs
from implicit_bench.protocol.judge_tasks import (
    CYCLIC_ORDERS,
    ORDERS,
    TaskSpec,
    blind_order,
    load_task,
    task_fields,
    task_registry,
)
from implicit_bench.protocol.prompt_fields import unit_fields
from implicit_bench.protocol.tables import (
    JUDGEMENT_COLUMNS,
    JUDGEMENT_EXTRA_COLUMNS,
    UNITS,
)
from implicit_bench.protocol.tables.judgements import write_judgements
from implicit_bench.render.images import ImageKey, ImageStore, published_stores, read_index
from implicit_bench.runtime.cache import CacheLookup, DiskCache, model_key
from implicit_bench.runtime.failures import (
    check_failure_rate,
)
from implicit_bench.runtime.provenance import provenance

OUTPUT_COLUMNS: tuple[str, ...] = (*JUDGEMENT_COLUMNS, *JUDGEMENT_EXTRA_COLUMNS)


def config_judges(select: TaskSelect | None, config: str, judges: list[str]) -> list[str]:
    """The judges a task asks about one configuration's images."""
    if select is None or config not in select.judges_by_config:
        return judges
    return list(select.judges_by_config[config])


@dataclass(frozen=True)
class PlannedImage:
    """One row of a store's published index (the render plan) that the judges see."""

    key: ImageKey
    generator: str
    status: str
    sha256: str | None


@dataclass(frozen=True)
class PlannedJudgement:
    """One row to be: a question about one image under one judge, task and order."""

    key: str
    judge: str
    task: str
    config: str
    unit_id: str
    variant: str
    seed: int
    order: str | None
    prompt: str
    prompt_hash: str
    image_sha256: str
    store: str


@dataclass(frozen=True)
class JudgeCall:
    """One uncached request sent to a judge worker (unique by cache key)."""

    key: str
    prompt: str
    image_sha256: str
    store: str
    task: str | None = None  # its answer schema goes with the request (structured output)


@dataclass
class JudgeRunResult:
    frame: pd.DataFrame
    metrics: dict[str, Any]
    model_calls: int = 0
    cache_hits: int = 0
    errors: dict[str, str] = field(default_factory=dict)
    # each judge's own timings of this run (judge_timing; wall clock: the run log only)
    timings: dict[str, dict[str, Any]] = field(default_factory=dict)


# ----- planning ----------------------------------------------------------------------------
def units_by_id(units: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """The rows of a UNITS frame (``tables.UNITS.read``: ids unique strings) by unit id."""
    return {row["unit_id"]: row for row in units.to_dict("records")}


def store_configs(params: JudgeStageParams, root: str | Path = ".") -> list[str]:
    """The configurations to judge: ``params.configs``, or every published image store under
    images_dir (a store whose configuration left the render plan is unpublished)."""
    if params.configs is not None:
        return list(params.configs)
    images = Path(root) / params.images_dir
    found = [p.name for p in published_stores(images)]
    if not found:
        raise InputError(
            images, None, None, "no image stores to judge (run the render stage first)"
        )
    return found


def _select(select: TaskSelect | None, attr: str, default: list[str]) -> list[str]:
    chosen = getattr(select, attr) if select is not None else None
    return list(default) if chosen is None else list(chosen)


def task_selection(
    params: JudgeStageParams, task_name: str, task: TaskSpec, all_configs: list[str]
) -> tuple[list[str], list[str], set[str] | None]:
    """(judges, configurations, variants or None for all) one task asks: the judge stage's
    planner and ``implicit-bench plan`` read the selection through this one function."""
    select = params.tasks[task_name]
    judges = _select(select, "judges", list(params.judges))
    configs = _select(select, "configs", all_configs)
    variants = set(_select(select, "variants", task.variants or [])) or None
    return judges, configs, variants


def orders_per_image(params: JudgeStageParams, task: TaskSpec) -> int:
    """How many option orders one image is asked in for ``task`` (1 unless it has option order)."""
    if not task.option_order:
        return 1
    return {"both": len(ORDERS), "cyclic3": len(CYCLIC_ORDERS)}.get(params.blind_orders, 1)


def audit_units(params: JudgeStageParams, units: Collection[str]) -> set[str]:
    """The units whose blind images are asked under both orders although ``blind_orders`` is
    hash: the ``both_orders_units`` first units ordered by a hash of their id (a stated subset
    that does not move when units are added elsewhere in the order)."""
    if params.blind_orders != "hash" or not params.both_orders_units:
        return set()
    ranked = sorted(units, key=lambda u: (stable_hash(f"order-audit:{u}", 16), u))
    return set(ranked[: params.both_orders_units])


def judge_backends(
    judges: dict[str, dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(backend, ``{identity, decoding}``) per judge of the catalogue, each validated and built
    once (the stage and ``implicit-bench plan`` key the cache with these identities)."""
    validated = {name: judge_params(cfg, f"judges.{name}") for name, cfg in judges.items()}
    backends = {name: judge_from_params(p) for name, p in validated.items()}
    for name, backend in backends.items():
        if hasattr(backend, "where"):  # HTTP judges name their entry in errors
            backend.where = f"judges.{name}"
    identities = {
        name: {"identity": b.identity(), "decoding": b.decoding()} for name, b in backends.items()
    }
    return backends, identities


def plan_judgements(
    params: JudgeStageParams,
    units: dict[str, dict[str, Any]],
    identities: dict[str, dict[str, Any]],
    root: str | Path = ".",
) -> tuple[list[PlannedJudgement], dict[str, dict[str, int]], dict[str, set[str]]]:
    """All requests of the run, the image status counts per configuration and the generators."""
    root = Path(root)
    units_path = root / params.units
    image_counts: dict[str, dict[str, int]] = {}
    generators: dict[str, set[str]] = {}
    records_by_config = {}
    all_configs = store_configs(params, root)
    audit = audit_units(params, units)
    for config in all_configs:
        store_root = (root / params.config_dirs.get(config, params.images_dir) / config).resolve()
        if not store_root.is_dir():
            raise InputError(store_root, None, None, f"no image store for configuration '{config}'")
        try:
            index = read_index(store_root)  # exactly the items of the current render plan
        except FileNotFoundError as exc:
            raise InputError(
                store_root,
                None,
                None,
                f"configuration '{config}' is not in the render plan ({exc})",
            ) from None
        records = [
            PlannedImage(
                ImageKey(r.config, r.unit_id, r.variant, int(r.seed)),
                r.generator,
                r.status,
                r.sha256,
            )
            for r in index.itertuples(index=False)
        ]
        counts = Counter(r.status for r in records)
        image_counts[config] = {s: counts.get(s, 0) for s in ("ok", "refused", "failed")}
        generators[config] = {r.generator for r in records}
        records_by_config[config] = (str(store_root), records)

    tasks: dict[str, TaskSpec] = {name: load_task(name) for name in params.tasks}
    fields_cache: dict[str, dict[str, str]] = {}
    prompt_cache: dict[tuple[str, str, str | None], tuple[str, str]] = {}
    planned: list[PlannedJudgement] = []
    for task_name in params.tasks:
        task = tasks[task_name]
        all_judges, configs, variants = task_selection(params, task_name, task, all_configs)
        check_refs(all_judges, params.judges, f"judge.tasks.{task_name}.judges", "judges")
        for config in configs:
            judges = config_judges(params.tasks[task_name], config, all_judges)
            check_refs(judges, params.judges, f"judge.tasks.{task_name}.judges_by_config", "judges")
            if config not in records_by_config:
                raise ConfigError(
                    f"judge.tasks.{task_name}.configs: '{config}' is not in judge.configs"
                )
            store_root, records = records_by_config[config]
            for record in records:
                if record.status != "ok":
                    continue
                key = record.key
                if variants is not None and key.variant not in variants:
                    continue
                unit = units.get(key.unit_id)
                if unit is None and params.only_listed_units:
                    continue
                if unit is None:
                    raise InputError(
                        Path(store_root) / "index.parquet",
                        key.item_id,
                        "unit_id",
                        f"unit '{key.unit_id}' is not in {units_path}",
                    )
                if key.unit_id not in fields_cache:
                    fields_cache[key.unit_id] = unit_fields(unit, units_path)
                prompt_task = task
                if task.option_order:  # the blind task: options in a per-image order
                    orders: Iterable[str | None] = (
                        ORDERS
                        if params.blind_orders == "both" or key.unit_id in audit
                        else CYCLIC_ORDERS
                        if params.blind_orders == "cyclic3"
                        else (blind_order(key.unit_id, key.seed, key.variant),)
                    )
                    if params.blind_orders == "cyclic3":
                        prompt_task = task_registry().cyclic(task_name)
                else:
                    orders = (None,)
                for order in orders:
                    pkey = (task_name, key.unit_id, order)
                    if pkey not in prompt_cache:
                        text = prompt_task.render(
                            task_fields(prompt_task, fields_cache[key.unit_id], order)
                        )
                        prompt_cache[pkey] = (text, stable_hash(text, 16))
                    prompt, prompt_hash = prompt_cache[pkey]
                    for judge in judges:
                        identity = identities[judge]
                        ckey = model_key(
                            "judge",
                            identity["identity"],
                            task=task_name,
                            prompt=prompt,
                            image_sha256=record.sha256,
                            decoding=identity["decoding"],
                        )
                        planned.append(
                            PlannedJudgement(
                                key=ckey,
                                judge=judge,
                                task=task_name,
                                config=config,
                                unit_id=key.unit_id,
                                variant=key.variant,
                                seed=key.seed,
                                order=order,
                                prompt=prompt,
                                prompt_hash=prompt_hash,
                                image_sha256=str(record.sha256),
                                store=store_root,
                            )
                        )
    return planned, image_counts, generators


# ----- answering ---------------------------------------------------------------------------
class JudgeWorker:
    """Answers batches of :class:`JudgeCall` with one judge; the model is loaded once."""

    def __init__(self, backend: JudgeBackend):
        self.backend = backend
        self._stores: dict[str, ImageStore] = {}
        self._lock = threading.Lock()  # streamed judges answer from several threads

    def setup(self) -> None:
        self.backend.load()

    def _image(self, call: JudgeCall) -> bytes:
        with self._lock:
            store = self._stores.get(call.store)
            if store is None:
                store = self._stores[call.store] = ImageStore(call.store)
        return store.read_bytes(call.image_sha256)

    def __call__(self, batch: list[JudgeCall]) -> list[tuple[str, str, str | None]]:
        """``(key, text, error)`` per call."""
        requests, keys, failed = [], [], []
        for call in batch:
            try:
                schema = load_task(call.task).json_schema() if call.task else None
                requests.append(JudgeRequest(call.prompt, self._image(call), schema))
                keys.append(call.key)
            except (OSError, KeyError) as exc:
                failed.append((call.key, "", f"image unreadable: {exc}"))
        answers = self.backend.answer(requests) if requests else []
        if len(answers) != len(requests):
            raise RuntimeError(
                f"{self.backend.backend}: {len(answers)} answers for {len(requests)}"
            )
        return [(k, text, err) for k, (text, err) in zip(keys, answers, strict=True)] + failed

    def run(self, batch: list[JudgeCall]) -> list[tuple[str, str, str | None]]:
        return self(batch)

    def close(self) -> None:
        self.backend.close()
        for store in self._stores.values():
            store.close()


def make_judge_worker(backend: JudgeBackend) -> Callable[[Any], Any]:
    """Load one judge worker from the stage's built (not yet loaded) backend: a copy per worker,
    so nothing is validated or built again (picklable entry point for executors and Ray
    actors)."""
    worker = JudgeWorker(copy.copy(backend))
    worker.setup()
    return worker.run  # a bound method: executors call ``__self__.close()`` at the end


def _timed_worker(backend: JudgeBackend, loads: list[float]) -> Callable[[Any], Any]:
    """``make_judge_worker`` with its load time appended to ``loads`` (seen only where the worker
    is made in this process: the local executor; a Ray actor's copy of the list is its own)."""
    start = time.perf_counter()
    worker = make_judge_worker(backend)
    loads.append(time.perf_counter() - start)
    return worker


def judge_timing(
    seconds: float, calls: list[JudgeCall], loads: list[float], gpu_gib: float | None
) -> dict[str, Any]:
    """A judge's cost columns (NegT2IBench Tables 2, 8) from its own run: ``seconds`` the wall
    time of its dispatch (worker loads included), ``calls`` the requests it answered. s/img and
    s/Q exclude the loads measured in this process; with several requests in flight they are
    throughput figures (wall time over requests), not one request's latency."""
    images = len({c.image_sha256 for c in calls})
    load = sum(loads)
    answering = max(seconds - load, 0.0)
    return {
        "requests": len(calls),
        "images": images,
        "seconds": seconds,
        "answering_s": answering,
        "s_per_image": answering / images if images else None,
        "s_per_question": answering / len(calls) if calls else None,
        "questions_per_image": len(calls) / images if images else None,
        "load_s": load / len(loads) if loads else None,
        "workers_loaded_here": len(loads),
        "gpu_gib": gpu_gib,
    }


BatchResult = list[tuple[str, str, str | None]]
# dispatch(name, make_worker, batches, on_result): runs every batch once through a worker
# made by ``make_worker`` and calls ``on_result(batch, results, error)`` in this process.
Dispatch = Callable[
    [
        str,
        Callable[[], Callable[[Any], Any]],
        list[list[JudgeCall]],
        Callable[[list[JudgeCall], BatchResult | None, str | None], None],
    ],
    None,
]


def executor_dispatch(executor: dict[str, Any], progress: bool = True) -> Dispatch:
    """Dispatch through :func:`implicit_bench.runtime.execution.run_items` (in-process or Ray
    actors, with its retries): the one dispatcher, in production and in the tests."""
    from implicit_bench.runtime.execution import ExecutorConfig, WorkItem, run_items

    config = ExecutorConfig.model_validate({"progress": progress, **executor})

    def dispatch(name, make_worker, batches, on_result, concurrency: int = 1) -> None:
        items = [WorkItem(f"{name}/{i}", batch) for i, batch in enumerate(batches)]
        run_items(
            items,
            make_worker,
            config,
            on_outcome=lambda o: on_result(o.item.payload, o.value, o.error),
            desc=f"judge {name} (batches)",
            concurrency=concurrency,
        )

    return dispatch


def _progress(total: int, label: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=label, unit="req", disable=not enabled, mininterval=2.0)


def answer_missing(
    planned: list[PlannedJudgement],
    backends: dict[str, JudgeBackend],
    cache: DiskCache,
    dispatch: Dispatch | None = None,
    vendor_batches: dict[str, dict[str, Any]] | None = None,
    timings: dict[str, dict[str, Any]] | None = None,
) -> tuple[dict[str, Any], dict[str, str], int]:
    """Cached answers of all planned keys (asking the judges for the missing ones).

    Every finished batch is written to the cache at once (a killed run loses at most the batches in
    flight); an HTTP judge (``concurrency`` in its config) is streamed one request per batch with
    ``concurrency`` in flight. A judge with ``batch: true`` goes through the vendor's batch API
    (:mod:`implicit_bench.backends.judges.batch`) in a thread of its own, so its wait for the vendor
    overlaps the other judges' work; what it did is put in ``vendor_batches`` (judge -> batch
    ids submitted and resumed, polls, requests retried item by item, requests still running).
    ``timings`` (when given) gets each dispatched judge's ``judge_timing`` (wall clock: for the
    run log, never a tracked output). Returns ``(answers by key, errors by key, requests sent)``.
    """
    if dispatch is None:
        dispatch = executor_dispatch({}, progress=False)
    lookup = CacheLookup(cache, (p.key for p in planned), decode=_judge_entry)
    answers = lookup.found
    errors: dict[str, str] = {}
    sent = 0
    by_judge: dict[str, dict[str, JudgeCall]] = defaultdict(dict)
    for p in planned:
        if p.key not in answers and p.key not in by_judge[p.judge]:
            by_judge[p.judge][p.key] = JudgeCall(p.key, p.prompt, p.image_sha256, p.store, p.task)

    lock = threading.Lock()  # a batch judge answers from its own thread

    def on_result(batch: list[JudgeCall], results: BatchResult | None, error: str | None) -> None:
        with lock:
            _on_result(batch, results, error)

    def _on_result(batch: list[JudgeCall], results: BatchResult | None, error: str | None) -> None:
        nonlocal sent
        sent += len(batch)
        if results is None:
            for call in batch:
                errors[call.key] = redact(error or "worker failed")
            return
        fresh = []
        for key, text, err in results:
            if err is None and not isinstance(text, str):  # never cache what is not text
                err = f"backend returned {type(text).__name__}, not text"
            if err is None:
                fresh.append((key, {"text": text}))
                answers[key] = {"text": text}
                errors.pop(key, None)
            else:
                errors[key] = redact(err)
        lookup.store(fresh)

    threads: list[threading.Thread] = []
    failures: list[BaseException] = []

    def batch_judge(judge: str, calls: list[JudgeCall]) -> None:
        from implicit_bench.backends.judges.batch import answer_by_batch

        try:
            worker = JudgeWorker(copy.copy(backends[judge]))
            worker.setup()
            done = answer_by_batch(backends[judge], calls, cache, on_result, worker)
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread below
            failures.append(exc)
            return
        if vendor_batches is not None:
            vendor_batches[judge] = {
                "submitted": done.submitted,
                "resumed": done.resumed,
                "polls": done.polls,
                "retried_item_by_item": len(done.retry),
                "still_running": len(done.pending),
                "not_submitted": len(done.failed),
            }

    for judge, todo in by_judge.items():
        if not todo:
            continue
        config = backends[judge].params
        if getattr(config, "batch", False):  # the vendor's batch API (docs/judging.md)
            thread = threading.Thread(
                target=batch_judge, args=(judge, list(todo.values())), daemon=True
            )
            thread.start()
            threads.append(thread)
            continue
        streams = int(getattr(config, "concurrency", None) or 1)  # HTTP judges: streamed
        size = 1 if streams > 1 else max(1, int(getattr(config, "batch_size", 8)))
        calls = list(todo.values())
        batches = [calls[i : i + size] for i in range(0, len(calls), size)]
        extra = {"concurrency": streams} if streams > 1 else {}
        loads: list[float] = []
        start = time.perf_counter()
        dispatch(
            judge,
            partial(_timed_worker, backends[judge], loads),
            batches,
            on_result,
            **extra,
        )
        if timings is not None:
            timings[judge] = judge_timing(time.perf_counter() - start, calls, loads, peak_gpu_gib())
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return answers, errors, sent


# ----- assembling --------------------------------------------------------------------------
def assemble(
    planned: list[PlannedJudgement],
    answers: dict[str, Any],
    errors: dict[str, str],
    models: dict[str, str],
    identities: dict[str, dict[str, Any]] | None = None,
) -> tuple[pd.DataFrame, dict[str, dict[str, dict[str, int]]]]:
    """The JUDGEMENTS table and the per judge x task counts; ``identities`` (judge ->
    ``{identity, decoding}``) fill ``judge_identity`` per judge and task (judge_identity)."""
    from implicit_bench.protocol.judge_identity import identity_text, judge_identity

    tasks = {p.task: load_task(p.task) for p in planned}
    id_texts: dict[tuple[str, str], str | None] = {}
    for p in planned:
        if (p.judge, p.task) not in id_texts:
            ident = (identities or {}).get(p.judge)
            id_texts[p.judge, p.task] = (
                None
                if ident is None
                else identity_text(
                    judge_identity(ident["identity"], ident["decoding"], tasks[p.task].prompt)
                )
            )
    parsed_cache: dict[tuple[str, str], Any] = {}
    rows = []
    counts: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for p in planned:
        task = tasks[p.task]
        answer = answers.get(p.key)
        c = counts[p.judge][p.task]
        c["rows"] += 1
        if answer is None:
            raw, value, valid = None, None, False
            error = f"backend error: {errors.get(p.key, 'not answered')}"
            c["backend_errors"] += 1
        else:
            raw = answer["text"]
            pkey = (p.task, raw)
            parsed = parsed_cache.get(pkey)
            if parsed is None:
                parsed = parsed_cache[pkey] = task.parse(raw)
            valid, error = parsed.valid, parsed.error
            value = task.stored_value(parsed.answer, p.order) if valid else None
            c[f"mode_{parsed.mode}"] += 1
        c["valid" if valid else "invalid"] += 1
        if p.order is not None:
            c[f"order_{p.order}"] += 1
        rows.append(
            {
                "unit_id": p.unit_id,
                "variant": p.variant,
                "seed": p.seed,
                "config": p.config,
                "judge": p.judge,
                "task": p.task,
                "value": value,
                "model": models[p.judge],
                "prompt_hash": p.prompt_hash,
                "image_sha256": p.image_sha256,
                "raw": raw,
                "valid": valid,
                "error": redact(error),  # secrets never reach the table (docs/errors.md)
                "order": p.order,
                "judge_identity": id_texts[p.judge, p.task],
            }
        )
    frame = pd.DataFrame(rows, columns=list(OUTPUT_COLUMNS))
    frame = frame.astype({"seed": "int64", "valid": "bool"})
    frame = frame.sort_values(
        ["config", "unit_id", "variant", "seed", "judge", "task", "order"], na_position="first"
    ).reset_index(drop=True)
    summary = {
        judge: {
            task: {
                "rows": c["rows"],
                "valid": c["valid"],
                "invalid": c["invalid"],
                "invalid_rate": round(c["invalid"] / c["rows"], 6) if c["rows"] else None,
                "strict": c["mode_strict"],
                "lenient": c["mode_lenient"],
                "unparsable": c["invalid"] - c["backend_errors"],
                "backend_errors": c["backend_errors"],
                **(_order_counts(c) if tasks[task].option_order else {}),
            }
            for task, c in sorted(per_task.items())
        }
        for judge, per_task in sorted(counts.items())
    }
    return frame, summary


def _order_counts(c: Counter) -> dict[str, int]:
    """Rows per option order: ``order_sa`` / ``order_as`` always, and every other order asked
    (the three cyclic orders ``order_ans`` / ``order_nsa`` / ``order_san`` under ``cyclic3``)."""
    return {
        "order_sa": c["order_sa"],
        "order_as": c["order_as"],
        **{k: v for k, v in sorted(c.items()) if k.startswith("order_")},
    }


def _model_ref(generator: str) -> str:
    """The model reference in an image index's ``generator`` ("backend:model" or a bare ref)."""
    backend, sep, ref = generator.partition(":")
    return ref if sep and ref and "/" not in backend else generator


def _judge_entry(entry: Any) -> dict[str, str] | None:
    """A cached judge answer ``{"text": ...}``; any other stored value is a miss (asked again)."""
    return entry if isinstance(entry, dict) and isinstance(entry.get("text"), str) else None


# ----- the whole stage ---------------------------------------------------------------------
def run_judge_stage(
    params: JudgeStageParams,
    root: str | Path = ".",
    dispatch: Dispatch | None = None,
    profile: str | None = None,
) -> JudgeRunResult:
    """Plan, answer (cache first), assemble, and write the table and the metrics."""
    root = Path(root)
    backends, identities = judge_backends(params.judges)  # each judge validated and built once
    units = units_by_id(UNITS.read(root / params.units, require=("unit_id",)))
    planned, image_counts, generators = plan_judgements(params, units, identities, root)
    if dispatch is None:
        dispatch = executor_dispatch(params.executor, params.progress)
    cache = DiskCache(root / params.cache)
    batches: dict[str, dict[str, Any]] = {}
    try:
        timings: dict[str, dict[str, Any]] = {}
        answers, errors, calls = answer_missing(
            planned, backends, cache, dispatch, vendor_batches=batches, timings=timings
        )
    finally:
        cache.close()
    first = next(iter(errors.values()), None)
    check_failure_rate("judge", len(errors), calls, params.max_failure_rate, first, kind="judge")
    models = {name: b.model for name, b in backends.items()}
    frame, counts = assemble(planned, answers, errors, models, identities)
    judged = Counter(c for c, *_ in {(p.config, p.unit_id, p.variant, p.seed) for p in planned})
    for config, counts_by_status in image_counts.items():
        counts_by_status["judged_images"] = int(judged.get(config, 0))
        counts_by_status["not_judged"] = counts_by_status["refused"] + counts_by_status["failed"]
    roles = [(f"judge:{name}", model) for name, model in models.items()]
    roles += [
        (f"generator:{c}", _model_ref(g))
        for c, gens in sorted(generators.items())
        for g in sorted(gens)
    ]
    metrics = {
        "judges": {
            name: {"backend": b.backend, "model": b.model} for name, b in sorted(backends.items())
        },
        "tasks": sorted(params.tasks),
        "blind_orders": params.blind_orders,
        "rows": int(len(frame)),
        "invalid": int((~frame["valid"]).sum()) if len(frame) else 0,
        "counts": counts,
        "images": image_counts,
        "provenance": provenance(roles, profile),
        **({"vendor_batches": batches} if batches else {}),  # this run's (docs/judging.md)
    }
    write_judgements(frame, root / params.out)
    write_json(root / params.metrics, metrics)
    hits = len(set(p.key for p in planned)) - calls
    return JudgeRunResult(frame, metrics, calls, max(hits, 0), errors, timings)


__all__ = [
    "OUTPUT_COLUMNS",
    "JudgeCall",
    "JudgeRunResult",
    "JudgeStageParams",
    "JudgeWorker",
    "PlannedJudgement",
    "TaskSelect",
    "answer_missing",
    "assemble",
    "executor_dispatch",
    "make_judge_worker",
    "units_by_id",
    "plan_judgements",
    "run_judge_stage",
]
