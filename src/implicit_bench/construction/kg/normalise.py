"""After extraction, every unit is normalised (docs/kg.md, "Normalisation"):

- spelling: head, target and tails corrected word by word (``kg.lexicon.correct_text``:
  pyspellchecker + the reviewed exception list); every correction is recorded
  (``metrics/kg.json:spelling_corrections``, ``from -> to`` with its count);
- fragment heads: a CrowS-Pairs head that is a clause is reduced to its subject when it starts
  with a person noun ("student in the class" -> "student"), else the unit is rejected
  (``fragment_head``, counted in ``metrics/kg.json:units_rejected_by_reason``, listed in
  ``kg_invalid.jsonl`` with ``level: unit``);
- relation (when the extractor gave none): CrowS-Pairs identity contrasts (the group differs)
  get ``has_<bias type>`` ("has_race_color"); StereoSet attribute contrasts get the kind of the
  attribute: ``has_trait`` (adjectives), ``has_role`` (person nouns), ``has_group``
  (demonyms), ``associated_with`` (things and places); none when the two sides differ in kind.
"""

from __future__ import annotations

from collections import Counter

from implicit_bench.construction.kg import lexicon
from implicit_bench.construction.kg.wordkinds import crows_head_form, tail_kind
from implicit_bench.protocol.records import KGUnit

RELATION_BY_KIND = {
    "adjective": "has_trait",
    "role": "has_role",
    "group": "has_group",
    "object": "associated_with",
    "abstract": "associated_with",
}


def relation_of(unit: KGUnit) -> str | None:
    """The relation of ``unit`` as described in the module docstring."""
    if unit.construction_mode == "identity_instantiation":
        return "has_" + unit.bias_type.replace("-", "_")
    kinds = {tail_kind(t) for t in unit.stereotype_tails + unit.anti_stereotype_tails}
    relations = {RELATION_BY_KIND.get(k) for k in kinds}
    return relations.pop() if len(relations) == 1 and None not in relations else None


def reduce_head(unit: KGUnit) -> KGUnit | None:
    """A CrowS-Pairs head that is a clause ("student in the class", "Julie arrives early to the
    airport ...") reduced to its subject when it starts with a person noun ("student"); None
    when it is a clause without one (the unit is rejected, ``fragment_head``)."""
    if unit.source == "stereoset" or unit.construction_mode != "identity_instantiation":
        return unit
    if crows_head_form(unit.head) != "none":
        return unit
    first = unit.head.split()[0] if unit.head.split() else ""
    if first and first[:1].islower() and lexicon.is_person_noun(first):
        return unit.model_copy(update={"head": first})
    return None


def normalise(
    units: list[KGUnit],
) -> tuple[list[KGUnit], Counter[tuple[str, str]], list[KGUnit], int]:
    """Spelling-corrected units with a relation, the corrections made (``(from, to)`` counts),
    the units rejected for a fragment head, and the number of heads reduced to their subject."""
    made: Counter[tuple[str, str]] = Counter()
    out, rejected, reduced = [], [], 0
    for unit in units:
        fields = {}
        for name in ("head", "target"):
            value = getattr(unit, name)
            if value:
                fixed, fixes = lexicon.correct_text(value)
                made.update(fixes)
                fields[name] = fixed
        for name in ("stereotype_tails", "anti_stereotype_tails"):
            fixed_tails = []
            for tail in getattr(unit, name):
                fixed, fixes = lexicon.correct_text(tail)
                made.update(fixes)
                fixed_tails.append(fixed)
            fields[name] = fixed_tails
        unit = unit.model_copy(update=fields)
        kept = reduce_head(unit)
        if kept is None:
            rejected.append(unit)
            continue
        reduced += kept.head != unit.head
        unit = kept
        if unit.relation is None and unit.extractor == "minimal_pair":
            unit = unit.model_copy(update={"relation": relation_of(unit)})
        out.append(unit)
    return out, made, rejected, reduced
