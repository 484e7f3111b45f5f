"""The deterministic minimal-pair extractor (no model).

For a StereoSet intrasentence pair or a CrowS-Pairs pair, the two sentences differ in a few
words; that difference is the contrast. Algorithm (documented in docs/kg.md):

1. Word-tokenise both sentences (``text.words``); compare case-insensitively with difflib.
2. Every ``replace`` block gives one paired tail (stereotype words / anti-stereotype words,
   leading articles a/an/the dropped when words remain; a pair repeated case-insensitively,
   such as she/he twice, is kept once). ``insert`` / ``delete`` blocks have
   no counterpart and are not tails (recorded in the evidence only).
3. StereoSet intersentence pairs: the two continuation sentences are compared the same way,
   and a ``replace`` block is an attribute when it is predicated of the target: the shared word
   before it is a copula or an intensifier ("is", "was", "seems", "very", ...), or "and" / "or"
   after an attribute already taken ("He is [well organized] and [very smart]." / "She is
   [unorganized] and [dumb]."), and both sides are 1-3 content words (no pronoun, no other stop
   word: "fast with his deliveries" is a clause, not an attribute); pronoun swaps (he / she) are
   not attributes. Head: the target.
   A pair with no such block gets no unit, reason ``intersentence`` (different sentences, not
   a minimal pair: "You can only see them in zoos." / "There are some left in the wild.").
4. Not extractable (counted by reason, never dropped silently): ``intersentence``
(above), ``no_difference``,
   ``one_sided_difference`` (only insertions / deletions), ``too_many_spans`` (more than
   ``max_spans`` blocks), ``difference_too_long`` (more than ``max_diff_words`` differing
   words on a side), ``no_head``.
5. Head: StereoSet: the ``target``. CrowS-Pairs: the shared remainder: the run of shared
   words right after the first difference, up to the next difference or the end of its clause
   (clauses split at , ; : . ! ?), with leading and trailing stop words trimmed ("Jerome was
   very fast and athletic." -> "fast and athletic"); the run right before the difference when
   that is empty; the whole shared sentence when both are.
6. Evidence per tail: the sentence with every differing block in [brackets].

It cannot read meaning: first names stay names (Jerome / Tom, not Black / White person), a
negation shows as with / without, and no relation is inferred (``relation`` is null).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from implicit_bench._util.words import WORD, stop_words
from implicit_bench.params import PositiveInt, StrictModel
from implicit_bench.protocol.records import KGUnit, SourcePair

ARTICLES = frozenset({"a", "an", "the"})
# words after which a differing block of an intersentence continuation is predicated of the target
PREDICATING = frozenset(
    {
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "seem",
        "seems",
        "seemed",
        "look",
        "looks",
        "looked",
        "become",
        "becomes",
        "became",
        "very",
        "so",
        "really",
        "quite",
        "too",
        "extremely",
        "always",
        "usually",
        "often",
        "generally",
        "rather",
        "pretty",
        "incredibly",
    }
)
PRONOUNS = frozenset(
    {
        "he",
        "she",
        "they",
        "him",
        "her",
        "his",
        "hers",
        "them",
        "their",
        "theirs",
        "i",
        "we",
        "you",
        "it",
        "its",
        "me",
        "us",
        "our",
        "my",
        "your",
    }
)
CLAUSE_BREAK = re.compile(r"[,;:.!?]")


class MinimalPairParams(StrictModel):
    max_spans: PositiveInt = 6
    max_diff_words: PositiveInt = 6


@dataclass(frozen=True)
class Extraction:
    """Result for one pair: units, or a reason why none could be extracted."""

    pair_id: str
    units: tuple[KGUnit, ...]
    reason: str | None = None  # set when no unit


def _tokens(sentence: str) -> list[tuple[str, int, int]]:
    text = sentence.replace("’", "'")
    return [(m.group(0), m.start(), m.end()) for m in WORD.finditer(text)]


def _trim_articles(words: list[str]) -> list[str]:
    out = list(words)
    while len(out) > 1 and out[0].lower() in ARTICLES:
        out = out[1:]
    return out


def _trim_stop(words: list[str]) -> list[str]:
    stops = stop_words()
    start, end = 0, len(words)
    while start < end and words[start].lower() in stops:
        start += 1
    while end > start and words[end - 1].lower() in stops:
        end -= 1
    return words[start:end]


def _bracketed(
    sentence: str, tokens: list[tuple[str, int, int]], spans: list[tuple[int, int]]
) -> str:
    text = sentence.replace("’", "'")
    out, last = [], 0
    for i, j in spans:
        if i == j:
            continue
        start, end = tokens[i][1], tokens[j - 1][2]
        out += [text[last:start], "[", text[start:end], "]"]
        last = end
    out.append(text[last:])
    return "".join(out)


def _shared_head(
    sentence: str, tokens: list[tuple[str, int, int]], diff: set[int], first: int
) -> str:
    """The shared run of words right after the first difference (else right before it), within
    its clause, trimmed of stop words; the whole shared sentence when both runs are empty."""
    text = sentence.replace("’", "'")
    breaks = [m.start() for m in CLAUSE_BREAK.finditer(text)]

    def clause(k: int) -> int:
        return sum(1 for b in breaks if b < tokens[k][1])

    home = clause(first)
    last = first
    while last + 1 in diff:
        last += 1
    right, k = [], last + 1
    while k < len(tokens) and k not in diff and clause(k) == home:
        right.append(tokens[k][0])
        k += 1
    left, k = [], first - 1
    while k >= 0 and k not in diff and clause(k) == home:
        left.insert(0, tokens[k][0])
        k -= 1
    for run in (right, left, [w for k, (w, _, _) in enumerate(tokens) if k not in diff]):
        head = _trim_stop(run)
        if head:
            return " ".join(head)
    return ""


def _attribute_like(words: list[str]) -> bool:
    """1-3 content words (an intensifier or an inner "and" allowed): "very smart", "dumb"; not a
    clause ("fast with his deliveries", "not", "some")."""
    stops = stop_words() - PREDICATING - {"and"}
    return (
        1 <= len(words) <= 3
        and not any(w in stops or w in PRONOUNS for w in words)
        and words[-1] != "and"
    )


def _predicated_blocks(
    opcodes: list[tuple[str, int, int, int, int]],
    s_tok: list,
    a_tok: list,
    params: MinimalPairParams,
) -> list[tuple[str, int, int, int, int]]:
    """The ``replace`` blocks of two continuation sentences that read as
    attributes of the target."""
    kept: list[tuple[str, int, int, int, int]] = []
    for op in opcodes:
        tag, i1, i2, j1, j2 = op
        if tag != "replace" or max(i2 - i1, j2 - j1) > params.max_diff_words:
            continue
        s_words = [w.lower() for w, _, _ in s_tok[i1:i2]]
        a_words = [w.lower() for w, _, _ in a_tok[j1:j2]]
        if all(w in PRONOUNS for w in s_words + a_words) or not (
            _attribute_like(s_words) and _attribute_like(a_words)
        ):
            continue
        before = s_tok[i1 - 1][0].lower() if i1 > 0 else ""
        joined = kept and before in ("and", "or") and kept[-1][2] == i1 - 1
        if before in PREDICATING or joined:
            kept.append(op)
    return kept if 0 < len(kept) <= params.max_spans else []


def extract(pair: SourcePair, params: MinimalPairParams | None = None) -> Extraction:
    """Extract at most one unit from ``pair`` by its token difference."""
    params = params or MinimalPairParams()
    s_tok, a_tok = _tokens(pair.stereotype_sentence), _tokens(pair.anti_stereotype_sentence)
    matcher = difflib.SequenceMatcher(
        a=[w.lower() for w, _, _ in s_tok], b=[w.lower() for w, _, _ in a_tok], autojunk=False
    )
    blocks = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if pair.split == "intersentence":
        blocks = _predicated_blocks(matcher.get_opcodes(), s_tok, a_tok, params)
        if not blocks or not pair.target:
            return Extraction(pair.pair_id, (), "intersentence")
    if not blocks:
        return Extraction(pair.pair_id, (), "no_difference")
    paired = [op for op in blocks if op[0] == "replace"]
    if not paired:
        return Extraction(pair.pair_id, (), "one_sided_difference")
    if len(blocks) > params.max_spans:
        return Extraction(pair.pair_id, (), "too_many_spans")
    if max(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in blocks) > params.max_diff_words:
        return Extraction(pair.pair_id, (), "difference_too_long")
    s_tails, a_tails, seen = [], [], set()
    for _, i1, i2, j1, j2 in paired:  # repeated swaps (she/he ... her/his ... she/he) kept once
        s_tail = " ".join(_trim_articles([w for w, _, _ in s_tok[i1:i2]]))
        a_tail = " ".join(_trim_articles([w for w, _, _ in a_tok[j1:j2]]))
        if (s_tail.lower(), a_tail.lower()) not in seen:
            seen.add((s_tail.lower(), a_tail.lower()))
            s_tails.append(s_tail)
            a_tails.append(a_tail)
    s_diff = {k for _, i1, i2, _, _ in blocks for k in range(i1, i2)}
    if pair.source == "stereoset" and pair.target:
        head = pair.target.strip()
        mode = "attribute_substitution"
    else:
        first = min(s_diff) if s_diff else 0
        head = _shared_head(pair.stereotype_sentence, s_tok, s_diff, first) if s_tok else ""
        mode = "identity_instantiation"
    if not head:
        return Extraction(pair.pair_id, (), "no_head")
    s_evidence = _bracketed(
        pair.stereotype_sentence, s_tok, [(i1, i2) for _, i1, i2, _, _ in blocks]
    )
    a_evidence = _bracketed(
        pair.anti_stereotype_sentence, a_tok, [(j1, j2) for _, _, _, j1, j2 in blocks]
    )
    frame_words = [w if k not in s_diff else "___" for k, (w, _, _) in enumerate(s_tok)]
    frame = re.sub(r"(?:___ )+___", "___", " ".join(frame_words))
    unit = KGUnit(
        unit_id=f"{pair.pair_id}-u0",
        source_pair_id=pair.pair_id,
        source=pair.source,
        bias_type=pair.bias_type,
        head=head,
        relation=None,
        stereotype_tails=s_tails,
        anti_stereotype_tails=a_tails,
        axis=None,
        target=pair.target,
        construction_mode=mode,
        shared_frame=frame,
        frame_sensitive=False,
        stereotype_evidence=[s_evidence] * len(s_tails),
        anti_stereotype_evidence=[a_evidence] * len(a_tails),
        extractor="minimal_pair",
    )
    return Extraction(pair.pair_id, (unit,), None)
