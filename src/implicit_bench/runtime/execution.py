"""A small executor for model work items: in-process by default, or Ray actors on a cluster.

Used by ``render`` (image generation) and ``judge`` (VLM calls)::

    def make_worker():                 # picklable; called once per process / Ray actor
        model = load_model(...)        # the model is loaded once per worker
        return model.run_batch         # worker(payload) -> value

    stats = run_items(items, make_worker, ExecutorConfig(), on_outcome=write_it)

``items`` are ``WorkItem(id, payload)``; every outcome (success or final failure) is handed to
``on_outcome`` **in the driver process**, which does all writing, so the in-process and Ray
executors write identical results (only the completion order differs). A worker exception is
retried up to ``max_attempts`` times in total; then the item's outcome carries the error and
the run goes on. With Ray, a crashed actor is restarted and its item retried the same way; an
item sent to an actor that is being restarted (its node was lost) waits for it, up to a minute,
without using an attempt.
Progress and ETA are shown with tqdm on stderr.

``concurrency`` > 1 (HTTP backends: the backend's ``concurrency``) streams the items
(:mod:`implicit_bench._util.streaming`): in process, one shared worker answers that many items at
once in threads; with Ray, each actor is a threaded actor taking that many at once. Every
outcome still reaches ``on_outcome`` in the driver as soon as it is known.
"""

from __future__ import annotations

import os
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from implicit_bench._util.redact import redact
from implicit_bench.params import NonNegFloat, PositiveInt, StrictModel


class ExecutorConfig(StrictModel):
    """How work items are dispatched (params: ``render.executor``, ``judge.executor``)."""

    kind: Literal["local", "ray"] = "local"
    # Ray cluster address ("auto", "ray://head:10001"); None: the one RAY_ADDRESS names if set,
    # else a new local Ray (never a cluster that merely runs on the machine: docs/gpu.md)
    address: str | None = None
    workers: PositiveInt = 1  # Ray actors (each loads the model once)
    num_gpus: NonNegFloat = 0  # per actor
    num_cpus: NonNegFloat = 1  # per actor
    # per actor: custom Ray resources a node must offer (e.g. {"a100": 1} on `ray start
    # --resources='{"a100": 1}'` nodes), so GPU work lands only where the hardware is
    resources: dict[str, NonNegFloat] = {}
    max_in_flight: PositiveInt = 2  # items queued per actor (keeps GPUs busy while results travel)
    runtime_env: dict[str, Any] | None = (
        None  # Ray runtime_env (e.g. working_dir, pip) for clusters
    )
    max_attempts: PositiveInt = 3  # tries per item, first one included
    retry_backoff_s: NonNegFloat = 0.0  # sleep before a retry, times the attempt number
    progress: bool = True


@dataclass(frozen=True)
class WorkItem:
    id: str
    payload: Any


@dataclass
class Outcome:
    item: WorkItem
    value: Any = None
    error: str | None = None
    attempts: int = 1

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class RunStats:
    items: int = 0
    ok: int = 0
    failed: int = 0
    retries: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)  # first few final errors, for the log

    def as_dict(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "ok": self.ok,
            "failed": self.failed,
            "retries": self.retries,
            "seconds": round(self.seconds, 3),
        }


Worker = Callable[[Any], Any]
RESTART_WAITS, RESTART_WAIT_S = 240, 0.25  # an item waits up to a minute for a restarting actor


