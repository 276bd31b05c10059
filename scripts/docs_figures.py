"""The figures README.md and docs/ quote from a command, checked against the command or rewritten.

A figure a command prints is written in a page between two markers, invisible on GitHub and in the
site::

    | records injected | 120 | <!--fig:demo.gated_injected-->15<!--/fig--> |

and named in :data:`FIGURES` below: the command (:data:`SOURCES`, run with ``--json``) and how its
one JSON object gives the figure, formatted as the page writes it. So a page cannot drift from
what the project prints:

    python scripts/docs_figures.py                 # check: exit 1 naming every figure that drifted
    python scripts/docs_figures.py --write         # rewrite the figures from the commands
    python scripts/docs_figures.py --only demo     # only the figures of these sources
    python scripts/docs_figures.py --skip-slow     # not the benchmarks that take minutes
    python scripts/docs_figures.py --only decisions --from decisions=out.json --write
                                                   # a source's JSON saved from its command, not rerun

The test suite runs the check (``tests/test_docs_figures.py``: the fast sources always, the
benchmarks as a slow test). After a change that moves a figure (a refitted head, a new keep rule),
run ``--write`` and commit the pages with it. A marker naming no figure, a figure no page writes or
a source whose command fails is an error: the check never passes by leaving a figure out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"<!--fig:([\w.-]+)-->(.*?)<!--/fig-->", re.S)


@dataclass(frozen=True)
class Source:
    """A command (``recallwise ARGS``, run from the repository's root) printing one JSON object;
    ``{tmp}`` in an argument is a fresh folder, holding ``files`` (name -> text) when it runs;
    ``slow``: a benchmark (minutes) or a backend of an extra (sparrow)."""

    args: tuple[str, ...]
    slow: bool = False
    files: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Figure:
    """A figure: the source it comes from, how its JSON gives it, and how the page writes it."""

    source: str
    value: Callable[[Any], Any]
    fmt: str = "{}"

    def text(self, document: Any) -> str:
        return self.fmt.format(self.value(document))


_SPLITS = ("seed", "dev", "heldout")
_AT_HALF = ("--candidates", "{tmp}/at-0.5.json", "--json")
SOURCES: Mapping[str, Source] = {
    # the demo on a fresh store: the persona seeded, its eight turns through both arms
    "demo": Source(("demo", "--store", "sqlite:///{tmp}/demo.db", "--json")),
    "gate-seed": Source(("tune", "gate", "--labels", "builtin:seed", "--json")),
    "gate-heldout": Source(("tune", "gate", "--labels", "builtin:heldout", "--json")),
    "gate-multilingual": Source(
        ("tune", "gate", "--labels", "src/recallwise/data/heldout/gate_labels_multilingual.jsonl", "--json")
    ),
    "judge-seed": Source(("tune", "validator", "--cases", "builtin:seed", "--json")),
    "judge-dev": Source(("tune", "validator", "--cases", "builtin:dev", "--json")),
    "judge-heldout": Source(("tune", "validator", "--cases", "builtin:heldout", "--json")),
    # sparrow-decider (the sparrow extra), at its measured gate threshold and at an unmeasured 0.5
    **{
        f"sparrow-{kind}-{split}": Source(
            ("tune", kind, flag, f"builtin:{split}", "--decider", "sparrow", "--json"), slow=True
        )
        for kind, flag, splits in (
            ("gate", "--labels", ("seed", "heldout")),
            ("validator", "--cases", _SPLITS),
        )
        for split in splits
    },
    **{
        f"sparrow-gate-{split}-0.5": Source(
            ("tune", "gate", "--labels", f"builtin:{split}", "--decider", "sparrow", *_AT_HALF),
            slow=True,
            files={"at-0.5.json": json.dumps({"shipped": {"use": "shipped", "threshold": 0.5}})},
        )
        for split in ("seed", "heldout")
    },
    # the outside held-out sets, every turn through a real default policy (minutes)
    "decisions": Source(("bench", "decisions", "--data", "data/decisions/heldout", "--json"), slow=True),
}


def _shipped(document: Any, key: str) -> Any:
    """The shipped wording's figure ``key`` in a ``tune`` command's JSON."""
    return document["candidates"][document["default"]][key]


def _arm(arm: str, key: str) -> Callable[[Any], Any]:
    return lambda d: d["arms"][arm][key]


def _tune(key: str) -> Callable[[Any], Any]:
    return lambda d: _shipped(d, key)


def _overall(*keys: str) -> Callable[[Any], Any]:
    def get(d: Any) -> Any:
        value = d["overall"]
        for key in keys:
            value = value[key]
        return value

    return get


FIGURES: Mapping[str, Figure] = {
    # README.md's demo table and docs/index.md
    "demo.seeded": Figure("demo", lambda d: d["seeded"]),
    "demo.stock_retrievals": Figure("demo", _arm("stock", "retrievals")),
    "demo.gated_retrievals": Figure("demo", _arm("gated", "retrievals")),
    "demo.stock_injected": Figure("demo", _arm("stock", "records_injected")),
    "demo.gated_injected": Figure("demo", _arm("gated", "records_injected")),
    "demo.gated_share": Figure(
        "demo",
        lambda d: d["arms"]["gated"]["records_injected"] / d["arms"]["stock"]["records_injected"],
        "{:.0%}",
    ),
    # the thresholds the default policy uses (the shipped heads' operating points), as tune prints them
    "gate.threshold": Figure("gate-seed", _tune("configured_threshold"), "{:g}"),
    "judge.threshold": Figure("judge-seed", _tune("configured_threshold"), "{:g}"),
    # docs/how-it-decides.md's quality table and docs/tuning.md's
    "gate.seed.n": Figure("gate-seed", lambda d: d["n"]),
    "gate.seed.accuracy": Figure("gate-seed", _tune("accuracy_at_configured"), "{:.0%}"),
    "gate.seed.auc": Figure("gate-seed", _tune("auc"), "{:.2f}"),
    "gate.heldout.n": Figure("gate-heldout", lambda d: d["n"]),
    "gate.heldout.accuracy": Figure("gate-heldout", _tune("accuracy_at_configured"), "{:.0%}"),
    "gate.heldout.auc": Figure("gate-heldout", _tune("auc"), "{:.2f}"),
    "gate.heldout.cv": Figure("gate-heldout", _tune("cv_accuracy"), "{:.0%}"),
    "gate.multilingual.n": Figure("gate-multilingual", lambda d: d["n"]),
    "gate.multilingual.accuracy": Figure("gate-multilingual", _tune("accuracy_at_configured"), "{:.0%}"),
    "gate.multilingual.auc": Figure("gate-multilingual", _tune("auc"), "{:.2f}"),
    "judge.seed.auc": Figure("judge-seed", _tune("mean_auc"), "{:.2f}"),
    "judge.seed.p_at_k": Figure("judge-seed", _tune("mean_p_at_k"), "{:.2f}"),
    "judge.seed.inverted_auc": Figure(
        "judge-seed", lambda d: d["candidates"]["inverted"]["mean_auc"], "{:.2f}"
    ),
    "judge.dev.auc": Figure("judge-dev", _tune("mean_auc"), "{:.2f}"),
    "judge.heldout.auc": Figure("judge-heldout", _tune("mean_auc"), "{:.2f}"),
    "judge.heldout.p_at_k": Figure("judge-heldout", _tune("mean_p_at_k"), "{:.2f}"),
    # docs/tuning.md's sparrow rows
    **{
        f"sparrow.gate.{split}{at}.{key}": Figure(f"sparrow-gate-{split}{at}", _tune(key), fmt)
        for split in ("seed", "heldout")
        for at in ("", "-0.5")
        for key, fmt in (("accuracy_at_configured", "{:.0%}"), ("auc", "{:.2f}"))
    },
    "sparrow.gate.threshold": Figure("sparrow-gate-seed", _tune("configured_threshold"), "{:g}"),
    **{
        f"sparrow.judge.{split}.{name}": Figure(
            f"sparrow-validator-{split}", lambda d, name=name: d["candidates"][name]["mean_auc"], "{:.2f}"
        )
        for split in _SPLITS
        for name in ("shipped", "plain")
    },
    # the outside held-out sets (bench decisions)
    "decisions.turns": Figure("decisions", _overall("turns"), "{:,}"),
    "decisions.gate_opens": Figure("decisions", _overall("open_rate_true"), "{:.1%}"),
    "decisions.gate_closes": Figure("decisions", _overall("closed_rate_false"), "{:.1%}"),
    "decisions.gate_auc": Figure("decisions", _overall("auc"), "{:.2f}"),
    "decisions.judge_auc": Figure("decisions", _overall("judge_mean_auc"), "{:.2f}"),
}


def run_source(name: str, exe: Sequence[str], root: Path = ROOT) -> Any:
    """The one JSON object the source's command prints (a failing command is a RuntimeError)."""
    sys.stderr.write(f"docs_figures: recallwise {' '.join(SOURCES[name].args)}\n")
    with tempfile.TemporaryDirectory() as tmp:
        for file, text in SOURCES[name].files.items():
            Path(tmp, file).write_text(text, encoding="utf-8")
        args = [a.replace("{tmp}", tmp) for a in SOURCES[name].args]
        env = {**os.environ, "RECALLWISE_CONFIG": "", "RECALLWISE_LOG": ""}  # the shipped defaults only
        done = subprocess.run([*exe, *args], cwd=root, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"source {name!r} (recallwise {' '.join(args)}) exited {done.returncode}: {last}")
    return json.loads(done.stdout)


def pages(root: Path = ROOT) -> list[str]:
    """The pages whose figures are checked: README.md and every page of docs/."""
    return ["README.md", *sorted(str(p.relative_to(root)) for p in (root / "docs").glob("*.md"))]


def page_figures(root: Path = ROOT) -> dict[str, list[tuple[str, int, str]]]:
    """Every figure the pages write: name -> [(page, line, text)]."""
    found: dict[str, list[tuple[str, int, str]]] = {}
    for page in pages(root):
        text = (root / page).read_text(encoding="utf-8")
        for match in MARKER.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.setdefault(match.group(1), []).append((page, line, match.group(2)))
    return found


def check(
    sources: Sequence[str],
    exe: Sequence[str],
    write: bool,
    root: Path = ROOT,
    saved: Mapping[str, Any] | None = None,
) -> list[str]:
    """The problems (drifted figures, unknown markers, unwritten figures) of ``sources``' figures;
    with ``write``, drifted figures are rewritten and not problems. ``saved``: a source's JSON
    already printed by its command (not run again)."""
    written = page_figures(root)
    problems = [
        f"{page}:{line}: marker names no figure {name!r} (scripts/docs_figures.py FIGURES)"
        for name, places in written.items()
        if name not in FIGURES
        for page, line, _ in places
    ]
    problems += [f"figure {name!r} is written by no page" for name in FIGURES if name not in written]
    wanted = {name: fig for name, fig in FIGURES.items() if fig.source in sources}
    saved = saved or {}
    needed = sorted({f.source for f in wanted.values()})
    documents = {s: saved[s] if s in saved else run_source(s, exe, root) for s in needed}
    fresh = {name: fig.text(documents[fig.source]) for name, fig in wanted.items()}
    for name, text in fresh.items():
        for page, line, shown in written.get(name, []):
            if shown != text and not write:
                problems.append(f"{page}:{line}: {name} is {shown!r}, the command prints {text!r}")
    if write:
        for page in pages(root):
            path = root / page
            old = path.read_text(encoding="utf-8")

            def fill(match: re.Match[str]) -> str:
                name = match.group(1)
                text = fresh.get(name, match.group(2))
                return f"<!--fig:{name}-->{text}<!--/fig-->"

            new = MARKER.sub(fill, old)
            if new != old:
                path.write_text(new, encoding="utf-8")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--write", action="store_true", help="rewrite the figures (default: check them)")
    parser.add_argument(
        "--only", default=None, metavar="SOURCE,...", help=f"only these: {', '.join(SOURCES)}"
    )
    parser.add_argument("--skip-slow", action="store_true", help="leave out the benchmarks that take minutes")
    parser.add_argument(
        "--recallwise",
        default=str(Path(sys.executable).with_name("recallwise")),
        help="the recallwise command (default: the one beside this Python)",
    )
    parser.add_argument(
        "--from",
        dest="saved",
        action="append",
        default=[],
        metavar="SOURCE=FILE",
        help="use FILE, the JSON SOURCE's command printed (a benchmark run once), instead of running it",
    )
    args = parser.parse_args(argv)
    saved: dict[str, Any] = {}
    for item in args.saved:
        name, sep, path = item.partition("=")
        if not sep or name not in SOURCES:
            parser.error(f"--from {item!r}: expected SOURCE=FILE, SOURCE one of {', '.join(SOURCES)}")
        saved[name] = json.loads(Path(path).read_text(encoding="utf-8"))
    chosen = list(SOURCES) if args.only is None else [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(SOURCES))
    if unknown:
        parser.error(f"unknown source(s) {unknown}; known: {', '.join(SOURCES)}")
    if args.skip_slow:
        chosen = [s for s in chosen if not SOURCES[s].slow]
    try:
        problems = check(chosen, [args.recallwise], args.write, saved=saved)
    except RuntimeError as exc:
        sys.stderr.write(f"docs_figures: {exc}\n")
        return 1
    for problem in problems:
        print(problem)
    figures = sum(1 for f in FIGURES.values() if f.source in chosen)
    print(f"docs figures: {figures} from {len(chosen)} source(s), {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
