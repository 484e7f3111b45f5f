"""NegT2IBench's per-element judge hook: a real OpenAI-compatible server on 127.0.0.1
(tests/helpers/chat_server.py) answers each element question of planted corpus images; the
judgements it yields give Table 3 by setting and statement load, worked out by hand below."""

from __future__ import annotations

import base64
import io
import json
import re

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from PIL import Image

from implicit_bench.audits.negation_corpus import elements, write_corpus
from implicit_bench.audits.negation_judge import (
    JudgeCost,
    element_question,
    holds_of,
    read_answer,
)
from implicit_bench.cli.main import main
from tests.helpers.chat_server import ChatServer, completion

# color prompts of write_corpus(1, 0) (printed by the corpus; the test reads them back)
SETTINGS = ("2:0", "0:2", "2:1", "1:2", "2:2")


def test_questions_and_answers_by_hand():
    obj = {"kind": "object", "object": "apple", "category": "color"}
    assert element_question(obj).startswith("Is there an apple in the image?")
    attr = {"kind": "statement", "object": "cup", "value": "red", "category": "color"}
    assert element_question(attr).startswith("Is the cup red?")
    rel = {
        "kind": "statement",
        "object": "laptop",
        "value": "left of",
        "target": "zebra",
        "category": "directional",
    }
    assert element_question(rel).startswith("Is the laptop left of the zebra?")
    assert "unclear" in element_question(rel) and "unclear" not in element_question(attr)
    assert read_answer('{"answer": "Yes"}') == "yes"
    assert read_answer("No, it is blue.") == "no"
    assert read_answer("maybe") is None and read_answer('{"answer": "perhaps"}') is None
    assert holds_of("yes", "object", False) == 1.0 and holds_of("no", "statement", True) == 0.0
    assert holds_of("unclear", "statement", True) != holds_of("unclear", "statement", True)  # nan
    assert holds_of("unclear", "object", True) is None  # an object is present or not
    assert holds_of("unclear", "statement", False) is None  # attributes have no dead zone
    cost = JudgeCost(load_s=2.0, seconds=[1.0, 3.0], questions=[2, 6])
    assert cost.summary() == {
        "images_timed": 2,
        "s_per_image": 2.0,
        "s_per_question": 0.5,  # 4 s over 8 questions
        "questions_per_image": 4.0,
        "gpu_gib": None,
        "load_s": 2.0,
    }


def _png(index: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (index, 0, 0)).save(buf, format="PNG")
    return buf.getvalue()


