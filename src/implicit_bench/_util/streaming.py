"""Streaming execution: keep ``concurrency`` calls in flight, hand each result over as it arrives.

``stream_map(items, fn, concurrency, on_done)`` runs ``fn(item)`` in up to ``concurrency``
threads and calls ``on_done(item, value, error)`` **in the calling thread** the moment each
call finishes, then starts the next item: there is no batch barrier (a slow request holds one
slot, never the others), and the caller writes every answer (cache, image store) as soon as it
exists, so a killed run loses at most the calls in flight. Used by every HTTP backend path
(judge, LLM, image generator, embedder); with ``concurrency`` 1 it is a plain loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

T = TypeVar("T")


def stream_map(
    items: Iterable[T],
    fn: Callable[[T], Any],
    concurrency: int,
    on_done: Callable[[T, Any, BaseException | None], None],
) -> None:
    """``fn`` over ``items`` with ``concurrency`` in flight; ``on_done`` per result, in this thread.

    An exception raised by ``fn`` is passed to ``on_done`` as ``error``; one raised by
    ``on_done`` stops the run (the calls in flight finish, nothing new starts) and propagates.
    """
    iterator = iter(items)
    if concurrency <= 1:
        for item in iterator:
            try:
                value, error = fn(item), None
            except Exception as exc:  # noqa: BLE001 - handed to on_done
                value, error = None, exc
            on_done(item, value, error)
        return
    pending: dict[Future, T] = {}
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="stream") as pool:
        try:
            for item in iterator:
                pending[pool.submit(fn, item)] = item
                if len(pending) >= concurrency:
                    _drain(pending, on_done, FIRST_COMPLETED)
            while pending:
                _drain(pending, on_done, FIRST_COMPLETED)
        finally:
            for future in pending:
                future.cancel()


def _drain(pending: dict[Future, Any], on_done: Callable, when: str) -> None:
    done, _ = wait(list(pending), return_when=when)
    for future in done:
        item = pending.pop(future)
        error = future.exception()
        on_done(item, None if error is not None else future.result(), error)
