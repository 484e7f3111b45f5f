"""The package's old module names, kept importable for one release after the package move
(docs/architecture.md, "Names"): ``import implicit_bench.generators.sim`` still works, gives the
module at its new home (the same module object) and warns once with a ``DeprecationWarning``
naming the new home. Names are built by concatenation so no import walker reads them as edges."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

#: old name under the package -> new name (packages and modules)
MOVED: dict[str, str] = {
    **{kind: "backends." + kind for kind in ("generators", "judges", "llm", "clip")},
    **{kind: "backends." + kind for kind in ("embedders", "faces", "vendor_batch", "tiny")},
    **{part: "construction." + part for part in ("sources", "kg", "triplets")},
    "analyze": "analysis.byo",
    "analysis.report": "analysis.paper_tables",
    "compare": "report.compare",
    "summary": "report.summary",
    "preflight": "runtime.preflight",
    "images": "render.images",
    "recovery": "world.recovery",
    "report.checked": "protocol.human_eval_file",
}
ROOT = "implicit_bench."


def new_name(fullname: str) -> str | None:
    """The module's name after the move (None: it did not move)."""
    if not fullname.startswith(ROOT):
        return None
    name = fullname.removeprefix(ROOT)
    for old in sorted(MOVED, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return ROOT + MOVED[old] + name.removeprefix(old)
    return None


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """The target module ran when it was imported."""


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds an old name and hands back the module at its new home, with a warning."""

    def find_spec(self, fullname, path, target=None):
        moved = new_name(fullname)
        if moved is None:
            return None
        warnings.warn(
            f"{fullname} moved to {moved}; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.util.spec_from_loader(fullname, _Alias(moved))


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once), so that a module under an old package
    name is the new home's module, not a second copy loaded through the alias's ``__path__``;
    it answers only the old names (a prefix test) and leaves every other import alone."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())