def test_table3_by_setting_and_load_from_a_judge_server(tmp_path, monkeypatch):
    corpus = write_corpus(1, 0)
    el = elements(corpus)
    color = corpus[corpus["category"] == "color"].set_index("setting")["prompt_id"]
    directional = corpus[(corpus["category"] == "directional") & (corpus["setting"] == "0:1")][
        "prompt_id"
    ].iloc[0]
    # images: a (every element as asked) and b of each color prompt; one directional 0:1 image
    plan = [(f"{color[s]}/{v}", color[s], s, v) for s in SETTINGS for v in "ab"]
    plan.append((f"{directional}/a", directional, "0:1", "dead"))
    rows, truth = [], {}
    for index, (image_id, prompt_id, setting, version) in enumerate(plan, start=1):
        (tmp_path / f"{index}.png").write_bytes(_png(index))
        rows.append({"image_id": image_id, "prompt_id": prompt_id, "path": f"{index}.png"})
        for e in el[el["prompt_id"] == prompt_id].to_dict("records"):
            want = "no" if e["polarity"] == "negated" else "yes"  # every element passes
            if version == "b" and setting == "2:0" and e["element_id"] == "s0":
                want = "no"  # a positive statement not rendered: fails
            if version == "b" and setting == "0:2" and e["element_id"] == "s1":
                want = "yes"  # a forbidden condition rendered: fails
            if version == "b" and setting == "1:2" and e["element_id"] in ("o1", "s1"):
                want = "no"  # the bear missing (o1; s1 is about it): fails
            if version == "b" and setting == "2:2" and e["element_id"] == "o2":
                want = "I cannot say"  # unparsed: the image is left out
            if version == "dead" and e["kind"] == "statement":
                want = "unclear"  # no predicate: a negated relation's dead-zone pass
            truth[(index, element_question(e))] = want
    pd.DataFrame(rows).to_csv(tmp_path / "images.csv", index=False)

    def answer(body, n):
        content = body["messages"][0]["content"]
        data = content[0]["image_url"]["url"].split(",", 1)[1]
        index = Image.open(io.BytesIO(base64.b64decode(data))).getpixel((0, 0))[0]
        want = truth[(index, content[1]["text"])]
        text = json.dumps({"answer": want}) if want in ("yes", "no", "unclear") else want
        return 200, completion(text)

    monkeypatch.setenv("IB_NEG_KEY", "k")
    monkeypatch.setenv("IMPLICIT_BENCH_RUN_LOG", str(tmp_path / "runs.jsonl"))
    monkeypatch.chdir(tmp_path)
    with ChatServer(answer) as server:
        judge = {
            "backend": "openai",
            "model": "vlm-test",
            "base_url": server.base_url,
            "api_key_env": "IB_NEG_KEY",
            "max_image_side": None,
            "backoff_s": 0.0,
            "max_retries": 1,
            "batch_size": 4,
        }
        (tmp_path / "params.yaml").write_text(yaml.safe_dump({"judges": {"vqa": judge}}))
        args = [
            "audit", "negation-judge", "images.csv", "--judge", "vqa", "--per-cell", "1",
            "--out", "judgements.csv", "--accuracy", "acc.json", "--n-boot", "50",
            "--cache", str(tmp_path / "answers.sqlite"),
        ]  # fmt: skip
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        questions = sum(int((el["prompt_id"] == p).sum()) for _, p, _, _ in plan)
        assert server.hits == questions
        first = (tmp_path / "judgements.csv").read_text()
        rerun = CliRunner().invoke(main, args)  # every answer from the cache: nothing asked
        assert rerun.exit_code == 0, rerun.output
        assert server.hits == questions and (tmp_path / "judgements.csv").read_text() == first
        assert f"0 questions asked, {questions} answers from the cache" in rerun.output
    acc = json.loads((tmp_path / "acc.json").read_text())
    assert acc["judging"]["images"] == 11 and acc["judging"]["images_judged"] == 10
    assert acc["judging"]["images_left_out"] == {"unparsed": 1, "unusable": 0, "failed": 0}
    by_setting = {s: v["value"] for s, v in acc["by_setting"].items()}
    # a passes everywhere; b fails on 2:0, 0:2, 1:2, passes on 2:1, is left out on 2:2
    assert by_setting == {
        "0:1": 1.0,
        "2:0": 0.5,
        "0:2": 0.5,
        "2:1": 1.0,
        "1:2": 0.5,
        "2:2": 1.0,
    }
    # load 1: the dead-zone image 1/1; 2: 2:0 and 0:2, 2 of 4; 3: 2:1 and 1:2, 3 of 4; 4: 1/1
    assert {k: v["value"] for k, v in acc["by_load"].items()} == {
        "1": 1.0,
        "2": 0.5,
        "3": 0.75,
        "4": 1.0,
    }
    assert acc["overall"]["value"] == pytest.approx(7 / 10)
    failed = acc["failed_statements"]
    assert failed["total"] == 3
    assert failed["by_setting"]["2:0"]["not_rendered"] == 1
    assert failed["by_setting"]["0:2"]["forbidden_rendered"] == 1
    assert failed["by_setting"]["1:2"]["missing_object"] == 1
    assert acc["dead_zone_passes"]["directional"]["dead_zone_passes"] == 1
    judged = pd.read_csv(tmp_path / "judgements.csv")
    assert set(judged.columns) == {"image_id", "prompt_id", "element_id", "holds", "answer"}
    assert judged["holds"].isna().sum() == 1  # the dead-zone answer
    # the judge's timings: printed and in the run log, never in a written file
    assert "s_per_question" in result.output
    assert "seconds" not in judged.columns and "s_per_image" not in json.dumps(acc)
    log = [json.loads(x) for x in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert [e["stage"] for e in log] == ["audit negation-judge"] * 2
    assert log[0]["cost"]["questions_per_image"] == pytest.approx(questions / 11)
    assert log[1]["cost"]["images_timed"] == 0  # the re-run timed nothing
    assert re.search(r'"images_timed": 11', result.output)
    assert acc["judging"]["answers_from_cache"] == questions  # acc.json: the re-run's
    # the negation stage's route (negation.corpus.source: file) reads the same file alike
    from implicit_bench.analysis.bootstrap import Bootstrap
    from implicit_bench.audits.negation_accuracy import accuracy_report, read_judgements

    again = accuracy_report(
        read_judgements(str(tmp_path / "judgements.csv"), el), el, Bootstrap(n=50, seed=42)
    )
    assert {s: v["value"] for s, v in again["by_setting"].items()} == by_setting


def test_a_judge_whose_every_answer_is_unparsed_leaves_every_image_out(tmp_path, monkeypatch):
    """Nothing judged: the judgements file is empty and Table 3 has no image, not an error."""
    corpus = write_corpus(1, 0)
    pid = corpus["prompt_id"].iloc[0]
    (tmp_path / "0.png").write_bytes(_png(1))
    pd.DataFrame([{"image_id": "x", "prompt_id": pid, "path": "0.png"}]).to_csv(
        tmp_path / "images.csv", index=False
    )
    monkeypatch.setenv("IB_NEG_KEY", "k")
    monkeypatch.setenv("IMPLICIT_BENCH_RUN_LOG", str(tmp_path / "runs.jsonl"))
    monkeypatch.chdir(tmp_path)
    with ChatServer(lambda body, n: (200, completion("a red square"))) as server:
        judge = {"backend": "openai", "model": "m", "base_url": server.base_url,
                 "api_key_env": "IB_NEG_KEY", "max_image_side": None, "max_retries": 1}  # fmt: skip
        (tmp_path / "params.yaml").write_text(yaml.safe_dump({"judges": {"vqa": judge}}))
        result = CliRunner().invoke(
            main,
            ["audit", "negation-judge", "images.csv", "--judge", "vqa", "--per-cell", "1",
             "--out", "j.csv", "--accuracy", "acc.json", "--cache", str(tmp_path / "c.sqlite")],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    acc = json.loads((tmp_path / "acc.json").read_text())
    assert acc["images"] == 0 and acc["judging"]["images_left_out"]["unparsed"] == 1
    assert acc["overall"]["value"] is None and acc["by_setting"] == {}
    assert pd.read_csv(tmp_path / "j.csv").empty
