"""Retrieval with the real all-MiniLM-L6-v2 (offline wheel) and the OpenAI-compatible embedder
against a local server."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pandas as pd
import pytest

from implicit_bench.backends.embedders import EmbedderParams, build_embedder, l2_normalise
from implicit_bench.debias.retrieval import (
    query_text,
    retrieval_metrics,
    retrieve,
    unit_text,
)

KG = pd.DataFrame(
    [
        ("u_nurse_g", "nurse", "has_gender", "woman", "man"),
        ("u_nurse_a", "nurse", "has_age", "young", "old"),
        ("u_mover", "mover", "has_gender", "man", "woman"),
        ("u_chess", "chess player", "has_build", "skinny and nerdy", "athletic"),
        ("u_cook", "chef", None, "overweight", "slim"),
    ],
    columns=["unit_id", "head", "relation", "stereotype", "anti_stereotype"],
)
QUERIES = {
    "u_nurse_g": "A nurse caring for a patient in a hospital ward.",
    "u_mover": "A mover helping with relocation.",
    "u_chess": "A chess player thinking about the next move at a tournament.",
    "u_cook": "A chef tasting soup in a restaurant kitchen.",
}


def test_texts_follow_the_definitions():
    row = KG.iloc[2].to_dict()
    assert unit_text(row) == "mover | has_gender | man → woman"
    # a missing relation is absent, never "None" / "nan"
    assert unit_text(KG.iloc[4].to_dict()) == "chef | overweight → slim"
    assert (
        unit_text({**KG.iloc[4].to_dict(), "relation": float("nan")}) == "chef | overweight → slim"
    )
    assert query_text("A mover.") == (
        "Instruct: Given a description, retrieve the matching "
        "knowledge graph triple\nQuery: A mover."
    )


def test_retrieve_by_hand():
    # 3 units on axes; query 0 is closest to unit a, query 1 to unit a too (not its own b)
    kg = pd.DataFrame(
        {
            "unit_id": ["a", "b", "c"],
            "head": ["nurse", "Nurse ", "cook"],
            "stereotype": ["woman", "young", "woman"],
            "anti_stereotype": ["man", "old", "man"],
        }
    )
    docs = np.eye(3, dtype=np.float32)
    queries = l2_normalise(np.array([[0.9, 0.1, 0.3], [0.8, 0.5, 0.0]], dtype=np.float32))
    out = retrieve(queries, docs, ["a", "b"], kg)
    assert out["retrieved_full"].tolist() == ["a", "a"]
    assert out["own_hit"].tolist() == [True, False]
    assert out["own_rank"].tolist() == [1, 2]
    # removed: query a -> best of b (0.1) / c (0.3) = c; query b -> a
    assert out["retrieved_removed"].tolist() == ["c", "a"]
    assert out["same_head_removed"].tolist() == [False, True]  # "Nurse " == "nurse" normalised
    assert out["same_pair_removed"].tolist() == [True, False]  # c has a's pair woman / man
    m = retrieval_metrics(out)
    assert (
        m["top1_accuracy"] == 0.5
        and m["removed_same_head"] == 0.5
        and m["removed_same_pair"] == 0.5
    )


@pytest.fixture
def minilm(tmp_path):
    return build_embedder(EmbedderParams(cache=str(tmp_path / "emb.sqlite")))


def test_minilm_retrieves_the_obvious_unit(minilm):
    docs = l2_normalise(minilm.embed([unit_text(r) for r in KG.to_dict("records")]))
    units = list(QUERIES)
    queries = l2_normalise(minilm.embed([query_text(QUERIES[u]) for u in units]))
    assert docs.shape == (5, 384)
    out = retrieve(queries, docs, units, KG).set_index("unit_id")
    # the nurse prompt finds a nurse unit; the other prompts their own unit
    assert out.loc["u_nurse_g", "retrieved_full"] in ("u_nurse_g", "u_nurse_a")
    for unit in ("u_mover", "u_chess", "u_cook"):
        assert out.loc[unit, "retrieved_full"] == unit
    # own unit removed: the nurse prompt falls back on the other nurse unit (same head,
    # different attribute pair)
    assert out.loc["u_nurse_g", "retrieved_removed"] == "u_nurse_a"
    assert bool(out.loc["u_nurse_g", "same_head_removed"]) and not bool(
        out.loc["u_nurse_g", "same_pair_removed"]
    )
    assert all(out.loc[u, "retrieved_removed"] != u for u in units)


def test_embeddings_are_cached(minilm, tmp_path):
    first = minilm.embed(["a doctor", "a nurse", "a doctor"])
    assert minilm.calls == 1 and np.allclose(first[0], first[2])
    again = build_embedder(EmbedderParams(cache=str(tmp_path / "emb.sqlite")))
    second = again.embed(["a nurse", "a doctor"])
    assert again.calls == 0  # nothing re-embedded, not even the model loaded
    assert again._backend is None
    assert np.array_equal(second[0], first[1]) and np.array_equal(second[1], first[0])


class _Embeddings(BaseHTTPRequestHandler):
    requests: list[dict] = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), **body}
        )
        # vector of a text: (length, count of 'a', 1); returned in reverse order with indices
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": [float(len(t)), float(t.count("a")), 1.0],
            }
            for i, t in enumerate(body["input"])
        ][::-1]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def test_openai_embedder_against_local_server(tmp_path, monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("TEST_EMBED_KEY", "sk-local")
    try:
        config = EmbedderParams(
            backend="openai",
            model="Qwen/Qwen3-Embedding-8B",
            batch_size=2,
            base_url=f"http://127.0.0.1:{server.server_port}/v1",
            api_key_env="TEST_EMBED_KEY",
            cache=str(tmp_path / "emb.sqlite"),
        )
        embedder = build_embedder(config)
        out = embedder.embed(["banana", "kiwi", "papaya"])
        assert out.tolist() == [[6, 3, 1], [4, 0, 1], [6, 3, 1]]
        assert len(_Embeddings.requests) == 2  # batches of 2
        assert _Embeddings.requests[0]["path"] == "/v1/embeddings"
        assert _Embeddings.requests[0]["auth"] == "Bearer sk-local"
        assert _Embeddings.requests[0]["model"] == "Qwen/Qwen3-Embedding-8B"
        build_embedder(config).embed(["kiwi", "banana"])
        assert len(_Embeddings.requests) == 2  # cached
    finally:
        server.shutdown()
