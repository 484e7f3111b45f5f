"""The clip, judge_audit, negation and diversity stages end to end on a small synthetic repo
(tiny random CLIP, real face judge, a real ImageStore)."""

from __future__ import annotations

import importlib.util
import io
import itertools

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from PIL import Image
from skimage import data

from implicit_bench._util.files import read_json, read_table
from implicit_bench.backends.tiny.stage import build
from implicit_bench.protocol.estimate import is_estimate
from implicit_bench.render.images import ImageKey, ImageRecord, ImageStore
from tests.helpers.paths import REPO_ROOT
from tests.helpers.run_log import last_run

VARIANTS = ("neutral", "stereotype", "anti_stereotype", "negated_0_1", "negated_1_1", "subject")
SEEDS = (42, 1042, 2042)


def _stage(name: str):
    spec = importlib.util.spec_from_file_location(
        f"stage_{name}", REPO_ROOT / "stages" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def _png(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("repo")
    build("clip", root / "models" / "tiny" / "clip", seed=0)
    units = pd.DataFrame(
        {
            "unit_id": ["u1", "u2"],
            "bias_type": ["gender", "age"],
            "stereotype": ["man", "elderly person"],
            "anti_stereotype": ["woman", "young person"],
            "prompt_neutral": ["A mover carrying boxes.", "A person using a computer."],
            "prompt_negated_0_1": ["A mover who is not a man carrying boxes.", None],
            "prompt_negated_0_1_check": [None, "not_written"],
        }
    )
    (root / "data" / "interim").mkdir(parents=True)
    units.to_parquet(root / "data" / "interim" / "units.parquet")
    store = ImageStore(root / "data" / "images" / "tiny")
    rng = np.random.default_rng(0)
    face = data.astronaut()  # full size: the HOG detector misses faces under about 80 px
    for unit, variant, seed in itertools.product(units["unit_id"], VARIANTS, SEEDS):
        arr = (
            face
            if (unit, variant, seed) == ("u1", "neutral", 42)
            else rng.integers(0, 255, (32, 32, 3), np.uint8)
        )
        store.put(ImageRecord(ImageKey("tiny", unit, variant, seed), "tiny", "p", "ok"), _png(arr))
    store.finalize()
    store.close()
    labels = itertools.cycle(["s", "a", "neither", "s", "s", "a", None])
    rows = []
    for unit, variant, seed in itertools.product(units["unit_id"], VARIANTS, SEEDS):
        for judge, orders in (("J1", ("sa", "as")), ("J2", ("as",))):
            for order in orders:
                value = next(labels)
                rows.append(
                    dict(
                        unit_id=unit,
                        variant=variant,
                        seed=seed,
                        config="tiny",
                        judge=judge,
                        task="blind",
                        value=value,
                        valid=value is not None,
                        order=order,
                        raw=str(value),
                    )
                )
    (root / "data" / "judgements").mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(root / "data" / "judgements" / "judgements.parquet")
    params = {
        "base": {"profile": "default"},
        "clip": {"model": {"model": "models/tiny/clip"}, "margin": 0.0},
        "judge_audit": {"primary_order": "hash", "bootstrap": {"n": 200}},
        "negation": {"primary_order": "sa", "bootstrap": {"n": 200}},
        "diversity": {"primary_order": "sa", "bootstrap": {"n": 200}},
    }
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    return root


def test_stages_end_to_end(repo, monkeypatch):
    monkeypatch.chdir(repo)
    runner = CliRunner()
    for name in ("clip", "judge_audit", "negation", "diversity"):
        result = runner.invoke(_stage(name), [], catch_exceptions=False)
        assert result.exit_code == 0, result.output

    clip_rows = read_table("data/judgements/clip.parquet")
    # 2 units x 3 seeds complete triplets -> 6 lean rows; 2 x 6 variants x 3 seeds = 36 blind rows
    assert (clip_rows["task"] == "clip_lean").sum() == 6
    assert (clip_rows["task"] == "blind").sum() == 36
    clip = read_json("metrics/clip.json")
    assert clip["provenance"]["random_init"] is True
    assert clip["lean_by_config"]["tiny"]["n"] == 6

    audit = read_json("metrics/judge_audit.json")
    assert audit["judges"] == ["J1", "J2", "clip"]
    assert audit["judges_with_orders"] == ["J1", "J2"]
    assert set(audit["cross_judge_gate"]) == {"J1|J2", "J1|clip", "J2|clip"}
    j1 = audit["position_bias"]["J1"]
    assert (
        j1["calls"] == 72 and sum(j1["slot_counts"].values()) + j1["invalid"] == 72
    )  # 36 images x 2 orders
    assert read_table("plots/position_bias.csv")["slot"].tolist()[:3] == ["A", "B", "C"]

    negation = read_json("metrics/negation.json")
    assert negation["prompts"]["prompt_negated_0_1"] == {
        "units": 2,
        "written": 1,
        "failed_checks": {"not_written": 1},
    }
    overall = negation["by_judge"]["clip"]["overall"]["all"]
    assert set(overall) == {"anti_stereotype", "negated_0_1", "negated_1_1"}
    assert overall["negated_0_1"]["n"] == 6
    assert {v: r["setting"] for v, r in overall.items()} == {
        "anti_stereotype": "1:0",
        "negated_0_1": "0:1",
        "negated_1_1": "1:1",
    }
    assert negation["settings"]["scored"]["negated_1_1"]["statements"] == ["positive", "negated"]
    assert set(negation["settings"]["not_writable"]) == {"2:0", "0:2", "2:1", "1:2", "2:2"}
    assert read_table("plots/negation_by_strength.csv")["judge"].nunique() == 3

    diversity = read_json("metrics/diversity.json")
    scores = diversity["blind_labels"]["clip"]["tiny"]["scores"]
    assert scores["scenes"] == 2 and scores["template_images"] == 6
    # 3 seeds per scene: CA_q and MGBI are not estimable (null, no interval), ID keeps its interval
    tiny = diversity["blind_labels"]["clip"]["tiny"]
    assert (
        diversity["bootstrap"]["n_boot"] == 200
        and tiny["intervals"]["MGBI"] is None
        and tiny["intervals"]["ID"]["n"] == 2
    )
    assert scores["MGBI"] is None and "not estimable" in tiny["not_estimable"]["CA_0.10"]
    assert all(
        is_estimate(overall["negated_0_1"][k])
        for k in (
            "strict_success",
            "lenient_success",
            "forbidden_rendered",
            "forbidden_rendered_of_images",
        )
    )
    assert audit["bootstrap"]["n_boot"] == 200 and is_estimate(
        audit["unanimity_gate"]["J1"]["coverage"]
    )
    faces = diversity["faces"]
    assert faces["images"] == 6  # neutral images of the gender unit and the age unit
    gender = faces["by_config"]["tiny"]["gender_units"]["gender"]
    assert gender["images"] == 3 and gender["no_face"] == 2 and sum(gender["counts"].values()) == 1
    # HoloFair's third attribute: no offline face judge reads race, and the file says so
    assert (
        faces["race"]["available"] is False
        and "reads gender and age only" in faces["race"]["reason"]
    )

    # a re-run embeds and detects nothing new
    result = runner.invoke(_stage("clip"), [], catch_exceptions=False)
    assert "embedded_now" not in read_json("metrics/clip.json")  # cache state: run log only
    assert last_run("clip")["embedded_now"] == 0, result.output


def test_render_plan_skips_extra_variants_without_a_prompt(tmp_path):
    from implicit_bench.errors import InputError
    from implicit_bench.protocol.tables import UNITS
    from implicit_bench.render.stage import plan_items, unit_columns

    units = pd.DataFrame(
        {
            "unit_id": ["u1", "u2"],
            "bias_type": ["gender", "age"],
            "prompt_neutral": ["n1", "n2"],
            "prompt_stereotype": ["s1", "s2"],
            "prompt_anti_stereotype": ["a1", "a2"],
            "prompt_negated_0_1": ["x1", None],
            "prompt_subject": [None, "t2"],
        }
    )
    units.to_parquet(tmp_path / "units.parquet")
    variants = ["neutral", "negated_0_1", "subject"]
    loaded = UNITS.read(tmp_path / "units.parquet", require=unit_columns(variants))
    planned = plan_items(loaded, "c", [42], variants)
    # u1: neutral, negated_0_1 (subject null); u2: neutral, subject (negated null)
    assert [(p.key.unit_id, p.key.variant) for p in planned] == [
        ("u1", "neutral"),
        ("u1", "negated_0_1"),
        ("u2", "neutral"),
        ("u2", "subject"),
    ]
    units.loc[1, "prompt_neutral"] = None  # the three core prompts stay required
    units.to_parquet(tmp_path / "units.parquet")
    with pytest.raises(InputError, match="prompt_neutral"):
        UNITS.read(tmp_path / "units.parquet", require=unit_columns(variants))


def test_intervals_through_the_analysis_bootstrap():
    """The intervals reuse the analysis Bootstrap; checked on the hand-worked tables."""
    from implicit_bench.audits.diversity import diversity_frame, diversity_report
    from implicit_bench.audits.negation import negation_intervals, negation_summary, negation_table
    from implicit_bench.audits.stage import BootstrapParams, judge_audit, make_bootstrap
    from tests.helpers.audit_fixtures import NEGATION_UNITS, order_table, primary

    boot = make_bootstrap(BootstrapParams(n=300, seed=7))
    report, _ = judge_audit(order_table(), None, boot=boot)
    gate = report["unanimity_gate"]["J1"]
    # J1 kept images are all in agreement: every resample of kept images has default 1, gap 0
    assert gate["gated_kept"]["default_rate"]["ci"] == [1.0, 1.0]
    assert gate["gated_kept"]["gap"]["ci"] == [0.0, 0.0]
    # coverage per unit: u1 2/3 kept, u2 1/3 -> resamples give 1/3, 1/2 or 2/3
    low, high = gate["coverage"]["ci"]
    assert 1 / 3 - 1e-9 <= low <= 0.5 <= high <= 2 / 3 + 1e-9
    assert report["bootstrap"]["n_boot"] == 300
    summary = negation_summary(
        negation_table(primary(), NEGATION_UNITS),
        negation_intervals(primary(), NEGATION_UNITS, boot),
    )
    ci = summary["J"]["overall"]["all"]["negated_0_1"]["strict_success"]["ci"]
    assert ci[0] <= 2 / 6 <= ci[1]
    # a group with one unit has a degenerate interval at its point
    # estimate (strength 3 = u1, 1:1: 2/3)
    assert summary["J"]["strength"]["3"]["negated_1_1"]["strict_success"]["ci"] == pytest.approx(
        [2 / 3, 2 / 3]
    )
    labels = {
        ("u1", "neutral"): ["s", "s", "s"],
        ("u2", "neutral"): ["s", "a", "neither"],
        ("u3", "neutral"): ["a", "a", "s"],
        ("u1", "subject"): ["s", "a"],
        ("u2", "subject"): ["s"],
        ("u3", "subject"): ["s", "a"],
    }
    prim = pd.DataFrame(
        [
            dict(config="c", unit_id=u, variant=v, seed=i, judge="J", label=lab)
            for (u, v), labs in labels.items()
            for i, lab in enumerate(labs)
        ]
    )
    units = pd.DataFrame({"unit_id": ["u1", "u2", "u3"], "bias_type": ["gender", "gender", "race"]})
    div = diversity_report(diversity_frame(prim, units), boot=boot, min_scene_images=1)["J"]["c"]
    mgbi = div["intervals"]["MGBI"]
    assert mgbi["value"] == pytest.approx(0.419520, abs=1e-6)
    assert (
        mgbi["n"] == 3
        and diversity_report(diversity_frame(prim, units), boot=boot, min_scene_images=1)["J"]["c"][
            "intervals"
        ]["MGBI"]
        == mgbi
    )
    # by default (20 images per scene) 3 seeds give no CA_q / MGBI and no interval, not [0, 0]
    assert (
        diversity_report(diversity_frame(prim, units), boot=boot)["J"]["c"]["intervals"]["MGBI"]
        is None
    )
    # some resamples have no template image of a type (MGBI
    # undefined there): left out of the interval
    assert np.isnan(_mgbi_replicates(prim, units, boot)).any()
    assert 0.0 <= mgbi["ci"][0] <= mgbi["ci"][1] <= 1.0


def _strict(path):
    import json

    def bad(token):
        raise ValueError(f"{path}: {token} is not JSON")

    return json.loads(open(path).read(), parse_constant=bad)


def test_metrics_are_strict_json(repo, monkeypatch):
    monkeypatch.chdir(repo)
    for name in ("clip", "judge_audit", "negation", "diversity"):
        CliRunner().invoke(_stage(name), [], catch_exceptions=False)
        _strict(f"metrics/{name}.json")


def _mgbi_replicates(prim, units, boot):
    """The MGBI bootstrap replicates behind ``diversity_report``'s interval (same stream)."""
    from implicit_bench.audits.diversity import QUANTILES, categories, diversity_frame
    from implicit_bench.audits.intervals import diversity_replicates, entropy_rows, unit_counts

    frame = diversity_frame(prim, units)
    ids = sorted(frame["unit_id"].astype(str).unique())
    cats = categories(False)
    h = entropy_rows(unit_counts(frame[frame["variant"] == "neutral"], ids, cats), len(cats))
    templates = unit_counts(frame[frame["variant"] == "subject"], ids, cats)
    types = (
        frame.drop_duplicates("unit_id")
        .set_index("unit_id")["bias_type"]
        .reindex(ids)
        .astype(str)
        .to_numpy()
    )
    return diversity_replicates(
        boot.weights(len(ids), "diversity/J/c"), h, templates, types, len(cats), QUANTILES
    )["MGBI"]


def test_negation_stage_writes_the_simulated_evaluator_audit(repo, monkeypatch, tmp_path):
    """negation.evaluator_source sim: NegT2IBench's evaluator audit of world.negprobe."""
    monkeypatch.chdir(repo)
    params = yaml.safe_load((repo / "params.yaml").read_text())
    params["negation"]["evaluator_source"] = "sim"
    params["world"] = {"seed": 3, "negprobe": {"images": 32}}
    alt = tmp_path / "params.yaml"
    alt.write_text(yaml.safe_dump(params))
    out = tmp_path / "negation.json"
    args = ["--params", str(alt), "--metrics", str(out), "--plot", str(tmp_path / "n.csv")]
    result = CliRunner().invoke(_stage("negation"), args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    block = read_json(str(out))["evaluator_agreement"]
    assert block["simulated"] is True and block["images"] == 32
    assert block["negated_probe"]["flip_rate_interval"]["ci"] is not None
    assert set(block["modes"]) >= {"whole", "pos", "neg"}
