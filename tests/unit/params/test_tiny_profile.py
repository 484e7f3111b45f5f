"""profiles/tiny.yaml mirrors profiles/paper.yaml key for key, on tiny models of the paper's
own architectures (built locally by the `models` stage)."""

from __future__ import annotations

from typing import Any

import yaml

from tests.helpers.paths import REPO_ROOT


def _load(name: str) -> dict[str, Any]:
    return yaml.safe_load((REPO_ROOT / "profiles" / f"{name}.yaml").read_text(encoding="utf-8"))


def _paths(node: Any, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every key path; a backend block's own keys are left out (they belong to its backend)."""
    out: set[tuple[str, ...]] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            path = (*prefix, str(key))
            out.add(path)
            if not (isinstance(value, dict) and "backend" in value):
                out |= _paths(value, path)
    return out


def _get(node: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


def test_tiny_has_every_key_of_the_paper_profile():
    from implicit_bench.runtime.registry import COST_KEYS

    paper, tiny = _load("paper"), _load("tiny")
    missing = sorted(".".join(p) for p in _paths(paper) - _paths(tiny) if p[-1] not in COST_KEYS)
    assert not missing, f"profiles/tiny.yaml lacks paper keys: {missing}"
    # backend blocks: same backend, same keys, unless the paper's is an API model (docs/profiles.md)
    api = {"openai", "openai_images"}
    for path in _paths(paper):
        block = _get(paper, path)
        if isinstance(block, dict) and "backend" in block:
            mine = _get(tiny, path)
            if block["backend"] in api and mine["backend"] != block["backend"]:
                continue
            assert mine["backend"] == block["backend"], ".".join(path)
            # local tiny models have no hub revision; the cost keys size a paper run, not a tiny one
            extra_ok = {"model", "pretrained", "revision", *COST_KEYS}
            assert set(block) - set(mine) <= extra_ok, (".".join(path), set(block) - set(mine))


def test_tiny_models_are_built_locally_and_named_by_the_profile():
    tiny = _load("tiny")
    built = set(tiny["models"]["build"])
    refs = {
        tiny["generators"]["qwen_image"]["model"],
        tiny["generators"]["sd3"]["model"],
        *(j["model"] for j in tiny["judges"].values()),
        tiny["clip"]["model"]["model"],
        tiny["debias"]["embedder"]["model"],
        tiny["llms"][tiny["debias"]["rewriter"]]["model"],
    }
    assert refs == {f"models/tiny/{kind}" for kind in built - {"openclip"}}
    # every hub model of the paper profile that runs is replaced
    paper_text = (REPO_ROOT / "profiles" / "tiny.yaml").read_text(encoding="utf-8")
    for hub in ("Qwen/", "stabilityai/", "google/", "openai/clip"):
        assert f"model: {hub}" not in paper_text


def test_paper_hub_models_pin_a_revision_or_say_why_not():
    """Every hub model the paper profile loads locally names a commit, except ids that cannot be
    verified offline, which are marked UNVERIFIED beside the id (docs/profiles.md)."""
    import re

    paper = _load("paper")
    text = (REPO_ROOT / "profiles" / "paper.yaml").read_text(encoding="utf-8")
    local_backends = {"diffusers", "transformers", "sentence_transformers", "open_clip"}
    seen = 0
    for path in _paths(paper):
        block = _get(paper, path)
        if not (isinstance(block, dict) and block.get("backend") in local_backends):
            continue
        model = block["model"]
        if model.startswith(("package:", "models/")):
            continue
        seen += 1
        line = next(ln for ln in text.splitlines() if f"model: {model}" in ln)
        if block.get("revision") is None:
            assert "UNVERIFIED" in line, (
                f"{'.'.join(path)}: {model} has no revision and no UNVERIFIED mark"
            )
        else:
            assert re.fullmatch(r"[0-9a-f]{40}", block["revision"]), ".".join(path)
    assert seen >= 6


def test_stages_depend_on_the_models_folder_not_on_one_kind():
    """`models` has one out, models/tiny, whose contents depend on the profile (models.build): a
    dep on models/tiny/<kind> would be missing under a profile that does not build that kind."""
    import re

    text = (REPO_ROOT / "dvc.yaml").read_text(encoding="utf-8")
    assert not re.findall(r"^\s*- models/tiny/\S+", text, flags=re.M)


def test_every_profile_judges_presence_of_every_negation_setting():
    """The negation stage's lenient rates need a presence (alignment) judgement of each scored
    variant (audits.negation.SETTINGS: 1:0, 0:1, 1:1), in params.yaml and in every profile."""
    from implicit_bench.audits.negation import SETTINGS

    default = yaml.safe_load((REPO_ROOT / "params.yaml").read_text(encoding="utf-8"))
    for name, params in (
        ("params.yaml", default),
        ("paper", _load("paper")),
        ("tiny", _load("tiny")),
    ):
        rendered = (params.get("render") or {}).get("variants") or default["render"]["variants"]
        if not {"negated_0_1", "negated_1_1"} & set(rendered):
            # negated prompts are opt-in (off in the paper profile): nothing to judge
            assert name == "paper", name
            continue
        variants = set(params["judge"]["tasks"]["alignment"]["variants"])
        assert set(SETTINGS) <= variants, (name, sorted(set(SETTINGS) - variants))
