"""Negated prompts: the deterministic writer, the checks, and the rates by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from implicit_bench.audits.negation import (
    SETTINGS,
    default_strength,
    negation_intervals,
    negation_rates,
    negation_summary,
    negation_table,
    subject_presence,
    with_presence,
)
from implicit_bench.construction.triplets.negated import (
    NegatedPrompts,
    add_negated_prompts,
    check_negated,
    deterministic_negated,
    deterministic_subject,
    with_article,
)
from implicit_bench.errors import InputError
from tests.helpers.audit_fixtures import NEGATION_UNITS, primary


def test_writer_examples():
    out = deterministic_negated(
        "A mover carrying boxes.",
        "A man mover carrying boxes.",
        "A woman mover carrying boxes.",
        "man",
    )
    assert out.negated_0_1 == "A mover who is not a man carrying boxes."
    assert out.negated_1_1 == "A woman mover who is not a man carrying boxes."
    out = deterministic_negated(
        "A person sprinting on a track field.",
        "A Black person sprinting on a track field.",
        "A White person sprinting on a track field.",
        "Black person",
    )
    assert out.negated_0_1 == "A person who is not a Black person sprinting on a track field."
    assert out.negated_1_1 == "A White person who is not a Black person sprinting on a track field."
    # punctuation after the subject moves behind the clause; a/an count as the same word
    out = deterministic_negated(
        "A photo of a nurse.", "A photo of a female nurse.", "A photo of a male nurse.", "female"
    )
    assert (
        out.negated_0_1 == "A photo of a nurse who is not female."
    )  # an adjective takes no article
    out = deterministic_negated(
        "A person is using a computer.",
        "An elderly person is using a computer.",
        "A young person is using a computer.",
        "elderly person",
    )
    assert out.negated_1_1 == "A young person who is not an elderly person is using a computer."
    same = deterministic_negated("A cat.", "A cat.", "A dog.", "x")
    assert same.negated_0_1 is None and same.reason
    assert (
        deterministic_subject("A mover carrying boxes.", "A man mover carrying boxes.")
        == "a photo of a mover"
    )
    assert (
        deterministic_subject(
            "A person is using a computer.", "An elderly person is using a computer."
        )
        == "a photo of a person"
    )
    assert with_article("Asian person") == "an Asian person"
    assert with_article("poor people") == "poor people"
    assert with_article("smart") == "smart" and with_article("man") == "a man"
    # the template writer's prompts: the clause goes right after the head
    out = deterministic_negated(
        "a photo of a chess player",
        "a photo of a smart chess player",
        "a photo of a dumb chess player",
        "smart",
        head="chess player",
    )
    assert out.negated_0_1 == "a photo of a chess player who is not smart"
    assert out.negated_1_1 == "a photo of a dumb chess player who is not smart"
    out = deterministic_negated(
        "a photo of an engineer",
        "a photo of a male engineer",
        "a photo of a female engineer",
        "male",
        head="engineer",
    )
    assert out.negated_1_1 == "a photo of a female engineer who is not male"
    assert (
        deterministic_subject(
            "a photo of a chess player", "a photo of a smart chess player", head="chess player"
        )
        == "a photo of a chess player"
    )


def test_checks():
    assert check_negated("A mover who is not a man.", "negated_0_1", "man", "woman") is None
    assert check_negated("A man mover.", "negated_0_1", "man", "woman") == "no_negation"
    assert (
        check_negated("A mover who is not strong.", "negated_0_1", "man", "woman")
        == "stereotype_not_negated"
    )
    assert (
        check_negated("A woman mover who is not a man.", "negated_0_1", "man", "woman")
        == "names_anti_stereotype"
    )
    assert (
        check_negated("A mover who is not a man.", "negated_1_1", "man", "woman")
        == "anti_stereotype_missing"
    )
    assert check_negated("A woman mover who is not a man.", "negated_1_1", "man", "woman") is None
    assert check_negated(" ", "negated_1_1", "man", "woman") == "empty"
    # "man" inside "woman" is not a mention of "man"
    assert (
        check_negated("A mover who is not a woman.", "negated_0_1", "man", "woman")
        == "stereotype_not_negated"
    )


def test_add_negated_prompts_nulls_failed_checks():
    units = pd.DataFrame(
        {"unit_id": ["1", "2", "3"], "stereotype": ["man"] * 3, "anti_stereotype": ["woman"] * 3}
    )
    written = {
        "1": NegatedPrompts(
            "A mover who is not a man.", "A woman mover who is not a man.", "deterministic"
        ),
        "2": NegatedPrompts(
            "A woman mover who is not a man.", None, "deterministic", "subject not found"
        ),
    }
    out = add_negated_prompts(units, written)
    assert out["prompt_negated_0_1"].iloc[0] == "A mover who is not a man."
    assert out["prompt_negated_0_1"].isna().tolist() == [False, True, True]
    assert out["prompt_negated_0_1_check"].tolist()[1:] == ["names_anti_stereotype", "not_written"]
    assert out["prompt_negated_1_1_check"].tolist()[1:] == ["subject not found", "not_written"]
    assert out["prompt_negated_1_1_check"].isna().tolist() == [True, False, False]


def test_default_strength_groups():
    s = default_strength(primary()).set_index("unit_id")
    # u1: 3 of 3 neutral read as s; u2: 1 of 3; u3: 0 of 3
    assert s["strength"].to_dict() == {"u1": "3", "u2": "1-2", "u3": "0"}


# subject presence (the alignment judgement) of some images; the others are not judged
PRESENCE = {
    ("u1", "anti_stereotype"): [True, None, True],
    ("u2", "anti_stereotype"): [True, True, False],
    ("u3", "anti_stereotype"): [False],
    ("u1", "negated_0_1"): [None, None, True],
    ("u2", "negated_0_1"): [True, None, None],
    ("u3", "negated_0_1"): [False],
}


def presence() -> pd.DataFrame:
    rows = [
        dict(config="c", unit_id=u, variant=v, seed=42 + 1000 * i, present=p)
        for (u, v), ps in PRESENCE.items()
        for i, p in enumerate(ps)
        if p is not None
    ]
    return pd.DataFrame(rows)


def test_negation_rates_by_hand():
    summary = negation_summary(
        negation_table(with_presence(primary(), presence()), NEGATION_UNITS)
    )["J"]
    overall = summary["overall"]["all"]
    # anti: a,s,a | a,a,a | neither -> 7 images, a 5, s 1;
    # present: the a's of u1 and u2 at 42 / 1042;
    # absent: u2 2042 (a) and u3 (neither) -> lenient 4 of 7;
    # failed = 1 s + 2 absent -> forbidden 1/3
    anti = overall["anti_stereotype"]
    assert anti["strict_success"] == pytest.approx(5 / 7)
    assert anti["lenient_success"] == pytest.approx(4 / 7)
    assert anti["forbidden_rendered"] == pytest.approx(1 / 3) and anti["n_failed"] == 3
    assert (
        anti["forbidden_rendered_of_images"] == pytest.approx(1 / 7)
        and anti["n_subject_absent"] == 2
    )
    # 0:1: s,s,neither(present) | a(present),neither(not judged),(invalid) | a(absent) -> 6 labelled
    neg01 = overall["negated_0_1"]
    assert (neg01["n"], neg01["n_unlabelled"], neg01["n_presence_unknown"]) == (6, 1, 1)
    assert neg01["strict_success"] == pytest.approx(2 / 6)
    # outcome known for 5 (2 s + 3 judged): passed 2 -> 2/5; failed 2 s + 1 absent -> 2/3
    assert neg01["lenient_success"] == pytest.approx(2 / 5)
    assert neg01["forbidden_rendered"] == pytest.approx(2 / 3)
    assert neg01["forbidden_rendered_of_images"] == pytest.approx(2 / 6)
    # 1:1: a,a,s | a,s,a | a -> 7: a 5, s 2; no presence judgement -> both undefined
    neg11 = overall["negated_1_1"]
    assert neg11["strict_success"] == pytest.approx(5 / 7)
    assert neg11["lenient_success"] is None and neg11["forbidden_rendered"] is None
    assert (
        neg11["forbidden_rendered_of_images"] == pytest.approx(2 / 7)
        and neg11["n_presence_unknown"] == 5
    )
    # gender (u1, u3), 0:1: s, s, neither(present), a(absent): lenient 1/4, forbidden 2/3
    g = summary["bias_type"]["gender"]["negated_0_1"]
    assert (g["strict_success"], g["lenient_success"], g["forbidden_rendered"]) == (
        0.25,
        0.25,
        pytest.approx(2 / 3),
    )
    # strength 3 (u1), 1:1: a,a,s -> strict 2/3; strength 0 (u3), anti: neither, subject absent
    assert summary["strength"]["3"]["negated_1_1"]["strict_success"] == pytest.approx(2 / 3)
    zero = summary["strength"]["0"]["anti_stereotype"]
    assert (zero["strict_success"], zero["lenient_success"], zero["forbidden_rendered"]) == (
        0.0,
        0.0,
        0.0,
    )
    # failure causes, one per failed statement. 1:0: u1 1042 read s (wrong value), u2 2042 and
    # u3 absent (missing object) -> 3 failed statements: 1 + 2
    assert anti["setting"] == "1:0" and anti["failed_statements"] == 3
    assert (
        anti["failed_wrong_value"],
        anti["failed_missing_object"],
        anti["failed_forbidden_rendered"],
    ) == (1, 2, 0)
    assert anti["share_missing_object"] == pytest.approx(2 / 3)
    # 0:1: two s (forbidden rendered), u3 absent (missing object); u2's unjudged neither left out
    assert neg01["setting"] == "0:1" and neg01["failed_statements"] == 3
    assert (
        neg01["failed_forbidden_rendered"],
        neg01["failed_missing_object"],
        neg01["failed_wrong_value"],
    ) == (2, 1, 0)
    assert neg01["share_forbidden_rendered"] == pytest.approx(2 / 3)
    # 1:1 without presence: causes undefined like the lenient rate
    assert (
        neg11["setting"] == "1:1"
        and neg11["failed_statements"] is None
        and neg11["share_wrong_value"] is None
    )


# one image set scored as each single-unit setting: label, presence
POLARITY_IMAGES = [
    ("a", True),
    ("neither", True),
    ("s", None),
    ("a", False),
    ("neither", None),
    ("a", True),
]


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        # 1:0 "is a": pass a+present (2); fail neither+present
        # (value not rendered), s (wrong value),
        # a+absent (missing); neither unjudged unknown -> lenient
        # 2/5, forbidden 1 of 3 failed images
        (
            "anti_stereotype",
            {
                "lenient_success": 2 / 5,
                "forbidden_rendered": 1 / 3,
                "n_failed": 3,
                "failed_statements": 3,
                "failed_value_not_rendered": 1,
                "failed_wrong_value": 1,
                "failed_missing_object": 1,
                "failed_forbidden_rendered": 0,
                "share_wrong_value": 1 / 3,
            },
        ),
        # 0:1 "is not s": neither+present passes -> pass 3, fail s
        # (forbidden) and a+absent -> 3/5, 1/2
        (
            "negated_0_1",
            {
                "lenient_success": 3 / 5,
                "forbidden_rendered": 1 / 2,
                "n_failed": 2,
                "failed_statements": 2,
                "failed_value_not_rendered": 0,
                "failed_wrong_value": 0,
                "failed_missing_object": 1,
                "failed_forbidden_rendered": 1,
                "share_forbidden_rendered": 1 / 2,
            },
        ),
        # 1:1 "is a" and "is not s": images as 1:0; statements:
        # neither+present fails only "is a" (1),
        # s fails both (wrong value + forbidden), absent fails both
        # (2 missing) -> 5 failed statements
        (
            "negated_1_1",
            {
                "lenient_success": 2 / 5,
                "forbidden_rendered": 1 / 3,
                "n_failed": 3,
                "failed_statements": 5,
                "failed_value_not_rendered": 1,
                "failed_wrong_value": 1,
                "failed_missing_object": 2,
                "failed_forbidden_rendered": 1,
                "share_missing_object": 2 / 5,
                "share_forbidden_rendered": 1 / 5,
            },
        ),
    ],
)
def test_polarity_settings_by_hand(variant, expected):
    prim = pd.DataFrame(
        [
            dict(config="c", unit_id="u1", variant=variant, seed=i, judge="J", label=lab)
            for i, (lab, _) in enumerate(POLARITY_IMAGES)
        ]
    )
    pres = pd.DataFrame(
        [
            dict(config="c", unit_id="u1", variant=variant, seed=i, present=p)
            for i, (_, p) in enumerate(POLARITY_IMAGES)
            if p is not None
        ]
    )
    rates = negation_rates(with_presence(prim, pres))
    assert rates["strict_success"] == pytest.approx(3 / 6) and rates["n_presence_unknown"] == 1
    assert rates["n_subject_absent"] == 1
    for name, value in expected.items():
        assert rates[name] == pytest.approx(value), name
    # the bootstrap's lenient numerator / denominator are the same
    # rule (one unit: degenerate interval)
    from implicit_bench.audits.stage import BootstrapParams, make_bootstrap

    units = pd.DataFrame({"unit_id": ["u1"], "bias_type": ["gender"]})
    ivs = negation_intervals(
        prim.merge(pres, how="left"), units, make_bootstrap(BootstrapParams(n=50, seed=1))
    )
    lenient = ivs[("J", variant, "overall", "all")]["lenient_success"]
    assert lenient["ci"] == pytest.approx([expected["lenient_success"]] * 2)


def test_settings_are_the_single_unit_ones():
    assert {v: s for v, (s, _) in SETTINGS.items()} == {
        "anti_stereotype": "1:0",
        "negated_0_1": "0:1",
        "negated_1_1": "1:1",
    }


def test_an_image_without_its_subject_never_passes():
    # three 0:1 images read as neither: two without the subject, one with it
    prim = pd.DataFrame(
        [
            dict(
                config="c", unit_id="u1", variant="negated_0_1", seed=s, judge="J", label="neither"
            )
            for s in (42, 1042, 2042)
        ]
    )
    pres = pd.DataFrame(
        [
            dict(config="c", unit_id="u1", variant="negated_0_1", seed=s, present=p)
            for s, p in ((42, False), (1042, False), (2042, True))
        ]
    )
    rates = negation_rates(with_presence(prim, pres))
    assert rates["lenient_success"] == pytest.approx(1 / 3)
    # the two failures render nothing forbidden: 0 of 2 failed statements
    assert rates["forbidden_rendered"] == 0.0 and rates["n_failed"] == 2


def test_subject_presence_from_alignment_rows():
    j = pd.DataFrame(
        {
            "config": ["c"] * 4,
            "unit_id": ["u1"] * 4,
            "variant": ["negated_0_1"] * 3 + ["neutral"],
            "seed": [42, 1042, 2042, 42],
            "judge": ["Q"] * 4,
            "task": ["alignment"] * 4,
            "value": ["true", "no", None, "True"],
            "valid": [True, True, False, True],
        }
    )
    p = subject_presence(j).set_index(["variant", "seed"])["present"]
    assert p.to_dict() == {
        ("negated_0_1", 42): True,
        ("negated_0_1", 1042): False,
        ("neutral", 42): True,
    }
    two = pd.concat([j, j.assign(judge="G")])
    with pytest.raises(InputError, match="several alignment judges"):
        subject_presence(two)
    assert len(subject_presence(two, "G")) == 3


def test_llm_writer_through_a_local_server(tmp_path):
    from implicit_bench.backends.llm import InvalidCounter, build_llm
    from implicit_bench.construction.triplets.negated_llm import llm_negated
    from tests.helpers.chat_server import ChatServer, completion

    def answer(body, n):
        text = body["messages"][-1]["content"]
        if "Neutral prompt: A mover carrying boxes." in text:
            return 200, completion(
                '{"negated_0_1": "A mover who is not a man carrying boxes.", '
                '"negated_1_1": "A woman mover who is not a man carrying boxes."}'
            )
        return 200, completion("I cannot help with that.")

    units = pd.DataFrame(
        {
            "unit_id": ["1", "2"],
            "prompt_neutral": ["A mover carrying boxes.", "A person cooking."],
            "stereotype": ["man", "woman"],
            "anti_stereotype": ["woman", "man"],
        }
    )
    with ChatServer(answer) as server:
        config = {
            "backend": "openai",
            "model": "m",
            "base_url": server.base_url,
            "cache": str(tmp_path / "llm.sqlite"),
            "backoff_s": 0.0,
        }
        counter = InvalidCounter("negation")
        written = llm_negated(units, build_llm(config), counter)
        assert written["1"].negated_1_1 == "A woman mover who is not a man carrying boxes."
        assert written["1"].writer == "llm:m"
        assert written["2"].negated_0_1 is None and written["2"].reason.startswith("llm_invalid")
        assert counter.as_dict()["invalid"] == 1 and server.hits == 2
        again = llm_negated(units, build_llm(config))  # cached: no new request
        assert server.hits == 2 and again["1"] == written["1"]
    out = add_negated_prompts(units, written)
    assert out["prompt_negated_0_1_check"].isna().tolist() == [True, False]


def test_extend_units_adds_the_prompt_columns():
    from implicit_bench.construction.triplets.hooks import NegationPromptParams, extend_units

    units = pd.DataFrame(
        {
            "unit_id": ["1", "2"],
            "stereotype": ["man", "x"],
            "anti_stereotype": ["woman", "y"],
            "prompt_neutral": ["A mover carrying boxes.", "A cat."],
            "prompt_stereotype": ["A man mover carrying boxes.", "A cat."],
            "prompt_anti_stereotype": ["A woman mover carrying boxes.", "A dog."],
        }
    )
    out, report = extend_units(units, NegationPromptParams())
    assert out["prompt_negated_1_1"].iloc[0] == "A woman mover who is not a man carrying boxes."
    assert (
        out["prompt_subject"].iloc[0] == "a photo of a mover"
        and out["prompt_subject"].isna().iloc[1]
    )
    assert report["prompt_negated_0_1"]["written"] == 1
    assert report["prompt_negated_0_1"]["failed"] == {
        "stereotype prompt does not differ from the neutral prompt": 1
    }
    same, off = extend_units(units, NegationPromptParams(enabled=False))
    assert off == {"enabled": False} and "prompt_negated_0_1" not in same


def test_multi_tail_attributes():
    from implicit_bench.construction.triplets.hooks import NegationPromptParams, extend_units
    from implicit_bench.construction.triplets.negated import tails

    assert tails('["man", "he"]', "man, he") == ["man", "he"]
    assert tails(None, "man") == ["man"]
    # any tail counts, as in the triplet checks
    assert (
        check_negated(
            "A she mover who is not a he.", "negated_1_1", ["man", "he"], ["woman", "she"]
        )
        is None
    )
    units = pd.DataFrame(
        {
            "unit_id": ["1"],
            "head": ["mover"],
            "stereotype": ["man, he"],
            "anti_stereotype": ["woman, she"],
            "stereotype_tails": ['["man", "he"]'],
            "anti_stereotype_tails": ['["woman", "she"]'],
            "prompt_neutral": ["a photo of a mover"],
            "prompt_stereotype": ["a photo of a man and he mover"],
            "prompt_anti_stereotype": ["a photo of a woman and she mover"],
        }
    )
    out, _ = extend_units(units, NegationPromptParams())
    assert (
        out["prompt_negated_1_1"].iloc[0]
        == "a photo of a woman and she mover who is not man and he"
    )
    assert out["prompt_negated_1_1_check"].isna().all()


def test_attribute_with_its_own_negation_word():
    # the anti-stereotype "without" is itself a negation word; the governing one is "who is not"
    assert (
        check_negated(
            "a photo of without family history who is not with",
            "negated_1_1",
            ["with"],
            ["without"],
        )
        is None
    )
    assert (
        check_negated(
            "a photo of family history who is not without", "negated_1_1", ["with"], ["without"]
        )
        == "stereotype_not_negated"
    )
