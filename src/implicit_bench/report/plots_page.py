"""The offline HTML template of ``dvc plots show`` (``.dvc/plots_offline.html``).

DVC's own page loads vega, vega-lite and vega-embed from a CDN, so it is blank offline. This
template inlines the vendored copies (``report/assets/*.min.js``, see ``report/assets/VENDOR.md``);
``.dvc/config`` points ``plots.html_template`` at it, so a plain ``dvc plots show`` works with no
network. The template keeps DVC's placeholders ``{refresh_tag}`` and ``{plot_divs}`` and drops
``{scripts}`` (the CDN tags). Regenerate it with ``python -m implicit_bench.report.plots_page``.
"""

from __future__ import annotations

from pathlib import Path

ASSETS = Path(__file__).parent / "assets"
VENDORED = ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js")
TEMPLATE_PATH = Path(".dvc") / "plots_offline.html"

_HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
    <meta charset="utf-8">
    {refresh_tag}
    <title>implicit-bench plots (dvc plots show, offline)</title>
    <style>
        body { font-family: system-ui, sans-serif; margin: 1rem; }
        table { border-spacing: 15px; }
        .vega-embed { margin-bottom: 1.5rem; }
    </style>
"""


# keep each plot's vega view (window.vegaViews["#id"]), so a test can read the drawn bars
_KEEP_VIEWS = """    <script>
    window.vegaViews = {};
    (function () {
        const embed = window.vegaEmbed;
        window.vegaEmbed = function (el, spec, opt) {
            return embed(el, spec, opt).then(function (res) {
                window.vegaViews[el] = res.view;
                return res;
            });
        };
    })();
    </script>
"""


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
    return (
        _HEAD
        + "".join(scripts)
        + _KEEP_VIEWS
        + "</head>\n<body>\n    {plot_divs}\n</body>\n</html>\n"
    )


def write_template(path: str | Path = TEMPLATE_PATH) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(offline_template(), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(write_template())
