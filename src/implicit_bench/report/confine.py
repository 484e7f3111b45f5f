"""What ``implicit-bench report DIR`` may read: the files inside DIR, after every link is
followed, and the files named on its command line (``--units``, ``--judgements``); nothing
else (docs/errors.md, "A command reads nothing outside the folders it was given").

Another lab's folder is untrusted input: its ``params.yaml`` may point the report at
``../private.csv`` or an absolute path, and any of its files may be a symbolic link out. A path
that resolves outside is refused with one line naming the path inside DIR (never the content
of what it points at), before anything is read or written.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from implicit_bench.errors import InputError


@dataclass(frozen=True)
class Scope:
    """The folder a command was given (``root``, resolved) and the files named explicitly."""

    root: Path
    allowed: frozenset[Path] = field(default_factory=frozenset)

    @classmethod
    def of(cls, root: Path, explicit: Iterable[str | Path] = ()) -> Scope:
        return cls(root.resolve(), frozenset(Path(p).resolve() for p in explicit))

    def check(self, path: str | Path, what: str) -> Path:
        """``path`` when it resolves inside the root (or is an explicitly named file); else an
        ``InputError`` naming ``path`` and ``what`` (a param or a file's role), nothing read."""
        path = Path(path)
        real = path.resolve()
        if real in self.allowed or real.is_relative_to(self.root):
            return path
        raise InputError(
            path,
            None,
            None,
            f"{what} resolves outside {self.root} (a path or link out of the folder given): "
            "not read; report reads only inside the folders it is given and the files named "
            "by --units / --judgements",
        )

    def check_tree(self, folder: Path, what: str) -> None:
        """Every file under ``folder`` (an image store: index, journal, shards) inside."""
        self.check(folder, what)
        for path in folder.rglob("*"):
            self.check(path, what)


def check_all(scope: Scope | None, paths: Iterable[Path], what: str) -> None:
    """:meth:`Scope.check` of each path (nothing when ``scope`` is None: the report stage of
    the project itself, whose paths are its own params)."""
    if scope is not None:
        for path in paths:
            scope.check(path, what)
