"""Replace a multi-file output folder atomically, and refuse to touch files we did not write.

``staged_dir(target)`` yields a fresh temporary folder next to ``target``; when the block
ends without an error the folder takes ``target``'s place in one ``renameat2(RENAME_EXCHANGE)``
(Linux; two renames elsewhere), so a reader or a kill sees the old output or the new one,
never a mix. On an error the temporary folder is removed; one left by a killed process (its
pid no longer alive) is removed by the next run. ``check_owned(target, patterns)`` refuses a
folder holding files that the writer would not have written (a user's own files are never
deleted by a swap).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from implicit_bench.errors import InputError

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@cache
def _renameat2() -> Any:
    """The C library's ``renameat2`` (``errno`` kept for ``ctypes.get_errno``); None where the
    library or the function is missing."""
    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name, use_errno=True), "renameat2", None) if name else None
    except OSError:
        return None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2); False when the call is not available."""
    fn = _renameat2()
    if fn is None:
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: the file system cannot exchange
        return False
    raise OSError(err, os.strerror(err), str(a))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale(target: Path) -> None:
    """Remove temporary folders next to ``target`` left by processes that are no longer alive."""
    target = Path(target)
    if not target.parent.is_dir():
        return
    # ".NAME.tmp-PID-", and ".NAME.extensions-PID-" / "..NAME.tmp-P-x.extensions-PID-" (analyze)
    pattern = re.compile(
        rf"^\.+{re.escape(target.name)}\.(?:tmp-\d+-[^/]*\.)?(?:tmp|old|extensions)-(\d+)-"
    )
    for entry in target.parent.iterdir():
        match = pattern.match(entry.name)
        if (
            match
            and entry.is_dir()
            and not entry.is_symlink()
            and not _pid_alive(int(match.group(1)))
        ):
            shutil.rmtree(entry, ignore_errors=True)


def temp_dir_next_to(target: Path, kind: str = "tmp") -> Path:
    """A fresh folder ``.NAME.KIND-PID-XXXX`` in ``target``'s parent (same file system)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    made = Path(tempfile.mkdtemp(prefix=f".{target.name}.{kind}-{os.getpid()}-", dir=target.parent))
    current = os.umask(0)
    os.umask(current)
    os.chmod(made, 0o777 & ~current)  # mkdtemp makes 0700; the output gets a plain folder's mode
    return made


def swap_in(new: Path, target: Path) -> None:
    """Put folder ``new`` at ``target``; the previous ``target`` folder is removed."""
    new, target = Path(new), Path(target)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise InputError(
            target,
            None,
            None,
            "the output path exists and is not a folder; remove it or choose another",
        )
    if not target.exists():
        os.rename(new, target)
        return
    if _exchange(new, target):
        shutil.rmtree(new, ignore_errors=True)  # now holds the old output
        return
    old = temp_dir_next_to(target, "old")
    os.rmdir(old)
    os.rename(target, old)
    os.rename(new, target)
    shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def staged_dir(target: str | Path) -> Iterator[Path]:
    """Yield a temporary folder that replaces ``target`` when the block succeeds."""
    target = Path(target)
    clean_stale(target)
    tmp = temp_dir_next_to(target)
    try:
        yield tmp
        swap_in(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def foreign_files(target: Path, patterns: Iterable[str]) -> list[str]:
    """Files (and links) under ``target`` whose relative POSIX path matches none of ``patterns``."""
    target = Path(target)
    if not target.exists():
        return []
    regexes = [re.compile(p) for p in patterns]
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(target):
        for name in sorted(filenames) + [
            d for d in sorted(dirnames) if os.path.islink(os.path.join(dirpath, d))
        ]:
            rel = Path(dirpath, name).relative_to(target).as_posix()
            if not any(r.fullmatch(rel) for r in regexes):
                found.append(rel)
    return sorted(found)


def check_owned(target: str | Path, patterns: Iterable[str], what: str) -> None:
    """Refuse an output folder that holds files ``what`` does not write (they would be lost)."""
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise InputError(target, None, None, f"{what}: the output path exists and is not a folder")
    found = foreign_files(target, patterns)
    if found:
        shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        raise InputError(
            target,
            None,
            None,
            f"{what} would replace this folder, which holds files it did not write ({shown}); "
            "choose an empty or new folder, or move those files out",
        )
