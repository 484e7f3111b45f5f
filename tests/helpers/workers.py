"""Workers for the executor tests, in-process and on Ray workers (which import them by name:
they cannot live in a test module)."""

from __future__ import annotations

import time


class FlakyWorker:
    """Squares numbers; fails the first ``fail_times`` calls for each payload in ``flaky``."""

    def __init__(self, flaky: dict[int, int]):
        self.flaky = dict(flaky)
        self.calls: dict[int, int] = {}

    def __call__(self, x: int) -> int:
        self.calls[x] = self.calls.get(x, 0) + 1
        if self.calls[x] <= self.flaky.get(x, 0):
            raise RuntimeError(f"boom {x}")
        return x * x


def make_flaky(flaky: dict[int, int]) -> FlakyWorker:
    return FlakyWorker(flaky)


def node_worker():
    """A worker that answers with the id of the node it runs on (after a short wait)."""
    import ray

    node = ray.get_runtime_context().get_node_id()

    def work(payload):
        time.sleep(0.05)
        return {"item": payload, "node": node}

    return work
