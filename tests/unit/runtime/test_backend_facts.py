"""Backends own their facts: each model backend declares its transport where it
registers, HTTP backends carry their endpoint defaults and key header in their own params model,
generator configs declare their runtime keys; the preflight and ``plan`` read them from there, and
no list of backend names lives anywhere else in the library."""

from __future__ import annotations

import ast
import subprocess
import sys
from typing import Any

import pytest

from implicit_bench.backends.faces import FACE_BACKENDS
from implicit_bench.backends.generators import GENERATORS, settings_hash
from implicit_bench.errors import ConfigError
from implicit_bench.runtime.httpretry import HttpParams
from implicit_bench.runtime.preflight.backends import (
    http_model,
    is_http,
    load_registries,
    transport,
)
from implicit_bench.runtime.preflight.checks import (
    ModelUse,
    _endpoint,
    check_local,
    models_in_use,
    preflight,
)
from implicit_bench.runtime.preflight.stage import MODEL_STAGES
from implicit_bench.runtime.registry import TRANSPORTS, Registry, registered_places
from tests.helpers.chat_server import ChatServer
from tests.helpers.paths import REPO_ROOT

SRC = REPO_ROOT / "src" / "implicit_bench"


def registries() -> dict[str, Registry[Any]]:
    """Params place -> registry, every model registry imported."""
    load_registries()
    return registered_places()


def _model_registries() -> dict[str, Registry[Any]]:
    """Every registry of model backends, by the params place naming them (faces: the audit's)."""
    return {**registries(), "faces.model": FACE_BACKENDS}


def _where(place: str) -> str:
    """A params place of that registry (a catalogue entry or the one block)."""
    return place if "." in place else f"{place}.entry"


def test_every_model_backend_declares_its_transport():
    for place, registry in _model_registries().items():
        declared = [n for t in TRANSPORTS for n in registry.names(t)]
        assert sorted(declared) == registry.names(), place  # every one, exactly once
        for name in registry.names():
            assert registry.transport(name) in TRANSPORTS


def test_a_transport_outside_the_three_is_refused_at_registration():
    registry: Registry[Any] = Registry("echo")
    with pytest.raises(ConfigError, match="transport 'grpc' is not one of http, local, none"):
        registry.register("echo", "json:dumps", "grpc")  # type: ignore[arg-type]
    registry.register("plain", "json:dumps")  # a registry of something else: no transport
    assert registry.transport("plain") is None and registry.names("http") == []


def test_http_backends_are_those_whose_params_model_speaks_http():
    """The registration's fact agrees with the backend's params model (where it has its own)."""
    checked = 0
    for place, registry in _model_registries().items():
        for name in registry.names():
            model = registry.params_model(name)
            if model is None:  # a model shared by the registry's backends (clip, faces, embedders)
                continue
            checked += 1
            speaks_http = isinstance(model, type) and issubclass(model, HttpParams)
            assert speaks_http == (registry.transport(name) == "http"), (place, name)
    assert checked >= 10  # llm 3, judges 3, generators 4


def test_preflight_and_plan_read_the_registered_transport():
    for place, registry in registries().items():
        where = _where(place)
        for name in registry.names():
            block = {"backend": name, "model": "m"}
            assert transport(where, block) == registry.transport(name)
            assert is_http(where, block) == (registry.transport(name) == "http")
            assert is_http(where, {**block, "base_url": "http://x/v1"})  # an endpoint: checked
    # a backend name means what its own registry says: no registry-blind union of names
    assert not is_http("clip.model", {"backend": "openai"})
    with pytest.raises(RuntimeError, match="no backend registry is loaded for .*'faces.x'"):
        transport("faces.x", {"backend": "sim"})  # not a place the preflight reads


