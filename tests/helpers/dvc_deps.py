"""What each DVC stage really depends on, found statically (docs/contracts.md, "Declared
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
end-to-end tests (tests/e2e/test_dvc_experiments.py).
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
PACKAGE_PREFIX = re.compile(
    r"^(implicit_bench(?:\.\w+)*)\.$"
)  # f"implicit_bench.backends.tiny.{kind}"
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


ALWAYS_CALLED = re.compile(r"^__\w+__$")  # dunder methods: called by Python itself
# bases from outside the project whose methods the base itself never calls by name
PLAIN_BASES = frozenset(
    {"ABC", "Protocol", "Generic", "NamedTuple", "TypedDict", "Enum", "IntEnum", "StrEnum"}
)


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.value if not isinstance(node, ast.Call) else node.func
    return node.id if isinstance(node, ast.Name) else None


def _bindings(tree: ast.Module) -> dict[str, str]:
    """Module-level imported names of a file -> the module they come from."""
    bound = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name.partition(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                bound[alias.asname or alias.name] = "." * node.level + (node.module or "")
    return bound


@cache
def hooked_classes(root: Path) -> frozenset[str]:
    """Names of the project classes whose methods a framework may call by itself: a base from
    outside the project (``click.Command``, pydantic's ``BaseModel``; not ``PLAIN_BASES``), or
    a project base that is hooked. Every method of such a class counts as reached."""
    bases: dict[str, set[str]] = {}
    hooked: set[str] = set()
    for path in sorted((root / "src" / PACKAGE).rglob("*.py")):
        tree = _parse(path)
        bound = _bindings(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for base in node.bases:
                name = _root_name(base)
                origin = bound.get(name or "")
                if origin is None or origin.startswith((PACKAGE, ".")):
                    bases.setdefault(node.name, set()).add(
                        base.attr if isinstance(base, ast.Attribute) else name or ""
                    )
                elif (base.attr if isinstance(base, ast.Attribute) else name) not in PLAIN_BASES:
                    hooked.add(node.name)
    while True:
        more = {c for c, b in bases.items() if c not in hooked and b & hooked}
        if not more:
            return frozenset(hooked)
        hooked |= more


@dataclass(frozen=True)
class _Imports:
    """What one file imports: at module level (``eager``), and inside functions, each with the
    names of its enclosing functions (``lazy``: reached only when all of them are)."""

    eager: frozenset[str]
    lazy: tuple[tuple[tuple[str, ...], frozenset[str]], ...]
    # names referred to at module level (Name, import, string; an attribute also as ".name")
    names: frozenset[str]
    lazy_names: tuple[tuple[tuple[str, ...], frozenset[str]], ...]  # ... inside functions


def _node_modules(root: Path, node: ast.AST, own: str | None, is_package: bool) -> set[str]:
    """The project modules one import statement or registry string names."""
    found: set[str] = set()
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
    modules = set()
    for name in found:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__ and a/b/__init__
            prefix = ".".join(parts[:i])
            if module_file(root, prefix) is not None:
                modules.add(prefix)
    return modules


_IDENT = re.compile(r"\w+")


@cache
def _imports(root: Path, path: Path) -> _Imports:
    """Project modules one file imports (eagerly / inside which functions), its registry
    strings, and the names it refers to."""
    tree = _parse(path)
    own = _module_name(root, path)
    is_package = path.name == "__init__.py"
    eager: set[str] = set()
    lazy: dict[tuple[str, ...], set[str]] = {}
    names: dict[tuple[str, ...], set[str]] = {}

    hooked = hooked_classes(root)

    def visit(node: ast.AST, stack: tuple[str, ...], cls: str | None = None) -> None:
        used = names.setdefault(tuple(n for n in stack if n), set())
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            # a decorated function may be called by its decorator's framework (click,
            # pydantic validators, properties), a method of a hooked class by the framework:
            # reached whenever its module is
            always = node.decorator_list or ALWAYS_CALLED.match(node.name) or cls in hooked
            # a method is called through an attribute (".name"), a function by its name too
            name = f".{node.name}" if cls is not None else node.name
            stack = (*stack, "" if always else name)
        elif isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            used.update((node.attr, f".{node.attr}"))
        elif isinstance(node, ast.alias):
            used.add(node.name.rpartition(".")[2])
            if node.asname:
                used.add(node.asname)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value  # getattr(x, "f"), "module:Name" (not a docstring's words)
            if _IDENT.fullmatch(text) or REGISTRY_STRING.match(text):
                used.update((text.rpartition(":")[2], "." + text.rpartition(":")[2]))
        modules = _node_modules(root, node, own, is_package)
        if modules:
            reached_by = tuple(n for n in stack if n)
            (lazy.setdefault(reached_by, set()) if reached_by else eager).update(modules)
        inner = node.name if isinstance(node, ast.ClassDef) else None
        for child in ast.iter_child_nodes(node):
            visit(child, stack, inner)

    visit(tree, ())
    if is_package and own and "iter_modules" in _attrs(path):  # pkgutil.iter_modules(__path__)
        eager.update(_submodules(root, own))
    return _Imports(
        frozenset(eager),
        tuple((k, frozenset(v)) for k, v in sorted(lazy.items())),
        frozenset(names.pop((), set())),
        tuple((k, frozenset(v)) for k, v in sorted(names.items())),
    )


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
    """The script and every project source file it imports, transitively.

    An import inside a function counts when the function is reached: every function around it
    is defined in the script (the entry point), decorated, a dunder method, a method of a class
    a framework calls into (``hooked_classes``), or named (called,
    an attribute, an imported name, a string) at module level or in a reached function of the
    closure, so a module-level registry of every backend does not drag in what only another
    stage's calls import (``debias/steering.py`` at the retrieve stage). Repeated
    until nothing more is reached.
    """
    seen: set[Path] = {script}
    names: set[str] = set()
    # (file, enclosing functions, modules imported there, names used there)
    pending: list[tuple[Path, tuple[str, ...], frozenset[str], frozenset[str]]] = []
    todo = [script]
    while True:
        while todo:
            path = todo.pop()
            found = _imports(root, path)
            names |= found.names
            inner: dict[tuple[str, ...], tuple[frozenset[str], frozenset[str]]] = {}
            for stack, modules in found.lazy:
                inner[stack] = (modules, frozenset())
            for stack, used in found.lazy_names:
                inner[stack] = (inner.get(stack, (frozenset(), frozenset()))[0], used)
            pending += [(path, stack, m, u) for stack, (m, u) in inner.items()]
            todo += _add(root, found.eager, seen)
        waiting = []
        for path, stack, modules, used in pending:
            if path != script and not all(name in names for name in stack):
                waiting.append((path, stack, modules, used))
                continue
            names |= used
            todo += _add(root, modules, seen)
        if len(waiting) == len(pending) and not todo:
            return seen
        pending = waiting


def _add(root: Path, modules: Iterable[str], seen: set[Path]) -> list[Path]:
    """The files of ``modules`` not in ``seen`` (added to it)."""
    new = []
    for module in modules:
        target = module_file(root, module)
        if target is not None and target not in seen:
            seen.add(target)
            new.append(target)
    return new


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
