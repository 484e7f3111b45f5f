"""The one HTTP retry policy of every HTTP backend (LLM, VLM judge, image API, embedder).

``send(client, method, url, policy, ...)`` makes one logical request:

- each attempt is streamed, and given up when the request's overall ``deadline_s`` passes
  (an attempt given up, by a timeout or the deadline, has its connection closed before the
  request is sent again, so a server that notices stops generating the abandoned answer)
  (a server that trickles a byte a second cannot hold a worker longer than the deadline plus
  one read timeout); ``timeout_s`` still bounds every connect and read;
- it retries only transport errors (connection refused or reset, timeouts, broken answers)
  and HTTP 408, 409, 429 and 5xx; every other status is final at once, and so is a 5xx whose
  body says the server rejected the request itself (a field or type it does not take, as
  llama-cpp-python's ``500 ... Input should be 'text' or 'json_object'`` or ``can only
  concatenate str (not "list")`` for image parts: :func:`rejects_request`), so the retry
  budget is spent on transient failures only;
- before a retry it waits ``Retry-After`` (seconds or an HTTP date; NaN, infinite, negative
  or garbled values are ignored) or else ``backoff_s * 2**(attempt - 1)``, at most
  ``backoff_max_s``, and never past the deadline; at most ``max_attempts`` attempts in all;
- every body is bounded: an answer over ``max_response_bytes`` as sent (``Content-Length`` or
  counted while it streams) or once decompressed (gzip / deflate are decoded here, chunk by
  chunk with a bounded output, so a gzip bomb stops at the bound) fails the request at once,
  without a retry; only ``gzip, deflate`` are accepted;
- with a :class:`implicit_bench.runtime.throttle.Throttle` every attempt waits for an in-flight slot
  and the rpm / tpm quotas (the first attempt's wait is not charged to the deadline, which
  starts when it is sent; per-read timeouts only ever run while a request is on the wire), and
  reports its status back (429 / ``Retry-After``: AIMD decrease,
  a pause of at most ``backoff_max_s``); a quota wait that would pass the deadline fails the
  request at once, unsent. A ``Retry-After`` is read as at most ``MAX_RETRY_AFTER_S`` (a day),
  so every wait is finite, >= 0 and bounded by ``backoff_max_s`` and the deadline.

A request that is not idempotent (``idempotent=False``: a vendor batch create, which may be
billed) is sent again only when the server surely did not act on it: the connection was never
made (``ConnectError``, ``ConnectTimeout``) or it answered 408 / 429. Any other failure (a
read timeout, a dropped connection, a 5xx, the deadline) may have come after the server acted:
the result is marked ``uncertain`` and the caller looks the request up before anything is sent
again (docs/errors.md, "A request that may have been paid for").

``sink``: a binary file the body is written to, chunk by chunk, instead of memory (a vendor
batch's output file: read back line by line, never whole); it is emptied before every attempt.

It returns a :class:`CallResult`: the last response and, unless it is a 2xx, why the call
failed, with secrets redacted (``redact.redact``). It never raises for HTTP or transport
failures, so each backend decides what a failure means (an invalid answer, a failed image,
an exception).
"""

from __future__ import annotations

import email.utils
import math
import os
import re
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, BinaryIO, ClassVar

import httpx
from pydantic import field_validator

from implicit_bench._util.redact import has_userinfo, redact, register_secret_env
from implicit_bench.errors import ConfigError
from implicit_bench.params import NonNegFloat, NonNegInt, PositiveFloat, PositiveInt, StrictModel
from implicit_bench.runtime.throttle import Throttle, WaitTooLong

