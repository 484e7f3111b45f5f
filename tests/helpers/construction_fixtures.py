"""StereoSet / CrowS-Pairs rows and units for the construction tests."""

from __future__ import annotations

from implicit_bench.protocol.records import KGUnit, SourcePair


def crows(pid: str, s: str, a: str, bias: str = "race-color") -> SourcePair:
    return SourcePair(
        pair_id=pid,
        source="crows_pairs",
        split="crows_pairs",
        bias_type=bias,
        stereotype_sentence=s,
        anti_stereotype_sentence=a,
    )


def stereoset(
    pid: str, target: str, s: str, a: str, split: str = "intrasentence", bias: str = "profession"
) -> SourcePair:
    return SourcePair(
        pair_id=pid,
        source="stereoset",
        split=split,
        bias_type=bias,
        target=target,
        context="ctx",
        stereotype_sentence=s,
        anti_stereotype_sentence=a,
    )


def unit(
    uid: str, head: str, s: list[str], a: list[str], bias: str = "profession", **extra
) -> KGUnit:
    return KGUnit(
        unit_id=uid,
        source_pair_id=uid[:-3],
        source="stereoset",
        bias_type=bias,
        head=head,
        stereotype_tails=s,
        anti_stereotype_tails=a,
        extractor="minimal_pair",
        **extra,
    )


def crows_unit(uid: str, head: str, s: list[str], a: list[str], bias: str = "disability") -> KGUnit:
    return KGUnit(
        unit_id=uid,
        source_pair_id=uid[:-3],
        source="crows_pairs",
        bias_type=bias,
        head=head,
        stereotype_tails=s,
        anti_stereotype_tails=a,
        extractor="minimal_pair",
        construction_mode="identity_instantiation",
    )
