"""A judge's identity as a judgement table records it (column ``judge_identity``): what makes
two judges' scores comparable (docs/judging.md, "Judge identity").

A comparison of generators is fair only under the same judge model, prompt template, decoding
and image downscaling. ``judge_identity`` writes these four as one JSON text per (judge, task);
``differences`` names the parts in which two identities differ (a part one side does not
know counts as different: nothing is assumed equal).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

#: the identity keys of a backend that say how an image reaches the model
IMAGE_KEYS = ("max_image_side", "jpeg_quality", "image_detail")
PARTS = ("model", "template_sha256", "decoding", "image")


def template_sha256(template: str | None) -> str | None:
    """SHA-256 of a prompt template's text (placeholders unfilled); None without one."""
    return None if template is None else hashlib.sha256(template.encode("utf-8")).hexdigest()


def judge_identity(
    identity: dict[str, Any], decoding: dict[str, Any], template: str | None
) -> dict[str, Any]:
    """The four parts of a judge's identity (model, template hash, decoding, image handling)."""
    image = {k: identity.get(k) for k in IMAGE_KEYS if k in identity}
    return {
        "model": identity.get("model"),
        "backend": identity.get("backend"),
        "template_sha256": template_sha256(template),
        "decoding": decoding,
        "image": image or None,  # None: the backend does not say (unknown)
    }


def identity_text(identity: dict[str, Any]) -> str:
    """The identity as one JSON text (sorted keys): the column value."""
    return json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)


def parse_identity(text: Any) -> dict[str, Any] | None:
    """A ``judge_identity`` cell back to a mapping (None when blank or not JSON)."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _model(name: Any) -> str | None:
    """A model id compared case-insensitively, without a backend prefix (``openai:``)."""
    if not name:
        return None
    text = str(name).strip().lower()
    return text.split(":", 1)[1] if ":" in text and "/" in text.split(":", 1)[1] else text


def _greedy(decoding: Any) -> Any:
    """Decoding reduced to what changes answers: greedy or not, and the sampling settings."""
    if not isinstance(decoding, dict):
        return None
    greedy = decoding.get("greedy") is True or decoding.get("temperature") in (0, 0.0)
    return {"greedy": greedy} if greedy else {"sampling": decoding}


def _image(image: dict[str, Any]) -> Any:
    """Image handling: downscaled to a side (with its JPEG quality), or sent as it is."""
    side = image.get("max_image_side")
    return None if side is None else {"max_image_side": side, "jpeg": image.get("jpeg_quality")}


def differences(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[str]:
    """The parts (model, template, decoding, image downscaling) in which ``a`` and ``b`` differ;
    an unknown part on either side counts as different."""
    if a is None or b is None:
        return ["model", "prompt template", "decoding", "image downscaling"]
    out = []
    if _model(a.get("model")) is None or _model(a.get("model")) != _model(b.get("model")):
        out.append("model")
    ta, tb = a.get("template_sha256"), b.get("template_sha256")
    if ta is None or ta != tb:
        out.append("prompt template")
    da, db = _greedy(a.get("decoding")), _greedy(b.get("decoding"))
    if da is None or da != db:
        out.append("decoding")
    ia, ib = a.get("image"), b.get("image")
    if not isinstance(ia, dict) or not isinstance(ib, dict) or _image(ia) != _image(ib):
        out.append("image downscaling")
    return out
