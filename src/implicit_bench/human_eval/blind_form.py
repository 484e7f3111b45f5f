"""The blind-question form of a calibration bundle (docs/human-eval.md, "Calibration
bundle"): per item one image and the blind judge's A / B / C question (Appendix F.5, the
``blind`` task's wording) with the options in the item's recorded order. The rater is never
told which option is the stereotype. Answers are kept in the browser (localStorage) and saved
as a CSV through a Blob download link, as in the rating form; the page's stylesheet and script
are the rating form's shared files plus form_assets/blind_form.css and blind_form.js (page.py)."""

from __future__ import annotations

import re
from typing import Any

from implicit_bench.human_eval.page import esc, render_page

BLIND_ANSWER_COLUMNS = ("bundle_id", "rater", "item", "unit_id", "choice", "saved_at")
CHOICES = ("A", "B", "C")
_OPTION = re.compile(r"^([ABC]): (.*)$")
# The judge's last line asks for a JSON answer; a person answers with the buttons instead.
_JUDGE_ONLY = "Respond with a JSON object"


def question_parts(prompt: str) -> tuple[list[str], dict[str, str], list[str]]:
    """Split a rendered blind prompt into the lines before the options, the options (letter ->
    text) and the lines after them; the judge's JSON-format line is left out."""
    before: list[str] = []
    options: dict[str, str] = {}
    after: list[str] = []
    for line in prompt.splitlines():
        if line.startswith(_JUDGE_ONLY):
            continue
        match = _OPTION.match(line)
        if match:
            options[match.group(1)] = match.group(2)
        else:
            (after if options else before).append(line)
    if tuple(options) != CHOICES:
        raise ValueError(f"the blind prompt has options {sorted(options)}, expected A, B, C")
    return before, options, after


def _item_section(n: int, total: int, item: dict[str, Any]) -> str:
    iid = item["item"]
    before, options, after = item["question"]
    choices = "".join(
        f'<label class="opt"><input type="radio" name="{iid}-choice" value="{letter}" '
        f'data-item="{iid}"> <b>{letter}:</b> {esc(text)}</label>'
        for letter, text in options.items()
    )
    return (
        f'<section class="case" id="{iid}"><h2>Image {n} of {total}</h2>'
        f'<div class="img"><img src="{item["image"]}" alt="image {n}"></div>'
        f'<div class="q">{"<br>".join(esc(x) for x in before)}'
        f'<div class="opts">{choices}</div>{"<br>".join(esc(x) for x in after)}</div>'
        '<div class="nav"><button data-nav="-1">‹ previous</button>'
        '<button data-nav="1">next ›</button></div></section>'
    )


def render_blind_form(bundle_id: str, items: list[dict[str, Any]]) -> str:
    """The form of a calibration bundle; ``items``: ``item``, ``unit_id``, ``image`` (a data
    URI) and ``question`` (``question_parts`` of the rendered prompt, options already in the
    item's order)."""
    sections = [_item_section(n, len(items), it) for n, it in enumerate(items, start=1)]
    payload = {
        "bundle_id": bundle_id,
        "items": [{"item": it["item"], "unit_id": it["unit_id"]} for it in items],
    }
    return render_page(
        title=f"Image questions {bundle_id}",
        intro="blind_intro.html",
        intro_fields={"count": str(len(items))},
        sections="".join(sections),
        payload=payload,
        css="blind_form.css",
        js="blind_form.js",
        columns=BLIND_ANSWER_COLUMNS,
    )
