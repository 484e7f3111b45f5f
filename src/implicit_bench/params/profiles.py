"""Profiles: named sets of parameter overrides (profiles/NAME.yaml)
applied to the default profile."""

from __future__ import annotations

import copy
import io
import tempfile
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from implicit_bench._util.files import atomic_write_bytes
from implicit_bench._util.yamlsafe import load_yaml, load_yaml_file
from implicit_bench.errors import ConfigError
from implicit_bench.params import CATALOGUES, check_name, check_references, load_params

DEFAULT = "default"
DEFAULT_FILE = (
    "default.yaml"  # profiles/default.yaml: the default's value of every key a profile sets
)
WHOLE_SECTIONS = CATALOGUES  # restored whole from profiles/default.yaml: entries a profile adds go


def held_profile(params: dict[str, Any]) -> Any:
    """``base.profile`` of a params mapping (``default`` when unset)."""
    # raw: the switch round-trips params.yaml text, and may run on one that no model accepts
    return (params.get("base") or {}).get("profile", DEFAULT)


def _whole(path: tuple[str, ...], value: Any) -> bool:
    """A value a profile replaces whole: a catalogue entry, or any backend block (``backend:``)."""
    return (len(path) == 2 and path[0] in CATALOGUES) or (
        isinstance(value, dict) and "backend" in value
    )


