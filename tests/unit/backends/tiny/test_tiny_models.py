"""The tiny profile's models: the paper's architectures and processor classes, loaded through
the project's own backends, run in bfloat16 on the CPU (the dtype mistakes a GPU run would hit)."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image

from implicit_bench.backends.tiny.stage import build

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny_models")
    for kind in ("qwen_image", "sd3", "qwen3vl", "gemma3", "openclip", "qwen3_embedding"):
        build(kind, root / kind, seed=0)
    return root


def _png(color) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (48, 40), color).save(buf, format="PNG")
    return buf.getvalue()


def test_paper_architectures_and_processors(tiny_dir):
    index = json.loads((tiny_dir / "qwen_image" / "model_index.json").read_text())
    assert index["_class_name"] == "QwenImagePipeline"
    assert (
        index["text_encoder"][1] == "Qwen2_5_VLForConditionalGeneration"
        and index["tokenizer"][1] == "Qwen2Tokenizer"
    )
    index = json.loads((tiny_dir / "sd3" / "model_index.json").read_text())
    assert (
        index["_class_name"] == "StableDiffusion3Pipeline"
        and index["text_encoder_3"][1] == "T5EncoderModel"
    )
    for kind, arch, processor in (
        ("qwen3vl", "Qwen3VLMoeForConditionalGeneration", "Qwen3VLProcessor"),
        ("gemma3", "Gemma3ForConditionalGeneration", "Gemma3Processor"),
    ):
        assert json.loads((tiny_dir / kind / "config.json").read_text())["architectures"] == [arch]
        from transformers import AutoProcessor

        assert type(AutoProcessor.from_pretrained(tiny_dir / kind)).__name__ == processor
    pooling = json.loads((tiny_dir / "qwen3_embedding" / "1_Pooling" / "config.json").read_text())
    assert pooling["pooling_mode"] == "lasttoken"
    assert json.loads((tiny_dir / "qwen3_embedding" / "config.json").read_text())[
        "architectures"
    ] == ["Qwen3Model"]
    for kind in ("qwen_image", "sd3", "qwen3vl", "gemma3", "openclip", "qwen3_embedding"):
        assert (tiny_dir / kind / "RANDOM_INIT.json").exists()


def test_qwen_image_encoding_is_the_prompt_tokens_only(tiny_dir):
    """The pipeline drops 34 template tokens: with the tiny tokenizer
    exactly the template prefix."""
    from implicit_bench.backends.generators import create_generator
    from implicit_bench.backends.tiny.qwen_tokenizer import QWEN_IMAGE_TEMPLATE

    gen = create_generator(
        {
            "backend": "diffusers",
            "model": str(tiny_dir / "qwen_image"),
            "device": "cpu",
            "dtype": "bfloat16",
            "steps": 2,
            "width": 32,
            "height": 32,
        }
    )
    prompts = ["a nurse", "a photo of a doctor who is a man"]
    enc = gen.encode(prompts)
    suffix = QWEN_IMAGE_TEMPLATE.split("{}")[1]
    expected = [len(gen.pipe.tokenizer(p + suffix)["input_ids"]) for p in prompts]
    assert enc.mask.sum(dim=1).tolist() == expected
    assert enc.embeds.dtype.is_floating_point and str(enc.embeds.dtype) == "torch.bfloat16"


@pytest.mark.parametrize("kind", ["qwen_image", "sd3"])
def test_bf16_steering_batch_through_the_generators_encoder_hook(tiny_dir, kind):
    """The debias worker on the paper's generator classes, bf16, a batch of 2: steered images
    differ from plain ones, unsteered (alpha 0) are identical."""
    from implicit_bench.backends.generators import RenderRequest, create_generator
    from implicit_bench.debias.methods.steer import _steer_worker

    config = {
        "backend": "diffusers",
        "model": str(tiny_dir / kind),
        "device": "cpu",
        "dtype": "bfloat16",
        "steps": 2,
        "width": 32,
        "height": 32,
        "batch_size": 2,
        **(
            {"true_cfg_scale": 4.0, "negative_prompt": " "}
            if kind == "qwen_image"
            else {"guidance": 7.0}
        ),
    }
    texts = ("a nurse who is a woman", "a nurse who is a man with a beard")
    requests = [
        RenderRequest(f"u{i}", p, 42 + i, texts)
        for i, p in enumerate(["a nurse", "a photo of an engineer"])
    ]
    plain = create_generator(config).generate(requests)
    for signal in ("explicit", "attributes"):
        same = _steer_worker(config, signal, 0.0)(requests)
        assert [r.png for r in same] == [r.png for r in plain]
        steered = _steer_worker(config, signal, 4.0)(requests)
        assert all(r.status == "ok" for r in steered)
        assert [r.png for r in steered] != [r.png for r in plain]


@pytest.mark.parametrize("kind", ["qwen3vl", "gemma3"])
def test_bf16_judges_answer_a_batch_with_the_real_processor(tiny_dir, kind):
    from implicit_bench.backends.judges.base import JudgeRequest
    from implicit_bench.backends.judges.transformers_vlm import (
        TransformersJudge,
        TransformersJudgeParams,
    )

    judge = TransformersJudge(
        TransformersJudgeParams(
            model=str(tiny_dir / kind),
            dtype="bfloat16",
            device="cpu",
            max_new_tokens=6,
            batch_size=3,
        )
    )
    requests = [
        JudgeRequest(f'Rate the image. Answer {{"score": n}} ({i})', _png((40 * i, 90, 200)))
        for i in range(3)
    ]
    answers = judge.answer(requests)
    assert len(answers) == 3 and all(error is None and text for text, error in answers)
    assert next(judge._model.parameters()).dtype.__repr__() == "torch.bfloat16"


def test_qwen3vl_rewriter_runs_text_only_in_bf16(tiny_dir):
    from implicit_bench.backends.llm import build_llm

    client = build_llm(
        {
            "backend": "transformers",
            "model": str(tiny_dir / "qwen3vl"),
            "device": "cpu",
            "dtype": "bfloat16",
            "max_tokens": 6,
            "cache": None,
        }
    )
    answers = client.chat_many([[{"role": "user", "content": "Rewrite: a photo of a nurse"}]] * 2)
    assert len(answers) == 2 and all(a.error is None for a in answers)
    assert "<|im_start|>assistant" in client._tokenizer.apply_chat_template(
        [{"role": "user", "content": "x"}], tokenize=False, add_generation_prompt=True
    )


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_open_clip_backend_loads_the_local_model(tiny_dir, dtype):
    from implicit_bench.backends.clip import ClipParams, create

    for ref in (str(tiny_dir / "openclip"), f"local-dir:{tiny_dir / 'openclip'}"):
        clip = create(
            ClipParams(backend="open_clip", model=ref, pretrained=None, dtype=dtype, batch_size=2)
        )
        images = clip.embed_images(
            [Image.open(io.BytesIO(_png(c))) for c in ((0, 0, 0), (250, 10, 10), (9, 9, 240))]
        )
        texts = clip.embed_texts(["a photo of a nurse", "a photo of a doctor"])
        assert images.shape == (3, 16) and texts.shape == (2, 16)
        assert np.allclose(np.linalg.norm(images, axis=1), 1.0, atol=1e-3)
        assert not np.allclose(images[0], images[1])


def test_qwen3_embedder_last_token_pooling_in_bf16(tiny_dir):
    from implicit_bench.backends.embedders import EmbedderParams
    from implicit_bench.backends.embedders.st import SentenceTransformerEmbedder
    from implicit_bench.debias.retrieval import query_text

    embedder = SentenceTransformerEmbedder(
        EmbedderParams(
            model=str(tiny_dir / "qwen3_embedding"), device="cpu", dtype="bfloat16", batch_size=2
        )
    )
    query = query_text("a photo of a nurse")
    assert query.startswith("Instruct: ") and "\nQuery: a photo of a nurse" in query
    vectors = embedder.embed([query, "nurse | is | caring → cold", "a"])
    assert vectors.shape == (3, 32) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-2)
    ids = embedder.model.tokenizer("a nurse")["input_ids"]
    assert ids[-1] == embedder.model.tokenizer.convert_tokens_to_ids("<|endoftext|>")
