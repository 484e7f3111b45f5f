"""NegT2IBench's prompt corpus and its accuracy from per-object judgements: the prompts of
Table 4 written exactly, the corpus's balance (Figures 5, 6), scoring worked out by hand (Table 3,
Figure 3's causes, Table 19's dead-zone passes), bad judgement rows, and the simulated world's
planted accuracy."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from implicit_bench.analysis.bootstrap import Bootstrap
from implicit_bench.audits.negation_accuracy import accuracy_report, validate_judgements
from implicit_bench.audits.negation_corpus import (
    COCO_CLASSES,
    _cell,
    check_prompt,
    corpus_summary,
    elements,
    join,
    write_corpus,
)
from implicit_bench.errors import InputError


class _Fixed:
    """A deck dealing a fixed sequence (to write Table 4's prompts exactly)."""

    def __init__(self, items: list[str]) -> None:
        self.items = list(items)

    def deal(self, k: int, distinct: bool = True) -> list[str]:
        out, self.items = self.items[:k], self.items[k:]
        return out


def test_table_4_prompts_are_written_exactly() -> None:
    decks = {
        "objects": _Fixed(["bus", "knife", "sandwich", "toilet"]),
        "values": _Fixed(["plastic"]),
    }
    (row,) = _cell("material", 2, 2, 1, decks)
    assert row["prompt"] == (
        "a photo of a plastic bus, a plastic knife, a non-plastic sandwich, and a "
        "non-plastic toilet"
    )
    objs = ["laptop", "zebra", "backpack", "surfboard", "carrot"]
    preds = ["right of", "right of", "below", "right of"]
    (row,) = _cell("directional", 2, 2, 1, {"objects": _Fixed(objs), "values": _Fixed(preds)})
    assert row["prompt"] == (
        "a photo of a laptop, a zebra, a backpack, a surfboard, and a carrot, where the laptop is "
        "right of the zebra, is right of the backpack, is not below the surfboard, and is not "
        "right of the carrot"
    )
    assert [s["polarity"] for s in row["statements"]] == ["positive"] * 2 + ["negated"] * 2
    decks = {"objects": _Fixed(["skis", "skateboard"]), "values": _Fixed(["bigger than"])}
    (row,) = _cell("comparative", 0, 1, 1, decks)
    assert row["prompt"] == (
        "a photo of a skis and a skateboard, where the skis is not bigger than the skateboard"
    )
    (row,) = _cell("color", 0, 1, 1, {"objects": _Fixed(["orange"]), "values": _Fixed(["brown"])})
    assert row["prompt"] == "a photo of a non-brown orange"
    (row,) = _cell("color", 1, 0, 1, {"objects": _Fixed(["apple"]), "values": _Fixed(["orange"])})
    assert row["prompt"] == "a photo of an orange apple"  # "an" before a vowel (our choice)
    assert join(["a"]) == "a" and join(["a", "b"]) == "a and b"
    bad = {**row, "prompt": "a photo of an apple"}
    assert check_prompt(bad) == "statement_missing"


def test_corpus_size_balance_and_determinism() -> None:
    corpus = write_corpus(per_cell=100, seed=0)
    assert len(COCO_CLASSES) == 79 and "person" not in COCO_CLASSES
    assert len(corpus) == 4800 and corpus["prompt_id"].is_unique
    assert (corpus.groupby(["category", "setting"]).size() == 100).all()
    summary = corpus_summary(corpus)
    for cat, block in summary["by_category"].items():
        assert block["classes_used"] == 79, cat  # every class in every category (Figure 5)
        lo, hi = block["even_allocation"]
        assert lo <= block["object_count_min"] and block["object_count_max"] <= hi + 1
        counts = list(block["values"].values())
        assert max(counts) - min(counts) <= 1  # values / predicates dealt evenly (Figure 6)
    # no object twice in a prompt; loads and element counts
    for rec in corpus.itertuples():
        objs = json.loads(rec.objects)
        assert len(set(objs)) == len(objs)
        extra = 1 if rec.kind == "relation" else 0
        assert len(objs) == rec.positive + rec.negated + extra
    assert (
        write_corpus(per_cell=3, seed=0)["prompt"].tolist() == write_corpus(3, 0)["prompt"].tolist()
    )
    assert write_corpus(3, 1)["prompt"].tolist() != write_corpus(3, 0)["prompt"].tolist()
    el = elements(write_corpus(per_cell=1, seed=0))
    # attributes: P+N objects and statements; relations: 1+P+N objects, P+N statements
    per = el.groupby(["category", "setting", "kind"]).size()
    assert per[("color", "2:2", "object")] == 4 and per[("color", "2:2", "statement")] == 4
    assert per[("depth", "2:1", "object")] == 4 and per[("depth", "2:1", "statement")] == 3


def _mini() -> tuple[pd.DataFrame, pd.DataFrame]:
    st = lambda o, t, v, p: {"object": o, "target": t, "value": v, "polarity": p}  # noqa: E731
    corpus = pd.DataFrame(
        [
            ("A", "color", "attribute", "1:1", 1, 1, ["cup", "bowl"],
             [st("cup", None, "red", "positive"), st("bowl", None, "red", "negated")]),
            ("B", "directional", "relation", "0:1", 0, 1, ["laptop", "zebra"],
             [st("laptop", "zebra", "left of", "negated")]),
            ("C", "directional", "relation", "1:0", 1, 0, ["kite", "bench"],
             [st("kite", "bench", "above", "positive")]),
        ],
        columns=["prompt_id", "category", "kind", "setting", "positive", "negated", "objects",
                 "statements"],
    )  # fmt: skip
    corpus["objects"] = corpus["objects"].map(json.dumps)
    corpus["statements"] = corpus["statements"].map(json.dumps)
    rows = [
        # A/1 passes; A/2: the bowl is absent, so its negated statement fails (no omission pass)
        ("A/1", "A", {"o0": 1, "o1": 1, "s0": 1, "s1": 0}),
        ("A/2", "A", {"o0": 1, "o1": 0, "s0": 1, "s1": 0}),
        # B/1: no predicate -> a dead-zone pass; B/2: the forbidden relation rendered
        ("B/1", "B", {"o0": 1, "o1": 1, "s0": None}),
        ("B/2", "B", {"o0": 1, "o1": 1, "s0": 1}),
        # C/1: no predicate fails a positive statement; C/2: the relation not rendered
        ("C/1", "C", {"o0": 1, "o1": 1, "s0": None}),
        ("C/2", "C", {"o0": 1, "o1": 1, "s0": 0}),
    ]
    judg = pd.DataFrame(
        [
            {"image_id": img, "prompt_id": p, "element_id": e, "holds": h}
            for img, p, els in rows
            for e, h in els.items()
        ]
    )
    return elements(corpus), judg


def v(x):
    return x["value"] if isinstance(x, dict) else x


def test_accuracy_by_hand() -> None:
    el, judg = _mini()
    r = accuracy_report(validate_judgements(judg, el, "j.csv"), el)
    assert r["images"] == 6 and v(r["overall"]) == pytest.approx(2 / 6)
    assert v(r["by_setting"]["1:1"]) == 0.5 and v(r["by_setting"]["0:1"]) == 0.5
    assert v(r["by_setting"]["1:0"]) == 0.0
    assert v(r["by_load"]["1"]) == pytest.approx(1 / 4) and v(r["by_load"]["2"]) == 0.5
    assert v(r["by_category"]["color"]) == 0.5
    assert v(r["by_category"]["directional"]) == pytest.approx(1 / 4)
    assert v(r["positive_minus_negated"]) == pytest.approx(-0.5)
    f = r["failed_statements"]
    assert f["total"] == 4 and f["forbidden_rendered_share"] == pytest.approx(0.25)
    assert f["by_setting"]["1:0"]["dead_zone"] == 1 and f["by_setting"]["1:0"]["not_rendered"] == 1
    assert f["by_setting"]["1:1"]["missing_object"] == 1
    dz = r["dead_zone_passes"]["directional"]
    assert dz == {"evaluable": 2, "passed": 1, "dead_zone_passes": 1, "share_of_passes": 1.0}


def test_accuracy_interval_resamples_prompts() -> None:
    el, judg = _mini()
    boot = Bootstrap(n=300, seed=4)
    r = accuracy_report(validate_judgements(judg, el, "j.csv"), el, boot)
    idx = boot.indices(3, "negt2i/accuracy")
    k, m = np.array([1, 1, 0]), np.array([2, 2, 2])  # passes and images per prompt A, B, C
    reps = k[idx].sum(axis=1) / m[idx].sum(axis=1)
    assert r["overall"]["ci"] == pytest.approx(np.percentile(reps, [2.5, 97.5]).tolist())


def test_bad_judgement_rows() -> None:
    el, judg = _mini()
    bad = judg.copy()
    bad.loc[2, "holds"] = 2
    with pytest.raises(InputError, match="row 3, field 'holds'"):
        validate_judgements(bad, el, "j.csv")
    with pytest.raises(InputError, match="field 'image_id'"):
        validate_judgements(judg.drop(index=3), el, "j.csv")  # A/1 without its s1
    bad = judg.copy()
    bad.loc[0, "holds"] = None
    with pytest.raises(InputError, match="row 1, field 'holds': empty for an object"):
        validate_judgements(bad, el, "j.csv")
    bad = judg.copy()
    bad.loc[0, "element_id"] = "s9"
    with pytest.raises(InputError, match="row 1, field 'element_id'"):
        validate_judgements(bad, el, "j.csv")


def test_simulated_images_recover_the_planted_accuracy() -> None:
    from implicit_bench.audits.negation_world import accuracy_truth, simulated_judgements
    from implicit_bench.world.params import NegT2IWorld

    world = NegT2IWorld(seeds=2, dead_zone={"directional": 0.1})
    corpus = write_corpus(per_cell=40, seed=3)
    t = accuracy_truth(corpus, world)
    # a directional 1:1 prompt: three objects, (1 - d) p+ and d + (1 - d)(1 - pf)
    one = corpus[(corpus["category"] == "directional") & (corpus["setting"] == "1:1")]
    want = 0.9**3 * (0.9 * 0.7) * (0.1 + 0.9 * 0.55)
    assert accuracy_truth(one, world)["overall"] == pytest.approx(want)
    # a colour 2:0 prompt: two objects, p+^2
    two = corpus[(corpus["category"] == "color") & (corpus["setting"] == "2:0")]
    assert accuracy_truth(two, world)["overall"] == pytest.approx(0.9**2 * 0.7**2)
    el = elements(corpus)
    judg = simulated_judgements(el, world, 7)
    assert len(judg) == 2 * len(el) and judg["holds"].isna().any()
    r = accuracy_report(validate_judgements(judg, el, "sim"), el, Bootstrap(n=500, seed=1))
    covered = [
        r[k][g]["ci"][0] <= t[k][g] <= r[k][g]["ci"][1]
        for k in ("by_setting", "by_load", "by_category")
        for g in r[k]
    ]
    assert sum(covered) >= len(covered) - 2
    assert r["overall"]["ci"][0] <= t["overall"] <= r["overall"]["ci"][1]


def test_negation_stage_writes_the_corpus_and_its_accuracy(tmp_path, monkeypatch) -> None:
    import importlib.util

    import yaml
    from click.testing import CliRunner

    from tests.helpers.paths import REPO_ROOT

    rows = [
        dict(config="c", unit_id="u1", variant="neutral", seed=42, judge="J", task="blind",
             value=v, valid=True, order=o, raw=v)
        for o, v in (("sa", "s"), ("as", "a"))
    ]  # fmt: skip
    (tmp_path / "data" / "judgements").mkdir(parents=True)
    (tmp_path / "data" / "interim").mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(tmp_path / "data" / "judgements" / "judgements.parquet")
    pd.DataFrame({"unit_id": ["u1"], "bias_type": ["gender"]}).to_parquet(
        tmp_path / "data" / "interim" / "units.parquet"
    )
    params = {
        "negation": {"bootstrap": {"n": 50}, "corpus": {"per_cell": 5, "source": "sim"}},
        "world": {"seed": 3, "negt2i": {"seeds": 2}},
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.chdir(tmp_path)
    spec = importlib.util.spec_from_file_location("stage_neg", REPO_ROOT / "stages" / "negation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    res = CliRunner().invoke(module.main, [], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    corpus = pd.read_csv(tmp_path / "data" / "negation" / "negt2i_prompts.csv")
    assert len(corpus) == 6 * 8 * 5
    block = json.loads((tmp_path / "metrics" / "negation.json").read_text())["corpus"]
    assert block["prompts"] == 240 and block["accuracy"]["simulated"] is True
    assert block["accuracy"]["images"] == 480 and set(block["accuracy"]["by_setting"]) == {
        "1:0", "0:1", "2:0", "1:1", "0:2", "2:1", "1:2", "2:2"
    }  # fmt: skip
    assert "1:0" in block["accuracy"]["planted"]["by_setting"]
    # a judgements file: the stage reads it against the same corpus
    from implicit_bench.audits.negation_world import simulated_judgements
    from implicit_bench.world.params import NegT2IWorld

    judg = simulated_judgements(elements(write_corpus(5, 0)), NegT2IWorld(seeds=1), 1)
    judg.to_csv(tmp_path / "j.csv", index=False)
    params["negation"]["corpus"] = {"per_cell": 5, "source": "file", "judgements": "j.csv"}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    res = CliRunner().invoke(module.main, [], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    block = json.loads((tmp_path / "metrics" / "negation.json").read_text())["corpus"]
    assert block["accuracy"]["simulated"] is False and block["accuracy"]["images"] == 240
    judg.iloc[:-1].to_csv(tmp_path / "j.csv", index=False)  # the last image loses an element
    res = CliRunner().invoke(module.main, [])
    assert res.exit_code != 0 and "j.csv" in res.output and "image_id" in res.output


def test_cli_corpus_and_accuracy(tmp_path) -> None:
    from click.testing import CliRunner

    from implicit_bench.cli.main import main

    corpus, els = tmp_path / "c.csv", tmp_path / "e.csv"
    res = CliRunner().invoke(
        main,
        [
            "audit",
            "negation-corpus",
            "--out",
            str(corpus),
            "--per-cell",
            "2",
            "--elements",
            str(els),
        ],
    )
    assert res.exit_code == 0, res.output
    assert len(pd.read_csv(corpus)) == 96 and len(pd.read_csv(els)) > 96
    el, judg = _mini()
    # the hand-worked corpus as a file, with its judgements
    mini = tmp_path / "mini.csv"
    frame = pd.DataFrame(
        {"prompt_id": ["A", "B", "C"], "category": ["color", "directional", "directional"],
         "kind": ["attribute", "relation", "relation"], "setting": ["1:1", "0:1", "1:0"],
         "positive": [1, 0, 1], "negated": [1, 1, 0], "load": [2, 1, 1], "prompt": ["x"] * 3}
    )  # fmt: skip
    objs = el[el["kind"] == "object"].groupby("prompt_id")["object"].apply(list)
    sts = (
        el[el["kind"] == "statement"]
        .groupby("prompt_id")
        .apply(
            lambda f: f[["object", "target", "value", "polarity"]].to_dict("records"),
            include_groups=False,
        )
    )
    frame["objects"] = frame["prompt_id"].map(lambda p: json.dumps(objs[p]))
    frame["statements"] = frame["prompt_id"].map(lambda p: json.dumps(sts[p]))
    frame.to_csv(mini, index=False)
    jpath, out = tmp_path / "j.csv", tmp_path / "acc.json"
    judg.to_csv(jpath, index=False)
    args = ["audit", "negation-accuracy", str(jpath), "--corpus", str(mini), "--out", str(out)]
    res = CliRunner().invoke(main, [*args, "--n-boot", "50"])
    assert res.exit_code == 0, res.output
    got = json.loads(out.read_text())
    assert got["overall"]["value"] == pytest.approx(2 / 6)
    assert got["failed_statements"]["forbidden_rendered_share"] == pytest.approx(0.25)
    res = CliRunner().invoke(main, ["audit", "negation-accuracy", "--out", str(out)])
    assert res.exit_code == 2


def test_recovery_entries_of_the_corpus_accuracy() -> None:
    from implicit_bench.audits.negation_world import simulated_judgements
    from implicit_bench.world.params import NegT2IWorld, WorldParams
    from implicit_bench.world.recovery.stage import negt2i_entries

    world = WorldParams(seed=4, negt2i=NegT2IWorld(seeds=3))
    corpus = write_corpus(30, 2)
    el = elements(corpus)
    judg = validate_judgements(simulated_judgements(el, world.negt2i, world.seed), el, "sim")
    acc = {"simulated": True, **accuracy_report(judg, el, Bootstrap(n=400, seed=3))}
    entries = negt2i_entries({"corpus": {"per_cell": 30, "seed": 2, "accuracy": acc}}, world)
    assert len(entries) == 1 + 8 + 4 + 6
    covered = [e["covered"] for e in entries]
    assert sum(covered) >= len(covered) - 2
    assert negt2i_entries({"corpus": {"per_cell": 0, "accuracy": None}}, world) == []


def test_the_corpus_block_keeps_its_settings_beside_its_cell_counts():
    """metrics/negation.json: corpus.per_cell is the setting recovery rebuilds the corpus from;
    the prompts per category / setting are corpus.cells."""
    from implicit_bench.audits.negation_corpus import corpus_summary, write_corpus

    summary = corpus_summary(write_corpus(2, 0))
    assert "per_cell" not in summary
    assert summary["cells"]["color/1:0"] == 2 and len(summary["cells"]) == 48
