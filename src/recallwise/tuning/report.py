"""The tuner's picture: one self-contained HTML page (inline SVG, no network at view time).

Per candidate a strip plot of its scores coloured by label, with the best threshold (solid)
and the configured one (dashed) drawn; ROC curves of every candidate on one chart; for the
validator, every query's ranking under every candidate; and the summary table. Charts are
drawn with matplotlib (the ``plot`` extra) straight into SVG, so the page needs nothing but
a browser.
"""

from __future__ import annotations

import datetime as _dt
import html
import io
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UsageError
from ..extras import require_extra
from . import metrics
from .run import CandidateResult, TuneResult

__all__ = ["render_report", "write_report"]

POSITIVE = "#0072B2"  # blue: label true (Okabe-Ito, readable for colour-blind viewers)
NEGATIVE = "#D55E00"  # vermillion: label false
LINE_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]

_GATE_COLUMNS = [
    ("best_accuracy", "best acc", "pct"),
    ("best_threshold", "at threshold", "num"),
    ("margin", "margin", "signed"),
    ("auc", "AUC", "num"),
    ("configured_threshold", "configured", "num"),
    ("accuracy_at_configured", "acc at configured", "pct"),
    ("cv_accuracy", "cv acc", "pct"),
    ("ece", "ECE", "num"),
    ("brier", "Brier", "num"),
]
_VALIDATOR_COLUMNS = [
    ("margin", "pooled margin", "signed"),
    ("best_accuracy", "pooled best acc", "pct"),
    ("best_threshold", "at threshold", "num"),
    ("mean_auc", "mean AUC", "num"),
    ("mean_p_at_k", "mean P@k", "pct"),
    ("configured_threshold", "configured", "num"),
    ("accuracy_at_configured", "acc at configured", "pct"),
    ("relative_delta", "relative δ", "num"),
    ("relative_accuracy", "relative acc", "pct"),
]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1100px;
color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ddd}
.meta{color:#555}.warn{background:#fff3e0;border-left:4px solid #e65100;padding:.5em 1em}
table{border-collapse:collapse;margin:1em 0}th,td{padding:.25em .6em;border-bottom:1px solid #eee;
text-align:right}th:first-child,td:first-child{text-align:left}thead th{border-bottom:2px solid #999}
tr.default td:first-child::after{content:" (default)";color:#777}
tr.best td:first-child{font-weight:bold}tr.errored{color:#b00}
.charts{display:flex;flex-wrap:wrap;gap:1em}figure.chart{margin:0;flex:1 1 480px;max-width:540px}
figure.chart svg{width:100%;height:auto}figcaption{color:#555;font-size:.9em}
td.rel{background:#e3f0fa}td.irr{background:#fbe9e1}td.err{color:#b00}
.ranking td{text-align:left;font-size:.9em;white-space:nowrap}
.key{font-family:ui-monospace,monospace}
"""


def _matplotlib() -> Any:
    require_extra("plot", "--report (its charts)")
    import matplotlib
    from matplotlib.figure import Figure

    return matplotlib, Figure


@contextmanager
def _svg_style(salt: str) -> Iterator[Any]:
    matplotlib, Figure = _matplotlib()
    # A distinct hash salt per chart keeps element ids unique when several SVGs share a page;
    # fonttype "none" keeps text as text (small, selectable).
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none", "font.size": 9}):
        yield Figure


def _svg(figure: Any) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    return re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)


def _fmt(value: float | None, kind: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if kind == "pct":
        return f"{value:.0%}"
    if kind == "signed":
        return f"{value:+.3f}"
    return f"{value:.3f}"


def _strip_chart(index: int, candidate: CandidateResult) -> str:
    """Scores on x, one row per label, best threshold solid and configured dashed."""
    with _svg_style(f"strip{index}") as Figure:
        figure = Figure(figsize=(5.4, 1.9))
        axes = figure.add_subplot()
        rng = np.random.default_rng(index)
        plotted = 0
        for row, (label, colour, name) in enumerate(((False, NEGATIVE, "false"), (True, POSITIVE, "true"))):
            xs = [
                s
                for s, y in zip(candidate.scores, candidate.labels, strict=True)
                if y is label and s is not None
            ]
            ys = row + rng.uniform(-0.18, 0.18, size=len(xs))
            points = axes.scatter(
                xs,
                ys,
                s=22,
                color=colour,
                alpha=0.75,
                edgecolors="white",
                linewidths=0.5,
                label=f"label {name}",
            )
            points.set_gid(f"points-{index}-{name}")
            plotted += len(xs)
        best = candidate.metrics.get("best_threshold")
        configured = candidate.metrics.get("configured_threshold")
        if best is not None and math.isfinite(best):
            axes.axvline(best, color="#222", linewidth=1.4, label=f"best threshold {best:.3f}")
        if configured is not None and math.isfinite(configured):
            axes.axvline(
                configured, color="#777", linewidth=1.2, linestyle="--", label=f"configured {configured:.3f}"
            )
        axes.set_xlim(-0.02, 1.02)
        axes.set_ylim(-0.6, 1.6)
        axes.set_yticks([0, 1], ["false", "true"])
        axes.set_xlabel("score" + (" (inverted wording, flipped)" if candidate.inverted else ""))
        axes.set_title(candidate.name, loc="left", fontsize=10)
        axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.38), ncol=4, fontsize=7, frameon=False)
        axes.grid(axis="x", color="#eee")
        svg = _svg(figure)
    return (
        f'<figure class="chart strip" data-points="{plotted}" data-gid="points-{index}">{svg}'
        f"<figcaption>{html.escape(candidate.name)}: {plotted} scores"
        + (f", {candidate.errors} errored (not drawn)" if candidate.errors else "")
        + "</figcaption></figure>"
    )


def _roc_chart(result: TuneResult) -> str:
    with _svg_style("roc") as Figure:
        figure = Figure(figsize=(4.6, 4.2))
        axes = figure.add_subplot()
        axes.plot([0, 1], [0, 1], color="#bbb", linewidth=1, linestyle=":")
        curves = 0
        for i, candidate in enumerate(result.candidates):
            scores, labels = candidate.answered
            if len(set(labels)) < 2:
                continue
            fpr, tpr = metrics.roc_curve(scores, labels)
            value = metrics.auc(scores, labels)
            line = axes.plot(
                fpr,
                tpr,
                color=LINE_COLOURS[i % len(LINE_COLOURS)],
                # Identical curves (two wordings a backend answers alike) stay visible.
                linestyle=("-", "--", "-.", ":")[i % 4],
                linewidth=2.2 - 0.3 * (i % 4),
                label=f"{candidate.name} (AUC {value:.2f})",
            )[0]
            line.set_gid(f"roc-{i}")
            curves += 1
        axes.set_xlim(-0.01, 1.01)
        axes.set_ylim(-0.01, 1.01)
        axes.set_xlabel("false positive rate")
        axes.set_ylabel("true positive rate")
        pooled = " (pooled over queries)" if result.kind == "judge" else ""
        axes.set_title(f"ROC{pooled}", loc="left", fontsize=10)
        axes.legend(loc="lower right", fontsize=7)
        axes.grid(color="#eee")
        svg = _svg(figure)
    return (
        f'<figure class="chart roc" data-curves="{curves}">{svg}'
        "<figcaption>ROC curves: every threshold at once; the diagonal is chance.</figcaption></figure>"
    )


def _summary(result: TuneResult) -> str:
    columns = _GATE_COLUMNS if result.kind == "gate" else _VALIDATOR_COLUMNS
    best = result.best
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label, _ in columns)
    rows = []
    for c in result.candidates:
        classes = [
            cls
            for cls, on in (
                ("default", c.name == result.default),
                ("best", c is best),
                ("errored", c.errors > 0),
            )
            if on
        ]
        cells = "".join(f"<td>{_fmt(c.metrics.get(key), kind)}</td>" for key, _, kind in columns)
        rows.append(
            f'<tr class="{" ".join(classes)}"><td>{html.escape(c.name)}</td>{cells}<td>{c.errors}</td>'
            f"<td>{html.escape(c.summary)}</td></tr>"
        )
    return (
        '<table class="summary"><thead><tr><th>candidate</th>'
        f"{head}<th>errors</th><th>shape</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _ranking_tables(result: TuneResult) -> str:
    """Per query: AUC and P@k of every candidate, then the ranked records side by side."""
    queries = [q.query for q in result.candidates[0].queries]
    head = "".join(f"<th>{html.escape(c.name)}<br>AUC · P@k</th>" for c in result.candidates)
    rows = []
    for qi, query in enumerate(queries):
        cells = "".join(
            f"<td>{_fmt(c.queries[qi].auc, 'num')} · {_fmt(c.queries[qi].p_at_k, 'pct')}</td>"
            for c in result.candidates
        )
        rows.append(f"<tr><td>{html.escape(query)}</td>{cells}</tr>")
    overview = (
        f'<table class="per-query"><thead><tr><th>query</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    blocks: list[str] = []
    for qi, query in enumerate(queries):
        depth = max(len(c.queries[qi].ranked) for c in result.candidates)
        lines: list[str] = []
        for rank in range(depth):
            row_cells = []
            for c in result.candidates:
                ranked = c.queries[qi].ranked
                if rank >= len(ranked):
                    row_cells.append("<td></td>")
                    continue
                key, text, relevant, score = ranked[rank]
                mark = "✓" if relevant else "✗"
                shown = "error" if score is None else f"{score:.2f}"
                cls = "err" if score is None else ("rel" if relevant else "irr")
                row_cells.append(
                    f'<td class="{cls}" title="{html.escape(text)}">{mark} <span class="key">'
                    f"{html.escape(key)}</span> {shown}</td>"
                )
            lines.append(f"<tr><td>{rank + 1}</td>{''.join(row_cells)}</tr>")
        names = "".join(f"<th>{html.escape(c.name)}</th>" for c in result.candidates)
        blocks.append(
            f"<details{' open' if qi == 0 else ''}><summary>{html.escape(query)}</summary>"
            f'<table class="ranking"><thead><tr><th>#</th>{names}</tr></thead><tbody>{"".join(lines)}</tbody>'
            "</table></details>"
        )
    return overview + "".join(blocks)


def _keep_rule_sentence(candidate: CandidateResult) -> str:
    if candidate.keep_rule is None:
        return ""
    accuracy, threshold, delta = candidate.keep_rule
    return (
        f" Fitted jointly for the policy's default keep rule (p &ge; t and p &ge; best &minus; d): "
        f"t = {threshold:.3f}, d = {delta:.3f}, pooled accuracy {accuracy:.0%} (what --write-config saves)."
    )


def render_report(result: TuneResult) -> str:
    """The whole page as one HTML string."""
    what = result.measured.replace("_", "-") if result.kind == "gate" else "validator (judge)"
    best = result.best
    default = result.candidate(result.default)
    unit = "utterances" if result.kind == "gate" else "judged (query, record) pairs"
    warnings = []
    errored = [c for c in result.candidates if c.errors]
    if errored:
        listed = "; ".join(
            f"{html.escape(c.name)}: {c.errors} errors (e.g. {html.escape(c.error_samples[0])})"
            for c in errored
        )
        warnings.append(
            "Candidates that errored are measured only on what they answered and never chosen as "
            f"best: {listed}"
        )
    if result.n < 50:
        warnings.append(
            f"Only {result.n} {unit}: figures this small show direction, not magnitude. "
            "Label more of your own data."
        )
    verdict = (
        f"Best wording here: <b>{html.escape(best.name)}</b>."
        if best
        else "No candidate answered every item."
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>recallwise tune {html.escape(result.kind if result.kind == 'gate' else 'validator')}"
        f" — {html.escape(result.backend)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>recallwise tune {what}: {html.escape(result.backend)}</h1>",
        f'<p class="meta">data <b>{html.escape(result.source)}</b> (sha256 {result.data_sha256[:12]}…), '
        f"n = {result.n} {unit}; {result.decider_calls} decider calls; "
        f"{_dt.datetime.now(_dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}</p>",
        *(f'<p class="warn">{w}</p>' for w in warnings),
        f"<p>{verdict} The default wording (<b>{html.escape(default.name)}</b>, configured threshold "
        f"{_fmt(default.metrics.get('configured_threshold'), 'num')} from "
        f"{html.escape(default.configured_source)}) "
        f"scores {_fmt(default.metrics.get('accuracy_at_configured'), 'pct')} at its configured threshold."
        + _keep_rule_sentence(default)
        + "</p>",
        "<h2>Summary</h2>",
        _summary(result),
        "<p>Separation (one threshold for every item: best accuracy, margin) and ranking (AUC"
        + (", per-query AUC and P@k" if result.kind == "judge" else "")
        + ") fail independently. Margin is the lowest true score minus the highest false one: above 0, one "
        "threshold splits the classes perfectly. Inverted wordings are flipped before measuring. "
        + (
            "cv acc grades a threshold chosen on the other folds (5-fold), never on the items that chose it."
            if result.kind == "gate"
            else "The relative rule keeps a record within δ of its query's best score."
        )
        + "</p>",
        "<h2>Scores by label</h2>",
        "<p>Each dot is one item; the solid line is the best threshold on this data, the dashed line the "
        "configured one.</p>",
        '<div class="charts">',
        *(_strip_chart(i, c) for i, c in enumerate(result.candidates)),
        "</div>",
        "<h2>ROC</h2>",
        f'<div class="charts">{_roc_chart(result)}</div>',
    ]
    if result.kind == "judge":
        parts += ["<h2>Per-query ranking</h2>", _ranking_tables(result)]
    parts.append("<h2>Candidates</h2><ul>")
    parts += [
        f"<li><b>{html.escape(c.name)}</b> ({html.escape(c.summary)}): {html.escape(c.description)}</li>"
        for c in result.candidates
    ]
    parts.append("</ul></body></html>")
    return "\n".join(parts)


def write_report(result: TuneResult, path: str | Path) -> Path:
    """Write the page to ``path`` (parent folders are created)."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_report(result), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the report: {exc.strerror or exc}") from None
    return target
