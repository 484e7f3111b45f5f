"""Client-side flow control of one HTTP backend: rpm / tpm quotas and an AIMD concurrency window.

One :class:`Throttle` per backend instance (one catalogue entry in one process) is shared by
all of its request threads; :func:`implicit_bench.runtime.httpretry.send` asks it before every
attempt:

- **rate limits** (``rpm``, ``tpm``): token buckets that refill at 98% of the quota per
  ``rate_window_s`` (60 s) and bank at most 1% of it (at least one request), so requests
  leave evenly spaced, a client that fell behind (a busy CPU) catches up by that much, and no
  window of ``rate_window_s`` holds more than 99% of the quota as sent (the last 1% absorbs the
  delay between our send and the server's count: 0.6 s in a 60 s window). The bucket starts
  with one request, so a run never starts with a burst;
- **AIMD window**: at most ``window`` requests in flight (starts at ``concurrency``). An HTTP
  429 or an answer with ``Retry-After`` halves it (at most once per round trip: only a request sent
  after the last decrease can lower it again) and pauses new requests (not retries, which wait their
  own back-off) until ``Retry-After`` has passed; each success then adds ``1 / window`` (one request
  per round trip of the full window) until ``concurrency`` is reached again. A 429 storm slows the
  run and fails nothing: the request itself is retried under the one retry policy.

A request's token count is estimated before it is sent (``estimate_tokens``: characters / 4
of the request body without inline images, plus its ``max_tokens``), which over-counts the
usual answer, so ``tpm`` is kept conservatively.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

HEADROOM = (
    0.98  # fraction of a quota the buckets refill at (the rest absorbs send-to-arrival jitter)
)


class WaitTooLong(Exception):
    """A quota or Retry-After wait longer than the time the request has left (its deadline)."""


class TokenBucket:
    """``rate`` tokens per second, at most ``capacity`` banked; ``take(n)`` waits for them."""

    def __init__(self, rate: float, capacity: float, clock: Callable[[], float] = time.monotonic):
        self.rate = rate
        self.capacity = max(capacity, 1.0)
        self.clock = clock
        self.tokens = min(1.0, self.capacity)  # start with one request's worth: no start-up burst
        self.stamp = clock()

    def reserve(self, n: float) -> float:
        """Take ``n`` tokens now (going into debt if needed); seconds to wait before sending."""
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        self.tokens -= n
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate

    def refund(self, n: float) -> None:
        """Give back a reservation that was not used (the request was not sent)."""
        self.tokens = min(self.capacity, self.tokens + n)


class Throttle:
    """Rate buckets and an AIMD in-flight window shared by one backend's threads."""

    def __init__(
        self,
        concurrency: int,
        rpm: float | None = None,
        tpm: float | None = None,
        rate_window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.max_window = max(1, int(concurrency))
        self.window = float(self.max_window)
        self.clock = clock
        self.sleep = sleep
        burst = (1 - HEADROOM) / 2  # banked at most: 1% of a quota, so a window holds <= 99% of it
        self.requests = (
            TokenBucket(rpm * HEADROOM / rate_window_s, rpm * burst, clock) if rpm else None
        )
        self.tokens = (
            TokenBucket(tpm * HEADROOM / rate_window_s, tpm * burst, clock) if tpm else None
        )
        self._cond = threading.Condition()
        self._lock = threading.Lock()  # the buckets: reservations are made in sending order
        self.in_flight = 0
        self.peak_in_flight = 0
        self.pause_until = 0.0
        self.last_decrease = -math.inf
        self.decreases = 0

    @contextmanager
    def slot(self, tokens: float = 0.0, pause: bool = True, max_wait: float = math.inf) -> Any:
        """Hold one in-flight slot (waiting for the window and the quotas); yields the send time.
        ``pause``: also wait out a ``Retry-After`` pause (a retry has already waited its own).
        ``max_wait``: the time the request has left; a longer quota / pause wait raises
        :class:`WaitTooLong` at once (the reservation given back), never a sleep past it."""
        with self._cond:
            while self.in_flight >= max(1, math.floor(self.window)):
                self._cond.wait()
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            self._wait_quota(tokens, pause, max_wait)
            yield self.clock()
        finally:
            with self._cond:
                self.in_flight -= 1
                self._cond.notify_all()

    def _wait_quota(self, tokens: float, pause: bool, max_wait: float = math.inf) -> None:
        with self._lock:
            wait = max(self.pause_until - self.clock(), 0.0) if pause else 0.0
            if self.requests is not None:
                wait = max(wait, self.requests.reserve(1.0))
            if self.tokens is not None and tokens > 0:
                wait = max(wait, self.tokens.reserve(tokens))
            if wait > max_wait:
                if self.requests is not None:
                    self.requests.refund(1.0)
                if self.tokens is not None and tokens > 0:
                    self.tokens.refund(tokens)
                raise WaitTooLong(
                    f"the rate quota / Retry-After pause asks for a {wait:.3g} s wait, "
                    f"more than the {max(max_wait, 0.0):.3g} s left"
                )
        if wait > 0:
            self.sleep(wait)

    def on_answer(self, sent_at: float, status: int | None, retry_after: float | None) -> None:
        """Adjust the window after an attempt: decrease on 429 / Retry-After, else increase."""
        throttled = status == 429 or (
            retry_after is not None and status is not None and status >= 400
        )
        with self._cond:
            if throttled:
                if retry_after:
                    with self._lock:
                        self.pause_until = max(self.pause_until, self.clock() + retry_after)
                if sent_at > self.last_decrease:  # once per round trip
                    self.window = max(1.0, self.window / 2)
                    self.last_decrease = self.clock()
                    self.decreases += 1
            elif status is not None and 200 <= status < 300 and self.window < self.max_window:
                self.window = min(float(self.max_window), self.window + 1.0 / self.window)
                self._cond.notify_all()


def estimate_tokens(body: Any, max_tokens: int = 0) -> int:
    """Characters / 4 of a JSON request body, inline ``data:`` images left
    out, plus ``max_tokens``."""
    chars = 0
    stack = [body]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str):
            chars += (
                85 * 4 if value.startswith("data:") else len(value)
            )  # an image: about 85 tokens
    return math.ceil(chars / 4) + int(max_tokens)
