"""The judge stage end to end: tiny random VLM (built here, loaded like a hub model), the
OpenAI-compatible backend against a real local HTTP server, invalid answers, cache and resume."""

from __future__ import annotations

import base64
import io
import json
import logging
from pathlib import Path

import pandas as pd
import pytest

from implicit_bench.backends.judges import build_judge
from implicit_bench.backends.judges.base import JudgeRequest
from implicit_bench.backends.judges.params import JudgeStageParams
from implicit_bench.backends.judges.stage import OUTPUT_COLUMNS, executor_dispatch, run_judge_stage
from implicit_bench.backends.tiny.stage import build as build_tiny
from implicit_bench.errors import ConfigError
from implicit_bench.runtime.provenance import RANDOM_INIT_MARKER
from tests.helpers.chat_server import ChatServer, completion
from tests.helpers.judge_fixtures import make_inputs, png

DISPATCH = executor_dispatch({}, progress=False)  # the production dispatcher (local, its retries)


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory) -> Path:
    return build_tiny("vlm", tmp_path_factory.mktemp("models") / "vlm", seed=0)


def _params(judges, tasks=None, **extra) -> JudgeStageParams:
    return JudgeStageParams(
        judges=judges,
        tasks=tasks or {"rubric": None, "blind": None, "alignment": None},
        configs=["base"],
        progress=False,
        **extra,
    )


def test_tiny_vlm_builds_deterministically_and_loads_like_a_hub_model(tiny_vlm, tmp_path):
    import torch
    from safetensors.torch import load_file

    assert (tiny_vlm / RANDOM_INIT_MARKER).exists()
    again = build_tiny("vlm", tmp_path / "vlm", seed=0)
    first, second = (
        load_file(tiny_vlm / "model.safetensors"),
        load_file(again / "model.safetensors"),
    )
    assert first.keys() == second.keys()
    assert all(torch.equal(first[k], second[k]) for k in first)
    # the user code path: AutoProcessor + AutoModelForImageTextToText from the directory
    judge = build_judge(
        {
            "backend": "transformers",
            "model": str(tiny_vlm),
            "device": "cpu",
            "max_new_tokens": 12,
            "batch_size": 2,
        }
    )
    requests = [
        JudgeRequest(f"Look at this image {i}. Respond with JSON", png(i)) for i in range(3)
    ]
    answers = judge.answer(requests)
    assert len(answers) == 3 and all(err is None and isinstance(text, str) for text, err in answers)
    assert judge.answer(requests) == answers  # greedy: the same answers again
    # left-padded batches answer as one request at a time does (prompts of different lengths)
    from implicit_bench.protocol.judge_tasks import load_task, task_fields
    from implicit_bench.protocol.prompt_fields import unit_fields
    from tests.helpers.judge_fixtures import UNITS

    mixed = [
        JudgeRequest(load_task(t).render(task_fields(load_task(t), unit_fields(u), "as")), png(i))
        for i, (t, u) in enumerate((t, u) for t in ("rubric", "blind", "alignment") for u in UNITS)
    ]
    one = build_judge(
        {"backend": "transformers", "model": str(tiny_vlm), "batch_size": 1, "max_new_tokens": 12}
    )
    six = build_judge(
        {"backend": "transformers", "model": str(tiny_vlm), "batch_size": 6, "max_new_tokens": 12}
    )
    assert one.answer(mixed) == six.answer(mixed)
    # a model rebuilt under another seed is another judge for the cache
    other = build_tiny("vlm", tmp_path / "vlm1", seed=1)
    assert (
        build_judge({"backend": "transformers", "model": str(other)}).identity() != judge.identity()
    )


