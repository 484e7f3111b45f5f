"""What each DVC stage really depends on, found statically (docs/architecture.md, "Declared
dependencies").

For a stage ``python stages/NAME.py ...``:

- **code**: the stage script and every project module it imports, transitively: imports at
  module level and inside functions (lazy), ``from pkg import submodule``, the ``__init__.py``
  of every package on the way, and the ``"implicit_bench.module:Name"`` strings the registries
  import lazily;
- **package data**: the prompt / asset files under ``src/implicit_bench`` that an imported
  module opens (``resources.files(...) / "prompts" / "judges" / f"{name}.yaml"`` and the like):
  a file counts when all the folders of its path and its suffix are string constants of one
  imported module, and its stem is a constant somewhere in the closure (or no sibling's stem
  is: the folder is read whole);
- **workspace files**: the string constants of the script (click defaults, constants it
  imports by name) and the string values of the params sections it declares, when they name
  another stage's output or a file under ``data/raw``;
- **params**: the top-level sections the script reads (``section(raw, "x", ...)`` and the
  blocks of its ``inherit={...}`` / ``attach={...}``,
  ``raw["x"]``, ``raw.get("x")``) must be declared (a key under it is enough).

A path is covered by a dep when it equals the dep or lies under it (a folder dep). The
runtime counterpart (every file a stage opens during ``dvc repro``) is checked by the DVC
end-to-end tests (tests/test_dvc_experiments.py).
"""

from __future__ import annotations

import ast
import fnmatch
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

PACKAGE = "implicit_bench"
REGISTRY_STRING = re.compile(r"^(implicit_bench(?:\.\w+)+):\w+$")
PACKAGE_PREFIX = re.compile(r"^(implicit_bench(?:\.\w+)*)\.$")  # f"implicit_bench.tiny.{kind}"
WORKSPACE_ROOTS = ("data/", "metrics/", "models/", "plots/", "tables/", "report/")


@dataclass
class StageSpec:
    name: str
    script: str
    deps: list[str]
    outs: list[str]
    params: set[str]


@dataclass
class StageNeeds:
    code: set[str] = field(default_factory=set)
    data: set[str] = field(default_factory=set)
    reads: set[str] = field(default_factory=set)
    sections: set[str] = field(default_factory=set)


# ----- the stages as DVC resolves them ---------------------------------------------------------
def dvc_stages(root: Path) -> list[StageSpec]:
    """Every stage of dvc.yaml, foreach entries expanded, with its deps, outs and params
    (resolved once per version of dvc.yaml and params.yaml: loading DVC's index takes seconds)."""
    root = Path(root).resolve()
    stamp = tuple(
        (root / n).stat().st_mtime_ns if (root / n).exists() else 0
        for n in ("dvc.yaml", "params.yaml")
    )
    return list(_dvc_stages(root, stamp))


@cache
def _dvc_stages(root: Path, stamp: tuple[int, ...]) -> tuple[StageSpec, ...]:
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    repo = Repo(str(root))
    try:
        specs = []
        for stage in repo.index.stages:
            argv = shlex.split(stage.cmd if isinstance(stage.cmd, str) else " ".join(stage.cmd))
            script = next((a for a in argv if a.endswith(".py")), None)
            if script is None:
                continue
            deps, params = [], set()
            for dep in stage.deps:
                if isinstance(dep, ParamsDependency):
                    params.update(dep.params or [])
                else:
                    deps.append(dep.def_path.rstrip("/"))
            outs = [out.def_path.rstrip("/") for out in stage.outs]
            specs.append(StageSpec(stage.addressing, script, deps, outs, params))
        return tuple(specs)
    finally:
        repo.close()


