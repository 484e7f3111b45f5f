"""The self-contained page both forms are written into (the rating form, form.py; the
calibration form, blind_form.py): the skeleton, stylesheet and script are package files under
``human_eval/form_assets`` (docs/human-eval.md, "The forms' files"), inlined so that the page is
one file a rater opens from disk."""

from __future__ import annotations

import html
import json
from importlib import resources
from string import Template
from typing import Any

SHARED_CSS = "form.css"
SHARED_JS = "form.js"
SKELETON = "page.html"

_SCRIPT_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def asset(name: str) -> str:
    """The text of ``human_eval/form_assets/<name>``."""
    return (resources.files("implicit_bench.human_eval") / "form_assets" / name).read_text("utf-8")


def script_json(payload: Any) -> str:
    """JSON safe inside an inline ``<script>``: no ``<`` (so no ``</script>`` nor ``<!--``, which
    stopped the form's script), ``>``, ``&`` or line separators appear literally."""
    text = json.dumps(payload, ensure_ascii=False)
    return "".join(_SCRIPT_ESCAPES.get(ch, ch) for ch in text)


def esc(text: Any) -> str:
    """HTML text or attribute value (None is empty)."""
    return html.escape("" if text is None else str(text), quote=True)


def render_page(
    *,
    title: str,
    intro: str,
    intro_fields: dict[str, str],
    sections: str,
    payload: dict[str, Any],
    css: str,
    js: str,
    columns: tuple[str, ...],
) -> str:
    """The form page, every part an asset name but the escaped ``title``, ``sections`` (the
    per-case HTML), ``payload`` (``window.BUNDLE``) and ``columns`` (the answer file's header,
    for the ``__COLUMNS__`` of the form's script ``js``): ``intro`` (its one trailing newline
    dropped; ``$name`` fields from ``intro_fields``), the shared stylesheet then ``css`` (the
    form's own rules, or ""), the shared script then ``js``."""
    style = asset(SHARED_CSS) + (asset(css) if css else "")
    own = asset(js).replace("__COLUMNS__", json.dumps(list(columns)))
    return Template(asset(SKELETON)).substitute(
        title=esc(title),
        css=style,
        intro=Template(asset(intro).removesuffix("\n")).substitute(intro_fields),
        sections=sections,
        data=script_json(payload),
        script=asset(SHARED_JS) + own,
    )
