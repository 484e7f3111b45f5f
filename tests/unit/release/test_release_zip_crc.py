"""A release zip whose member fails its CRC check (or holds corrupt deflate data) is a one-line
error naming the zip and the member, not a BadZipFile traceback."""

from __future__ import annotations

import zipfile

import pytest

from implicit_bench.errors import InputError
from implicit_bench.release.importer import Release
from tests.helpers.release_fixtures import write_release

MEMBER = "data/benchmark_prompts.csv"


def _zip(tmp_path, compression):
    root = write_release(tmp_path / "rel")
    out = tmp_path / "release.zip"
    with zipfile.ZipFile(out, "w", compression) as zf:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                zf.write(path, "IMPLICIT-Bench-main/" + path.relative_to(root).as_posix())
    return out


def _corrupt(zip_path, name):
    with zipfile.ZipFile(zip_path) as zf:
        info = zf.getinfo(name)
    data = bytearray(zip_path.read_bytes())
    # the local header: 30 bytes + name + extra, then the member's data
    name_len = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_len = int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    data[start + info.compress_size // 2] ^= 0xFF
    zip_path.write_bytes(bytes(data))


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_corrupt_member_names_zip_and_member(tmp_path, compression):
    path = _zip(tmp_path, compression)
    name = "IMPLICIT-Bench-main/" + MEMBER
    _corrupt(path, name)
    release = Release(path)
    with pytest.raises(InputError) as err:
        release.read_bytes(MEMBER)
    msg = str(err.value)
    assert f"release.zip!{name}" in msg and "corrupt zip member" in msg
    assert len(msg.splitlines()) == 1


def test_an_intact_zip_reads(tmp_path):
    path = _zip(tmp_path, zipfile.ZIP_DEFLATED)
    assert Release(path).read_bytes(MEMBER).startswith(b"source,id")