def deep_merge(
    base: dict[str, Any], override: dict[str, Any], _path: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``override`` wins; mappings merge recursively, everything else (lists too) is replaced,
    and so is a catalogue entry or backend block (never merged key by key across backends)."""
    merged = dict(base)
    for key, value in override.items():
        here = (*_path, str(key))
        if (
            isinstance(value, dict)
            and isinstance(merged.get(key), dict)
            and not _whole(here, value)
        ):
            merged[key] = deep_merge(merged[key], value, here)
        else:
            merged[key] = value
    return merged


def _profile_path(name: str, profiles_dir: str | Path) -> Path:
    try:
        check_name(name, "profile name")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    path = Path(profiles_dir) / f"{name}.yaml"
    if not path.exists():
        known = sorted({p.stem for p in Path(profiles_dir).glob("*.yaml")} | {DEFAULT})
        raise ConfigError(f"{path}: no such profile; known: {', '.join(known)}")
    return path


def _read_mapping(path: Path) -> dict[str, Any]:
    data = load_yaml_file(path) or {}  # duplicate keys, anchor bombs refused
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def profile_chain(name: str, profiles_dir: str | Path = "profiles") -> list[Path]:
    """The profile files applied, base first: a profile may say
    ``extends: OTHER`` (run overlays)."""
    chain: list[Path] = []
    while name != DEFAULT:
        path = _profile_path(name, profiles_dir)
        if path in chain:
            raise ConfigError(f"{path}: 'extends' makes a cycle")
        chain.insert(0, path)
        name = str(_read_mapping(path).get("extends") or DEFAULT)
    return chain


def default_values(
    params_path: str | Path, profiles_dir: str | Path = "profiles"
) -> dict[str, Any]:
    """The default profile's values of every key a profile may set: params.yaml itself while it
    is the default (``base.profile: default``), else profiles/default.yaml."""
    params = load_params(params_path)
    if held_profile(params) == DEFAULT:
        return params
    path = Path(profiles_dir) / DEFAULT_FILE
    if not path.exists():
        raise ConfigError(
            f"{params_path}: holds profile {params['base']['profile']!r} and {path} is missing: "
            "no way back to the default (git checkout params.yaml)"
        )
    return _read_mapping(path)


def restore_default(params: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """``params`` with every key that profiles/default.yaml records set back to it: a catalogue
    section whole, any other section key by key (its keys' values whole)."""
    out = dict(params)
    for section_name, value in defaults.items():
        if (
            section_name in WHOLE_SECTIONS
            or not isinstance(value, dict)
            or not isinstance(out.get(section_name), dict)
        ):
            out[section_name] = value
        else:
            out[section_name] = {**out[section_name], **value}
    return out


def compose(
    name: str, params_path: str | Path = "params.yaml", profiles_dir: str | Path = "profiles"
) -> dict[str, Any]:
    """The params of profile ``name`` applied to the default (``default``: the default itself)."""
    chain = profile_chain(name, profiles_dir)
    defaults = default_values(params_path, profiles_dir)
    _check_restorable(load_params(params_path), defaults, profiles_dir)
    params = restore_default(load_params(params_path), defaults)
    for path in chain:
        override = {k: v for k, v in _read_mapping(path).items() if k != "extends"}
        params = deep_merge(params, override)
    params.setdefault("base", {})
    params["base"] = {**(params["base"] or {}), "profile": name}
    check_references(
        params, chain[-1] if chain else params_path
    )  # every catalogue name in use exists
    return params


def _check_restorable(
    current: dict[str, Any], defaults: dict[str, Any], profiles_dir: str | Path
) -> None:
    """The keys the current profile set must be in profiles/default.yaml, or no switch is exact."""
    held = held_profile(current)
    if held == DEFAULT or not (Path(profiles_dir) / f"{held}.yaml").exists():
        return
    for path in profile_chain(held, profiles_dir):
        for section_name, value in _read_mapping(path).items():
            if section_name in ("extends", "base") or section_name in WHOLE_SECTIONS:
                continue
            keys = value if isinstance(value, dict) else {None: None}
            recorded = defaults.get(section_name)
            missing = [k for k in keys if not isinstance(recorded, dict) or k not in recorded]
            if section_name not in defaults or (isinstance(value, dict) and missing):
                where = (
                    f"{section_name}.{missing[0]}"
                    if missing and missing[0] is not None
                    else section_name
                )
                raise ConfigError(
                    f"{path}: sets {where}, which profiles/default.yaml does not record: "
                    "switch back with `git checkout params.yaml`, then run "
                    "`implicit-bench profile --save-default`"
                )


def apply_profile(
    name: str, params_path: str | Path = "params.yaml", profiles_dir: str | Path = "profiles"
) -> dict[str, Any]:
    """``compose``: kept under its old name for callers (tests, ``plan --profile``)."""
    return compose(name, params_path, profiles_dir)


# The keys an `implicit-bench run` overlay sets (planning.overlay.build_overlay) besides catalogue
# entries: recorded in profiles/default.yaml even before any overlay exists.
OVERLAY_KEYS: dict[str, set[str]] = {
    "subset": {"max_units", "order", "seed"},
    "benchmark": {"path", "variants"},
    "render": {"run", "seeds"},
    "judge": {"tasks", "configs", "images_dir"},
    "select": {"config", "judges"},
    "world": {"units"},
    "b6": {"enabled"},
    "bench": {"units", "seed_index", "generators", "run", "tasks"},
    "evaluate": {
        "config",
        "blind_judges",
        "rubric_judges",
        "units",
        "selected_units",
        "judgements",
        "image_index_glob",
        "inputs",
        "beside_release",
    },
}


def touched_keys(profiles_dir: str | Path = "profiles") -> dict[str, set[str] | None]:
    """section -> the keys some profile (or a run overlay) sets (None: the whole section)."""
    touched: dict[str, set[str] | None] = {k: set(v) for k, v in OVERLAY_KEYS.items()}
    for path in sorted(Path(profiles_dir).glob("*.yaml")):
        if path.name == DEFAULT_FILE:
            continue
        for section_name, value in _read_mapping(path).items():
            if section_name == "extends":
                continue
            if section_name in WHOLE_SECTIONS or not isinstance(value, dict):
                touched[section_name] = None
            elif touched.get(section_name, set()) is not None:
                touched[section_name] = touched.get(section_name, set()) | {str(k) for k in value}
    return touched


def round_trip_yaml() -> YAML:
    rt = YAML()  # round-trip mode: comments, key order and quoting survive
    rt.preserve_quotes = True
    rt.width = 4096
    rt.indent(mapping=2, sequence=4, offset=2)
    return rt


DEFAULT_HEADER = (
    "# The default profile's value of every key another profile "
    "sets (the catalogues whole), so that\n"
    "# `implicit-bench profile NAME` always starts from the default. Written by\n"
    "# `implicit-bench profile --save-default` from "
    "params.yaml; tests/unit/params/test_profiles.py checks it.\n"
)


def default_snapshot_text(
    params_path: str | Path = "params.yaml", profiles_dir: str | Path = "profiles"
) -> str:
    """profiles/default.yaml for the current params.yaml (which must be the default profile)."""
    params = load_params(params_path)
    if held_profile(params) != DEFAULT:
        raise ConfigError(
            f"{params_path}: holds profile {params['base']['profile']!r}; "
            "run `implicit-bench profile default` first"
        )
    rt = round_trip_yaml()
    base = rt.load(Path(params_path).read_text(encoding="utf-8"))
    out = CommentedMap()
    for section_name, keys in touched_keys(profiles_dir).items():
        if section_name not in base:
            raise ConfigError(
                f"{params_path}: a profile sets section '{section_name}' that the "
                "default lacks: add it with its default value"
            )
        if keys is None:
            out[section_name] = base[section_name]
            continue
        missing = sorted(k for k in keys if k not in base[section_name])
        if missing:
            raise ConfigError(
                f"{params_path}: a profile sets {section_name}.{missing[0]}, which "
                "the default lacks: add it with its default value"
            )
        out[section_name] = CommentedMap((k, v) for k, v in base[section_name].items() if k in keys)
        for key in keys:
            if key in base[section_name].ca.items:
                out[section_name].ca.items[key] = base[section_name].ca.items[key]
    buf = io.StringIO()
    rt.dump(out, buf)
    return DEFAULT_HEADER + buf.getvalue()


def merge_commented(
    base: CommentedMap,
    override: CommentedMap,
    _path: tuple[str, ...] = (),
    *,
    whole_sections: bool = False,
    flat: bool = False,
) -> CommentedMap:
    """``deep_merge`` on ruamel round-trip maps, in place on ``base``; comments are kept.

    A key the profile replaces takes the profile's end-of-line comment (a comment beside the
    old value would describe a value that is gone); every other comment of ``base`` stays.
    ``whole_sections``: restoring the default (catalogue sections replaced whole, other
    sections key by key); ``flat``: every key of ``override`` replaced whole.
    """
    for key, value in override.items():
        here = (*_path, str(key))
        if key == "extends" and not _path:
            continue
        if isinstance(value, dict) and isinstance(base.get(key), dict) and not flat:
            if (
                whole_sections
            ):  # restoring the default: each key whole; a catalogue loses added entries
                merge_commented(base[key], value, here, flat=True)
                if key in WHOLE_SECTIONS:
                    for extra in [k for k in base[key] if k not in value]:
                        _delete_keeping_tail(base[key], extra)
                continue
            if not whole_sections and not _whole(here, value):
                merge_commented(base[key], value, here)
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


def canonical_blank_lines(body: str) -> str:
    """params.yaml's one layout of blank lines: one before each top-level block (a top-level key,
    or the column-0 comment lines leading one), none elsewhere; a profile switch writes it, so
    any order of switches gives the same bytes (a replaced catalogue took or left the blank
    line that followed it). ``body`` unchanged when that would change a value (block scalars)."""
    out: list[str] = []
    previous = ""  # the last non-blank line
    for line in body.splitlines(keepends=True):
        if not line.strip():
            continue
        top_level = not line[0].isspace()
        if top_level and previous and (previous[0].isspace() or not previous.startswith("#")):
            out.append("\n")
        out.append(line)
        previous = line
    canonical = "".join(out)
    return canonical if load_yaml(canonical) == load_yaml(body) else body


def _token(text: str) -> Any:
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    return CommentToken(text, CommentMark(0), None)


def _delete_keeping_tail(node: CommentedMap, key: Any) -> None:
    """Delete ``key``; the comment lines that followed it move to the key before it."""
    keys = list(node)
    item = node.ca.items.pop(key, None)
    del node[key]
    tail = item[2].value.split("\n", 1)[1] if item and item[2] and "\n" in item[2].value else ""
    before = keys[keys.index(key) - 1] if keys.index(key) > 0 else None
    if tail.strip() and before is not None and before in node:
        prev = node.ca.items.get(before)
        if prev and prev[2] is not None:
            prev[2].value = prev[2].value.rstrip("\n") + "\n" + tail
        else:
            node.ca.items[before] = [None, None, _token("\n" + tail), None]


def write_profile(
    name: str, params_path: str | Path, target: str | Path, profiles_dir: str | Path = "profiles"
) -> None:
    """Write params.yaml as profile NAME applied to the default, keeping params.yaml's comments."""
    expected = compose(name, params_path, profiles_dir)  # validates the profiles and the result
    rt = round_trip_yaml()
    text = Path(params_path).read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("# `implicit-bench profile "):
        lines.pop(0)  # the previous switch's header line
    base = rt.load("".join(lines))
    current = load_params(params_path)
    if held_profile(current) != DEFAULT:
        merge_commented(
            base,
            rt.load((Path(profiles_dir) / DEFAULT_FILE).read_text(encoding="utf-8")),
            whole_sections=True,
        )
    for path in profile_chain(name, profiles_dir):
        merge_commented(base, rt.load(path.read_text(encoding="utf-8")) or CommentedMap())
    base.setdefault("base", CommentedMap())
    base["base"]["profile"] = name
    buf = io.StringIO()
    rt.dump(base, buf)
    header = (
        ""
        if name == DEFAULT
        else f"# `implicit-bench profile {name}` applied "
        f"profiles/{name}.yaml to the default profile.\n"
    )
    body = canonical_blank_lines(header + buf.getvalue())
    got = load_yaml(body)
    if got != expected:  # the round trip must give exactly what compose() computed
        raise ConfigError(
            f"{params_path}: the comment-keeping rewrite differs from the composed params (a bug): "
            "sections "
            f"{sorted(k for k in set(got) | set(expected) if got.get(k) != expected.get(k))}"
        )
    atomic_write_bytes(target, _dvc_form(body, Path(target), name))


def _dvc_form(body: str, target: Path, name: str) -> bytes:
    """``body`` re-dumped through DVC's own ``-S`` writer (``dvc.utils.hydra.apply_overrides``,
    setting ``base.profile`` to its value), so params.yaml stays in the form ``dvc exp run -S``
    writes and an experiment changes only the lines it sets (tests/project/test_params_form.py).

    DVC's writer rewrites its file in place, so it works on a copy in a private temporary
    folder next to ``target``; the caller then replaces ``target`` once, atomically: a kill at
    any moment leaves the old params.yaml or the new one, never a truncated file."""
    try:
        from dvc.utils.hydra import apply_overrides
    except ImportError:  # DVC not installed: the ruamel round trip stands
        return body.encode("utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.name}.") as tmp:
        draft = Path(tmp) / target.name
        draft.write_text(body, encoding="utf-8")
        apply_overrides(draft, [f"base.profile={name}"])
        return draft.read_bytes()
