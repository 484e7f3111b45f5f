"""Pages' stylesheets and scripts are package files, not Python strings (
docs/contracts.md, "Page assets"): the forms read theirs from human_eval/form_assets, the
offline plots page from report/assets, and every such file ships in the wheel."""

from __future__ import annotations

import ast
import fnmatch
import json
import re
import tomllib

import pytest

from implicit_bench.human_eval.blind_form import (
    BLIND_ANSWER_COLUMNS,
    question_parts,
    render_blind_form,
)
from implicit_bench.human_eval.form import ANSWER_COLUMNS, render_form
from implicit_bench.human_eval.page import asset
from tests.helpers.paths import REPO_ROOT

PKG = REPO_ROOT / "src" / "implicit_bench"
MAX_LINES = 3  # a short <style> or loader <script> (three lines at most) may stay in code
_BLOCK = re.compile(r"<(style|script)\b[^>]*>", re.IGNORECASE)
_FUNCTION = re.compile(r"\bfunction\s*\w*\s*\(")
_CSS_RULE = re.compile(r"^\s*[\w.#*:,>\s-]+\{[^{}]*:[^{}]*\}?\s*$", re.MULTILINE)


def _lines(text: str) -> int:
    return text.strip().count("\n") + 1 if text.strip() else 0


def _docstrings(tree: ast.Module) -> set[int]:
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef))]
    return {
        id(n.body[0].value)
        for n in nodes
        if n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
    }


def page_code_in_strings(source: str) -> list[tuple[int, str]]:
    """(line, why) per string literal holding more than MAX_LINES lines of a ``<style>`` or
    ``<script>`` body, or that many lines of CSS rules or JavaScript functions."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    strings: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):  # an f-string: its literal parts, "{}" per field
            parts = [v.value if isinstance(v, ast.Constant) else "{}" for v in node.values]
            strings.append((node.lineno, "".join(parts)))
            skip.update(id(v) for v in node.values)
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        ):
            strings.append((node.lineno, node.value))
    found = []
    for lineno, text in strings:
        for match in _BLOCK.finditer(text):
            close = text.lower().find(f"</{match.group(1).lower()}", match.end())
            body = text[match.end() : close if close >= 0 else len(text)]
            if _lines(body) > MAX_LINES:
                found.append((lineno, f"a <{match.group(1)}> block"))
        if _lines(text) > MAX_LINES:
            if _FUNCTION.search(text):
                found.append((lineno, "JavaScript"))
            elif len(_CSS_RULE.findall(text)) > MAX_LINES:
                found.append((lineno, "CSS rules"))
    return found


def test_no_module_holds_a_stylesheet_or_script_in_a_string():
    offenders = [
        f"{path.relative_to(REPO_ROOT)}:{line}: {why}"
        for path in sorted(PKG.rglob("*.py"))
        for line, why in page_code_in_strings(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, "move it to a package asset file:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    "snippet, why",
    [
        (
            '_CSS = """\nbody{margin:0}\nmain{padding:1px}\n.a{color:red}\n.b{color:blue}\n"""',
            "CSS",
        ),
        ('_JS = """\n(function(){\nvar a = 1;\nfoo(a);\n})();\n"""', "JavaScript"),
        (
            'X = """<style>\nbody{margin:0}\nmain{x:1}\n.a{b:c}\n.d{e:f}\n</style>"""',
            "a <style> block",
        ),
        ('X = f"""<script>\nvar a = {n};\nb(a);\nc(a);\nd(a);\n</script>"""', "a <script> block"),
    ],
)
def test_the_rule_catches_page_code(snippet, why):
    assert any(w.startswith(why) for _, w in page_code_in_strings(snippet))


@pytest.mark.parametrize(
    "snippet",
    [
        '"""A docstring naming <script> and function( and\nbody{x:1}\na{b:c}\nc{d:e}\nf{g:h}."""',
        "X = '<style>body{margin:0}</style>'",
        "X = '<script src=\"a.js\"></script>'",
        'X = """one\ntwo\nthree\nfour"""',
    ],
)
def test_the_rule_spares_docstrings_short_tags_and_prose(snippet):
    assert page_code_in_strings(snippet) == []


def _package_data_globs() -> list[str]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return project["tool"]["setuptools"]["package-data"]["implicit_bench"]


@pytest.mark.parametrize("folder", ["human_eval/form_assets", "report/assets"])
def test_every_page_asset_is_package_data(folder):
    files = [p for p in (PKG / folder).iterdir() if p.is_file()]
    assert files
    globs = _package_data_globs()
    for path in files:
        rel = path.relative_to(PKG).as_posix()
        assert any(fnmatch.fnmatch(rel, g) for g in globs), f"{rel}: not in package-data"


def _png() -> str:
    return "data:image/png;base64,iVBORw0KGgo="


def test_the_forms_inline_the_shared_files_and_their_own_parts():
    case = {
        "case": "c001",
        "unit_id": "u1",
        "head": "h",
        "relation": "r",
        "stereotype": "s",
        "anti_stereotype": "a",
        "images": [_png()] * 3,
    }
    rating = render_form("b1", [case])
    prompt = "Which fits?\nA: one\nB: two\nC: neither"
    item = {"item": "i001", "unit_id": "u1", "image": _png(), "question": question_parts(prompt)}
    blind = render_blind_form("c1", [item])
    shared_css, shared_js = asset("form.css"), asset("form.js")
    for page in (rating, blind):
        assert page.startswith("<!DOCTYPE html>\n") and page.endswith("</html>\n")
        assert page.count("<style>") == 1 and page.count("<script>") == 2
        assert f"<style>\n{shared_css}" in page
        assert "__COLUMNS__" not in page and "$" not in page
    assert asset("rating_intro.html").split("$count")[0] in rating
    assert "This form has 1 cases." in rating and "This form has 1 images." in blind
    assert asset("blind_intro.html").split("$count")[0] in blind
    assert f"{shared_css}</style>" in rating
    assert f"{shared_css}{asset('blind_form.css')}</style>" in blind
    assert '"ib-form-"' in rating and '"ib-blind-"' not in rating
    assert '"ib-blind-"' in blind and '"ib-form-"' not in blind
    for page, own, columns in (
        (rating, "rating_form.js", ANSWER_COLUMNS),
        (blind, "blind_form.js", BLIND_ANSWER_COLUMNS),
    ):
        script = asset(own).replace("__COLUMNS__", json.dumps(list(columns)))
        assert page.endswith(f"<script>{shared_js}{script}</script></body></html>\n")
