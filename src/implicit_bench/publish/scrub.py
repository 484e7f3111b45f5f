"""What a published record may carry: no keys, no endpoint credentials, no machine paths.

``scrub`` walks a record and rewrites every string: secrets through ``_util.redact`` (keys,
tokens, ``user:password@`` of URLs, the values of credential environment variables), then every
absolute or home path (``/home/me/x``, ``~/x``, ``C:\\x``, ``file:///x``) down to
``[LOCAL PATH]/<last part>``. Endpoints are never copied into a record in the first place
(docs/publishing.md, "What a record never carries").
"""

from __future__ import annotations

import re
from typing import Any

from implicit_bench._util.redact import redact

LOCAL = "[LOCAL PATH]"
# a path at the start of a string or after a space, quote, '=', '(' or ',' (never inside a URL,
# whose '/' follows a host name); or a file: URL; or a Windows drive path
_PATH = re.compile(
    r"(?:(?<=^)|(?<=[\s\"'=(,;]))(?:file://)?(?:~|[A-Za-z]:\\|/)(?:[^\s\"',;)]*[/\\])?"
    r"([^\s\"',;)/\\]*)"
)


def _path(match: re.Match[str]) -> str:
    whole = match.group(0)
    if whole in ("/", "~"):  # a lone slash (a ratio "a / b") or tilde: no path
        return whole
    return f"{LOCAL}/{match.group(1)}" if match.group(1) else LOCAL


def scrub_text(text: str) -> str:
    """``text`` without secrets and without absolute or home paths."""
    return _PATH.sub(_path, redact(text) or "")


def scrub(obj: Any) -> Any:
    """``obj`` (dicts, lists, strings, numbers) with every string scrubbed; keys too."""
    if isinstance(obj, str):
        return scrub_text(obj)
    if isinstance(obj, dict):
        return {scrub_text(str(k)): scrub(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [scrub(v) for v in obj]
    return obj