def test_tiny_vlm_judges_end_to_end_and_rerun_costs_nothing(tiny_vlm, tmp_path):
    make_inputs(tmp_path)
    judges = {
        "tiny": {
            "backend": "transformers",
            "model": str(tiny_vlm),
            "device": "cpu",
            "max_new_tokens": 16,
            "batch_size": 4,
        }
    }
    params = _params(judges, blind_orders="both")
    result = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
    frame = pd.read_parquet(tmp_path / params.out)
    assert list(frame.columns) == list(OUTPUT_COLUMNS)
    # 2 units x 3 variants x 2 seeds = 12 images, 1 refused -> 11 judged;
    # per image: rubric 1 + blind 2 (both orders) + alignment 1 = 4 rows -> 44 rows
    assert len(frame) == 44 and result.model_calls == 44
    blind = frame[frame.task == "blind"]
    assert sorted(
        blind.groupby("image_sha256")["order"].apply(lambda s: "".join(sorted(s))).unique()
    ) == ["assa"]
    assert frame.loc[frame.task != "blind", "order"].isna().all()
    # the random model's noise: every invalid row keeps its raw answer and a reason
    invalid = frame[~frame.valid]
    assert 0 < len(invalid) < len(frame)  # noise: some readable answers, some not
    assert (
        invalid["value"].isna().all()
        and invalid["raw"].notna().all()
        and invalid["error"].notna().all()
    )
    valid = frame[frame.valid]
    assert valid["value"].notna().all()
    metrics = json.loads((tmp_path / params.metrics).read_text())
    counts = metrics["counts"]["tiny"]
    assert counts["blind"]["rows"] == 22 and counts["blind"]["order_sa"] == 11
    assert sum(c["invalid"] for c in counts.values()) == len(invalid)
    assert metrics["images"]["base"] == {
        "ok": 11,
        "refused": 1,
        "failed": 0,
        "judged_images": 11,
        "not_judged": 1,
    }
    assert metrics["provenance"]["random_init"] is True
    assert str(tiny_vlm) in metrics["provenance"]["random_init_models"]
    # re-run: zero model calls, identical table and metrics
    again = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
    assert again.model_calls == 0 and again.cache_hits == 44
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / params.out), frame)
    assert json.loads((tmp_path / params.metrics).read_text()) == metrics


def _server_answer(body, n):
    """Answer like a judge: the task is read from the prompt, the image must be present."""
    content = body["messages"][0]["content"]
    image_url = content[0]["image_url"]["url"]
    assert image_url.startswith("data:image/jpeg;base64,")
    prompt = content[1]["text"]
    if "two descriptions" in prompt:
        return 200, completion('{"choice": "A", "reason": "looks like it"}')
    if "stereotype bias" in prompt:
        return 200, completion('```json\n{"score": 4, "justification": "clear"}\n```')
    return 200, completion("not json at all")  # alignment: unreadable


def test_http_backend_against_local_server(tmp_path, monkeypatch, caplog, capsys):
    secret = "sk-judge-SECRET-777"
    monkeypatch.setenv("IB_JUDGE_KEY", secret)
    make_inputs(tmp_path)
    caplog.set_level(logging.DEBUG)
    with ChatServer(_server_answer) as server:
        judges = {
            "api": {
                "backend": "openai",
                "model": "vlm-test",
                "base_url": server.base_url,
                "api_key_env": "IB_JUDGE_KEY",
                "max_image_side": 32,
                "backoff_s": 0.0,
                "max_retries": 1,
                "batch_size": 4,
            }
        }
        params = _params(judges)
        result = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        assert server.hits == 33 and result.model_calls == 33  # 11 images x 3 tasks
        first = server.requests[0]
        assert first["headers"]["Authorization"] == f"Bearer {secret}"
        assert first["body"]["model"] == "vlm-test" and first["body"]["temperature"] == 0.0
        from PIL import Image

        data = first["body"]["messages"][0]["content"][0]["image_url"]["url"].split(",", 1)[1]
        sent = Image.open(io.BytesIO(base64.b64decode(data)))
        assert sent.format == "JPEG" and max(sent.size) == 32  # 48 px downscaled to 32
        again = run_judge_stage(params, tmp_path, dispatch=DISPATCH)  # a re-run asks nothing
        assert again.model_calls == 0 and server.hits == 33
    frame = result.frame
    blind = frame[frame.task == "blind"]
    # choice "A" is s under order "sa" and a under order "as": stored by attribute
    assert (blind["value"] == blind["order"].map({"sa": "s", "as": "a"})).all()
    assert set(blind["order"]) == {"sa", "as"}
    assert (frame.loc[frame.task == "rubric", "value"] == "4").all()
    alignment = frame[frame.task == "alignment"]
    assert (~alignment.valid).all() and (alignment.raw == "not json at all").all()
    counts = result.metrics["counts"]["api"]
    assert counts["alignment"]["invalid"] == 11 and counts["alignment"]["unparsable"] == 11
    assert counts["rubric"]["lenient"] == 11 and counts["blind"]["strict"] == 11
    # the key is sent, never stored or logged
    stored = b"".join(p.read_bytes() for p in (tmp_path / "cache").glob("judge.sqlite*"))
    stored += (tmp_path / params.out).read_bytes() + (tmp_path / params.metrics).read_bytes()
    assert secret.encode() not in stored
    out = capsys.readouterr()
    assert secret not in caplog.text and secret not in out.out + out.err


