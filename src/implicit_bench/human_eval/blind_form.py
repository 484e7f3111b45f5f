"""The blind-question form of a calibration bundle (issue 23; docs/human-eval.md, "Calibration
bundle"): per item one image and the blind judge's A / B / C question (Appendix F.5, the
``blind`` task's wording) with the options in the item's recorded order. The rater is never
told which option is the stereotype. Answers are kept in the browser (localStorage) and saved
as a CSV through a Blob download link, as in the rating form."""

from __future__ import annotations

import json
import re
from typing import Any

from implicit_bench.human_eval.form import _CSS, _esc, script_json

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


_JS = r"""
(function(){
"use strict";
var B = window.BUNDLE, KEY = "ib-blind-" + B.bundle_id, COLS = __COLUMNS__;
var answers = Object.create(null), rater = "", current = -1, N = B.items.length;
try {
  var saved = JSON.parse(localStorage.getItem(KEY) || "null");
  if (saved) {
    Object.keys(saved.answers || {}).forEach(function(c){ answers[c] = saved.answers[c]; });
    rater = saved.rater || "";
  }
} catch (e) {}
function persist(){
  try { localStorage.setItem(KEY, JSON.stringify({rater: rater, answers: answers})); } catch (e) {}
}
function q(s){ return document.querySelector(s); }
function show(i){
  current = i;
  document.querySelectorAll(".case").forEach(function(el, k){
    el.classList.toggle("on", k === i);
  });
  q("#intro").style.display = i === -1 ? "block" : "none";
  q("#end").classList.toggle("on", i === N);
  if (i === N) summary();
  q("#progress").textContent = i >= 0 && i < N ? "Image " + (i + 1) + " of " + N : "";
  window.scrollTo(0, 0);
}
function done(c){ return !!(answers[c.item] && answers[c.item].choice); }
function summary(){
  var n = B.items.filter(done).length;
  var miss = B.items.filter(function(c){ return !done(c); }).map(function(c){ return c.item; });
  q("#summary").innerHTML = n + " of " + N + " images answered." + (miss.length
    ? ' <span class="missing">Unanswered: ' + miss.join(", ") + "</span>" : "");
}
function cell(v){ v = v == null ? "" : String(v); return '"' + v.replace(/"/g, '""') + '"'; }
window.IBForm = {
  answers: answers,
  csv: function(){
    var now = new Date().toISOString(), lines = [COLS.map(cell).join(",")];
    B.items.forEach(function(c){
      var a = answers[c.item] || {};
      var row = [B.bundle_id, rater, c.item, c.unit_id, a.choice, a.saved_at || now];
      lines.push(row.map(cell).join(","));
    });
    return lines.join("\r\n") + "\r\n";
  },
  download: function(){
    if (!rater) {
      alert("Please enter your rater name or code on the first page."); show(-1); return null;
    }
    var blob = new Blob([IBForm.csv()], {type: "text/csv;charset=utf-8"});
    var a = document.createElement("a");
    var name = "answers-" + B.bundle_id + "-" + rater.replace(/[^A-Za-z0-9_-]+/g, "_") + ".csv";
    a.href = URL.createObjectURL(blob); a.download = name;
    document.body.appendChild(a); a.click();
    setTimeout(function(){ URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    return name;
  },
  show: show
};
document.addEventListener("change", function(e){
  var t = e.target;
  if (t.name === "rater") { rater = t.value.trim(); persist(); return; }
  if (!t.dataset.item) return;
  answers[t.dataset.item] = {choice: t.value, saved_at: new Date().toISOString()};
  persist();
});
document.addEventListener("click", function(e){
  var t = e.target;
  if (t.dataset.nav) show(Math.max(-1, Math.min(N, current + parseInt(t.dataset.nav, 10))));
  if (t.id === "start") {
    if (!q("#rater").value.trim()) { alert("Please enter your rater name or code."); return; }
    rater = q("#rater").value.trim(); persist(); show(0);
  }
  if (t.id === "download") IBForm.download();
});
q("#rater").value = rater;
Object.keys(answers).forEach(function(c){
  var sel = 'input[data-item="' + c + '"][value="' + answers[c].choice + '"]';
  var el = document.querySelector(sel);
  if (el) el.checked = true;
});
show(-1);
document.body.dataset.ready = "1";
})();
"""


def _item_section(n: int, total: int, item: dict[str, Any]) -> str:
    iid = item["item"]
    before, options, after = item["question"]
    choices = "".join(
        f'<label class="opt"><input type="radio" name="{iid}-choice" value="{letter}" '
        f'data-item="{iid}"> <b>{letter}:</b> {_esc(text)}</label>'
        for letter, text in options.items()
    )
    return (
        f'<section class="case" id="{iid}"><h2>Image {n} of {total}</h2>'
        f'<div class="img"><img src="{item["image"]}" alt="image {n}"></div>'
        f'<div class="q">{"<br>".join(_esc(x) for x in before)}'
        f'<div class="opts">{choices}</div>{"<br>".join(_esc(x) for x in after)}</div>'
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
    script = _JS.replace("__COLUMNS__", json.dumps(list(BLIND_ANSWER_COLUMNS)))
    intro = (
        '<section id="intro"><h1>What does each image show?</h1>'
        '<div class="warn"><b>Content warning:</b> you will see AI-generated images and short '
        "descriptions of people's attributes that relate to social stereotypes (about gender, "
        "race, religion, profession, age, disability and other groups), some of them offensive. "
        "They were made on purpose to measure bias. You can stop at any time; no personal data "
        "is collected beyond the name or code you enter below.</div>"
        f"<p>This form has {len(items)} images. For each image, read the question and choose "
        "A, B or C: which of the two descriptions better matches what the image shows, or "
        "neither. The descriptions are in random order. Judge only what is visible.</p>"
        "<p>Your answers are kept in this browser as you go. At the end, press <b>Download "
        "answers (CSV)</b> and send the file back.</p>"
        '<p><label>Your rater name or code: <input id="rater" name="rater" autocomplete="off">'
        '</label> <button id="start">Start</button></p></section>'
    )
    end = (
        '<section id="end"><h2>Done?</h2><p id="summary"></p>'
        '<p><button id="download">Download answers (CSV)</button></p>'
        '<div class="nav"><button data-nav="-1">‹ back</button></div></section>'
    )
    css = _CSS + ".opts{margin:10px 0}.opt{display:block;margin:6px 0}\n"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Image questions {_esc(bundle_id)}</title><style>{css}</style></head><body><main>"
        f'<p class="progress" id="progress"></p>{intro}{"".join(sections)}{end}</main>'
        f"<script>window.BUNDLE = {script_json(payload)};</script>"
        f"<script>{script}</script></body></html>\n"
    )
