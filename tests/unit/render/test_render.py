from __future__ import annotations

import json

import pandas as pd
import pytest
from PIL import Image

from implicit_bench.backends.generators import create_generator, settings_hash
from implicit_bench.errors import InputError
from implicit_bench.protocol.tables import UNITS
from implicit_bench.render.images import ImageKey, ImageStore
from implicit_bench.render.params import RenderParams
from implicit_bench.render.stage import plan_items, render_all, render_metrics, unit_columns
from implicit_bench.runtime.provenance import is_random_init
from tests.helpers.paths import REPO_ROOT
from tests.helpers.render_fixtures import tiny_config, units_frame, write_units


def test_tiny_pipeline_loads_through_from_pretrained_and_is_marked(tiny_generator_dir):
    from diffusers import DiffusionPipeline

    assert is_random_init(tiny_generator_dir)
    pipe = DiffusionPipeline.from_pretrained(tiny_generator_dir)
    assert type(pipe).__name__ == "StableDiffusionPipeline"
    # the tokenizer was written locally: character level, BOS ... EOS
    ids = pipe.tokenizer("ab").input_ids
    assert ids[0] == 0 and ids[-1] == 1 and len(ids) == 4


def test_tiny_build_is_deterministic_under_its_seed(tiny_generator_dir, tmp_path):
    from implicit_bench.backends.tiny.stage import build

    again = build("generator", tmp_path / "again", seed=0)
    for part in ("unet", "vae", "text_encoder"):
        (weights,) = (tiny_generator_dir / part).glob("*.safetensors")
        assert (again / part / weights.name).read_bytes() == weights.read_bytes()


def test_same_seed_same_bytes_and_variants_share_noise(tiny_generator_dir):
    gen = create_generator(tiny_config(tiny_generator_dir))
    a = gen.generate_prompts(["A photo of a nurse", "A photo of a nurse, a man"], [42, 42])
    b = gen.generate_prompts(["A photo of a nurse", "A photo of a nurse, a man"], [42, 42])
    assert [im.tobytes() for im in a] == [im.tobytes() for im in b]
    c = gen.generate_prompts(["A photo of a nurse", "A photo of a nurse"], [42, 1042])
    assert a[0].tobytes() == c[0].tobytes()  # same prompt, same seed, same batch position
    assert c[0].tobytes() != c[1].tobytes()  # another seed, another image
    assert a[0].size == (32, 32)


def test_encode_then_generate_is_the_plain_route(tiny_generator_dir):
    gen = create_generator(tiny_config(tiny_generator_dir))
    prompts = ["A photo of a nurse", "A photo of an engineer at work"]
    enc = gen.encode(prompts)
    # one vector per token, mask = real tokens (BOS + characters + EOS)
    assert enc.embeds.shape[:2] == enc.mask.shape
    assert enc.mask.sum(dim=1).tolist() == [len(p) - p.count(" ") + 2 for p in prompts]
    assert enc.pooled is None
    plain = gen.generate_prompts(prompts, [42, 1042])
    again = gen.generate_encoded(gen.encode(prompts), [42, 1042])
    assert [i.tobytes() for i in plain] == [i.tobytes() for i in again]
    edited = enc.select([0, 1])
    edited.embeds = edited.embeds + 1.0
    assert gen.generate_encoded(edited, [42, 1042])[0].tobytes() != plain[0].tobytes()