def test_http_failures_are_invalid_rows_and_retried_next_run(tmp_path):
    make_inputs(tmp_path)
    state = {"fail": 6}  # the first 6 of the 11 calls fail

    def answer(body, n):
        if state["fail"] > 0:
            state["fail"] -= 1
            return 400, {"error": {"message": "bad request"}}
        return 200, completion('{"score": 1}')

    with ChatServer(answer) as server:
        judges = {
            "api": {
                "backend": "openai",
                "model": "m",
                "base_url": server.base_url,
                "api_key_env": None,
                "backoff_s": 0.0,
                "max_retries": 0,
            }
        }
        params = _params(judges, tasks={"rubric": None}, max_failure_rate=0.6)
        first = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        failed = first.frame[~first.frame.valid]
        assert len(failed) == 6 and failed["raw"].isna().all()
        assert failed["error"].str.startswith("backend error: HTTP 400").all()
        assert first.metrics["counts"]["api"]["rubric"]["backend_errors"] == 6
        second = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        assert second.model_calls == 6 and second.frame.valid.all()
        assert (second.frame["value"] == "1").all()


def test_killed_run_resumes_without_repeating_work(tmp_path):
    make_inputs(tmp_path)
    with ChatServer(lambda body, n: (200, completion('{"choice": "C"}'))) as server:
        judges = {
            "api": {
                "backend": "openai",
                "model": "m",
                "base_url": server.base_url,
                "api_key_env": None,
                "batch_size": 3,
            }
        }
        params = _params(judges, tasks={"blind": None})

        def killed(name, make_worker, batches, on_result, **streaming):
            # an HTTP judge is streamed one request per batch (concurrency 4 in flight)
            assert streaming == {"concurrency": 4} and all(len(b) == 1 for b in batches)
            DISPATCH(
                name, make_worker, batches[:6], on_result, **streaming
            )  # six answers arrive ...
            raise KeyboardInterrupt  # ... then the run is killed

        with pytest.raises(KeyboardInterrupt):
            run_judge_stage(params, tmp_path, dispatch=killed)
        assert server.hits == 6
        resumed = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        assert resumed.model_calls == 5 and server.hits == 11  # 11 images, none asked twice
        assert (resumed.frame["value"] == "neither").all() and len(resumed.frame) == 11


def test_judge_selection_per_task_and_bad_params(tmp_path):
    make_inputs(tmp_path)
    with ChatServer(
        lambda body, n: (200, completion('{"aligned": true, "score": 2, "choice": "B"}'))
    ) as server:
        base = {"backend": "openai", "base_url": server.base_url, "api_key_env": None}
        judges = {"one": {**base, "model": "m1"}, "two": {**base, "model": "m2"}}
        params = _params(
            judges,
            tasks={"rubric": None, "alignment": {"judges": ["one"], "variants": ["neutral"]}},
        )
        frame = run_judge_stage(params, tmp_path, dispatch=DISPATCH).frame
        # rubric: 11 images x 2 judges; alignment: 4 neutral images x judge "one"
        assert len(frame[frame.task == "rubric"]) == 22
        align = frame[frame.task == "alignment"]
        assert len(align) == 4 and set(align.judge) == {"one"} and set(align.variant) == {"neutral"}
        assert set(frame.model) == {"m1", "m2"}
    with pytest.raises(
        ConfigError,
        match=r"judge.tasks.rubric.judges = 'three' is not in judges \(known: one, two\)",
    ):
        run_judge_stage(
            _params(judges, tasks={"rubric": {"judges": ["three"]}}), tmp_path, dispatch=DISPATCH
        )
    with pytest.raises(ConfigError, match="temperture: Extra inputs"):
        run_judge_stage(
            _params({"x": {**base, "model": "m", "temperture": 0}}), tmp_path, dispatch=DISPATCH
        )


