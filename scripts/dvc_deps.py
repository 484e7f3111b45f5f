"""`make dvc-deps`: write each dvc.yaml stage's code deps from what the stage really uses.

For every stage (foreach entries together) the ``deps`` list becomes:

1. the stage script;
2. the project source files of its import closure and the package data they open
   (tests/helpers/dvc_deps.py finds both), a folder standing for all of its files when every one of
   them is needed, so the list is exact: no missing file, no extra one;
3. the workspace deps already declared (other stages' outputs, raw data, ``${...}``
   interpolations, with their comments), plus any output the script names that is missing.

``params`` keeps its entries and gains every top-level section the script reads that no entry
covers. The ``deps`` block is then moved below the stage's other keys, so each stage reads
``cmd``, ``params``, ``outs`` first and its long generated list last. Everything else in
dvc.yaml (cmd, outs, plots, foreach, comments) is left as it is: the file is edited as text,
block by block.

Usage: ``python scripts/dvc_deps.py`` (write), ``--check`` (exit 1 when dvc.yaml differs),
``--reruns`` (per source file: the stage entries that declare it, and those plus downstream).
docs/contracts.md, "Declared dependencies".
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.helpers.dvc_deps import PACKAGE, covered, dvc_stages, needs  # noqa: E402

CODE_ROOTS = ("src/", "stages/")


@dataclass
class Derived:
    """What one top-level stage (all its foreach entries) needs."""

    script: str
    files: set[str] = field(default_factory=set)  # src/ code and package data
    reads: dict[str, set[str]] = field(default_factory=dict)  # entry name -> workspace reads
    sections: set[str] = field(default_factory=set)


def package_files(root: Path) -> list[str]:
    """Every file under src/implicit_bench that a folder dep would hash."""
    pkg = root / "src" / PACKAGE
    return sorted(
        p.relative_to(root).as_posix()
        for p in pkg.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def compress(needed: set[str], all_files: list[str]) -> list[str]:
    """The shortest list of files and folders covering exactly ``needed``.

    A folder is listed when every file under it is needed; otherwise its needed files (and
    fully needed subfolders) are listed one by one."""
    by_dir: dict[str, list[str]] = defaultdict(list)
    for f in all_files:
        parts = f.split("/")
        for i in range(1, len(parts)):
            by_dir["/".join(parts[:i])].append(f)
    out: list[str] = []
    done: set[str] = set()
    for f in sorted(needed):
        if f in done:
            continue
        parts = f.split("/")
        chosen = f
        for i in range(2, len(parts)):  # the outermost full folder below src/
            folder = "/".join(parts[:i])
            if all(x in needed for x in by_dir[folder]):
                chosen = folder
                break
        out.append(chosen)
        done.update(by_dir.get(chosen, [chosen]))
    return sorted(set(out))


def derive(root: Path) -> dict[str, Derived]:
    """Per top-level stage of dvc.yaml: what its script needs (tests/helpers/dvc_deps.py)."""
    from implicit_bench._util.yamlsafe import load_yaml_file

    params = load_yaml_file(root / "params.yaml")
    specs = dvc_stages(root)
    all_outs = [o for s in specs for o in s.outs]
    derived: dict[str, Derived] = {}
    for spec in specs:
        top = spec.name.partition("@")[0]
        need = needs(root, spec, params, all_outs)
        d = derived.setdefault(top, Derived(spec.script))
        d.files |= {p for p in need.code | need.data if p.startswith("src/")}
        d.reads[spec.name] = {r for r in need.reads if not covered(r, spec.deps)}
        d.sections |= need.sections
    return derived


# ----- editing dvc.yaml as text -----------------------------------------------------------------
_STAGE = re.compile(r"^  (\w+):\s*(#.*)?$")
_KEY = re.compile(r"^(\s*)(deps|params):\s*(#.*)?$")
_ITEM = re.compile(r"^(\s*)- (.*?)(\s+#.*)?$")


def _block(lines: list[str], start: int, indent: int) -> int:
    """End (exclusive) of the list under the key at ``start``: its items and their comments."""
    end = start + 1
    while end < len(lines):
        text = lines[end]
        stripped = text.strip()
        if stripped and not stripped.startswith("#") and len(text) - len(text.lstrip()) <= indent:
            break
        if stripped.startswith("- ") or stripped.startswith("#") or not stripped:
            end += 1
            continue
        break
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def _items(block: list[str]) -> list[tuple[list[str], str]]:
    """(lines, value) per list item, a standalone comment going with the item after it."""
    items, pending = [], []
    for text in block:
        match = _ITEM.match(text)
        if match is None:
            pending.append(text)
            continue
        items.append(([*pending, text], match.group(2).strip()))
        pending = []
    return items


def _workspace(value: str) -> bool:
    return not value.startswith(CODE_ROOTS)


def _new_deps(block: list[str], pad: str, d: Derived, all_files: list[str]) -> list[str]:
    kept, values = [], set()
    for item_lines, value in _items(block):
        if _workspace(value) and value not in values:
            kept.append((item_lines, value))
            values.add(value)
    code = [d.script, *compress(d.files, all_files)]
    lines = [f"{pad}- {c}" for c in code]
    for item_lines, _ in kept:
        lines.extend(item_lines)
    for read in sorted(set().union(*d.reads.values()) - values) if d.reads else []:
        lines.append(f"{pad}- {read}")
    return lines


def _new_params(block: list[str], pad: str, d: Derived) -> list[str]:
    items = _items(block)
    declared = [v for _, v in items]
    lines = [line for item_lines, _ in items for line in item_lines]
    for name in sorted(d.sections):
        if not any(p == name or p.startswith(name + ".") for p in declared):
            lines.append(f"{pad}- {name}")
    return lines


def render(root: Path, text: str | None = None) -> str:
    """dvc.yaml with every stage's deps (and missing params sections) derived."""
    path = root / "dvc.yaml"
    text = path.read_text(encoding="utf-8") if text is None else text
    derived = derive(root)
    all_files = package_files(root)
    lines = text.splitlines()
    out: list[str] = []
    stage: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _STAGE.match(line)
        if m:
            stage = m.group(1)
        if line and not line.startswith(" ") and not line.startswith("stages:"):
            stage = None  # top-level plots: etc.
        key = _KEY.match(line)
        if key and stage in derived:
            indent = len(key.group(1))
            end = _block(lines, i, indent)
            block = lines[i + 1 : end]
            first = next((b for b in block if _ITEM.match(b)), None)
            pad = _ITEM.match(first).group(1) if first else " " * (indent + 2)
            if key.group(2) == "deps":
                body = _new_deps(block, pad, derived[stage], all_files)
            else:
                body = _new_params(block, pad, derived[stage])
            out.append(line)
            out.extend(body)
            i = end
            continue
        out.append(line)
        i += 1
    return "\n".join(deps_last(out)) + "\n"


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _significant(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith("#")


def deps_last(lines: list[str]) -> list[str]:
    """Each ``deps:`` block moved below its sibling keys (``cmd``, ``params``, ``outs``, ...), so
    a stage's hand-written lines come first and its generated deps last; nothing else moves.
    Blank lines and comments that close the stage stay after the moved block."""
    out = list(lines)
    i = 0
    while i < len(out):
        key = _KEY.match(out[i])
        if not (key and key.group(2) == "deps"):
            i += 1
            continue
        indent = len(key.group(1))
        end = _block(out, i, indent)
        parent_end = end  # first significant line above this key's indent, or the end
        while parent_end < len(out) and (
            not _significant(out[parent_end]) or _indent(out[parent_end]) >= indent
        ):
            parent_end += 1
        while parent_end > end and not _significant(out[parent_end - 1]):
            parent_end -= 1  # trailing blank lines and comments stay below
        if parent_end > end:
            block = out[i:end]
            out[i:parent_end] = out[end:parent_end] + block
            i = parent_end - len(block)
        i += 1
    return out


# ----- what a source edit re-runs -----------------------------------------------------------------
def reruns(root: Path) -> dict[str, tuple[int, int]]:
    """Per package file: (stage entries that declare it, those plus every stage downstream).

    The second figure is the worst case, where each re-run stage's outputs change."""
    specs = dvc_stages(root)
    children: dict[str, set[str]] = defaultdict(set)
    for a in specs:
        for b in specs:
            if a is not b and any(
                covered(dep, a.outs) or any(covered(o, [dep]) for o in a.outs) for dep in b.deps
            ):
                children[a.name].add(b.name)

    def downstream(names: set[str]) -> set[str]:
        seen, todo = set(names), list(names)
        while todo:
            for child in children[todo.pop()] - seen:
                seen.add(child)
                todo.append(child)
        return seen

    out = {}
    for f in package_files(root):
        direct = {s.name for s in specs if covered(f, s.deps)}
        out[f] = (len(direct), len(downstream(direct)))
    return out


def main(argv: list[str]) -> int:
    if "--reruns" in argv:
        counts = reruns(ROOT)
        for f, (direct, total) in sorted(counts.items()):
            if f.endswith(".py"):
                print(f"{direct:3d} {total:3d}  {f}")
        return 0
    path = ROOT / "dvc.yaml"
    current = path.read_text(encoding="utf-8")
    new = render(ROOT, current)
    if "--check" in argv:
        if new != current:
            print("dvc.yaml deps are not the derived ones: run `make dvc-deps`", file=sys.stderr)
            return 1
        return 0
    if new != current:
        path.write_text(new, encoding="utf-8")
    print(f"dvc.yaml: {len(current.splitlines())} -> {len(new.splitlines())} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
