"""requirements.lock pins every dependency pyproject.toml declares (core and dev extras)."""

from __future__ import annotations

import re
import tomllib

from tests.conftest import REPO_ROOT


def _name(spec: str) -> str:
    return (
        re.split(r"[\s<>=!~\[;]", spec.strip(), maxsplit=1)[0]
        .lower()
        .replace("_", "-")
        .replace(".", "-")
    )


def test_lock_pins_every_declared_dependency_exactly():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    declared = {_name(d) for d in project["dependencies"] + project["optional-dependencies"]["dev"]}
    lines = [
        ln
        for ln in (REPO_ROOT / "requirements.lock").read_text().splitlines()
        if ln and not ln.startswith("#")
    ]
    assert all("==" in ln for ln in lines), "every line of the lock is an exact pin"
    pinned = {_name(ln) for ln in lines}
    assert declared - pinned == set(), "run `make lock` after changing dependencies"
    assert "implicit-bench" not in pinned  # the project itself is installed editable
