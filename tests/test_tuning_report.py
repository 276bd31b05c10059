"""The tuner's HTML report, rendered by a real headless Chromium.

The browser is driven over the DevTools protocol on a pipe (``tests/chromium.py``), so
the test reads back from the live page: every chart's laid-out size, the number of drawn
points and curves, a screenshot of each chart (it must not be blank), console errors and
exceptions, and every network request the page made (only the file itself is allowed).
Chromium comes from the Debian package ``chromium``; ``.ci/run`` installs it when missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chromium import Chromium, inked_share, needs_chromium
from recallwise.deciders import make_decider
from recallwise.tuning import default_candidates, load_cases, load_labels, tune_gate, tune_validator
from recallwise.tuning.report import render_report, write_report

# Read back from the page: every chart's size and what it drew.
_CHART_PROBE = """
(() => [...document.querySelectorAll('figure.chart')].map((figure) => {
  const svg = figure.querySelector('svg');
  const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0, x: 0, y: 0};
  const groups = figure.dataset.gid ? [...figure.querySelectorAll(`[id^="${figure.dataset.gid}-"]`)] : [];
  const curves = [...figure.querySelectorAll('[id^="roc-"] path')].filter((p) => {
    const b = p.getBBox(); return b.width > 0 && b.height > 0;
  });
  return {
    kind: figure.classList.contains('roc') ? 'roc' : 'strip',
    width: box.width, height: box.height,
    x: box.x + window.scrollX, y: box.y + window.scrollY,
    expectedPoints: Number(figure.dataset.points || 0),
    drawnPoints: groups.reduce((n, g) => n + g.querySelectorAll('use').length, 0),
    expectedCurves: Number(figure.dataset.curves || 0),
    drawnCurves: curves.length,
  };
}))()
"""


def inspect(browser: Chromium, path: Path) -> tuple[list[dict[str, Any]], list[str], list[str], list[float]]:
    """(charts, console errors, foreign requests, inked share per chart) of the page at ``path``."""
    url = path.resolve().as_uri()
    browser.load(url)
    charts = browser.evaluate(_CHART_PROBE)
    inks = [
        inked_share(browser.screenshot(c["x"], c["y"], c["width"], c["height"]))
        if c["width"] and c["height"]
        else 0.0
        for c in charts
    ]
    foreign = [u for u in browser.requested_urls() if u != url and not u.startswith("data:")]
    return charts, browser.console_errors(), foreign, inks


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Real reports from the real embedded decider on the shipped seed sets."""
    decider = make_decider("embedded")
    folder = tmp_path_factory.mktemp("reports")
    gate = tune_gate(decider, load_labels("builtin:seed"), default_candidates("gate"))
    validator = tune_validator(decider, load_cases("builtin:seed"), default_candidates("judge"))
    return {
        "gate": (gate, write_report(gate, folder / "gate.html")),
        "validator": (validator, write_report(validator, folder / "validator.html")),
    }


@pytest.fixture
def browser(tmp_path: Path) -> Any:
    chromium = Chromium(tmp_path / "profile")
    yield chromium
    chromium.close()


def test_report_is_one_self_contained_page(reports: dict[str, Any]) -> None:
    for result, path in reports.values():
        page = path.read_text()
        assert page.startswith("<!DOCTYPE html>")
        assert page.count("<svg") == len(result.candidates) + 1  # one strip each, one ROC
        assert "<script" not in page and "<link" not in page
        assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
            'xmlns:xlink="http://www.w3.org/1999/xlink"', ""
        )
    validator_page = reports["validator"][1].read_text()
    assert "Per-query ranking" in validator_page
    for case in load_cases("builtin:seed").cases:
        assert case.query.replace("'", "&#x27;") in validator_page


def test_report_names_errored_candidates(reports: dict[str, Any]) -> None:
    result = reports["gate"][0]
    broken = result.candidates[1]
    broken.errors, broken.error_samples = 2, ["line 3: DeciderTimeout: no answer in 5 s"]
    try:
        page = render_report(result)
    finally:
        broken.errors, broken.error_samples = 0, []
    assert 'class="errored"' in page
    assert "plain: 2 errors (e.g. line 3: DeciderTimeout: no answer in 5 s)" in page


@needs_chromium
@pytest.mark.parametrize("kind", ["gate", "validator"])
def test_every_chart_renders_in_chromium_without_console_errors(
    kind: str, reports: dict[str, Any], browser: Chromium
) -> None:
    result, path = reports[kind]
    charts, errors, foreign, inks = inspect(browser, path)
    assert errors == []
    assert foreign == []
    assert [c["kind"] for c in charts] == ["strip"] * len(result.candidates) + ["roc"]
    for chart, ink in zip(charts, inks, strict=True):
        assert chart["width"] > 200 and chart["height"] > 80, chart
        assert ink > 0.01, (chart, ink)
        if chart["kind"] == "strip":
            assert chart["expectedPoints"] == result.n
            assert chart["drawnPoints"] == chart["expectedPoints"], chart
        else:
            assert chart["expectedCurves"] == len(result.candidates)
            assert chart["drawnCurves"] == chart["expectedCurves"], chart


@needs_chromium
def test_the_browser_check_catches_a_broken_page(tmp_path: Path, browser: Chromium) -> None:
    """The probe must fail on an empty chart, a console error and a network fetch."""
    page = tmp_path / "broken.html"
    page.write_text(
        "<!DOCTYPE html><html><body>"
        '<figure class="chart strip" data-points="5" data-gid="points-0"><svg></svg></figure>'
        "<script>console.error('chart failed'); undefined_function();</script>"
        '<img src="http://127.0.0.1:9/pixel.png">'
        "</body></html>"
    )
    charts, errors, foreign, inks = inspect(browser, page)
    assert charts[0]["drawnPoints"] == 0 and charts[0]["expectedPoints"] == 5
    assert inks[0] < 0.01
    assert any("chart failed" in e for e in errors)
    assert any("undefined_function" in e for e in errors)
    assert foreign == ["http://127.0.0.1:9/pixel.png"]