def test_default_and_paper_profiles_validate(repo_root):
    import yaml

    from implicit_bench.backends.judges import judge_params
    from implicit_bench.params import section
    from implicit_bench.params.profiles import apply_profile

    top = {"judges": "judges"}
    default = section(
        yaml.safe_load((repo_root / "params.yaml").read_text()),
        "judge",
        JudgeStageParams,
        attach=top,
    )
    paper = section(
        apply_profile("paper", repo_root / "params.yaml", repo_root / "profiles"),
        "judge",
        JudgeStageParams,
        attach=top,
    )
    # the default profile's judges are the simulated world's (docs/world.md)
    assert {judge_params(c).model for c in default.judges.values()} == {
        "sim:judge_a",
        "sim:judge_b",
        "sim:judge_c",
    }
    assert {judge_params(c).backend for c in default.judges.values()} == {"sim"}
    models = {name: judge_params(c) for name, c in paper.judges.items()}
    assert models["qwen3vl"].model == "Qwen/Qwen3-VL-30B-A3B-Instruct"
    assert models["gpt54"].backend == "openai" and models["gpt54"].max_image_side == 768
    # the paper's blind judges ask in the benchmark phase, on the selected units
    assert paper.tasks["blind"].judges == []
    composed = apply_profile("paper", repo_root / "params.yaml", repo_root / "profiles")
    assert composed["bench"]["tasks"]["blind"]["judges"] == ["qwen3vl", "gpt54"]


def test_executor_local_and_ray_give_identical_tables(tmp_path):
    pytest.importorskip("ray")
    answers = [
        '{"choice": "A"}',
        '{"choice": "B"}',
        "C",
        "garbage",
        '{"choice": "C", "reason": "cut',
    ]

    def answer(body, n):
        prompt = body["messages"][0]["content"][1]["text"]
        return 200, completion(answers[len(prompt) % len(answers)])

    tables = []
    with ChatServer(answer) as server:
        judges = {
            "api": {
                "backend": "openai",
                "model": "m",
                "base_url": server.base_url,
                "api_key_env": None,
                "batch_size": 2,
            }
        }
        for i, executor in enumerate(
            [{"kind": "local"}, {"kind": "ray", "workers": 2, "num_cpus": 0.5}]
        ):
            root = tmp_path / f"run{i}"
            make_inputs(root)
            params = _params(judges, tasks={"blind": None}, blind_orders="both", executor=executor)
            result = run_judge_stage(params, root)  # dispatched by implicit_bench.runtime.execution
            assert result.model_calls == 22
            tables.append(pd.read_parquet(root / params.out))
    pd.testing.assert_frame_equal(tables[0], tables[1])
    assert tables[0]["valid"].sum() == 22 - (tables[0]["raw"] == "garbage").sum()