def describe_error(exc: BaseException) -> str:
    """``Type: message (file:line)`` of the innermost frame: short, enough to act on."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" ({frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno})" if frames else ""
    return redact(f"{type(exc).__name__}: {exc}{where}"[:2000])


def run_items(
    items: Sequence[WorkItem],
    make_worker: Callable[[], Worker],
    config: ExecutorConfig | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    desc: str = "items",
    concurrency: int = 1,
) -> RunStats:
    """Run ``make_worker()(item.payload)`` for every item; hand each outcome to ``on_outcome``
    (``concurrency``: items in flight at once per worker, see the module docstring)."""
    config = config or ExecutorConfig()
    on_outcome = on_outcome or (lambda outcome: None)
    stats = RunStats(items=len(items))
    if not items:
        return stats
    start = time.perf_counter()
    runner = _run_ray if config.kind == "ray" else _run_local
    with _progress(len(items), desc, config.progress) as bar:

        def finish(outcome: Outcome) -> None:
            if outcome.ok:
                stats.ok += 1
            else:
                stats.failed += 1
                if len(stats.errors) < 5:
                    stats.errors.append(f"{outcome.item.id}: {outcome.error}")
            stats.retries += outcome.attempts - 1
            on_outcome(outcome)
            bar.update(1)

        runner(items, make_worker, config, finish, max(1, int(concurrency)))
    stats.seconds = time.perf_counter() - start
    return stats


def _progress(total: int, desc: str, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, mininterval=2.0, smoothing=0.1)


#: the prefix of a recorded error that trying again cannot mend (``is_deterministic``)
DETERMINISTIC = "deterministic: "


def is_deterministic(exc: BaseException) -> bool:
    """An error the same request meets again: a field of its input refused (an ``InputError``
    naming the field, e.g. a unit the world does not know), a ``ConfigError``, or an HTTP answer
    in 4xx that is not a retryable status (408, 409, 429): the item is failed at once instead of
    tried ``max_attempts`` times. An ``InputError`` about a whole file (a cache whose write lock
    another process holds) may pass on its own: retried."""
    from implicit_bench.errors import ConfigError, InputError

    if isinstance(exc, ConfigError) or (isinstance(exc, InputError) and exc.field is not None):
        return True
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if isinstance(status, int) and 400 <= status < 500:
        from implicit_bench.runtime.httpretry import is_retryable

        return not is_retryable(status)
    return False


def _call(worker: Worker, payload: Any) -> tuple[Any, str | None]:
    try:
        return worker(payload), None
    except Exception as exc:  # noqa: BLE001 - every worker failure is recorded, not raised
        error = describe_error(exc)
        return None, DETERMINISTIC + error if is_deterministic(exc) else error


def _final(error: str | None, attempt: int, config: ExecutorConfig) -> bool:
    """No further attempt: success, a deterministic error, or the attempts used up."""
    return error is None or error.startswith(DETERMINISTIC) or attempt >= config.max_attempts


def _run_local(
    items: Sequence[WorkItem],
    make_worker: Callable[[], Worker],
    config: ExecutorConfig,
    finish: Callable,
    concurrency: int = 1,
) -> None:
    from implicit_bench._util.streaming import stream_map

    worker = make_worker()

    def attempts(item: WorkItem) -> Outcome:
        attempt = 0
        while True:
            attempt += 1
            value, error = _call(worker, item.payload)
            if _final(error, attempt, config):
                return Outcome(item, value, error, attempt)
            if config.retry_backoff_s:
                time.sleep(config.retry_backoff_s * attempt)

    def done(item: WorkItem, outcome: Outcome | None, exc: BaseException | None) -> None:
        finish(outcome if exc is None else Outcome(item, None, describe_error(exc), 1))

    try:
        stream_map(items, attempts, concurrency, done)
    finally:
        close = getattr(getattr(worker, "__self__", None), "close", None)
        if callable(close):
            close()


def _ray_actor_class(ray: Any) -> Any:
    class _Actor:
        def __init__(self, make_worker: Callable[[], Worker]):
            self.work_fn = make_worker()

        def ready(self) -> bool:
            return True

        def run(self, payload: Any) -> tuple[Any, str | None]:
            return _call(self.work_fn, payload)

    return ray.remote(_Actor)


def ray_address(address: str | None) -> str:
    """What ``ray.init`` is given for ``executor.address``: the address itself; when it is
    unset, the cluster ``RAY_ADDRESS`` names (a `ray job submit` driver, a user's choice), else
    ``"local"``, a new local Ray. Ray's own default would join whatever cluster was started
    last on the machine (``/tmp/ray/ray_current_cluster``), e.g. another user's or another
    test's, and lose its actors when that cluster stops."""
    return address or os.environ.get("RAY_ADDRESS") or "local"


def _run_ray(
    items: Sequence[WorkItem],
    make_worker: Callable[[], Worker],
    config: ExecutorConfig,
    finish: Callable,
    concurrency: int = 1,
) -> None:
    import ray

    started_here = False
    if not ray.is_initialized():
        init_kwargs: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": True,
            "address": ray_address(config.address),
        }
        if config.runtime_env:
            init_kwargs["runtime_env"] = config.runtime_env
        ray.init(**init_kwargs)
        started_here = True
    actor_cls = _ray_actor_class(ray).options(
        num_gpus=config.num_gpus,
        num_cpus=config.num_cpus,
        max_restarts=config.max_attempts,
        max_task_retries=0,
        **({"resources": dict(config.resources)} if config.resources else {}),
        **({"max_concurrency": concurrency} if concurrency > 1 else {}),
    )
    per_actor = max(config.max_in_flight, concurrency)
    # an actor being restarted (its node died) answers ActorUnavailableError: wait, do not count
    restarting = getattr(ray.exceptions, "ActorUnavailableError", ())
    waits: dict[str, int] = {}
    actors = [actor_cls.remote(make_worker) for _ in range(max(1, config.workers))]
    queue: deque[tuple[WorkItem, int]] = deque((item, 1) for item in items)
    pending: dict[Any, tuple[WorkItem, int, Any]] = {}
    load = {i: 0 for i in range(len(actors))}
    try:
        ray.get([a.ready.remote() for a in actors])  # model load errors surface here, once
        while queue or pending:
            for idx, actor in enumerate(actors):
                while queue and load[idx] < per_actor:
                    item, attempt = queue.popleft()
                    pending[actor.run.remote(item.payload)] = (item, attempt, idx)
                    load[idx] += 1
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                item, attempt, idx = pending.pop(ref)
                load[idx] -= 1
                try:
                    value, error = ray.get(ref)
                except (
                    restarting
                ) as exc:  # its node was lost and Ray restarts it: not the item's fault
                    waits[item.id] = waits.get(item.id, 0) + 1
                    if waits[item.id] <= RESTART_WAITS:
                        time.sleep(RESTART_WAIT_S)
                        queue.appendleft(
                            (item, attempt)
                        )  # the same attempt, on whichever actor is up
                        continue
                    value, error = (
                        None,
                        redact(f"worker unavailable: {type(exc).__name__}: {str(exc)[:500]}"),
                    )
                except ray.exceptions.RayError as exc:  # actor died (OOM, segfault): retried
                    value, error = (
                        None,
                        redact(f"worker crashed: {type(exc).__name__}: {str(exc)[:500]}"),
                    )
                if _final(error, attempt, config):
                    finish(Outcome(item, value, error, attempt))
                else:
                    if config.retry_backoff_s:
                        time.sleep(config.retry_backoff_s * attempt)
                    queue.appendleft((item, attempt + 1))
    finally:
        for actor in actors:
            ray.kill(actor)
        if started_here:
            ray.shutdown()