_sleep = time.sleep  # module level, so tests can record the waits
RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
NOT_ACTED_ON = frozenset({408, 429})  # the server says it did not act: safe to send again
_DROP_HEADERS = ("content-encoding", "content-length", "transfer-encoding")
MAX_RETRY_AFTER_S = 86_400.0  # a longer Retry-After (10**9 s, year 9999) counts as one day


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds of one request: attempts (first included), back-off, per-read timeout, deadline."""

    max_attempts: int = 3
    backoff_s: float = 1.0
    backoff_max_s: float = 60.0
    timeout_s: float = 120.0
    deadline_s: float = 600.0
    max_response_bytes: int = 64 << 20

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        for name in ("backoff_s", "backoff_max_s"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0")
        for name in ("timeout_s", "deadline_s"):
            value = getattr(self, name)
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a finite number > 0")


class HttpParams(StrictModel):
    """The HTTP keys every OpenAI-compatible backend block shares (the ``openai`` LLM and judge,
    the ``openai_images`` generator, the ``openai`` embedder): endpoint, key and the bounds of
    the retry policy. A backend's params model inherits it and may change a default.

    ``chat_completions``: the backend speaks OpenAI's ``POST /chat/completions`` (the
    preflight then may probe the server with a one-token chat request, time two requests at
    once, and probe its structured-output dialect); ``auth_headers``: where the key goes."""

    chat_completions: ClassVar[bool] = False

    base_url: str = "https://api.openai.com/v1"  # the endpoint root
    api_key_env: str | None = (
        "OPENAI_API_KEY"  # env var holding the key; null: no Authorization header
    )
    timeout_s: PositiveFloat = 120.0  # per connect / read
    max_retries: NonNegInt = 5  # attempts after the first (transport errors, 408, 409, 429, 5xx)
    backoff_s: NonNegFloat = 1.0  # wait before retry n: backoff_s * 2**(n-1), or Retry-After
    backoff_max_s: NonNegFloat = 60.0  # longest wait between two attempts
    deadline_s: PositiveFloat = 900.0  # wall-clock budget of one request, retries included
    max_response_bytes: PositiveInt = (
        64 << 20
    )  # bound of an answer body, compressed and decompressed
    max_answer_chars: PositiveInt = 200_000  # longer answer text: an error, never parsed or cached
    rpm: PositiveFloat | None = None  # requests per rate_window_s (API quota); null: no limit
    tpm: PositiveFloat | None = (
        None  # estimated tokens per rate_window_s (throttle.estimate_tokens)
    )
    rate_window_s: PositiveFloat = 60.0  # the quotas' period

    @field_validator("base_url", check_fields=False)
    @classmethod
    def _no_credentials(cls, value: Any) -> Any:
        """A ``user:password@`` in ``base_url`` is refused: params are written to dvc.lock, to
        git and to ``profiles/run.yaml``, so credentials live in environment variables named
        by ``api_key_env``, never in params (docs/errors.md, "Secrets")."""
        if isinstance(value, str) and has_userinfo(value):
            raise ValueError(
                "holds a user name or password (user:password@); params are written to "
                "dvc.lock, git and profiles/run.yaml, so put the credential in an environment "
                "variable and name it in api_key_env (sent in the Authorization header)"
            )
        return value

    @classmethod
    def auth_headers(cls, key: str) -> dict[str, str]:
        """The headers carrying the API key: a bearer token (OpenAI-compatible); a backend whose
        API reads it elsewhere overrides this (the stages' client and the preflight use it)."""
        return {"Authorization": f"Bearer {key}"}

    def retry_policy(self) -> RetryPolicy:
        """The request bounds of :func:`send` from these keys."""
        return RetryPolicy(
            max_attempts=self.max_retries + 1,
            backoff_s=self.backoff_s,
            backoff_max_s=self.backoff_max_s,
            timeout_s=self.timeout_s,
            deadline_s=self.deadline_s,
            max_response_bytes=self.max_response_bytes,
        )

    def throttle(self, concurrency: int) -> Throttle:
        """The flow control of one backend instance: ``concurrency`` in
        flight at most, AIMD, quotas."""
        return Throttle(concurrency, self.rpm, self.tpm, self.rate_window_s)

    def client(self, owner: str, auth: Callable[[str], dict[str, str]]) -> httpx.Client:
        """A JSON client for ``base_url`` carrying the key of
        ``api_key_env`` in the headers ``auth``
        builds from it; a missing key is an error naming ``owner`` (never an unauthenticated
        request), and the key is registered for redaction."""
        headers = {"Content-Type": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ConfigError(f"{owner}: environment variable {self.api_key_env} is not set")
            headers.update(auth(key))
        register_secret_env(self.api_key_env)
        return httpx.Client(
            base_url=self.base_url.rstrip("/"), headers=headers, timeout=self.timeout_s
        )


@dataclass
class CallResult:
    """The outcome of ``send``: the last response (None when none came) and the error."""

    response: httpx.Response | None
    attempts: int
    error: str | None = None
    rejected: bool = False  # the body names what of the request the server does not take
    uncertain: bool = False  # not idempotent, failed after it may have reached the server
    too_large: bool = False  # the body passed max_response_bytes (the same request would too)

    @property
    def ok(self) -> bool:
        return self.response is not None and 200 <= self.response.status_code < 300


class DeadlineExceeded(Exception):
    """The request's overall deadline passed while an answer was still arriving."""


class ResponseTooLarge(Exception):
    """An answer body passed ``max_response_bytes`` (as sent or decompressed)."""


def is_retryable(status: int) -> bool:
    return status in RETRY_STATUS


# what a server's error body says when it rejects the request itself (a field, a type, a value it
# does not take: pydantic / FastAPI validation, a Python TypeError of a server fed a list where it
# wanted text, "not supported"), as opposed to an overloaded or failing server
_REJECTION = re.compile(
    r"unexpected (field|keyword|argument)|extra (inputs|fields)( are)? not permitted"
    r"|extra_forbidden|input should be|field required|missing required|validation error"
    r"|not supported|unsupported|does not support|unknown (field|parameter|argument|key)"
    r"|unrecognized (field|parameter|argument|key)|invalid (type|parameter|argument|schema)"
    r"|invalid_request_error|can only concatenate|not a multimodal|typeerror",
    re.IGNORECASE,
)


def rejects_request(response: httpx.Response) -> bool:
    """A 4xx or 5xx whose body names something of the request the server does not take (the same
    request would fail again): never retried. 408, 409 and 429 are always transient."""
    if response.status_code < 400 or response.status_code in (408, 409, 429):
        return False
    try:
        text = response.text[:4000]
    except Exception:  # noqa: BLE001 - an undecodable body says nothing
        return False
    return bool(_REJECTION.search(text))


def retry_after_s(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for, or None when absent or unusable."""
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        try:
            seconds = (when - (now or datetime.now(UTC))).total_seconds()
        except OverflowError:  # a date at the edge of datetime's range
            return None
        seconds = max(seconds, 0.0)
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return min(seconds, MAX_RETRY_AFTER_S)


def backoff_delay(policy: RetryPolicy, attempt: int, response: httpx.Response | None) -> float:
    """Wait before attempt ``attempt + 1``: Retry-After or exponential back-off, capped."""
    after = retry_after_s(response.headers.get("Retry-After")) if response is not None else None
    wait = after if after is not None else policy.backoff_s * 2.0 ** min(attempt - 1, 64)
    return max(0.0, min(wait, policy.backoff_max_s))


def describe(response: httpx.Response) -> str:
    """``HTTP <status>: <start of the body>`` (redacted)."""
    try:
        text = response.text
    except Exception:  # noqa: BLE001 - an undecodable body is still an error to report
        text = repr(response.content[:300])
    return redact(f"HTTP {response.status_code}: {' '.join(text.split())[:300]}")


def _decoder(encoding: str) -> Any:
    """A zlib decompressor for a Content-Encoding (None: identity)."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    raise httpx.DecodingError(f"unsupported Content-Encoding {encoding!r}")


def read_bounded(
    chunks: Any,
    encoding: str,
    limit: int,
    check: Callable[[], None] = lambda: None,
    sink: BinaryIO | None = None,
) -> bytes:
    """The decoded body of raw ``chunks``; :class:`ResponseTooLarge` past ``limit`` bytes, as
    sent or decoded (each decompression step asks for at most the bytes left, so a bomb
    never expands in memory). ``check()`` runs after every chunk (the deadline). With
    ``sink`` the decoded chunks are written there and ``b""`` is returned."""
    decoder = _decoder(encoding)
    out: list[bytes] = []
    raw = size = 0

    def add(data: bytes) -> None:
        nonlocal size
        size += len(data)
        if size > limit:
            raise ResponseTooLarge(
                f"answer larger than max_response_bytes={limit} once decompressed"
            )
        if sink is None:
            out.append(data)
        else:
            sink.write(data)

    for chunk in chunks:
        raw += len(chunk)
        if raw > limit:
            raise ResponseTooLarge(f"answer larger than max_response_bytes={limit}")
        if decoder is None:
            add(chunk)
        else:
            try:
                add(decoder.decompress(chunk, limit - size + 1))
                while decoder.unconsumed_tail:
                    add(decoder.decompress(decoder.unconsumed_tail, limit - size + 1))
            except zlib.error as exc:
                raise httpx.DecodingError(f"undecodable {encoding} body: {exc}") from None
        check()
    if decoder is not None:
        try:
            add(decoder.flush())
        except zlib.error as exc:
            raise httpx.DecodingError(f"undecodable {encoding} body: {exc}") from None
    return b"".join(out)


def _attempt(
    client: httpx.Client,
    method: str,
    url: str,
    deadline: float,
    policy: RetryPolicy,
    clock: Callable[[], float],
    sink: BinaryIO | None = None,
    **kwargs: Any,
) -> httpx.Response:
    if sink is not None:  # a retry starts the body afresh
        sink.seek(0)
        sink.truncate()
    remaining = max(deadline - clock(), 0.001)
    timeout = httpx.Timeout(min(policy.timeout_s, remaining))
    # raw: the requests keyword arguments, not params
    kwargs["headers"] = {**dict(kwargs.get("headers") or {}), "Accept-Encoding": "gzip, deflate"}
    with client.stream(method, url, timeout=timeout, **kwargs) as streamed:
        declared = streamed.headers.get("content-length", "")
        if declared.strip().isdigit() and int(declared) > policy.max_response_bytes:
            raise ResponseTooLarge(
                f"answer of {int(declared)} bytes > max_response_bytes={policy.max_response_bytes}"
            )

        def check() -> None:
            if clock() > deadline:
                raise DeadlineExceeded(
                    f"answer still arriving when the {policy.deadline_s:g} s deadline passed"
                )

        content = read_bounded(
            streamed.iter_raw(),
            streamed.headers.get("content-encoding", ""),
            policy.max_response_bytes,
            check,
            sink,
        )
        headers = [
            (k, v) for k, v in streamed.headers.multi_items() if k.lower() not in _DROP_HEADERS
        ]
        return httpx.Response(
            streamed.status_code, headers=headers, content=content, request=streamed.request
        )


def send(
    client: httpx.Client,
    method: str,
    url: str,
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    throttle: Throttle | None = None,
    tokens: float = 0.0,
    idempotent: bool = True,
    sink: BinaryIO | None = None,
    **kwargs: Any,
) -> CallResult:
    """One request under ``policy`` (see the module docstring); ``kwargs`` go to httpx.

    ``throttle``: the backend's flow control (every attempt holds a slot; ``tokens`` is the
    request's estimated token count for a ``tpm`` quota). ``idempotent=False``: sent again
    only when it surely did not reach the server; else the result is ``uncertain``.
    ``sink``: the body goes to this binary file, not to memory."""
    kwargs["sink"] = sink
    deadline = clock() + policy.deadline_s
    last_error = "no attempt made"
    response: httpx.Response | None = None
    for attempt in range(1, policy.max_attempts + 1):
        response = None
        try:
            if throttle is None:
                response = _attempt(client, method, url, deadline, policy, clock, **kwargs)
            else:
                max_wait = deadline - clock()
                with throttle.slot(tokens, pause=attempt == 1, max_wait=max_wait) as sent_at:
                    if attempt == 1:  # time queued client-side is not the request's: its
                        deadline = sent_at + policy.deadline_s  # deadline starts when sent
                    try:
                        response = _attempt(client, method, url, deadline, policy, clock, **kwargs)
                    finally:
                        after = (
                            None
                            if response is None
                            else retry_after_s(response.headers.get("Retry-After"))
                        )
                        throttle.on_answer(
                            sent_at,
                            None if response is None else response.status_code,
                            None if after is None else min(after, policy.backoff_max_s),
                        )
        except WaitTooLong as exc:
            return CallResult(
                None, attempt, redact(f"deadline of {policy.deadline_s:g} s: {exc} (not sent)")
            )
        except DeadlineExceeded as exc:
            return CallResult(
                None,
                attempt,
                redact(f"deadline exceeded after {attempt} attempt(s): {exc}"),
                uncertain=not idempotent,
            )
        except ResponseTooLarge as exc:
            return CallResult(None, attempt, redact(f"{exc} (not retried)"), too_large=True)
        except (httpx.TransportError, httpx.DecodingError) as exc:
            last_error = redact(
                f"transport error: {type(exc).__name__}: {' '.join(str(exc).split())}"
            )
            if not idempotent and not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
                return CallResult(None, attempt, last_error, uncertain=True)
        else:
            if 200 <= response.status_code < 300:
                return CallResult(response, attempt)
            last_error = describe(response)
            if not idempotent and response.status_code not in NOT_ACTED_ON:
                uncertain = is_retryable(response.status_code)  # a 5xx: it may have acted
                return CallResult(response, attempt, last_error, uncertain=uncertain)
            if not is_retryable(response.status_code):
                return CallResult(response, attempt, last_error, rejects_request(response))
            if rejects_request(response):
                return CallResult(
                    response,
                    attempt,
                    f"{last_error} (the server rejected the request: not retried)",
                    rejected=True,
                )
        if attempt == policy.max_attempts:
            break
        wait = backoff_delay(policy, attempt, response)
        if clock() + wait >= deadline:
            return CallResult(
                response,
                attempt,
                f"deadline of {policy.deadline_s:g} s reached after "
                f"{attempt} attempts; last: {last_error}",
            )
        (sleep or _sleep)(wait)
    return CallResult(
        response,
        policy.max_attempts,
        f"gave up after {policy.max_attempts} attempts; last: {last_error}",
    )
