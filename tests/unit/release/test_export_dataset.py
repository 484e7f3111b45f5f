"""`implicit-bench export-dataset`: a folder that `datasets.load_dataset` reads, with a card."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

from implicit_bench.cli.main import main
from implicit_bench.protocol.tables import UNIT_COLUMNS
from tests.helpers.release_fixtures import export_frames

datasets = pytest.importorskip("datasets")


def test_export_dataset_loads_with_datasets_and_has_a_card(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    units, triplets = export_frames()
    units.to_parquet(tmp_path / "kg_units.parquet", index=False)
    triplets.to_parquet(tmp_path / "triplets.parquet", index=False)
    (tmp_path / "params.yaml").write_text(
        "base: {profile: default}\nsources: {stereoset: s.json.gz}\n"
        "llms: {x: {backend: openai, model: m, api_key_env: KEY}}\n"
        "kg: {extractor: minimal_pair, llm: x}\n"
        "triplets: {writer: template, template: {neutral: 'a photo of {subject}'}}\n"
    )
    out = tmp_path / "ds"
    result = CliRunner().invoke(
        main,
        [
            "export-dataset",
            "--triplets",
            str(tmp_path / "triplets.parquet"),
            "--kg-units",
            str(tmp_path / "kg_units.parquet"),
            "--params",
            str(tmp_path / "params.yaml"),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    loaded = datasets.load_dataset(str(out), "triplets", split="train")
    assert loaded.num_rows == 2
    assert set(UNIT_COLUMNS) <= set(loaded.column_names)
    assert loaded[0]["prompt_stereotype"] == "a photo of a asian chess player"
    assert loaded[0]["stereotype_tails"] == ["asian"]  # JSON lists become lists
    assert loaded.features["relation"].dtype == "string"  # an all-null column stays a string column
    kg = datasets.load_dataset(str(out), "units", split="train")
    assert kg.num_rows == 2 and kg[1]["anti_stereotype_tails"] == ["able-bodied"]
    default = datasets.load_dataset(str(out), split="train")  # the default config is triplets
    assert default.num_rows == 2 and "prompt_neutral" in default.column_names

    card = (out / "README.md").read_text()
    meta = yaml.safe_load(card.split("---")[1])
    assert meta["license"] == "cc-by-sa-4.0"
    assert {c["config_name"] for c in meta["configs"]} == {"triplets", "units"}
    assert "Content warning" in card and "@article{dai2026implicitbench" in card
    assert "extractor: minimal_pair" in card and "writer: template" in card
    assert "llms" not in card and "KEY" not in card  # only the settings that were used
