"""Read a tracked file at a git revision, a DVC experiment or the workspace."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from implicit_bench.errors import ConfigError

WORKSPACE = "workspace"


def _git(root: Path, *args: str) -> str:
    res = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise ConfigError(f"git {' '.join(args)}: {res.stderr.strip() or 'failed'}")
    return res.stdout


def experiments(root: Path) -> dict[str, str]:
    """DVC experiments of the repository: ``{name: commit}`` (the ``refs/exps`` refs that
    ``dvc exp run`` writes; the last path component is the experiment's name)."""
    out = _git(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/exps")
    exps = {}
    for line in out.splitlines():
        ref, sha = line.split()
        if ref.count("/") >= 4 and not ref.endswith("/celery"):  # refs/exps/ab/cdef.../NAME
            exps[ref.rsplit("/", 1)[-1]] = sha
    return exps


def resolve(root: Path, rev: str) -> str:
    """A commit for ``rev`` (a git revision or a DVC experiment's name); ``workspace`` stays."""
    if rev == WORKSPACE:
        return rev
    res = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if res.returncode == 0:
        return res.stdout.strip()
    exps = experiments(root)
    if rev in exps:
        return exps[rev]
    raise ConfigError(
        f"{rev}: not a git revision nor a DVC experiment (experiments: {sorted(exps) or 'none'})"
    )


def read_json(root: Path, rev: str, path: str) -> dict[str, Any] | None:
    """``path`` (relative to the repository root) at ``rev``; None when it does not exist there.
    Not JSON, or JSON but not an object: a ``ConfigError`` naming the file and the revision."""
    if rev == WORKSPACE:
        file = root / path
        if not file.exists():
            return None
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path} in the workspace: not UTF-8 text ({exc.reason})") from None
        return _object(text, f"{path} in the workspace")
    res = subprocess.run(
        ["git", "show", f"{resolve(root, rev)}:{path}"],
        cwd=root,
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
    )
    if res.returncode != 0:
        return None
    return _object(res.stdout, f"{path} at {rev}")


def _object(text: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: not a JSON object ({type(data).__name__})")
    return data
