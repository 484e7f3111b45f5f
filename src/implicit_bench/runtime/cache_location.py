"""Where the model-call caches live: one directory per repository, shared by every workspace.

The caches (``cache/judge.sqlite``, ``cache/clip.sqlite``, ...) are never DVC outputs, and a
stage's ``cache:`` params key names a file relative to the *cache directory*: a relative path
``cache/NAME`` is ``<cache dir>/NAME``. The cache directory is, first match wins:

1. the environment variable ``IMPLICIT_BENCH_CACHE_DIR``;
2. the params key ``base.cache_dir`` of the ``params.yaml`` in the working directory
   (relative paths: against that directory);
3. ``<repository root>/cache``, where the repository root is the main working tree of the git
   repository: the same directory for the workspace, every ``git worktree`` of it, and every
   DVC temporary workspace (``dvc exp run --temp`` and ``dvc queue`` workers run in
   ``<root>/.dvc/tmp/exps/...``, a separate git repository made by DVC).

docs/experiments.md ("One model-call cache per repository") documents it. Neither the
environment variable nor ``base.cache_dir`` is a DVC param of any stage: where answers are
cached changes no output.
"""

from __future__ import annotations

import os
import subprocess
from functools import lru_cache
from pathlib import Path

from implicit_bench._util.yamlsafe import load_yaml_file
from implicit_bench.errors import ConfigError

ENV_VAR = "IMPLICIT_BENCH_CACHE_DIR"
PARAMS_KEY = "base.cache_dir"
DEFAULT_PREFIX = "cache"  # a relative cache: path starting with this folder lives in the cache dir
_DVC_TEMP = (".dvc", "tmp", "exps")


def _dvc_temp_root(path: Path) -> Path | None:
    """The repository a DVC temporary workspace (``<root>/.dvc/tmp/exps/...``) belongs to."""
    parts = path.parts
    for i in range(len(parts) - len(_DVC_TEMP)):
        if parts[i : i + len(_DVC_TEMP)] == _DVC_TEMP:
            return Path(*parts[:i])
    return None


@lru_cache(maxsize=32)
def repository_root(start: str) -> Path:
    """The main working tree of the repository that ``start`` belongs to (``start`` itself
    outside git): a DVC temp workspace maps to its parent repository, a git worktree to the
    working tree that holds the common ``.git`` directory."""
    here = Path(start).resolve()
    here = _dvc_temp_root(here) or here
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return here
    common = Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None
    if common is None or common.name != ".git":  # not in git, or a bare repository
        return here
    return common.parent


def _params_cache_dir(workdir: Path) -> Path | None:
    path = workdir / "params.yaml"
    if not path.exists():
        return None
    try:
        data = load_yaml_file(path) or {}  # the strict loader: an anchor bomb is refused at once
    except (ConfigError, OSError):
        return None  # the stage's own params loading reports a broken params.yaml
    value = (  # raw: read before a stage validates params.yaml (a bad one is its to report)
        (data.get("base") or {}).get("cache_dir")
        if isinstance(data, dict) and isinstance(data.get("base"), dict)
        else None
    )
    return workdir / str(value) if value else None


def check_cache_dir(path: Path, where: str) -> Path:
    """``path`` if the caches can be written there: an existing writable directory, or a path
    whose nearest existing parent is one (the cache creates the rest); else a one-line
    ``ConfigError`` naming ``where`` (``/proc/self``, a file, a read-only directory)."""
    from implicit_bench.errors import ConfigError

    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        what = "is not a directory" if not probe.is_dir() else "is not writable"
        raise ConfigError(
            f"{where} = {str(path)!r}: {probe} {what}, no model-call cache can be written "
            "there (docs/experiments.md, 'One model-call cache per repository')"
        )
    return path


def cache_dir(workdir: str | Path | None = None) -> Path:
    """The cache directory for a process working in ``workdir`` (default: the current
    directory); one set by the variable or the params key must be a writable directory."""
    env = os.environ.get(ENV_VAR)
    if env:
        return check_cache_dir(Path(env).expanduser(), ENV_VAR).resolve()
    work = Path(workdir or os.getcwd()).resolve()
    params = _params_cache_dir(work)
    if params is not None:
        return check_cache_dir(params, f"{work / 'params.yaml'}: {PARAMS_KEY}").resolve()
    return repository_root(str(work)) / DEFAULT_PREFIX


def where_from(workdir: str | Path | None = None) -> str:
    """Which rule chose the cache directory (for ``implicit-bench check`` and the docs)."""
    if os.environ.get(ENV_VAR):
        return f"${ENV_VAR}"
    if _params_cache_dir(Path(workdir or os.getcwd()).resolve()) is not None:
        return PARAMS_KEY
    return "the repository's main working tree"


def resolve(path: str | Path, workdir: str | Path | None = None) -> Path:
    """The file a ``cache:`` params value names: ``cache/NAME`` -> ``<cache dir>/NAME``; an
    absolute path as is; any other relative path against ``workdir``."""
    path = Path(path)
    if path.is_absolute():
        return path
    work = Path(workdir or os.getcwd())
    if path.parts and path.parts[0] == DEFAULT_PREFIX:
        return cache_dir(work).joinpath(*path.parts[1:])
    # callers that already joined a root (plan: root / "cache/x.sqlite") pass an absolute path
    return work / path