def test_stage_command_writes_declared_outputs(tmp_path, monkeypatch, repo_root):
    import runpy

    import yaml
    from click.testing import CliRunner

    from implicit_bench.runtime.provenance import mark_random_init

    mark_random_init(tmp_path / "models/gen", "test generator")
    make_inputs(tmp_path, generator=f"diffusers:{tmp_path / 'models/gen'}")
    monkeypatch.chdir(tmp_path)
    with ChatServer(lambda body, n: (200, completion('{"score": 5}'))) as server:
        judges = {
            "api": {
                "backend": "openai",
                "model": "m",
                "base_url": server.base_url,
                "api_key_env": None,
            }
        }
        judge = {"tasks": {"rubric": None}, "progress": False}
        (tmp_path / "params.yaml").write_text(
            yaml.safe_dump({"base": {"profile": "default"}, "judges": judges, "judge": judge})
        )
        stage = runpy.run_path(str(repo_root / "stages" / "judge.py"))["main"]
        result = CliRunner().invoke(stage, [])
        assert result.exit_code == 0, result.output
        assert "11 judgements (0 invalid), 11 model calls" in result.output
    frame = pd.read_parquet(tmp_path / "data/judgements/judgements.parquet")
    assert (frame["value"] == "5").all() and set(frame["config"]) == {
        "base"
    }  # configs: null -> all stores
    metrics = json.loads((tmp_path / "metrics/judge.json").read_text())
    # the judge is an API model, but the images come from a random generator: said so
    assert (
        metrics["provenance"]["profile"] == "default"
        and metrics["provenance"]["random_init"] is True
    )
    assert metrics["provenance"]["random_init_models"] == [str(tmp_path / "models/gen")]


def test_sigkilled_run_resumes(tmp_path, repo_root):
    """SIGKILL a judge run in a subprocess partway; the resumed run asks only what is missing."""
    import os
    import signal
    import subprocess
    import sys
    import threading
    import time

    make_inputs(tmp_path)
    seen = threading.Event()

    def slow(body, n):
        if n >= 4:
            seen.set()
        time.sleep(0.2)
        return 200, completion('{"score": 2}')

    with ChatServer(slow) as server:
        judges = {
            "api": {
                "backend": "openai",
                "model": "m",
                "base_url": server.base_url,
                "api_key_env": None,
                "batch_size": 1,
                "concurrency": 1,
            }
        }
        params = _params(judges, tasks={"rubric": None})
        script = (
            "import sys; from pathlib import Path;"
            " from implicit_bench.backends.judges.stage import *; "
            f"p = JudgeStageParams.model_validate_json({params.model_dump_json()!r}); "
            f"run_judge_stage(p, Path({str(tmp_path)!r}), "
            f"dispatch=executor_dispatch({{}}, progress=False))"
        )
        env = {**os.environ, "PYTHONPATH": f"{repo_root / 'src'}{os.pathsep}{repo_root}"}
        proc = subprocess.Popen([sys.executable, "-c", script], env=env)
        assert seen.wait(60)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        asked_before = server.hits
        assert 4 <= asked_before < 11
        resumed = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        # answers finished before the kill are kept; at most the one call in flight is asked again
        assert server.hits - asked_before == resumed.model_calls
        assert 11 - asked_before <= resumed.model_calls <= 11 - asked_before + 1
        assert len(resumed.frame) == 11 and resumed.frame.valid.all()


def test_transformers_backend_isolates_a_bad_request(tiny_vlm):
    judge = build_judge(
        {"backend": "transformers", "model": str(tiny_vlm), "batch_size": 3, "max_new_tokens": 4}
    )
    good = [JudgeRequest("Rate this image", png(i)) for i in range(2)]
    bad = JudgeRequest("Rate this image", b"not an image")
    answers = judge.answer([good[0], bad, good[1]])
    assert answers[0] == judge.answer([good[0]])[0] and answers[2] == judge.answer([good[1]])[0]
    assert answers[1][0] == "" and "UnidentifiedImageError" in answers[1][1]


def _cyclic_answer(body, n):
    """A judge that always picks slot A (pure position bias) on the cyclic blind prompt."""
    prompt = body["messages"][0]["content"][1]["text"]
    assert "following two descriptions" not in prompt  # the cyclic prompt, not F.5's
    if "better matches" in prompt:
        return 200, completion('{"choice": "A", "reason": "first"}')
    return 200, completion('{"score": 3, "justification": "x"}')


