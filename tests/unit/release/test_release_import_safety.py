"""``implicit-bench import``: zip bombs bounded, symlinks out of the checkout and
decoy trees refused, printed commands shell-quoted; a fuzz test of zip archives."""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import zipfile

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from implicit_bench.cli.main import main as cli_main
from implicit_bench.errors import InputError
from implicit_bench.release import importer
from implicit_bench.release.importer import PROMPTS, Release, import_release
from tests.helpers.release_fixtures import FILES, write_release


def _zip(path, members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_zip_bomb_is_refused_before_it_is_inflated(tmp_path):
    # 64 MiB of zeros deflates to ~64 KB: ratio ~1000:1 (the
    # probe's 412 KB zip made a 419 MB units.csv)
    members = {f"r/{rel}": text.encode() for rel, text in FILES.items()}
    members[f"r/{PROMPTS}"] = FILES[PROMPTS].encode() + b"\0" * (64 * 2**20)
    archive = _zip(tmp_path / "bomb.zip", members)
    assert archive.stat().st_size < 1_000_000
    with pytest.raises(InputError, match=r"compression ratio \d+:1, above the bound 200:1"):
        import_release(archive)


def test_zip_total_size_and_member_count_are_bounded(tmp_path, monkeypatch):
    archive = _zip(
        tmp_path / "r.zip",
        {f"r/{rel}": text.encode() for rel, text in FILES.items()},
        zipfile.ZIP_STORED,
    )
    monkeypatch.setattr(importer, "MAX_MEMBERS", 2)
    with pytest.raises(InputError, match="zip entries, more than the bound 2"):
        Release(archive)
    monkeypatch.setattr(importer, "MAX_MEMBERS", 100_000)
    monkeypatch.setattr(importer, "MAX_TOTAL_BYTES", 100)
    with pytest.raises(InputError, match="bytes uncompressed, more than the bound 100"):
        Release(archive)


def test_a_member_whose_header_understates_its_size_stops_at_the_bound(tmp_path, monkeypatch):
    archive = _zip(tmp_path / "r.zip", {f"r/{rel}": text.encode() for rel, text in FILES.items()})
    release = Release(archive)
    monkeypatch.setattr(importer, "MAX_FILE_BYTES", 10)
    with pytest.raises(InputError, match="more than the bound of 10 bytes"):
        release.read_bytes(PROMPTS)


def test_symlink_out_of_the_checkout_is_refused(tmp_path):
    src = write_release(tmp_path / "checkout")
    outside = tmp_path / "secret.csv"
    outside.write_text((src / PROMPTS).read_text())
    (src / PROMPTS).unlink()
    os.symlink(outside, src / PROMPTS)
    with pytest.raises(InputError, match="outside the release checkout"):
        import_release(src)


def test_decoy_tree_in_a_zip_is_not_read(tmp_path):
    real = {f"IMPLICIT-Bench-main/{rel}": text.encode() for rel, text in FILES.items()}
    decoy = {f"IMPLICIT-Bench-main/tests/old/{PROMPTS}": b"prompt_id,nonsense\n1,2\n"}
    archive = _zip(tmp_path / "r.zip", {**decoy, **real})  # the decoy listed first
    assert Release(archive)._prefix == "IMPLICIT-Bench-main/"
    assert len(import_release(archive).units) > 0
    two = {f"a/{rel}": t.encode() for rel, t in FILES.items()} | {
        f"b/{rel}": t.encode() for rel, t in FILES.items()
    }
    with pytest.raises(InputError, match=r"several folders hold the release's files \(a/, b/\)"):
        Release(_zip(tmp_path / "two.zip", two))


def test_printed_analyze_commands_are_shell_quoted(tmp_path):
    src = write_release(tmp_path / "checkout")
    out = tmp_path / "my release;touch X"
    res = CliRunner().invoke(cli_main, ["import", str(src), "--out", str(out)])
    assert res.exit_code == 0, res.output
    lines = [line.split(": ", 1)[1] for line in res.output.splitlines() if line.startswith("  ")]
    assert lines
    for line in lines:
        args = shlex.split(line)
        assert args[args.index("--out") + 1].startswith(str(out))
        # pasted into a shell, the line is one command: `touch` never runs
        subprocess.run(
            ["bash", "-c", line.replace("implicit-bench", "true", 1)], cwd=tmp_path, check=True
        )
    assert not (tmp_path / "X").exists()


# ----- fuzz: random zips never raise anything but InputError,
# and stay bounded -------------------------
member_names = st.sampled_from(
    [PROMPTS, "data/benchmark_scores.csv", "x/" + PROMPTS, "../evil", "/abs", "a/b/c", ""]
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(member_names, st.binary(max_size=200)), max_size=6), st.booleans())
def test_fuzz_zip_archives(tmp_path, members, compressed):
    buffer = io.BytesIO()
    with zipfile.ZipFile(
        buffer, "w", zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    ) as zf:
        for name, data in members:
            if name:
                zf.writestr(name, data)
    path = tmp_path / "fuzz.zip"
    path.write_bytes(buffer.getvalue())
    try:
        imported = import_release(path)
    except InputError:
        return
    except (ValueError, KeyError) as exc:  # pragma: no cover - shown when it happens
        pytest.fail(f"{type(exc).__name__} escaped: {exc}")
    assert len(imported.units) <= 6 * 200  # bounded by what the archive holds
