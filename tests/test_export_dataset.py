"""`implicit-bench export-dataset`: a folder that `datasets.load_dataset` reads, with a card."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from implicit_bench.cli.main import main
from implicit_bench.kg.table import KG_UNIT_COLUMNS
from implicit_bench.protocol.schema import UNIT_COLUMNS

datasets = pytest.importorskip("datasets")


def _frames():
    units = pd.DataFrame(
        [
            {c: None for c in KG_UNIT_COLUMNS}
            | {
                "unit_id": f"u{i}",
                "source_pair_id": f"p{i}",
                "source": src,
                "bias_type": bt,
                "head": head,
                "stereotype": s,
                "anti_stereotype": a,
                "stereotype_tails": json.dumps([s]),
                "anti_stereotype_tails": json.dumps([a]),
                "stereotype_evidence": json.dumps([]),
                "anti_stereotype_evidence": json.dumps([]),
                "frame_sensitive": False,
                "extractor": "minimal_pair",
            }
            for i, (src, bt, head, s, a) in enumerate(
                [
                    ("stereoset", "profession", "chess player", "asian", "hispanic"),
                    ("crows_pairs", "disability", "person", "disabled", "able-bodied"),
                ]
            )
        ],
        columns=list(KG_UNIT_COLUMNS),
    )
    triplets = units[
        ["unit_id", "source", "bias_type", "head", "relation", "stereotype", "anti_stereotype"]
    ].assign(
        prompt_neutral=lambda f: "a photo of a " + f["head"],
        prompt_stereotype=lambda f: "a photo of a " + f["stereotype"] + " " + f["head"],
        prompt_anti_stereotype=lambda f: "a photo of a " + f["anti_stereotype"] + " " + f["head"],
        stereotype_tails=units["stereotype_tails"],
        prompt_negated_0_1=[None, "a photo of a person who is not disabled"],
    )
    return units, triplets


def test_export_dataset_loads_with_datasets_and_has_a_card(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    units, triplets = _frames()
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