def test_endpoint_defaults_come_from_the_backends_params_model():
    gemini = ModelUse("generators.g", {"backend": "gemini", "model": "m"})
    assert _endpoint(gemini) == (
        "https://generativelanguage.googleapis.com/v1beta",
        "GEMINI_API_KEY",
    )
    judge = ModelUse("judges.j", {"backend": "openai", "model": "m"})
    assert _endpoint(judge) == ("https://api.openai.com/v1", "OPENAI_API_KEY")
    given = ModelUse(
        "llms.l", {"backend": "openai", "base_url": "http://h/v1/", "api_key_env": None}
    )
    assert _endpoint(given) == ("http://h/v1", None)
    assert http_model("generators.g", gemini.block).auth_headers("k") == {"x-goog-api-key": "k"}
    assert http_model("judges.j", judge.block).auth_headers("k") == {"Authorization": "Bearer k"}
    # only the chat backends are probed with chat requests (one token, two at once, dialects)
    chat = {p: http_model(_where(p), {"backend": "openai"}).chat_completions for p in registries()}
    assert chat == {
        "llms": True,
        "judges": True,
        "generators": False,  # no openai backend there: HttpParams
        "clip.model": False,
        "debias.embedder": False,  # embeddings, not chat
    }


def test_the_gemini_key_reaches_a_real_server_in_its_own_header(monkeypatch):
    monkeypatch.setenv("FACTS_TEST_KEY", "g-key")
    with ChatServer(models=["nano"]) as server:
        params = {
            "generators": {
                "g": {
                    "backend": "gemini",
                    "model": "nano",
                    "base_url": server.base_url,
                    "api_key_env": "FACTS_TEST_KEY",
                }
            },
            "render": {"run": ["g"]},
        }
        assert preflight(params) == []
    headers = {k.lower(): v for k, v in server.requests[0]["headers"].items()}
    assert headers["x-goog-api-key"] == "g-key" and "authorization" not in headers


def test_the_hub_lookup_is_for_local_backends_only(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    local = ModelUse("judges.j", {"backend": "transformers", "model": "org/not-cached"})
    problems = check_local(local, online=False)
    assert len(problems) == 1 and "org/not-cached is not in the local Hugging Face" in problems[0]
    simulated = ModelUse("judges.j", {"backend": "sim", "model": "org/not-cached"})
    assert check_local(simulated, online=False) == []  # transport none: no model to look up


def test_generator_runtime_keys_are_fields_their_backend_declares():
    for name in GENERATORS.names():
        config = GENERATORS.params_model(name)
        assert config.runtime_keys <= set(config.model_fields), name  # no stale key
        assert "batch_size" in config.runtime_keys
        if GENERATORS.transport(name) == "http":
            assert set(HttpParams.model_fields) <= config.runtime_keys, name
    # a runtime key changes no settings hash; a sampler key does
    block = {"backend": "diffusers", "model": "m", "steps": 4}
    assert settings_hash(block) == settings_hash({**block, "device": "cpu", "threads": 2})
    assert settings_hash(block) != settings_hash({**block, "steps": 5})


# Literals of these names that are not backend names: pip packages, server dialects.
NOT_BACKEND_LISTS = {"report/compare/results.py", "runtime/dialects.py", "publish/eee.py"}
# Comparisons with one backend's name outside its package: the recovery check reads the `sim`
# backend's world (it is about that backend, not a fact the preflight or plan would need).
NAMED_USES = {"world/recovery/power.py", "world/recovery/stage.py"}
# Not model registry facts, named the same: the HoloFair vote hook's own selector
# (`diversity_study.quality.vote.backend: sim`), and Every Eval Ever's deployment vocabulary
# (a vendor API, a self-deployed server, a simulated model) that publish/eee.py maps backends to.
NAMED_USES |= {"audits/holofair_qc.py", "publish/eee.py"}


def _backend_names() -> set[str]:
    return {n for r in _model_registries().values() for n in r.names()}


def test_no_list_of_backend_names_outside_the_registrations():
    names = _backend_names()
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):  # a Literal["a", "b"] type too (a shared config's backend)
            if isinstance(node, (ast.Set, ast.List, ast.Tuple, ast.Dict)):
                elts = node.keys if isinstance(node, ast.Dict) else node.elts
                hits = [e.value for e in elts if isinstance(e, ast.Constant) and e.value in names]
                if len(hits) >= 2 and rel not in NOT_BACKEND_LISTS:
                    found.append(f"{rel}:{node.lineno} lists {hits}")
            if isinstance(node, ast.Compare) and "backend" in ast.unparse(node):
                parts = [node.left, *node.comparators]
                named = any(isinstance(p, ast.Constant) and p.value in names for p in parts)
                if named and rel not in NAMED_USES:
                    found.append(f"{rel}:{node.lineno} {ast.unparse(node)}")
    assert found == []


