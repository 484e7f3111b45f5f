"""The console script's exit without teardown: taken only when asked, successful and alone."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = """
import atexit, sys, threading, time
from implicit_bench._util import fast_exit

class Teardown:
    def __del__(self):
        print("teardown ran", flush=True)

keep = Teardown()
atexit.register(lambda: print("atexit ran", flush=True))
print("work done", end="\\n")
{setup}
code = {code}
fast_exit.exit_now(code)
print("usual exit", flush=True)
sys.exit(code)
"""


def run(setup: str = "fast_exit.request()", code: int = 0) -> subprocess.CompletedProcess:
    text = SCRIPT.format(setup=textwrap.dedent(setup), code=code)
    return subprocess.run(
        [sys.executable, "-c", text], capture_output=True, text=True, timeout=60, check=False
    )


def test_fast_exit_runs_the_exit_handlers_flushes_and_skips_the_teardown():
    done = run()
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["work done", "atexit ran"]


@pytest.mark.parametrize(
    ("setup", "code"),
    [
        ("", 0),  # not asked for
        ("fast_exit.request()", 1),  # the command failed
        (  # another thread alive
            "fast_exit.request(); threading.Thread(target=time.sleep, args=(0.5,)).start()",
            0,
        ),
        ("fast_exit.request(); sys.setprofile(lambda *a: None)", 0),  # a profiler is on
    ],
)
def test_the_usual_exit_otherwise(setup: str, code: int):
    done = run(setup, code)
    assert done.returncode == code
    lines = done.stdout.splitlines()
    assert lines[:2] == ["work done", "usual exit"] and "atexit ran" in lines


def test_analyze_as_the_console_script_exits_fast_with_its_outputs(tmp_path):
    """``python -m implicit_bench.cli.main`` is the console script's ``run``: analyze asks for
    the fast exit, and everything it writes and prints is there."""
    from tests.helpers.synthetic_tables import synthetic_judgements, synthetic_units

    units = synthetic_units(12)
    units.to_csv(tmp_path / "units.csv", index=False)
    synthetic_judgements(units, tasks=("rubric", "blind")).to_csv(
        tmp_path / "judgements.csv", index=False
    )
    probe = (
        "import sys, runpy, atexit\n"
        "from implicit_bench._util import fast_exit\n"
        "real = fast_exit.exit_now\n"
        "def spy(code):\n"
        "    print('fast exit asked' if fast_exit.requested() else 'not asked', file=sys.stderr)\n"
        "    real(code)\n"
        "fast_exit.exit_now = spy\n"
        "sys.argv = ['implicit-bench', *sys.argv[1:]]\n"
        "runpy.run_module('implicit_bench.cli.main', run_name='__main__')\n"
    )
    args = ["--units", "units.csv", "--judgements", "judgements.csv", "--out", "out"]
    args += ["--bootstrap-n", "20"]
    done = subprocess.run(
        [sys.executable, "-c", probe, "analyze", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("analyze: {") and "fast exit asked" in done.stderr
    assert (tmp_path / "out" / "metrics" / "benchmark.json").stat().st_size > 0
