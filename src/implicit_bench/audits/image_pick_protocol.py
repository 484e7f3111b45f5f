"""The selection judge's protocol (When the Judge Acts §3, §4.2-4.3, §5.5, App. P-Q): presentation
orders, candidate labels, the request text and the strict answer parsers.

- Orders: cyclic rotations of the canonical order (candidates sorted by identifier); order 1 is
  canonical, order k shows candidate (j + k - 1) mod m in slot j. ``full_rotation``: m orders
  (every image in every slot once), the §5.5 ablation; otherwise ``n_orders`` (3).
- Labels: ``letters`` (A, B, C, D by slot) or ``opaque`` (two-character codes drawn per pool and
  candidate from a hash, so a label says nothing about the slot: the §5.5 label ablation).
- Output contract: ``ranking`` (``{"choice": X, "ranking": [...]}``; strict: exactly the two
  keys, a complete permutation of the supplied labels, choice = ranking[0]) or ``choice_only``
  (``{"choice": X}``, the §5.5 output-format ablation). Anything else is invalid (an abstention,
  kept with its raw text); the parser never invents a choice.
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from typing import Literal

from implicit_bench._util.hashing import derive_seed
from implicit_bench.protocol.prompt_templates import load_prompt

Contract = Literal["ranking", "choice_only"]
Labels = Literal["letters", "opaque"]
CODE_ALPHABET = string.ascii_uppercase + string.digits
OUTPUTS: dict[str, str] = {
    "ranking": "Return JSON only, with choice equal to the first element of ranking and ranking "
    'containing every candidate label exactly once: {{"choice": ..., "ranking": [...]}}. '
    "Do not explain your decision.",
    "choice_only": 'Return JSON only with the single key choice: {{"choice": ...}}. '
    "Do not explain your decision.",
}


@dataclass(frozen=True)
class Protocol:
    """One presentation protocol: orders per pool, label kind, output contract."""

    n_orders: int = 3
    full_rotation: bool = False
    labels: Labels = "letters"
    contract: Contract = "ranking"

    def orders(self, m: int) -> int:
        return m if self.full_rotation else self.n_orders


def order_of(m: int, k: int) -> list[int]:
    """Candidate indices in slots 0..m-1 under order k (0-based; 0 = canonical)."""
    return [(j + k) % m for j in range(m)]


def candidate_labels(pool_id: str, m: int, kind: Labels, seed: int = 0) -> list[str]:
    """Each candidate's two-character code under ``opaque`` (fixed per candidate, unique in the
    pool, drawn from a hash of (seed, pool, candidate)); empty for ``letters`` (the label is the
    slot's letter)."""
    if kind == "letters":
        return []
    codes: list[str] = []
    salt = 0
    while len(codes) < m:
        x = derive_seed(seed, f"{pool_id}/{len(codes)}/{salt}")
        code = CODE_ALPHABET[x % 36] + CODE_ALPHABET[(x // 36) % 36]
        if code in codes:
            salt += 1
            continue
        codes.append(code)
        salt = 0
    return codes


def slot_labels(pool_id: str, m: int, k: int, kind: Labels, seed: int = 0) -> list[str]:
    """The labels shown in slots 0..m-1 under order k."""
    if kind == "letters":
        return list("ABCDEFGH"[:m])
    codes = candidate_labels(pool_id, m, kind, seed)
    return [codes[i] for i in order_of(m, k)]


def request_text(prompt: str, labels: list[str], contract: Contract) -> str:
    """The instruction (App. P), the output contract and the labels, in slot order (the images
    are interleaved with their labels by the caller)."""
    return load_prompt("selection").render(
        prompt=prompt,
        labels=", ".join(labels),
        output=OUTPUTS[contract].replace("{{", "{").replace("}}", "}"),
    )


def parse_answer(text: str, labels: list[str], contract: Contract) -> str | None:
    """The chosen label, or None for an answer that does not meet the contract."""
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None
    if not isinstance(obj, dict):
        return None
    if contract == "choice_only":
        if set(obj) != {"choice"}:
            return None
        choice = obj["choice"]
        return choice if isinstance(choice, str) and choice in labels else None
    if set(obj) != {"choice", "ranking"}:
        return None
    ranking, choice = obj["ranking"], obj["choice"]
    if not isinstance(ranking, list) or sorted(map(str, ranking)) != sorted(labels):
        return None
    if len(ranking) != len(labels) or choice != ranking[0]:
        return None
    return choice