def test_render_end_to_end_writes_store_index_and_metrics(tiny_generator_dir, tmp_path):
    units_path = write_units(tmp_path / "units.parquet")
    params = RenderParams(configs={"tiny": tiny_config(tiny_generator_dir)}, seeds=[42, 1042])
    units = UNITS.read(units_path, require=unit_columns(params.variants))
    results = render_all(params, units, tmp_path / "images")
    # 4 units x 2 seeds x 3 variants = 24 items, all rendered
    assert results["tiny"]["by_status"] == {"ok": 24, "refused": 0, "failed": 0}
    assert results["tiny"]["refusals_by_bias_type"]["race"] == {
        "items": 6,
        "refused": 0,
        "refusal_rate": 0.0,
    }
    index = pd.read_parquet(tmp_path / "images" / "tiny" / "index.parquet")
    assert len(index) == 24 and set(index["generator"]) == {f"diffusers:{tiny_generator_dir}"}
    store = ImageStore(tmp_path / "images" / "tiny")
    png = store.export_png(ImageKey("tiny", "u2", "anti_stereotype", 1042), tmp_path / "x.png")
    assert Image.open(png).size == (32, 32)
    metrics = render_metrics(params, results, "default")
    assert metrics["provenance"]["random_init"] is True
    json.dumps(metrics)
    # one image out as a PNG through the command-line tool
    from click.testing import CliRunner

    from implicit_bench.cli.main import main

    out = tmp_path / "cli.png"
    args = [
        "image",
        "get",
        "--store",
        str(tmp_path / "images" / "tiny"),
        "--unit",
        "u1",
        "--variant",
        "neutral",
    ]
    result = CliRunner().invoke(main, [*args, "--seed", "42", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == store.read_bytes(
        store.get(ImageKey("tiny", "u1", "neutral", 42)).sha256
    )
    missing = CliRunner().invoke(main, [*args, "--seed", "7", "--out", str(out)])
    assert missing.exit_code != 0 and "no item tiny/u1/neutral/7" in missing.output
    # a second run renders nothing
    again = render_all(params, units, tmp_path / "images")
    assert again["tiny"]["run"]["skipped_done"] == 24 and again["tiny"]["run"]["batches_run"] == 0


def test_changed_setting_rerenders_changed_prompt_rerenders(tiny_generator_dir, tmp_path):
    config = tiny_config(tiny_generator_dir)
    params = RenderParams(configs={"tiny": config}, seeds=[42])
    units = units_frame()
    render_all(params, units, tmp_path / "images")
    units.loc[0, "prompt_neutral"] = "A photo of a nurse in a hospital"
    res = render_all(params, units, tmp_path / "images")
    assert res["tiny"]["run"]["written"] == {"ok": 1}  # only the changed prompt
    assert settings_hash({**config, "batch_size": 1, "device": "cpu"}) == settings_hash(config)
    changed = RenderParams(configs={"tiny": {**config, "steps": 3}}, seeds=[42])
    res = render_all(changed, units, tmp_path / "images")
    assert res["tiny"]["run"]["written"] == {"ok": 12}


def test_each_generator_config_is_validated_once(tiny_generator_dir, tmp_path, monkeypatch):
    """The render section types every generators entry once, at load; the stage, the settings
    hash and the executor's worker receive that object and validate nothing again."""
    from implicit_bench.backends.generators import GENERATORS, GeneratorParams
    from implicit_bench.params import section

    calls: list[str] = []
    validate = GENERATORS.validate
    monkeypatch.setattr(
        GENERATORS,
        "validate",
        lambda config, where, **kw: calls.append(where) or validate(config, where, **kw),
    )
    raw = {"generators": {"tiny": tiny_config(tiny_generator_dir)}, "render": {"seeds": [42]}}
    params = section(raw, "render", RenderParams, attach={"generators": "configs"})
    assert isinstance(params.configs["tiny"], GeneratorParams) and calls == ["generators.tiny"]
    results = render_all(params, units_frame().head(1), tmp_path / "images")
    assert results["tiny"]["by_status"]["ok"] == 3 and calls == ["generators.tiny"]


def test_unknown_config_key_fails_before_rendering(tmp_path):
    import runpy

    from click.testing import CliRunner

    from implicit_bench.errors import ConfigError
    from implicit_bench.params import section

    raw = {"generators": {"a": {"backend": "diffusers", "model": "x", "stepz": 3}}, "render": {}}
    # validated once, with the params: the stage fails before it plans or renders anything
    with pytest.raises(ConfigError, match=r"render.configs: .*generators.a.stepz"):
        section(raw, "render", RenderParams, attach={"generators": "configs"})
    with pytest.raises(ValueError, match=r"generators.a.stepz"):
        RenderParams(configs=raw["generators"])
    # the stage script: exit 1, one line naming the key, no image store, no metrics
    (tmp_path / "params.yaml").write_text(json.dumps(raw))  # JSON is YAML
    units_frame().to_parquet(tmp_path / "units.parquet")
    stage = runpy.run_path(str(REPO_ROOT / "stages" / "render.py"))["main"]
    result = CliRunner().invoke(
        stage,
        ["--params", str(tmp_path / "params.yaml"), "--units", str(tmp_path / "units.parquet")]
        + ["--images", str(tmp_path / "images"), "--metrics", str(tmp_path / "render.json")]
        + ["--no-preflight"],
    )
    assert result.exit_code == 1 and "generators.a.stepz" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "images").exists() and not (tmp_path / "render.json").exists()


def test_bad_units_table_names_row_and_field(tmp_path):
    frame = units_frame()
    frame.loc[2, "prompt_stereotype"] = "  "
    frame.to_parquet(tmp_path / "u.parquet")
    with pytest.raises(InputError, match=r"row 3, field 'prompt_stereotype'"):
        UNITS.read(
            tmp_path / "u.parquet",
            require=unit_columns(["neutral", "stereotype", "anti_stereotype"]),
        )
    with pytest.raises(InputError, match="field 'prompt_negated_0_1': missing column"):
        UNITS.read(tmp_path / "u.parquet", require=unit_columns(["negated_0_1"]))


def test_plan_order_is_unit_seed_variant():
    planned = plan_items(units_frame().iloc[::-1], "c", [42, 1042], ["neutral", "stereotype"])
    assert [(p.key.unit_id, p.key.seed, p.key.variant) for p in planned[:3]] == [
        ("u0", 42, "neutral"),
        ("u0", 42, "stereotype"),
        ("u0", 1042, "neutral"),
    ]
