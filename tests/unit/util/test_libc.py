"""The C library is opened without a subprocess (find_library would run ``ldconfig -p``)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
started = []
sys.addaudithook(lambda event, args: started.append(args) if event == "subprocess.Popen" else None)
from implicit_bench._util.heap import keep_freed_memory
from implicit_bench._util.libc import function
assert keep_freed_memory() is True
assert function("renameat2") is not None and function("no_such_function_here") is None
print(len(started))
"""


def test_heap_tuning_and_renameat2_start_no_subprocess():
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
