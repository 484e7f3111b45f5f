"""``redact`` runs in linear time (a 200 KB ``x-x-...`` answer cell took 81 s to
print as a one-line error, an 80 KB generator name 14.7 s) and keeps its output."""

from __future__ import annotations

import time

import pytest

from implicit_bench._util.friendly_errors import one_line
from implicit_bench._util.redact import MASK, redact, strip_userinfo

N = 100_000  # 'x-' * N is 200 KB
ADVERSARIAL = {
    "x-": "x-" * N,
    "a": "a" * (2 * N),
    "sk-": "sk-" * N,
    "-": "-" * (2 * N),
    "http://": "http://" * N,
    ":@": ":@" * N,
    "a.": "a." * N,
    "scheme then letters": "a" * N + "://" + "b" * N,
    "token then spaces": "token" + " " * (2 * N),
    "bearer then spaces": "bearer" + " " * (2 * N),
    "authorization then spaces": "authorization" + " " * (2 * N),
}


@pytest.mark.parametrize("shape", sorted(ADVERSARIAL))
def test_redact_is_fast_on_a_200_kb_adversarial_string(shape):
    text = ADVERSARIAL[shape]
    t0 = time.perf_counter()
    redact(text)
    one_line(ValueError(text))
    assert time.perf_counter() - t0 < 2.0  # quadratic: 81 s for 'x-' * 100_000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see http://u:pw@h:1/v1 now", f"see http://{MASK}@h:1/v1 now"),
        ("x-y-git+ssh://git:pw@host/r", f"x-y-git+ssh://{MASK}@host/r"),
        ("1http://u:pw@h", f"1http://{MASK}@h"),  # was missed (no word boundary before h)
        ("http://host:8000/v1 and ann@example.org", "http://host:8000/v1 and ann@example.org"),
        ("a" * 40 + "http://u:p@h", "a" * 40 + f"http://{MASK}@h"),
    ],
)
def test_userinfo_redaction_keeps_the_rest_of_the_text(text, expected):
    assert strip_userinfo(text) == expected
    assert redact(text) == expected
