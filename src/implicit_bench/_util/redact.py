"""Secrets out of every stored or printed error text (docs/errors.md).

``redact(text)`` replaces with ``[REDACTED]``: the value of an ``Authorization`` header
(any scheme), bearer tokens, ``api_key`` / ``api-key`` / ``x-api-key`` / ``token`` /
``secret`` / ``password`` values (``key=value``, ``key: value`` and JSON ``"key": "value"``),
OpenAI-style ``sk-...`` keys, and the literal value of every environment variable whose name
looks like a credential (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``) or is
named by a backend's ``api_key_env`` (those at any length), and the ``user:password@`` of
every URL (``url(text)`` does only that, for the lines that print a URL). Error texts from
HTTP servers pass through it before they reach a table, a journal, a metrics file or the
terminal.
"""

from __future__ import annotations

import os
import re
from typing import Any

MASK = "[REDACTED]"
_SECRET_ENV = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
_NAMES = (
    r"(?:api[_-]?key|x-api-key|access[_-]?token|auth[_-]?token|"
    r"token|secret|password|client[_-]?secret)"
)
_PATTERNS = (
    # Authorization: <scheme> <credentials>  (header echo, or JSON "authorization": "...")
    re.compile(r"(?i)(\"?authorization\"?\s*[:=]\s*\"?)([^\"\n,;}]+)"),
    re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/=-]+)"),
    re.compile(r"(?i)(\bbasic\s+)([A-Za-z0-9+/=]{8,})"),
    re.compile(r"(?i)(\"?\b" + _NAMES + r"\b\"?\s*[:=]\s*\"?)([^\"\s,;&}]+)"),
    re.compile(r"()(\bsk-[A-Za-z0-9_-]{8,})"),
)
_extra: set[str] = set()


def register_secret_env(name: str | None) -> None:
    """Also redact the value of environment variable ``name`` (a backend's ``api_key_env``)."""
    if name:
        _extra.add(name)


def _secret_values() -> list[str]:
    """Values of credential-looking variables (6+ characters: a guess by name) and of every
    registered ``api_key_env``, whatever its length (a 4-character key was printed)."""
    guessed = {os.environ.get(n, "") for n in os.environ if _SECRET_ENV.search(n)}
    registered = {os.environ.get(n, "") for n in _extra}
    values = {v for v in guessed if len(v) >= 6} | {v for v in registered if v.strip()}
    return sorted(values, key=len, reverse=True)


# scheme://user:password@host. The scheme is bounded and not anchored on a word boundary: an
# unbounded ``[a-z0-9+.-]*`` rescanned every ``x-x-x-...`` run to its end from each boundary
# (quadratic: a 200 KB answer cell took 81 s to print); its tail is matched instead, and the
# text before a match is kept as it is, so the output is the same.
_USERINFO = re.compile(r"(?i)([a-z][a-z0-9+.-]{0,31}://)[^\s/@]+@")


def strip_userinfo(text: str) -> str:
    """URLs with their ``user:password@`` part replaced by ``[REDACTED]@``."""
    return _USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)


def has_userinfo(text: str) -> bool:
    """Whether ``text`` holds a URL with a ``user[:password]@`` part."""
    return _USERINFO.search(text) is not None


def url(text: object) -> str:
    """A URL (or a line holding URLs) as it may be printed: ``user:password@`` replaced by
    ``[REDACTED]@``. Every printed URL goes through it (the preflight lines of ``check``, of
    each model stage and of ``run``), not only error texts."""
    return strip_userinfo(str(text))


def redact(text: str | None) -> str | None:
    """``text`` with every secret replaced by ``[REDACTED]`` (None stays None)."""
    if text is None:
        return None
    text = strip_userinfo(str(text))
    for value in _secret_values():
        text = text.replace(value, MASK)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + MASK if m.group(2) != MASK else m.group(0), text)
    return text


def tree(value: Any) -> Any:
    """``value`` (params, a results document: dicts, lists, scalars) with every string
    :func:`redact`-ed and every key kept: the one writer of params that leave the process
    (``implicit-bench results`` writes an old run's params.yaml through it)."""
    if isinstance(value, dict):
        return {k: tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [tree(v) for v in value]
    if isinstance(value, str):
        return redact(value)
    return value


def userinfo_keys(value: Any, prefix: str = "") -> list[str]:
    """The dotted keys of ``value`` (params) whose string holds a URL with ``user:password@``:
    a params file the tool writes must hold none (docs/errors.md, "Secrets")."""
    if isinstance(value, dict):
        return [k for key, v in value.items() for k in userinfo_keys(v, f"{prefix}{key}.")]
    if isinstance(value, list | tuple):
        return [k for i, v in enumerate(value) for k in userinfo_keys(v, f"{prefix}{i}.")]
    return [prefix.rstrip(".")] if isinstance(value, str) and has_userinfo(value) else []
