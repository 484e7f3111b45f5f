// The rating and calibration forms' shared script (docs/human-eval.md, "The forms' files").
// The form's own part (rating_form.js, blind_form.js) calls ibForm(spec) with what differs: the
// storage key, the answer columns, the units (B.cases, B.items), a unit's id, the words of
// the progress line and summary, when a unit is done, its CSV row, how a changed input is
// stored and which inputs to tick when saved answers are restored.
function ibForm(S){
"use strict";
var B = window.BUNDLE, KEY = S.key + B.bundle_id, COLS = S.columns, UNITS = S.units(B);
var N = UNITS.length;
var answers = Object.create(null), rater = "", current = -1;  // keyed by unit: no prototype keys
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
  q("#progress").textContent = i >= 0 && i < N ? S.noun + " " + (i + 1) + " of " + N : "";
  window.scrollTo(0, 0);
}
function done(u){ return !!S.done(answers[S.id(u)] || {}); }
function summary(){
  var n = UNITS.filter(done).length;
  var miss = UNITS.filter(function(u){ return !done(u); }).map(S.id);
  q("#summary").innerHTML = n + " of " + N + " " + S.answered + (miss.length
    ? ' <span class="missing">' + S.missing + ": " + miss.join(", ") + "</span>" : "");
}
function cell(v){ v = v == null ? "" : String(v); return '"' + v.replace(/"/g, '""') + '"'; }
window.IBForm = {
  answers: answers,
  csv: function(){
    var now = new Date().toISOString(), lines = [COLS.map(cell).join(",")];
    UNITS.forEach(function(u){
      lines.push(S.row(B, rater, u, answers[S.id(u)] || {}, now).map(cell).join(","));
    });
    return lines.join("\r\n") + "\r\n";
  },
  download: function(){
    if (!rater) {
      alert("Please enter your rater name or code on the first page.");
      show(-1);
      return null;
    }
    var blob = new Blob([IBForm.csv()], {type: "text/csv;charset=utf-8"});
    var a = document.createElement("a");
    var name = "answers-" + B.bundle_id + "-" + rater.replace(/[^A-Za-z0-9_-]+/g, "_") + ".csv";
    a.href = URL.createObjectURL(blob); a.download = name; document.body.appendChild(a); a.click();
    setTimeout(function(){ URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    return name;
  },
  show: show
};
document.addEventListener("change", function(e){
  var t = e.target;
  if (t.name === "rater") { rater = t.value.trim(); persist(); return; }
  if (S.store(answers, t)) persist();
});
document.addEventListener("click", function(e){
  var t = e.target;
  if (t.dataset.nav) show(Math.max(-1, Math.min(N, current + parseInt(t.dataset.nav, 10))));
  if (t.id === "start") {
    if (!q("#rater").value.trim()) { alert("Please enter your rater name or code."); return; }
    rater = q("#rater").value.trim();
    persist();
    show(0);
  }
  if (t.id === "download") IBForm.download();
});
// restore saved answers into the inputs
q("#rater").value = rater;
Object.keys(answers).forEach(function(c){
  S.inputs(c, answers[c]).forEach(function(sel){
    var el = document.querySelector(sel);
    if (el) el.checked = true;
  });
});
show(-1);
document.body.dataset.ready = "1";
}