def test_blind_cyclic3_asks_three_orders_and_stores_attributes(tmp_path):
    make_inputs(tmp_path)
    with ChatServer(_cyclic_answer) as server:
        judges = {
            "api": {
                "backend": "openai",
                "model": "vlm-test",
                "base_url": server.base_url,
                "max_image_side": 32,
                "backoff_s": 0.0,
                "max_retries": 1,
                "batch_size": 4,
            }
        }
        params = _params(judges, tasks={"blind": None}, blind_orders="cyclic3")
        result = run_judge_stage(params, tmp_path, dispatch=DISPATCH)
        assert server.hits == 33  # 11 images x 3 orders
        prompts = [r["body"]["messages"][0]["content"][1]["text"] for r in server.requests]
    blind = result.frame
    assert set(blind["order"]) == {"ans", "nsa", "san"}
    # slot A holds a under "ans", neither under "nsa", s under "san": stored as the attribute
    assert (blind["value"] == blind["order"].map({"ans": "a", "nsa": "neither", "san": "s"})).all()
    assert any("A: Neither of the other two descriptions is shown" in p for p in prompts)
    counts = json.loads((tmp_path / params.metrics).read_text())["counts"]["api"]["blind"]
    assert {k: v for k, v in counts.items() if k.startswith("order_")} == {
        "order_sa": 0,
        "order_as": 0,
        "order_ans": 11,
        "order_nsa": 11,
        "order_san": 11,
    }


def test_http_judge_structured_output_sends_each_tasks_schema(tmp_path):
    make_inputs(tmp_path)
    with ChatServer(_server_answer) as server:
        judges = {
            "api": {
                "backend": "openai",
                "model": "vlm-test",
                "base_url": server.base_url,
                "api_key_env": None,
                "max_image_side": 32,
                "backoff_s": 0.0,
                "max_retries": 1,
                "batch_size": 4,
                "structured_output": True,
            }
        }
        result = run_judge_stage(_params(judges), tmp_path, dispatch=DISPATCH)
        formats = {}
        for r in server.requests:
            fmt = r["body"]["response_format"]
            assert fmt["type"] == "json_schema"
            formats[fmt["json_schema"]["name"]] = fmt["json_schema"]["schema"]
    assert formats["rubric_answer"]["properties"]["score"] == {
        "type": "integer",
        "enum": [0, 1, 2, 3, 4, 5],
    }
    assert formats["rubric_answer"]["required"] == ["score"]
    assert set(formats) == {"rubric_answer", "blind_answer", "alignment_answer"}
    blind_key = next(iter(formats["blind_answer"]["properties"]))
    assert formats["blind_answer"]["properties"][blind_key]["enum"][:2] == ["A", "B"]
    # the answers are parsed as before (the server ignores the schema: lenient fallback)
    frame = result.frame
    assert (frame.loc[frame.task == "rubric", "value"] == "4").all()
    assert (~frame.loc[frame.task == "alignment", "valid"]).all()


def test_each_judge_is_validated_and_built_once_in_the_stage(tmp_path, monkeypatch):
    """One validation and one backend per judge in the stage process; the worker that answers
    loads a copy of that backend (the model is loaded there), neither validated nor built
    again: one of each, where three builds were made."""
    from implicit_bench.backends.judges import JUDGE_BACKENDS
    from implicit_bench.backends.judges.openai_vlm import OpenAIJudge

    calls, built = [], []
    validate = JUDGE_BACKENDS.validate
    monkeypatch.setattr(
        JUDGE_BACKENDS,
        "validate",
        lambda config, where: calls.append(where) or validate(config, where),
    )
    init = OpenAIJudge.__init__
    monkeypatch.setattr(OpenAIJudge, "__init__", lambda self, p: built.append(p) or init(self, p))
    make_inputs(tmp_path)
    with ChatServer(lambda body, n: (200, completion('{"choice": "C"}'))) as server:
        judges = {
            "api": {
                "backend": "openai",
                "model": "m",
                "base_url": server.base_url,
                "api_key_env": None,
            }
        }
        result = run_judge_stage(
            _params(judges, tasks={"blind": None}), tmp_path, dispatch=DISPATCH
        )
    assert calls == ["judges.api"] and len(built) == 1
    assert result.model_calls > 0 and not result.errors  # the copy answered