# ----- imports ---------------------------------------------------------------------------------
def module_file(root: Path, module: str) -> Path | None:
    """The source file of a project module (``implicit_bench.x.y``), or None."""
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    base = root / "src" / Path(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _module_name(root: Path, path: Path) -> str | None:
    try:
        rel = path.relative_to(root / "src")
    except ValueError:
        return None
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@cache
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@cache
def constants(path: Path) -> frozenset[str]:
    """Every string constant of a source file (f-string parts included)."""
    return frozenset(
        {
            n.value
            for n in ast.walk(_parse(path))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }
    )


@cache
def _imported_modules(root: Path, path: Path) -> frozenset[str]:
    """Project modules one file imports anywhere in its body, plus its registry strings."""
    tree = _parse(path)
    own = _module_name(root, path)
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level and own:
                base = own.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)  # submodules by name
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = REGISTRY_STRING.match(node.value)
            if match:
                found.add(match.group(1))
            prefix = PACKAGE_PREFIX.match(node.value)
            if prefix:  # import_module(f"pkg.{name}"): any module of the package
                found.update(_submodules(root, prefix.group(1)))
    if is_package and own and "iter_modules" in _attrs(path):  # pkgutil.iter_modules(__path__)
        found.update(_submodules(root, own))
    modules = set()
    for name in found:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__ and a/b/__init__
            prefix = ".".join(parts[:i])
            if module_file(root, prefix) is not None:
                modules.add(prefix)
    return frozenset(modules)


def _submodules(root: Path, package: str) -> set[str]:
    """The modules directly inside a project package."""
    init = module_file(root, package)
    if init is None or init.name != "__init__.py":
        return set()
    return {
        f"{package}.{p.stem if p.suffix == '.py' else p.name}"
        for p in init.parent.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }


def import_closure(root: Path, script: Path) -> set[Path]:
    """The script and every project source file it imports, transitively."""
    seen: set[Path] = {script}
    todo = [script]
    while todo:
        path = todo.pop()
        for module in _imported_modules(root, path):
            target = module_file(root, module)
            if target is not None and target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


# ----- package data ----------------------------------------------------------------------------
def _parts(strings: Iterable[str]) -> set[str]:
    out = set()
    for s in strings:
        out.add(s)
        out.update(p for p in re.split(r"[/.]", s) if p)
    return out


def package_data(root: Path, closure: set[Path]) -> set[Path]:
    """Non-Python files under src/implicit_bench that the imported modules open."""
    pkg = root / "src" / PACKAGE
    files = [
        p
        for p in pkg.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]
    per_module = {path: constants(path) for path in closure}
    module_parts = {path: _parts(consts) for path, consts in per_module.items()}
    all_parts = set().union(*module_parts.values()) if module_parts else set()
    found: set[Path] = set()
    for member in files:
        dirs = member.relative_to(pkg).parent.parts
        for module, consts in per_module.items():
            if any(c.endswith(member.name) and "/" + member.name in "/" + c for c in consts):
                found.add(member)  # named in full ("stopwords_en.txt", "prompts/negation.txt")
                continue
            parts = module_parts[module]
            if not dirs or not all(d in parts for d in dirs):
                continue
            if any(c.endswith(member.suffix) for c in consts) and member.stem in all_parts:
                found.add(member)  # folder / f"{name}.yaml" with the name a constant of the closure
            elif (dirs[-1] in consts or "/".join(dirs) in consts) and _ITERATES & _attrs(module):
                found.add(
                    member
                )  # the folder ("judges" or "prompts/judges") is listed and read whole
    return found


_ITERATES = {"iterdir", "glob", "rglob", "listdir", "scandir"}


@cache
def _attrs(path: Path) -> frozenset[str]:
    return frozenset(n.attr for n in ast.walk(_parse(path)) if isinstance(n, ast.Attribute))


# ----- workspace files and params ----------------------------------------------------------------
def _script_strings(root: Path, script: Path) -> set[str]:
    """The script's string constants and the string constants it imports by name."""
    strings = set(constants(script))
    for node in ast.walk(_parse(script)):
        if isinstance(node, ast.ImportFrom) and node.module:
            target = module_file(root, node.module)
            if target is None:
                continue
            wanted = {a.name for a in node.names}
            for stmt in _parse(target).body:
                if (
                    isinstance(stmt, ast.Assign)
                    and isinstance(stmt.value, ast.Constant)
                    and isinstance(stmt.value.value, str)
                    and any(isinstance(t, ast.Name) and t.id in wanted for t in stmt.targets)
                ):
                    strings.add(stmt.value.value)
    return strings


