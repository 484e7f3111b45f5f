"""The release's ``data/benchmark_prompts.csv`` read as a benchmark: a header without a row is
refused (it planned 0 units, exit 0), and a byte that is not UTF-8 is one line naming its row,
column and byte offset (docs/errors.md, "Records of multi-round runs and benchmarks")."""

from __future__ import annotations

import zipfile

import pytest
import yaml
from click.testing import CliRunner

from implicit_bench.cli.plan import plan_command
from implicit_bench.errors import InputError
from implicit_bench.release.benchmark import benchmark_units
from tests.helpers.release_fixtures import PROMPTS, write_release
from tests.unit.release.test_release_benchmark import PLAN_PARAMS

HEADER = PROMPTS.splitlines()[0] + "\n"


def test_a_header_and_no_row_is_refused_in_one_line(tmp_path, monkeypatch):
    root = write_release(tmp_path / "release")
    prompts = root / "data/benchmark_prompts.csv"
    prompts.write_text(HEADER)
    with pytest.raises(InputError, match="a header and no row: the release holds no unit"):
        benchmark_units(root)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(PLAN_PARAMS))
    result = CliRunner().invoke(plan_command, ["--benchmark", str(root)])
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert line == f"Error: {prompts}: a header and no row: the release holds no unit"


def _with_byte(text: str, before: str, byte: bytes = b"\xe9") -> bytes:
    """``text`` as UTF-8 with ``byte`` put before the first ``before``."""
    data = text.encode()
    at = data.index(before.encode())
    return data[:at] + byte + data[at:]


def test_a_byte_that_is_not_utf8_names_its_row_column_and_offset(tmp_path):
    root = write_release(tmp_path / "release")
    prompts = root / "data/benchmark_prompts.csv"
    data = _with_byte(PROMPTS, "poor Black")  # row 2 (007), prompt_stereotype
    prompts.write_bytes(data)
    offset = data.index(b"\xe9")
    with pytest.raises(InputError) as caught:
        benchmark_units(root)
    assert str(caught.value) == (
        f"{prompts}, row 2, field 'prompt_stereotype': not UTF-8 text (byte 0xe9 at byte "
        f"offset {offset}); save it as UTF-8"
    )
    # a quoted cell across lines still names its CSV row; a BOM does not shift the row
    quoted = PROMPTS.replace("a nurse at work,", '"a nurse\nat work",', 1)
    data = b"\xef\xbb\xbf" + _with_byte(quoted, "at work", b"\xff")
    prompts.write_bytes(data)
    with pytest.raises(InputError, match=r"row 1, field 'prompt_neutral': .*byte 0xff at byte"):
        benchmark_units(root)
    # in the header: no row, said so
    prompts.write_bytes(_with_byte(PROMPTS, "bias_type"))
    with pytest.raises(InputError, match=r"csv: not UTF-8 text \(in the header, byte 0xe9 at"):
        benchmark_units(root)


def test_the_zip_of_a_release_names_the_row_too(tmp_path):
    root = write_release(tmp_path / "release")
    archive = tmp_path / "release.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(
            "IMPLICIT-Bench-main/data/benchmark_prompts.csv", _with_byte(PROMPTS, "a man nurse")
        )
        zf.write(
            root / "data/benchmark_scores.csv", "IMPLICIT-Bench-main/data/benchmark_scores.csv"
        )
    with pytest.raises(
        InputError, match=r"benchmark_prompts.csv, row 1, field 'prompt_anti_stereo"
    ):
        benchmark_units(archive)
