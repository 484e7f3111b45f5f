"""User journeys: README / docs recipes typed literally into a fresh clone (tests/journeys/).

``fresh_clone`` clones the committed HEAD of the checkout the tests run from into a temporary
folder (no DVC cache, no image stores, no model-call cache); ``Journey.type`` runs one recipe
line through ``bash -c`` exactly as written in the docs, in that clone, with the running
interpreter's environment first on PATH, ``PYTHONPATH=<clone>/src`` (the clone's code is what
gets imported), the clone's own empty cache (``IMPLICIT_BENCH_CACHE_DIR``) and no network.
``record`` adds a journey's wall time to ``tests/artifacts/journeys.json``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.paths import REPO_ROOT

ARTIFACTS = REPO_ROOT / "tests/artifacts"
TIMES = ARTIFACTS / "journeys.json"
RUNNING_STAGE = re.compile(r"^Running stage '([^']+)'", re.M)


def fresh_clone(parent: Path, name: str = "clone") -> Path:
    """``git clone`` of the committed HEAD of the repository under test into ``parent/name``."""
    dest = parent / name
    subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(dest)], check=True)
    (dest / "cache").mkdir(exist_ok=True)
    return dest


def clone_env(clone: Path) -> dict[str, str]:
    """The environment a user of ``clone`` has after `make setup`: the running interpreter's
    bin folder first on PATH, the clone's sources, its own (empty) answer cache, offline."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("IMPLICIT_BENCH_", "PYTEST_", "DVC_")) and k != "PYTHONPATH"
    }
    env.update(
        PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        PYTHONPATH=str(clone / "src"),
        IMPLICIT_BENCH_CACHE_DIR=str(clone / "cache"),
        IMPLICIT_BENCH_RUN_LOG="",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        GIT_AUTHOR_NAME="journey",
        GIT_AUTHOR_EMAIL="journey@example.org",
        GIT_COMMITTER_NAME="journey",
        GIT_COMMITTER_EMAIL="journey@example.org",
    )
    return env


def link_venv(clone: Path) -> None:
    """For `make` recipes: ``<clone>/.venv`` is the environment in use (a symlink, nothing
    installed); its ``.setup-stamp`` is touched only if that environment is a venv of its own."""
    prefix = Path(sys.prefix)
    (clone / ".venv").symlink_to(prefix, target_is_directory=True)
    if (prefix / "pyvenv.cfg").exists():
        (prefix / ".setup-stamp").touch()


@dataclass
class Journey:
    """One journey in one clone: each ``type`` call is a recipe line; ``seconds`` its total."""

    name: str
    clone: Path
    seconds: float = 0.0
    steps: list[dict[str, object]] = field(default_factory=list)

    def type(
        self, command: str, *, cwd: Path | None = None, check: bool = True, timeout: float = 1800
    ) -> subprocess.CompletedProcess[str]:
        """Run ``command`` through ``bash -c`` as written; on ``check`` a non-zero exit fails the
        journey with the command and the tail of its output."""
        start = time.perf_counter()
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=cwd or self.clone,
            env=clone_env(self.clone),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        took = time.perf_counter() - start
        self.seconds += took
        self.steps.append({"command": command, "rc": done.returncode, "seconds": round(took, 1)})
        self.record()  # after each step: a journey that fails still leaves its times
        if check:
            assert done.returncode == 0, (
                f"{command}: exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
            )
        return done

    def record(self) -> None:
        record(self.name, self.seconds, self.steps)


def stages_run(output: str) -> list[str]:
    """The stages DVC ran, from its 'Running stage' lines."""
    return RUNNING_STAGE.findall(output)


def record(name: str, seconds: float, steps: list[dict[str, object]] | None = None) -> None:
    """Add one journey's wall time to tests/artifacts/journeys.json and print it."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    times = json.loads(TIMES.read_text()) if TIMES.exists() else {}
    times[name] = {"seconds": round(seconds, 1), "steps": steps or []}
    times["_total_seconds"] = round(
        sum(v["seconds"] for k, v in times.items() if not k.startswith("_")), 1
    )
    TIMES.write_text(json.dumps(times, indent=2) + "\n")
    print(f"journey {name}: {seconds:.1f} s ({len(steps or [])} steps)")
