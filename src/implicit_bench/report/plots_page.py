"""The offline HTML template of ``dvc plots show`` (``.dvc/plots_offline.html``).

DVC's own page loads vega, vega-lite and vega-embed from a CDN, so it is blank offline. This
template inlines the vendored copies (``report/assets/*.min.js``, see ``report/assets/VENDOR.md``);
``.dvc/config`` points ``plots.html_template`` at it, so a plain ``dvc plots show`` works with no
network. The template keeps DVC's placeholders ``{refresh_tag}`` and ``{plot_divs}`` and drops
``{scripts}`` (the CDN tags); the page is ``report/assets/plots_offline.html``, its
``$vendored`` the inlined scripts. Regenerate it with
``python -m implicit_bench.report.plots_page``.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

ASSETS = Path(__file__).parent / "assets"
VENDORED = ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js")
TEMPLATE_PATH = Path(".dvc") / "plots_offline.html"
# the page around the scripts; its last script keeps each plot's vega view
# (window.vegaViews["#id"]), so a test can read the drawn bars
PAGE = ASSETS / "plots_offline.html"


def offline_template() -> str:
    """The template text: DVC's page with the vendored scripts inlined."""
    scripts = []
    for name in VENDORED:
        code = (ASSETS / name).read_text(encoding="utf-8")
        if "</script" in code.lower():
            raise ValueError(f"{name}: contains '</script', cannot be inlined")
        scripts.append(
            f"    <script>/* {name}: report/assets/VENDOR.md */\n{code}\n    </script>\n"
        )
    return Template(PAGE.read_text(encoding="utf-8")).substitute(vendored="".join(scripts))


def write_template(path: str | Path = TEMPLATE_PATH) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(offline_template(), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(write_template())