def _param_strings(params: dict, keys: Iterable[str]) -> set[str]:
    out: set[str] = set()

    def walk(value) -> None:
        if isinstance(value, str):
            out.add(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for key in keys:
        node = params
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        walk(node)
    return out


def read_sections(script: Path) -> set[str]:
    """Top-level params sections a stage script reads."""
    found = set()
    for node in ast.walk(_parse(script)):
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            args = node.args
            if name == "section" and len(args) >= 2 and isinstance(args[1], ast.Constant):
                found.add(str(args[1].value))
                for kw in (
                    node.keywords
                ):  # section(..., inherit={"bootstrap": ...}) reads that top-level block
                    if kw.arg in ("inherit", "attach") and isinstance(kw.value, ast.Dict):
                        found.update(
                            str(k.value) for k in kw.value.keys if isinstance(k, ast.Constant)
                        )
            elif (
                name == "get"
                and isinstance(func, ast.Attribute)
                and _is_raw(func.value)
                and args
                and isinstance(args[0], ast.Constant)
            ):
                found.add(str(args[0].value))
        elif (
            isinstance(node, ast.Subscript)
            and _is_raw(node.value)
            and isinstance(node.slice, ast.Constant)
        ):
            found.add(str(node.slice.value))
    return found


def _is_raw(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "raw"


def workspace_reads(
    strings: set[str], spec: StageSpec, all_outs: list[str], root: Path
) -> set[str]:
    """Strings that name another stage's output (or a part of one, or a glob
    over them) or a raw file.

    A folder that holds one output per foreach entry (``data/debias/images``) stands, in an entry
    ``stage@key``, for that entry's own output only."""
    own_outs = spec.outs
    key = spec.name.partition("@")[2]
    reads = set()
    for s in strings:
        s = s.rstrip("/")
        if not s.startswith(WORKSPACE_ROOTS):
            continue
        hits = [o for o in all_outs if o == s or s.startswith(o + "/") or fnmatch.fnmatch(o, s)]
        below = [o for o in all_outs if o.startswith(s + "/")]
        if key and below:
            below = [o for o in below if key in Path(o).parts or Path(o).stem == key]
        hits += below
        if s.startswith("data/raw/") and (root / s).exists():
            hits.append(s)
        for hit in hits:
            if hit in own_outs or any(hit.startswith(o + "/") for o in own_outs):
                continue
            if s.startswith(hit + "/") and not any(
                ch in s for ch in "*?["
            ):  # a file inside an output folder
                reads.add(s)
            else:
                reads.add(hit)
    return reads


def needs(root: Path, spec: StageSpec, params: dict, all_outs: list[str]) -> StageNeeds:
    script = root / spec.script
    closure = import_closure(root, script)
    out = StageNeeds()
    out.code = {p.relative_to(root).as_posix() for p in closure}
    out.data = {p.relative_to(root).as_posix() for p in package_data(root, closure)}
    strings = _script_strings(root, script) | _param_strings(params, spec.params)
    out.reads = workspace_reads(strings, spec, all_outs, root)
    out.sections = read_sections(script)
    return out


def covered(path: str, deps: Iterable[str]) -> bool:
    return any(path == d or path.startswith(d + "/") for d in deps)


def missing(root: Path) -> dict[str, dict[str, list[str]]]:
    """Per stage: code, package data, workspace files and params
    sections not covered by its deps."""
    import yaml

    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    specs = dvc_stages(root)
    all_outs = [o for s in specs for o in s.outs]
    report: dict[str, dict[str, list[str]]] = {}
    for spec in specs:
        need = needs(root, spec, params, all_outs)
        gaps = {
            "code": sorted(p for p in need.code if not covered(p, spec.deps)),
            "data": sorted(p for p in need.data if not covered(p, spec.deps)),
            "reads": sorted(p for p in need.reads if not covered(p, spec.deps)),
            "params": sorted(
                s
                for s in need.sections
                if not any(p == s or p.startswith(s + ".") for p in spec.params)
            ),
        }
        gaps = {k: v for k, v in gaps.items() if v}
        if gaps:
            report[spec.name] = gaps
    return report
