"""GPU checks (``pytest -m gpu``; scripts/gpu_smoke.sh): the tiny profile and the paper's code
paths on CUDA, in the paper's dtypes, with batches larger than one. Skipped without CUDA.

What a CPU cannot show: tensors left on the CPU next to CUDA ones, float16 kernels (diffusers
refuses float16 on a CPU), and bfloat16 on the GPU's own kernels. Every test compares with
the CPU or checks devices and dtypes explicitly; docs/gpu.md says how to run them.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.slow,
    pytest.mark.skipif(
        not torch.cuda.is_available(), reason="needs CUDA (pytest -m gpu on a GPU machine)"
    ),
]

PAPER_DTYPES = {"qwen_image": "bfloat16", "sd3": "float16"}  # profiles/paper.yaml generators


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    from implicit_bench.backends.tiny.stage import build

    root = tmp_path_factory.mktemp("tiny_gpu")
    for kind in ("qwen_image", "sd3", "qwen3vl", "gemma3", "clip", "openclip", "qwen3_embedding"):
        build(kind, root / kind, seed=0)
    return root


def _png(color) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (48, 40), color).save(buf, format="PNG")
    return buf.getvalue()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_steering_on_cuda_matches_the_cpu(dtype):
    from implicit_bench.debias.steering import Encoding, direction, steer
    from tests.helpers.steering import stack_batch

    g = torch.Generator().manual_seed(0)
    cpu = [
        Encoding(torch.randn(7, 8, generator=g).to(dtype), torch.tensor([1, 1, 1, 1, 1, 0, 0])),
        Encoding(torch.randn(5, 8, generator=g).to(dtype), torch.tensor([1, 1, 1, 0, 0])),
        Encoding(torch.randn(6, 8, generator=g).to(dtype), torch.tensor([1, 1, 1, 1, 1, 1])),
    ]
    gpu = [Encoding(e.embeds.cuda(), e.mask.cuda()) for e in cpu]
    for signal in ("full_unit", "llm_pair", "explicit", "attributes"):
        d_cpu, d_gpu = direction(signal, *cpu), direction(signal, *gpu)
        assert d_gpu.device.type == "cuda" and d_gpu.dtype == torch.float32
        assert torch.allclose(d_gpu.cpu(), d_cpu, atol=1e-5)
        steered = steer(gpu[0], d_gpu, 2.0)
        assert steered.embeds.device.type == "cuda" and steered.embeds.dtype == dtype
    embeds, mask = stack_batch(gpu)
    assert embeds.device.type == "cuda" and mask.device.type == "cuda"


@pytest.mark.parametrize("kind", ["qwen_image", "sd3"])
def test_generators_steer_a_batch_on_cuda_in_the_paper_dtype(tiny_dir, kind):
    from implicit_bench.backends.generators import RenderRequest, create_generator
    from implicit_bench.debias.methods.steer import _steer_worker

    config = {
        "backend": "diffusers",
        "model": str(tiny_dir / kind),
        "device": "cuda",
        "dtype": PAPER_DTYPES[kind],
        "steps": 2,
        "width": 32,
        "height": 32,
        "batch_size": 3,
        **(
            {"true_cfg_scale": 4.0, "negative_prompt": " "}
            if kind == "qwen_image"
            else {"guidance": 7.0}
        ),
    }
    texts = ("a nurse who is a woman", "a nurse who is a man with a beard")
    prompts = ["a nurse", "a photo of an engineer", "a doctor at work"]
    requests = [RenderRequest(f"u{i}", p, 42 + i, texts) for i, p in enumerate(prompts)]
    generator = create_generator(config)
    encoding = generator.encode(prompts)
    assert (
        encoding.embeds.device.type == "cuda"
        and str(encoding.embeds.dtype) == f"torch.{PAPER_DTYPES[kind]}"
    )
    plain = generator.generate(requests)
    assert all(r.status == "ok" for r in plain)
    for signal in ("full_unit", "attributes"):
        assert [r.png for r in _steer_worker(config, signal, 0.0)(requests)] == [
            r.png for r in plain
        ]
        steered = _steer_worker(config, signal, 4.0)(requests)
        assert [r.png for r in steered] != [r.png for r in plain]


@pytest.mark.parametrize("kind", ["qwen3vl", "gemma3"])
def test_judges_answer_a_batch_on_cuda_in_bf16(tiny_dir, kind):
    from implicit_bench.backends.judges.base import JudgeRequest
    from implicit_bench.backends.judges.transformers_vlm import (
        TransformersJudge,
        TransformersJudgeParams,
    )

    judge = TransformersJudge(
        TransformersJudgeParams(
            model=str(tiny_dir / kind),
            dtype="bfloat16",
            device="cuda",
            max_new_tokens=6,
            batch_size=4,
        )
    )
    requests = [
        JudgeRequest(f'Rate the image ({i}). Answer {{"score": n}}', _png((30 * i, 80, 200)))
        for i in range(5)
    ]
    answers = judge.answer(requests)
    assert len(answers) == 5 and all(error is None for _, error in answers)
    assert judge._model.device.type == "cuda"


@pytest.mark.parametrize(
    ("backend", "kind", "dtype"),
    [
        ("transformers", "clip", "float16"),
        ("open_clip", "openclip", "float16"),
        ("open_clip", "openclip", "bfloat16"),
    ],
)
def test_clip_backends_on_cuda(tiny_dir, backend, kind, dtype):
    from implicit_bench.backends.clip import ClipParams, create

    clip = create(
        ClipParams(
            backend=backend, model=str(tiny_dir / kind), device="cuda", dtype=dtype, batch_size=2
        )
    )
    images = clip.embed_images(
        [Image.open(io.BytesIO(_png(c))) for c in ((0, 0, 0), (200, 30, 30), (10, 10, 250))]
    )
    texts = clip.embed_texts(["a photo of a nurse", "a photo of a doctor", "a photo of a man"])
    assert images.shape[0] == 3 and texts.shape[0] == 3
    assert np.allclose(np.linalg.norm(images, axis=1), 1.0, atol=1e-2)


def test_embedder_and_rewriter_on_cuda(tiny_dir):
    from implicit_bench.backends.embedders import EmbedderParams
    from implicit_bench.backends.embedders.st import SentenceTransformerEmbedder
    from implicit_bench.backends.llm import build_llm

    embedder = SentenceTransformerEmbedder(
        EmbedderParams(
            model=str(tiny_dir / "qwen3_embedding"), device="cuda", dtype="bfloat16", batch_size=3
        )
    )
    vectors = embedder.embed(
        ["Instruct: x\nQuery: a nurse", "nurse | is | caring → cold", "a", "b"]
    )
    assert vectors.shape == (4, 32)
    client = build_llm(
        {
            "backend": "transformers",
            "model": str(tiny_dir / "qwen3vl"),
            "device": "cuda",
            "dtype": "bfloat16",
            "max_tokens": 6,
            "cache": None,
            "batch_size": 3,
        }
    )
    answers = client.chat_many(
        [[{"role": "user", "content": f"Rewrite prompt {i}"}] for i in range(4)]
    )
    assert all(a.error is None for a in answers)


def test_tiny_profile_on_cuda_in_the_paper_dtypes(repo_root, tmp_path):
    """dvc repro of the tiny profile (devices auto -> cuda) with the paper's
    float16 for SD3 and CLIP."""
    from tests.helpers.tiny_pipelines import run_tiny_profile

    repo = run_tiny_profile(
        repo_root, tmp_path, {"generators.sd3.dtype": "float16", "clip.model.dtype": "float16"}
    )
    import json

    render = json.loads((repo / "metrics" / "render.json").read_text())
    assert render["provenance"]["random_init"] is True
