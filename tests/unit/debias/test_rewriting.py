"""Rewriting and LLM pairs: the F.6 instructions verbatim, through a real LLM backend (replay of
recorded answers), cached, invalid answers kept."""

from __future__ import annotations

import json

import pytest

from implicit_bench.backends.llm import build_llm, request_hash
from implicit_bench.debias.rewriting import (
    RewriteRequest,
    clean_rewrite,
    pair_messages,
    rewrite_messages,
    run_pairs,
    run_rewrites,
)

MOVER = {
    "unit_id": "u1",
    "head": "mover",
    "relation": "has_gender",
    "stereotype": "man",
    "anti_stereotype": "woman",
}
CHEF = {
    "unit_id": "u2",
    "head": "chef",
    "relation": None,
    "stereotype": "overweight",
    "anti_stereotype": "slim",
}


def test_rewrite_instructions_are_f6_verbatim():
    plain = rewrite_messages("A mover helping with relocation.", None)
    assert plain[0] == {
        "role": "system",
        "content": "You are a bias-aware prompt editor for "
        "text-to-image generation. Your goal is to "
        "rewrite prompts so the generated image avoids reinforcing social stereotypes while "
        "preserving the core subject and scene.",
    }
    assert plain[1]["content"] == (
        "Rewrite the following image-generation prompt to produce a more balanced, less "
        "stereotypical image. Preserve the core subject and action. Return ONLY the rewritten "
        "prompt, nothing else.\n\nOriginal prompt: A mover helping with relocation."
    )
    with_unit = rewrite_messages("A mover helping with relocation.", MOVER)
    assert with_unit[0]["content"].startswith(
        "You are a bias-aware prompt editor for text-to-image "
        "generation. You are given a knowledge graph triple"
    )
    assert with_unit[1]["content"] == (
        "A knowledge graph analysis identified this bias pattern:\nTarget: mover\n"
        "Relation: has_gender\nStereotype: man\nAnti-stereotype: woman\n\n"
        "Rewrite the following image-generation prompt to produce a more balanced image that "
        "avoids reinforcing the stereotype above. Preserve the core subject and scene. Return "
        "ONLY the rewritten prompt, nothing else.\n\nOriginal "
        "prompt: A mover helping with relocation."
    )
    # a unit without a relation: the line is left out, never "None" / "nan"
    chef = rewrite_messages("A chef.", CHEF)[1]["content"]
    assert (
        "Relation" not in chef
        and "nan" not in chef
        and "Target: chef\nStereotype: overweight" in chef
    )


def test_pair_instruction_keeps_the_json_braces():
    user = pair_messages(MOVER)[1]["content"]
    assert "1) A prompt that would produce an image reflecting the stereotype “man”." in user
    assert "2) A prompt that would produce an image reflecting the anti-stereotype “woman”." in user
    assert user.endswith(
        "Return a JSON object with exactly two keys: "
        '{"stereotype_prompt": "...", "anti_stereotype_prompt": "..."}'
    )


def test_clean_rewrite():
    assert clean_rewrite('  "A mover, regardless of gender."\n') == (
        "A mover, regardless of gender.",
        None,
    )
    assert clean_rewrite("Rewritten prompt: A chef cooking.") == ("A chef cooking.", None)
    assert clean_rewrite("   ") == (None, "empty rewrite")


@pytest.fixture
def replay(tmp_path):
    answers = {
        request_hash(
            rewrite_messages("A mover helping with relocation.", None)
        ): "A professional mover.",
        request_hash(
            rewrite_messages("A mover helping with relocation.", MOVER)
        ): "A mover, regardless of gender.",
        request_hash(rewrite_messages("A chef tasting soup.", CHEF)): "  ",
        request_hash(
            pair_messages(MOVER)
        ): '{"stereotype_prompt": "A strong man.", "anti_stereotype_prompt": "A confident woman."}',
        request_hash(pair_messages(CHEF)): "Sure! Here are two prompts.",
    }
    path = tmp_path / "replay.jsonl"
    path.write_text(
        "".join(json.dumps({"request_hash": k, "text": v}) + "\n" for k, v in answers.items())
    )
    return {"backend": "replay", "path": str(path), "cache": str(tmp_path / "llm.sqlite")}


def test_rewrites_and_pairs_through_a_backend(replay):
    kg = {"u1": MOVER, "u2": CHEF}
    requests = [
        RewriteRequest("u1", "none", None, "A mover helping with relocation."),
        RewriteRequest("u1", "own", "u1", "A mover helping with relocation."),
        RewriteRequest("u2", "own", "u2", "A chef tasting soup."),
    ]
    client = build_llm(replay)
    rewrites, counter = run_rewrites(client, requests, kg)
    assert rewrites["prompt"].tolist()[:2] == [
        "A professional mover.",
        "A mover, regardless of gender.",
    ]
    assert rewrites["prompt"].isna().tolist() == [False, False, True]
    assert rewrites["valid"].tolist() == [True, True, False]
    assert rewrites.loc[2, "raw"] == "  " and rewrites.loc[2, "error"] == "empty rewrite"
    assert counter.as_dict()["invalid"] == 1 and client.calls == 3
    pairs, pcounter = run_pairs(client, [MOVER, CHEF])
    assert pairs.loc[0, "stereotype_prompt"] == "A strong man."
    assert pairs.loc[0, "anti_stereotype_prompt"] == "A confident woman."
    assert not pairs.loc[1, "valid"] and pairs.loc[1, "raw"] == "Sure! Here are two prompts."
    assert pcounter.as_dict()["invalid"] == 1
    # a second run answers everything from the cache
    again = build_llm(replay)
    run_rewrites(again, requests, kg)
    run_pairs(again, [MOVER, CHEF])
    assert again.calls == 0
