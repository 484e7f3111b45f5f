"""Procedural pictures of the simulated world, and reading them back from the pixels.

A picture shows, for a person: the prompt's head word (top), a figure whose dress colour
shows its gender and whose hair shows its age group, and a badge with the attribute the
image depicts (bottom; empty when it depicts neither). For the simulated judges, CLIP and
face judge the same content is written in a code band (the top ``BAND_ROWS`` rows, one bit
per pixel, with a CRC32): they read what the picture shows from its pixels, never from side
metadata, so a corrupted picture cannot be read and gives an invalid answer.
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass

import numpy as np

SIZE = 160
BAND_ROWS = 8
MAGIC = b"IB1"
_FIELD_SEP = "\x1f"
_MAX_TEXT = 60


@dataclass(frozen=True)
class Shown:
    """What a picture depicts: ``attribute`` ("" = neither), ``head``: the subject it shows
    (the neutral prompt's subject, "" = subject missing),
    the figure's ``gender`` (female | male | "" without a figure) and ``age`` group."""

    attribute: str
    head: str
    gender: str
    age: str
    noise: int = 0  # the image's own rendering noise (32 bits): no two images are the same picture

    def encode(self) -> bytes:
        text = _FIELD_SEP.join(
            (
                self.attribute[:_MAX_TEXT],
                self.head[:_MAX_TEXT],
                self.gender,
                self.age,
                f"{self.noise & 0xFFFFFFFF:08x}",
            )
        ).encode("utf-8")
        body = MAGIC + len(text).to_bytes(2, "big") + text
        return body + zlib.crc32(body).to_bytes(4, "big")


def band_text(text: str | None) -> str | None:
    """``text`` as the code band carries it (at most ``_MAX_TEXT`` characters): what a reader
    of the picture can compare a prompt's attribute text with."""
    return None if text is None else text[:_MAX_TEXT]


def _band(payload: bytes) -> np.ndarray:
    bits = np.unpackbits(np.frombuffer(payload, dtype=np.uint8))
    capacity = SIZE * BAND_ROWS
    if bits.size > capacity:
        raise ValueError(f"payload of {len(payload)} bytes does not fit the code band")
    band = np.zeros(capacity, dtype=np.uint8)
    band[: bits.size] = bits
    return (band.reshape(BAND_ROWS, SIZE) * 255).astype(np.uint8)


def draw(shown: Shown, background: tuple[int, int, int] = (236, 240, 246)):
    """The PIL image of ``shown``."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (SIZE, SIZE), background)
    pen = ImageDraw.Draw(image)
    rng = np.random.default_rng(shown.noise)
    for x, y in rng.integers(
        BAND_ROWS + 2, SIZE - 2, size=(24, 2)
    ):  # faint texture: the image's noise
        pen.point((int(x), int(y)), fill=tuple(int(c) - 18 for c in background))
    font = ImageFont.load_default()
    if shown.head:
        pen.text(
            (SIZE // 2, BAND_ROWS + 10), shown.head[:24], fill=(20, 20, 20), font=font, anchor="mm"
        )
    if shown.gender:
        dress = (200, 60, 140) if shown.gender == "female" else (50, 90, 190)
        hair = {"young": (90, 60, 30), "middle": (60, 50, 40), "elderly": (200, 200, 200)}.get(
            shown.age, (0, 0, 0)
        )
        cx, top = SIZE // 2, 40
        pen.ellipse((cx - 14, top, cx + 14, top + 28), fill=(240, 200, 170), outline=(60, 40, 30))
        pen.chord((cx - 15, top - 3, cx + 15, top + 20), 180, 360, fill=hair)
        if shown.gender == "female":
            pen.polygon([(cx, top + 30), (cx - 26, top + 80), (cx + 26, top + 80)], fill=dress)
        else:
            pen.rectangle((cx - 18, top + 30, cx + 18, top + 80), fill=dress)
    if shown.attribute:
        pen.rounded_rectangle(
            (10, SIZE - 36, SIZE - 10, SIZE - 10),
            radius=6,
            fill=(255, 214, 90),
            outline=(120, 90, 0),
        )
        pen.text(
            (SIZE // 2, SIZE - 23), shown.attribute[:24], fill=(30, 20, 0), font=font, anchor="mm"
        )
    pixels = np.asarray(image).copy()
    pixels[:BAND_ROWS] = _band(shown.encode())[..., None]
    return Image.fromarray(pixels)


def read(image) -> Shown | None:
    """What a picture shows, read from its code band; None when the band is unreadable."""
    try:
        pixels = np.asarray(image.convert("RGB"))
    except Exception:  # noqa: BLE001 - any undecodable image is unreadable
        return None
    if pixels.shape[0] < BAND_ROWS or pixels.shape[1] != SIZE:
        return None
    bits = (pixels[:BAND_ROWS, :, 0] >= 128).astype(np.uint8).reshape(-1)
    data = np.packbits(bits).tobytes()
    if not data.startswith(MAGIC):
        return None
    length = int.from_bytes(data[3:5], "big")
    body, crc = data[: 5 + length], data[5 + length : 9 + length]
    if len(crc) != 4 or zlib.crc32(body).to_bytes(4, "big") != crc:
        return None
    try:
        attribute, head, gender, age, noise = body[5:].decode("utf-8").split(_FIELD_SEP)
        return Shown(attribute, head, gender, age, int(noise, 16))
    except (UnicodeDecodeError, ValueError):
        return None


def read_bytes(data: bytes) -> Shown | None:
    """``read`` from encoded image bytes (None when they do not decode)."""
    from PIL import Image

    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except Exception:  # noqa: BLE001 - a corrupted file is unreadable, not an error
        return None
    return read(image)
