"""Profiles: named sets of parameter overrides (profiles/NAME.yaml) merged over params.yaml."""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import click
import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from implicit_bench.errors import ConfigError
from implicit_bench.io import atomic_write_text
from implicit_bench.params import check_name, check_references, load_params
from implicit_bench.yamlsafe import load_yaml


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` wins; mappings merge recursively, everything else (lists too) is replaced."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def apply_profile(name: str, params_path: str | Path = "params.yaml", profiles_dir: str | Path = "profiles") -> dict[str, Any]:
    try:
        check_name(name, "profile name")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    profile_path = Path(profiles_dir) / f"{name}.yaml"
    if not profile_path.exists():
        known = sorted(p.stem for p in Path(profiles_dir).glob("*.yaml"))
        raise ConfigError(f"{profile_path}: no such profile; known: {', '.join(known) or 'none'}")
    override = load_yaml(profile_path.read_text(encoding="utf-8")) or {}  # duplicate keys, anchor bombs refused
    if not isinstance(override, dict):
        raise ConfigError(f"{profile_path}: expected a mapping at the top level")
    merged = deep_merge(load_params(params_path), override)
    check_references(merged, profile_path)  # every catalogue name the merged params use exists
    return merged


def _round_trip() -> YAML:
    rt = YAML()  # round-trip mode: comments, key order and quoting survive
    rt.preserve_quotes = True
    rt.width = 4096
    rt.indent(mapping=2, sequence=4, offset=2)
    return rt


def merge_commented(base: CommentedMap, override: CommentedMap) -> CommentedMap:
    """``deep_merge`` on ruamel round-trip maps, in place on ``base``; comments are kept.

    A key the profile replaces takes the profile's end-of-line comment (a comment beside the
    old value would describe a value that is gone); every other comment of ``base`` stays.
    """
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge_commented(base[key], value)
            continue
        base[key] = value
        old = base.ca.items.pop(key, None)
        new = override.ca.items.get(key)
        # an end-of-line comment token also carries the comment lines that follow it (the next
        # key's leading comment): keep those, swap only the first line
        old_tail = old[2].value.split("\n", 1)[1] if old and old[2] and "\n" in old[2].value else ""
        if new is not None and new[2] is not None:
            token = copy.copy(new[2])
            token.value = token.value.split("\n", 1)[0] + "\n" + old_tail
            base.ca.items[key] = [None, None, token, None]
        elif old is not None and old[2] is not None and old_tail.strip():
            token = copy.copy(old[2])
            token.value = "\n" + old_tail
            base.ca.items[key] = [None, None, token, None]
    return base


def write_profile(name: str, params_path: str | Path, target: str | Path, profiles_dir: str | Path = "profiles") -> None:
    """Write params.yaml with profiles/NAME.yaml merged over it, keeping params.yaml's comments."""
    apply_profile(name, params_path, profiles_dir)  # validates the profile and the merge
    rt = _round_trip()
    base = rt.load(Path(params_path).read_text(encoding="utf-8"))
    override = rt.load((Path(profiles_dir) / f"{name}.yaml").read_text(encoding="utf-8")) or CommentedMap()
    merged = merge_commented(base, override)
    buf = io.StringIO()
    rt.dump(merged, buf)
    atomic_write_text(target, f"# `implicit-bench profile {name}` merged profiles/{name}.yaml over {params_path}.\n" + buf.getvalue())


@click.command("profile")
@click.argument("name")
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", default=None, help="Write here instead of overwriting --params.")
@click.option("--dry-run", is_flag=True, help="Print the merged parameters only.")
def profile_command(name: str, params_path: str, out: str | None, dry_run: bool) -> None:
    """Merge profiles/NAME.yaml over params.yaml (e.g. `implicit-bench profile paper`).

    The file is rewritten round-trip (ruamel.yaml): params.yaml's comments and key order stay;
    a value the profile replaces takes the profile's comment. `git checkout params.yaml` undoes it.
    """
    merged = apply_profile(name, params_path)
    text = yaml.safe_dump(merged, sort_keys=False, allow_unicode=True)
    if dry_run:
        click.echo(text)
        return
    target = out or params_path
    write_profile(name, params_path, target)
    click.echo(f"profile {name}: wrote {target}; run `dvc repro` (or `dvc exp run`) next")
