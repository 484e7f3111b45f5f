"""Steering on the tiny local diffusers pipeline through the render machinery."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from implicit_bench.backends.generators import create_generator
from implicit_bench.debias.configs import TABLE_27, bind_defaults
from implicit_bench.debias.render.stage import plan_inputs, render_debias_config
from implicit_bench.debias.steering import direction, split_batch
from implicit_bench.render.images import ImageStore
from implicit_bench.render.params import RenderParams
from tests.helpers.render_fixtures import tiny_config, units_frame

SEEDS = [42, 1042]


@pytest.fixture(scope="module")
def generator(tiny_generator_dir):
    return create_generator(tiny_config(tiny_generator_dir))


def test_directions_on_the_pipelines_own_encodings(generator):
    prompts = ["A nurse.", "A photo of a nurse at work in a busy hospital ward."]
    neutral = split_batch(*(lambda e: (e.embeds, e.mask))(generator.encode(prompts)))
    s = split_batch(*(lambda e: (e.embeds, e.mask))(generator.encode(["a woman"])))[0]
    a = split_batch(*(lambda e: (e.embeds, e.mask))(generator.encode(["a man with a beard"])))[0]
    length, width = neutral[0].embeds.shape  # SD pads every prompt to the tokenizer length
    assert (length, width) == (256, 32)
    # character-level tokenizer: BOS + one token per character (spaces fold into </w>) + EOS
    n_short, n_long = neutral[0].n_tokens, neutral[1].n_tokens
    assert n_short < a.n_tokens < n_long
    for enc, n in ((neutral[0], n_short), (neutral[1], n_long)):
        d = direction("explicit", enc, s, a)
        assert d.shape == (256, 32) and d.dtype == torch.float32
        assert torch.count_nonzero(d[n:]) == 0  # nothing past the neutral prompt's tokens
    # the short neutral prompt truncates d (a - s, s right-padded with zeros)
    d_short = direction("explicit", neutral[0], s, a)
    s_padded = torch.cat([s.real(), torch.zeros(a.n_tokens - s.n_tokens, width)])
    assert torch.equal(d_short[:n_short], (a.real() - s_padded)[:n_short])
    # the long one holds all of d and zero-pads it after the anti text
    d_long = direction("explicit", neutral[1], s, a)
    assert torch.allclose(d_long[: s.n_tokens], a.real()[: s.n_tokens] - s.real())
    assert torch.allclose(d_long[s.n_tokens : a.n_tokens], a.real()[s.n_tokens :])
    # attributes: one pooled vector on every position
    pooled = direction("attributes", neutral[0], s, a)
    assert torch.equal(pooled, (a.real().mean(0) - s.real().mean(0)).expand(256, 32))


def _render(tmp_path, tiny_generator_dir, name, alpha):
    units = units_frame()
    spec = bind_defaults(TABLE_27[name], alpha=alpha)  # the steering configs' alpha
    frame, texts, skipped = plan_inputs(name, spec, units, units, None, None, None)
    assert not skipped
    params = RenderParams(configs={"tiny": tiny_config(tiny_generator_dir)}, seeds=SEEDS)
    params = params.model_copy(
        update={"executor": params.executor.model_copy(update={"progress": False})}
    )
    summary = render_debias_config(
        name,
        spec,
        units=frame,
        texts=texts,
        seeds=SEEDS,
        cfg=params.configs["tiny"],  # the typed config, validated with the params
        render_params=params,
        generator_name="tiny",
        store_dir=tmp_path / name,
    )
    store = ImageStore(tmp_path / name)
    index = store.index()
    store.close()
    return summary, index.set_index(["unit_id", "seed"])["sha256"]


def test_alpha_zero_is_bit_identical_to_the_unmodified_run(tmp_path, tiny_generator_dir):
    _, plain = _render(tmp_path, tiny_generator_dir, "unmodified", 0.0)
    summary, zero = _render(tmp_path, tiny_generator_dir, "sv_explicit_own", 0.0)
    assert summary["by_status"]["ok"] == len(units_frame()) * len(SEEDS)
    pd.testing.assert_series_equal(plain, zero)
    _, steered = _render(tmp_path / "a2", tiny_generator_dir, "sv_attributes_own", 2.0)
    assert (steered != plain).all()  # a shift of alpha = 2 changes every image


def test_resume_and_alpha_change(tmp_path, tiny_generator_dir):
    first, _ = _render(tmp_path, tiny_generator_dir, "sv_attributes_own", 1.0)
    again, _ = _render(tmp_path, tiny_generator_dir, "sv_attributes_own", 1.0)
    assert again["run"]["batches_run"] == 0  # nothing redone
    changed, _ = _render(tmp_path, tiny_generator_dir, "sv_attributes_own", 2.0)
    assert changed["run"]["written"]["ok"] == first["run"]["written"]["ok"]  # alpha re-renders all
    assert changed["settings_hash"] != first["settings_hash"]


def test_steering_needs_a_prompt_encoder(tmp_path):
    from implicit_bench.errors import ConfigError

    units = units_frame()
    spec = bind_defaults(TABLE_27["sv_attributes_own"], alpha=2.0)
    frame, texts, _ = plan_inputs("sv_attributes_own", spec, units, units, None, None, None)
    api = {"backend": "openai_images", "model": "gpt-image-2", "base_url": "http://127.0.0.1:9/v1"}
    params = RenderParams(configs={"api": api}, seeds=SEEDS)
    with pytest.raises(ConfigError, match="no prompt-encoder hook"):
        render_debias_config(
            "sv_attributes_own",
            spec,
            units=frame,
            texts=texts,
            seeds=SEEDS,
            cfg=params.configs["api"],
            render_params=params,
            generator_name="api",
            store_dir=tmp_path / "s",
        )
