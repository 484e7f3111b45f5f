"""requirements.lock pins every dependency pyproject.toml declares (core and dev extras)."""

from __future__ import annotations

import re
import tomllib

from tests.helpers.paths import REPO_ROOT


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


def test_lock_pins_the_serve_extra_except_llama_cpp_python_which_builds_from_source():
    """The serve extra (real servers for tests/e2e/test_real_servers.py): every package pinned but
    llama-cpp-python, which `make setup` builds from source with its CMAKE_ARGS."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    serve = {_name(d) for d in project["optional-dependencies"]["serve"]}
    lines = (REPO_ROOT / "requirements.lock").read_text().splitlines()
    pinned = {_name(ln) for ln in lines if ln and not ln.startswith("#")}
    assert serve - pinned == {"llama-cpp-python"}
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert '"llama-cpp-python[server]==0.3.36"' in makefile and "-DGGML_NATIVE=OFF" in makefile
