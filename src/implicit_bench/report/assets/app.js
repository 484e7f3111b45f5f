/* implicit-bench unit browser. Works from file:// with no network: data arrive as <script>
   files (data/index.js, then data/chunk-NNNN.js per page), since fetch() of file:// is blocked. */
(function () {
  "use strict";
  var IB = (window.IB = window.IB || {});
  IB.chunks = {};
  var waiting = {};
  var VARIANT_NAMES = { n: "neutral", s: "stereotype", a: "anti-stereotype" };
  var LABELS = { s: "s", a: "a", neither: "neither" };

  IB.addChunk = function (n, units) {
    IB.chunks[n] = units;
    (waiting[n] || []).forEach(function (f) { f(); });
    delete waiting[n];
  };

  function loadChunk(n) {
    return new Promise(function (resolve, reject) {
      if (IB.chunks[n]) return resolve();
      var first = !waiting[n];
      (waiting[n] = waiting[n] || []).push(resolve);
      if (!first) return;
      var s = document.createElement("script");
      s.src = "data/chunk-" + String(n).padStart(4, "0") + ".js";
      s.onerror = function () { reject(new Error("cannot load " + s.src)); };
      document.head.appendChild(s);
    });
  }

  function esc(t) {
    return String(t == null ? "" : t).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  var DEFAULTS = { bias: "", skey: "", sgroup: "", dis: "", sel: "", q: "", page: 1, unit: "" };
  var state = Object.assign({}, DEFAULTS);
  IB.state = state;

  function readHash() {
    var h = new URLSearchParams(location.hash.replace(/^#/, ""));
    Object.keys(state).forEach(function (k) {
      state[k] = DEFAULTS[k];
      if (h.has(k)) state[k] = k === "page" ? Math.max(1, parseInt(h.get(k), 10) || 1) : h.get(k);
    });
  }
  function writeHash() {
    var h = new URLSearchParams();
    Object.keys(state).forEach(function (k) {
      if (state[k] !== "" && !(k === "page" && state[k] === 1)) h.set(k, state[k]);
    });
    var s = h.toString();
    if (location.hash.replace(/^#/, "") !== s) history.replaceState(null, "", s ? "#" + s : location.pathname);
  }

  function matches(u) {
    if (state.unit && u.id !== state.unit) return false;
    if (state.bias === "__recoverable" && IB.diag[u.bias]) return false;
    if (state.bias === "__diagnostic" && !IB.diag[u.bias]) return false;
    if (state.bias && state.bias.indexOf("__") !== 0 && u.bias !== state.bias) return false;
    if (state.sgroup && (u.st[state.skey] || "n/a") !== state.sgroup) return false;
    if (state.dis === "blind" && !u.dis.blind) return false;
    if (state.dis === "rubric" && !u.dis.rubric) return false;
    if (state.dis === "either" && !(u.dis.blind || u.dis.rubric)) return false;
    if (state.dis === "none" && (u.dis.blind || u.dis.rubric)) return false;
    if (state.sel === "selected" && u.sel !== true) return false;
    if (state.sel === "rejected" && u.sel !== false) return false;
    if (state.q) {
      var words = state.q.toLowerCase().split(/\s+/).filter(Boolean);
      for (var i = 0; i < words.length; i++) if (u._text.indexOf(words[i]) < 0) return false;
    }
    return true;
  }

  function invalid(t, task) {
    var raw = t[task + "!"];
    return '<span class="inv"' + (raw != null ? ' title="unparsable answer: ' + esc(raw) + '"' : "") + ">invalid</span>";
  }

  function judgeLines(j) {
    if (!j) return "";
    return Object.keys(j).sort().map(function (judge) {
      var t = j[judge], parts = [];
      if (t.blind != null) {
        var v = t.blind;
        parts.push("blind " + (v === "invalid" ? invalid(t, "blind") : '<span class="lab-' + esc(v) + '">' + esc(LABELS[v] || v) + "</span>"));
        var w = t["blind~"];
        if (w != null) parts.push('<span class="jn" title="answer under the other option order">other order</span> ' + (w === "invalid" ? invalid(t, "blind~") : '<span class="lab-' + esc(w) + '">' + esc(LABELS[w] || w) + "</span>"));
      }
      if (t.rubric != null) parts.push("rubric " + (t.rubric === "invalid" ? invalid(t, "rubric") : "<b>" + esc(t.rubric) + "</b>"));
      if (t.alignment != null) {
        var al = t.alignment === "true" ? "yes" : t.alignment === "false" ? "no" : t.alignment;
        parts.push("aligned " + (al === "invalid" ? invalid(t, "alignment") : esc(al)));
      }
      if (t.clip_lean != null) parts.push("CLIP lean " + esc(Number(t.clip_lean).toFixed(3)));
      return '<div><span class="jn">' + esc(judge) + ":</span> " + parts.join(" · ") + "</div>";
    }).join("");
  }

  function cell(c, alt) {
    if (!c) return '<td class="cell"><div class="missing">no image</div></td>';
    var img = c.img
      ? '<img loading="lazy" src="' + esc(c.img) + '" alt="' + esc(alt) + '" title="' + esc(alt) + '">'
      : '<div class="missing">' + esc(c.st) + (c.why ? ": " + esc(c.why) : "") + "</div>";
    var rewritten = c.prompt ? '<div class="rewritten">prompt: ' + esc(c.prompt) + "</div>" : "";
    return '<td class="cell">' + img + rewritten + '<div class="j">' + judgeLines(c.j) + "</div></td>";
  }

  function seedsOf(images, configs) {
    var seeds = {};
    configs.forEach(function (cfg) { Object.keys(images[cfg] || {}).forEach(function (s) { seeds[s] = 1; }); });
    return Object.keys(seeds).sort(function (a, b) { return a - b; });
  }

  function renderUnit(u, light) {
    var meta = IB.meta, h = [];
    var badges = '<span class="badge">' + esc(u.bias) + "</span>";
    if (IB.diag[u.bias]) badges += '<span class="badge diag" title="diagnostic type: the contrast is rarely visible in images">diagnostic</span>';
    if (light.dis.blind) badges += '<span class="badge dis">blind judges disagree</span>';
    if (light.dis.rubric) badges += '<span class="badge dis">rubric gap ≥ ' + meta.rubric_gap + "</span>";
    if (light.sel === true) badges += '<span class="badge">selected</span>';
    if (light.sel === false) badges += '<span class="badge">not selected</span>';
    Object.keys(light.st).forEach(function (k) { badges += '<span class="badge" title="neutral images labelled s by ' + esc(k) + '">default ' + esc(light.st[k]) + " (" + esc(k) + ")</span>"; });
    h.push('<article class="unit" data-unit="' + esc(u.id) + '"><h3><a href="#unit=' + encodeURIComponent(u.id) + '">' + esc(u.id) + "</a> · " + esc(u.head) + badges + "</h3>");
    var kg = [["head", u.head], ["relation", u.relation == null ? "(none)" : u.relation], ["stereotype", u.s], ["anti-stereotype", u.a], ["source", u.source]];
    Object.keys(u.extra || {}).forEach(function (k) { kg.push([k, u.extra[k]]); });
    h.push('<div class="kgrow"><table class="kg">' + kg.map(function (r) { return "<tr><th>" + esc(r[0]) + "</th><td>" + esc(r[1]) + "</td></tr>"; }).join("") + "</table>");
    h.push('<ol class="prompts"><li><b>neutral:</b> ' + esc(u.p[0]) + "</li><li><b>stereotype:</b> " + esc(u.p[1]) + "</li><li><b>anti-stereotype:</b> " + esc(u.p[2]) + "</li></ol></div>");
    meta.base_configs.forEach(function (cfg) {
      var imgs = u.images[cfg];
      if (!imgs) { h.push('<p class="na">' + esc(cfg) + ": no images</p>"); return; }
      h.push("<h4>Images: " + esc(cfg) + '</h4><table class="grid"><tr><th>seed</th><th>neutral</th><th>stereotype</th><th>anti-stereotype</th></tr>');
      seedsOf(u.images, [cfg]).forEach(function (seed) {
        var row = imgs[seed] || {};
        h.push("<tr><th>" + esc(seed) + "</th>" + meta.variants.map(function (v) { return cell(row[v], cfg + " " + VARIANT_NAMES[v] + " seed " + seed); }).join("") + "</tr>");
      });
      h.push("</table>");
    });
    var dcfgs = meta.debias_configs.filter(function (c) { return u.images[c]; });
    if (dcfgs.length) {
      var cols = meta.base_configs.concat(dcfgs);
      h.push('<h4>Debiasing configurations (neutral prompt)</h4><table class="grid"><tr><th>seed</th>' + cols.map(function (c) { return "<th>" + esc(c) + "</th>"; }).join("") + "</tr>");
      seedsOf(u.images, cols).forEach(function (seed) {
        h.push("<tr><th>" + esc(seed) + "</th>" + cols.map(function (c) { return cell(((u.images[c] || {})[seed] || {}).n, c + " neutral seed " + seed); }).join("") + "</tr>");
      });
      h.push("</table>");
    } else if (meta.debias_configs.length === 0) {
      h.push('<p class="na small">Debiasing configurations: not available.</p>');
    }
    h.push("</article>");
    return h.join("");
  }

  var renderToken = 0;
  function render() {
    writeHash();
    var token = ++renderToken;
    document.body.dataset.ready = "0";
    var filtered = IB.units.filter(matches);
    IB.filtered = filtered;
    var per = IB.meta.per_page, pages = Math.max(1, Math.ceil(filtered.length / per));
    if (state.page > pages) state.page = pages;
    var shown = filtered.slice((state.page - 1) * per, state.page * per);
    var pagerHtml = '<button data-go="-1"' + (state.page <= 1 ? " disabled" : "") + ">‹ previous</button> page " + state.page + " of " + pages +
      ' <button data-go="1"' + (state.page >= pages ? " disabled" : "") + ">next ›</button> <span class=\"count\">" + filtered.length + " of " + IB.units.length + " units</span>";
    document.querySelectorAll(".pager").forEach(function (p) { p.innerHTML = pagerHtml; });
    var needed = {};
    shown.forEach(function (u) { needed[u.c] = 1; });
    Promise.all(Object.keys(needed).map(loadChunk)).then(function () {
      if (token !== renderToken) return;
      document.getElementById("units").innerHTML = shown.length
        ? shown.map(function (u) { return renderUnit(IB.chunks[u.c][u.id], u); }).join("")
        : '<p class="na">No unit matches these filters.</p>';
      document.body.dataset.shown = String(shown.length);
      document.body.dataset.matched = String(filtered.length);
      document.body.dataset.ready = "1";
      if (IB.readyAt == null) IB.readyAt = performance.now();
    }, function (err) {
      document.getElementById("units").innerHTML = '<p class="danger">' + esc(err.message) + "</p>";
      document.body.dataset.ready = "error";
    });
  }
  IB.render = render;

  function option(value, label, current) {
    return '<option value="' + esc(value) + '"' + (value === current ? " selected" : "") + ">" + esc(label) + "</option>";
  }

  function buildControls() {
    var meta = IB.meta, c = [];
    var bias = option("", "all bias types", state.bias) + option("__recoverable", "recoverable types", state.bias) + option("__diagnostic", "diagnostic types", state.bias);
    meta.bias_types.forEach(function (b) { bias += option(b, b + (IB.diag[b] ? " (diagnostic)" : "") + " (" + (IB.counts[b] || 0) + ")", state.bias); });
    c.push('<label>bias type<select id="f-bias">' + bias + "</select></label>");
    if (meta.strength_keys.length) {
      if (!state.skey) state.skey = meta.strength_keys[0];
      c.push('<label>default strength by<select id="f-skey">' + meta.strength_keys.map(function (k) { return option(k, k, state.skey); }).join("") + "</select></label>");
      c.push('<label>neutral images labelled s<select id="f-sgroup">' + ["", "0", "1-2", "3", "n/a"].map(function (g) { return option(g, g || "any", state.sgroup); }).join("") + "</select></label>");
    } else {
      c.push('<label>default strength<select id="f-sgroup" disabled><option>not available</option></select></label>');
    }
    c.push('<label>judge disagreement<select id="f-dis">' + option("", "any", state.dis) + option("blind", "blind labels differ", state.dis) + option("rubric", "rubric scores differ by ≥ " + meta.rubric_gap, state.dis) + option("either", "either", state.dis) + option("none", "judges agree", state.dis) + "</select></label>");
    if (meta.has_selection) c.push('<label>selection<select id="f-sel">' + option("", "all units", state.sel) + option("selected", "selected", state.sel) + option("rejected", "not selected", state.sel) + "</select></label>");
    c.push('<label>search heads and prompts<input type="search" id="f-q" placeholder="e.g. nurse" value="' + esc(state.q) + '"></label>');
    if (state.unit) c.push('<label>unit<button id="f-unit">show all units (now: ' + esc(state.unit) + ")</button></label>");
    document.getElementById("controls").innerHTML = c.join("");
    function bind(id, key) {
      var el = document.getElementById(id);
      if (el) el.addEventListener("change", function () { state[key] = el.value; state.page = 1; render(); });
    }
    bind("f-bias", "bias"); bind("f-skey", "skey"); bind("f-sgroup", "sgroup"); bind("f-dis", "dis"); bind("f-sel", "sel");
    var q = document.getElementById("f-q"), timer = null;
    q.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { state.q = q.value.trim(); state.page = 1; render(); }, 150);
    });
    var u = document.getElementById("f-unit");
    if (u) u.addEventListener("click", function () { state.unit = ""; buildControls(); render(); });
  }

  function init() {
    var data = window.IB_INDEX;
    if (!data) { document.getElementById("units").innerHTML = '<p class="danger">data/index.js missing</p>'; return; }
    IB.meta = data.meta;
    IB.units = data.units;
    IB.diag = Object.create(null);  // keyed by data: no prototype keys ("__proto__")
    IB.counts = Object.create(null);
    data.meta.diagnostic.forEach(function (b) { IB.diag[b] = true; });
    IB.units.forEach(function (u) {
      u._text = (u.head + " \n " + u.p.join(" \n ")).toLowerCase();
      IB.counts[u.bias] = (IB.counts[u.bias] || 0) + 1;
    });
    readHash();
    buildControls();
    document.addEventListener("click", function (e) {
      var t = e.target;
      if (t.dataset && t.dataset.go) {
        state.page += parseInt(t.dataset.go, 10);
        render();
        window.scrollTo(0, 0);
      } else if (t.tagName === "IMG" && t.closest(".cell")) {
        t.classList.toggle("big");
      }
    });
    window.addEventListener("hashchange", function () {
      var before = JSON.stringify(state);
      readHash();
      if (!state.skey && IB.meta.strength_keys.length) state.skey = IB.meta.strength_keys[0];
      if (JSON.stringify(state) !== before) { buildControls(); render(); }
    });
    render();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
