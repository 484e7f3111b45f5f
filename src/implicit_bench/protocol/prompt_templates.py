"""Prompt templates stored as text files in ``src/implicit_bench/prompts/``.

File conventions: lines starting with ``#`` are notes (never sent); a line whose field name
ends with ``†`` is *optional*: it is sent (without the dagger) only when its placeholder has a
value, and omitted otherwise (paper F.2: StereoSet-only fields). Placeholders are ``{name}``
for the names the template declares; every other brace (the JSON output format) is literal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from implicit_bench._util.hashing import sha256_bytes

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    lines: tuple[str, ...]
    fields: frozenset[str]
    sha256: str

    def render(self, **values: Any) -> str:
        """Fill the placeholders; a missing required field is an error, an empty optional
        (†) line is dropped."""
        missing = self.fields - set(values)
        if missing:
            raise KeyError(f"prompt '{self.name}': missing field(s) {sorted(missing)}")
        out = []
        for line in self.lines:
            optional = "†" in line
            names = _PLACEHOLDER.findall(line)
            if optional and all(_blank(values[n]) for n in names):
                continue
            line = line.replace("†", "")
            out.append(
                _PLACEHOLDER.sub(
                    lambda m: (
                        _text(values[m.group(1)]) if m.group(1) in self.fields else m.group(0)
                    ),
                    line,
                )
            )
        return "\n".join(out).strip() + "\n"


def _blank(value: Any) -> bool:
    return (
        value is None or (isinstance(value, float) and value != value) or str(value).strip() == ""
    )


def _text(value: Any) -> str:
    if _blank(value):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@cache
def load_prompt(name: str) -> PromptTemplate:
    """Load ``prompts/<name>.txt`` shipped with the package."""
    raw = (resources.files("implicit_bench") / "prompts" / f"{name}.txt").read_bytes()
    text = raw.decode("utf-8")
    lines = tuple(line for line in text.splitlines() if not line.startswith("#"))
    fields = frozenset(n for line in lines for n in _PLACEHOLDER.findall(line))
    return PromptTemplate(name, lines, fields, sha256_bytes(raw))
