"""A render run killed with SIGKILL resumes to exactly the result of an uninterrupted run."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import yaml
from click.testing import CliRunner

from implicit_bench.render.images import ImageStore
from tests.helpers.paths import REPO_ROOT
from tests.helpers.render_fixtures import tiny_config, units_frame


def _stage_command():
    spec = importlib.util.spec_from_file_location(
        "stage_render", REPO_ROOT / "stages" / "render.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def _setup(tmp_path: Path, model_dir: Path, name: str) -> list[str]:
    work = tmp_path / name
    work.mkdir()
    units = pd.concat(
        [units_frame().assign(unit_id=lambda f, k=k: f["unit_id"] + f"_{k}") for k in range(2)]
    )
    units.to_parquet(work / "units.parquet", index=False)
    params = {
        "base": {"profile": "default"},
        "generators": {"tiny": tiny_config(model_dir, batch_size=2)},
        "render": {
            "seeds": [42, 1042, 2042],
            "executor": {"kind": "local", "progress": False},
        },
    }
    (work / "params.yaml").write_text(yaml.safe_dump(params))
    return [
        sys.executable,
        str(REPO_ROOT / "stages" / "render.py"),
        "--params", str(work / "params.yaml"),
        "--units", str(work / "units.parquet"),
        "--images", str(work / "images"),
        "--metrics", str(work / "render.json"),
    ]  # fmt: skip


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT / "src"), env.get("PYTHONPATH", "")])
    env["OMP_NUM_THREADS"] = "1"
    return env


def _journal_lines(images: Path) -> int:
    journal = images / "tiny" / "journal.jsonl"
    return journal.read_text().count("\n") if journal.exists() else 0


def _images(store_dir: Path) -> dict:
    store = ImageStore(store_dir)
    return {r.key: store.read_bytes(r.sha256) for r in store.records() if r.status == "ok"}


def test_sigkill_then_resume_equals_uninterrupted(tiny_generator_dir, tmp_path):
    # 8 units x 3 seeds x 3 variants = 72 items in 36 batches of 2
    full = _setup(tmp_path, tiny_generator_dir, "full")
    killed = _setup(tmp_path, tiny_generator_dir, "killed")
    images = tmp_path / "killed" / "images"
    proc = subprocess.Popen(
        killed, cwd=REPO_ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while _journal_lines(images) < 10 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = _journal_lines(images)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()[-2000:]
    assert 10 <= done_before < 72  # killed partway
    assert not (images / "tiny" / "index.parquet").exists()

    # simulate the worst moment of a kill too: a torn journal line and a half-written shard
    with open(images / "tiny" / "journal.jsonl", "a") as fh:
        fh.write('{"config": "tiny", "unit_id": "u3_1", "variant": "neutral", "seed": 42, "stat')
    with open(next((images / "tiny" / "shards").glob("*.bin")), "ab") as fh:
        fh.write(b"\x89PNG half an image")

    resumed = subprocess.run(killed, cwd=REPO_ROOT, env=_env(), capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    # the uninterrupted run, in this process (same code, same thread count: threads 1)
    CliRunner().invoke(_stage_command(), full[2:], catch_exceptions=False)

    a = pd.read_parquet(tmp_path / "killed" / "images" / "tiny" / "index.parquet")
    b = pd.read_parquet(tmp_path / "full" / "images" / "tiny" / "index.parquet")
    assert len(a) == 72 and (a["status"] == "ok").all()
    pd.testing.assert_frame_equal(a, b)
    assert _images(images / "tiny") == _images(tmp_path / "full" / "images" / "tiny")
    # nothing rendered twice: every finished item has one journal line, new ones were appended
    journal = (images / "tiny" / "journal.jsonl").read_text().splitlines()
    complete = [line for line in journal if line.endswith("}")]
    assert len(complete) == 72


def test_corrupt_bytes_are_rendered_again(tiny_generator_dir, tmp_path):
    from implicit_bench.render.params import RenderParams
    from implicit_bench.render.stage import render_all

    params = RenderParams(configs={"tiny": tiny_config(tiny_generator_dir)}, seeds=[42])
    units = units_frame()
    render_all(params, units, tmp_path / "images")
    before = _images(tmp_path / "images" / "tiny")
    shard = next((tmp_path / "images" / "tiny" / "shards").glob("*.bin"))
    data = bytearray(shard.read_bytes())
    data[100] ^= 0xFF  # inside the first image
    shard.write_bytes(bytes(data))
    res = render_all(params, units, tmp_path / "images")
    assert res["tiny"]["run"]["skipped_done"] == 11
    assert res["tiny"]["run"]["written"] == {"ok": 1}
    assert _images(tmp_path / "images" / "tiny") == before
