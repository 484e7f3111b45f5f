"""Keep freed memory in the process heap (glibc ``mallopt``), for array-heavy commands.

The analysis allocates and frees many arrays of a few megabytes (bootstrap resamples: one
``n_boot x n_units`` matrix per unit set). glibc serves each from a fresh ``mmap`` and hands it
back to the kernel on free, so every one of them is page-faulted in again; on a virtual machine
that is the larger part of the cost (a float32 -> float64 copy of a 1,000 x 1,831 matrix: 37 ms,
8 ms with freed memory kept; docs/analysis.md, "Speed"). ``keep_freed_memory`` raises the mmap
threshold to its maximum and stops trimming the heap, so freed blocks are reused in place.
Numbers are unaffected; on other C libraries it does nothing.
"""

from __future__ import annotations

import ctypes
import sys
from functools import cache

from implicit_bench._util.libc import function

M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_MAX = 32 * 1024 * 1024  # glibc's ceiling on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX)


@cache
def keep_freed_memory() -> bool:
    """Tune glibc's allocator once per process; True when it took effect."""
    if not sys.platform.startswith("linux"):
        return False
    mallopt = function("mallopt")
    if mallopt is None:  # musl and others: no mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX)
    ok &= mallopt(M_TRIM_THRESHOLD, 2**31 - 1)
    ok &= mallopt(M_TOP_PAD, 64 * 1024 * 1024)
    return bool(ok)