def test_the_old_hand_copies_are_gone():
    text = "\n".join(p.read_text(encoding="utf-8") for p in SRC.rglob("*.py"))
    for name in ("HTTP_BACKENDS", "LOCAL_BACKENDS", "RUNTIME_KEYS", "DEFAULT_BASE_URL"):
        assert name not in text, name


# Every params place of every model stage (one entry each, all hooks on).
EVERY_PLACE = {
    "llms": {"l": {"backend": "openai", "model": "m"}},
    "generators": {"g": {"backend": "sim", "model": "sim:g"}},
    "judges": {"j": {"backend": "sim", "model": "sim:j"}},
    "kg": {"extractor": "llm", "llm": "l"},
    "triplets": {"writer": "llm", "llm": "l"},
    "render": {"run": ["g"]},
    "judge": {"tasks": {"blind": {"judges": ["j"]}}},
    "bench": {"generators": {"g": {"generator": "g"}}, "tasks": {"t": {"judges": ["j"]}}},
    "debias": {
        "configs": {"c": {"method": "rewrite"}},
        "generator": "g",
        "scoring": {"rubric_judge": "j", "alignment_judge": "j"},
        "rewriter": "l",
        "embedder": {"backend": "openai", "model": "e"},
    },
    "b6": {"judge": "j"},
    "diversity_study": {"enabled": True, "generator": "g"},
    "clip": {"model": {"backend": "sim", "model": "sim:clip"}},
}

_STAGE_PROBE = """
import importlib.util, json, sys
from implicit_bench.runtime.registry import registry_for
stage, places = sys.argv[1], json.loads(sys.argv[2])
spec = importlib.util.spec_from_file_location("stage_script", f"stages/{stage}.py")
spec.loader.exec_module(importlib.util.module_from_spec(spec))
print(json.dumps([p for p in places if registry_for(p) is None]))
"""


def test_each_model_stage_script_imports_the_registries_its_preflight_reads():
    """A stage's preflight reads the registries its script imported (none loaded for it: its
    DVC deps stay exact); run as DVC runs it, one fresh interpreter per stage."""
    import json

    for stage in MODEL_STAGES:
        places = [u.where for u in models_in_use(EVERY_PLACE, stage)]
        assert places, stage
        done = subprocess.run(
            [sys.executable, "-c", _STAGE_PROBE, stage, json.dumps(places)],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        assert json.loads(done.stdout.strip().splitlines()[-1]) == [], stage


def test_shared_configs_accept_exactly_the_registered_backends():
    """ClipParams, FaceParams and EmbedderParams name no backend: their registry is the list."""
    from pydantic import ValidationError

    from implicit_bench.backends.clip import CLIP_BACKENDS, ClipParams
    from implicit_bench.backends.embedders import EMBEDDERS, EmbedderParams
    from implicit_bench.backends.faces import FaceParams

    for config, registry, kind in (
        (ClipParams, CLIP_BACKENDS, "clip"),
        (FaceParams, FACE_BACKENDS, "face"),
        (EmbedderParams, EMBEDDERS, "embedder"),
    ):
        for name in registry.names():
            assert config(backend=name).backend == name
        with pytest.raises(ValidationError, match=f"unknown {kind} backend 'nope'; known: "):
            config(backend="nope")
