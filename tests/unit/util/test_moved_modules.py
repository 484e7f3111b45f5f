"""The old module names of the package move stay importable for one release, with a warning."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from implicit_bench._util.moved_modules import MOVED, new_name


def test_new_names_of_packages_modules_and_untouched_names():
    assert new_name("implicit_bench.generators") == "implicit_bench.backends.generators"
    assert new_name("implicit_bench.generators.sim") == "implicit_bench.backends.generators.sim"
    assert new_name("implicit_bench.analysis.report") == "implicit_bench.analysis.paper_tables"
    assert new_name("implicit_bench.analysis.bootstrap") is None
    assert new_name("implicit_bench.kg_extra") is None  # a prefix of a name is not the name
    assert new_name("implicit_bench.backends.judges") is None
    assert new_name("generators") is None


def test_every_new_home_exists():
    for new in MOVED.values():
        assert importlib.util.find_spec("implicit_bench." + new) is not None, new


def test_an_old_name_gives_the_same_module_with_a_deprecation_warning():
    code = (
        "import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
        "try:\n    import implicit_bench.judges.sim\nexcept DeprecationWarning as w:\n"
        "    print('warned:', w)\n"
        "warnings.simplefilter('ignore')\n"
        "import implicit_bench.judges.sim as old, implicit_bench.backends.judges.sim as new\n"
        "print(old is new)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "warned: implicit_bench.judges moved to implicit_bench.backends.judges; "
        "the old name goes in the next release",
        "True",
    ]


def test_an_unknown_name_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("implicit_bench.no_such_package")
