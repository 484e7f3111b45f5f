"""Every wait of one HTTP request is finite, >= 0 and bounded by the deadline and a cap:
Retry-After (seconds, huge, an HTTP date up to year 9999, garbage), the throttle's pause after
it, and the rpm / tpm quota waits (httpretry.send, throttle.Throttle)."""

from __future__ import annotations

import math
import time

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from implicit_bench.runtime import httpretry
from implicit_bench.runtime.httpretry import MAX_RETRY_AFTER_S, RetryPolicy, backoff_delay, send
from implicit_bench.runtime.throttle import Throttle


def _client(script: list[tuple[int, dict[str, str]]]) -> httpx.Client:
    answers = iter(script)

    def handler(request: httpx.Request) -> httpx.Response:
        status, headers = next(answers)
        return httpx.Response(status, headers=headers, stream=httpx.ByteStream(b"{}"))

    return httpx.Client(base_url="http://test", transport=httpx.MockTransport(handler))


_HEADERS = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(
        [
            "1000000000",
            "1e400",
            "-1e400",
            "-0",
            "Fri, 31 Dec 9999 23:59:59 GMT",
            "Fri, 31 Dec 9999 23:59:59 -1200",
            "Mon, 01 Jan 0001 00:00:00 +1400",
            "Wed, 21 Oct 2015 07:28:00 GMT",
            "soon",
            "",
            "\x00\xff",
        ]
    ),
    st.datetimes().map(lambda d: d.strftime("%a, %d %b %Y %H:%M:%S GMT")),
    st.text(max_size=40),
)


@settings(max_examples=300, deadline=None)
@given(header=_HEADERS, attempt=st.integers(min_value=1, max_value=10_000))
def test_retry_after_fuzz_wait_is_finite_non_negative_and_capped(header, attempt):
    policy = RetryPolicy(backoff_s=1.0, backoff_max_s=60.0)
    after = httpretry.retry_after_s(header)
    assert after is None or (math.isfinite(after) and 0 <= after <= MAX_RETRY_AFTER_S)
    response = httpx.Response(
        429, headers={"Retry-After": header} if header.isascii() and header.isprintable() else {}
    )
    wait = backoff_delay(policy, attempt, response)
    assert math.isfinite(wait) and 0 <= wait <= policy.backoff_max_s


def test_huge_retry_after_never_holds_the_next_request_past_backoff_max():
    """Retry-After 10**9 on a 429: the retry waits backoff_max_s, and the throttle's pause for
    the next request is at most backoff_max_s too (was 10**9 s: the judge stage hung)."""
    waits: list[float] = []
    throttle = Throttle(2, sleep=waits.append)
    policy = RetryPolicy(max_attempts=2, backoff_max_s=2.0, deadline_s=30.0)
    client = _client([(429, {"Retry-After": "1000000000"}), (200, {}), (200, {})])
    assert send(client, "GET", "/x", policy, sleep=waits.append, throttle=throttle).ok
    assert throttle.pause_until - time.monotonic() <= 2.0
    assert send(client, "GET", "/x", policy, sleep=waits.append, throttle=throttle).ok
    assert waits and all(0 <= w <= 2.0 for w in waits)


def test_year_9999_retry_after_is_no_overflow():
    waits: list[float] = []
    policy = RetryPolicy(max_attempts=2, backoff_max_s=5.0, deadline_s=30.0)
    client = _client([(503, {"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"}), (200, {})])
    throttle = Throttle(1, sleep=waits.append)
    assert send(client, "GET", "/x", policy, sleep=waits.append, throttle=throttle).ok
    assert waits == [5.0]


def test_tpm_quota_wait_past_the_deadline_fails_unsent_at_once():
    """A tpm quota that would make the first request wait 68 s under deadline_s 5 fails the
    request at once (was: slept 68 s, then sent past its deadline); the quota is given back."""
    waits: list[float] = []
    throttle = Throttle(1, tpm=1000, sleep=waits.append)
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, stream=httpx.ByteStream(b"{}"))

    client = httpx.Client(base_url="http://test", transport=httpx.MockTransport(handler))
    policy = RetryPolicy(deadline_s=5.0)
    result = send(client, "GET", "/x", policy, sleep=waits.append, throttle=throttle, tokens=1130)
    assert not result.ok and not sent and not waits
    assert "deadline of 5 s" in result.error and "not sent" in result.error
    assert throttle.tokens.tokens > 0  # refunded: a small request still goes at once
    assert send(client, "GET", "/x", policy, sleep=waits.append, throttle=throttle, tokens=1).ok
    assert throttle.in_flight == 0
