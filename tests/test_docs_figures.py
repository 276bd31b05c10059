"""The figures README.md and docs/ quote from a command agree with the command
(``scripts/docs_figures.py``); and the check can fail."""

from __future__ import annotations

import importlib.util
import json
import shutil
import stat
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXE = str(Path(sys.executable).with_name("recallwise"))


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_figures", ROOT / "scripts" / "docs_figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_figures"] = module
    spec.loader.exec_module(module)
    return module


figures = _script()


def test_every_marker_names_a_figure_and_every_figure_is_on_a_page() -> None:
    written = figures.page_figures()
    assert set(written) == set(figures.FIGURES)
    assert {f.source for f in figures.FIGURES.values()} == set(figures.SOURCES)
    # the figures the issue found drifted are generated now
    readme = (ROOT / "README.md").read_text()
    assert "<!--fig:demo.gated_injected-->" in readme
    how = (ROOT / "docs" / "how-it-decides.md").read_text()
    assert "<!--fig:decisions.turns-->" in how and "<!--fig:gate.threshold-->" in how
    assert "<!--fig:gate.threshold-->" in (ROOT / "docs" / "tuning.md").read_text()


def _fake_root(tmp_path: Path, shown: str) -> Path:
    (tmp_path / "docs").mkdir(parents=True)
    (tmp_path / "README.md").write_text(f"| gated | <!--fig:demo.gated_injected-->{shown}<!--/fig--> |\n")
    return tmp_path


def _fake_recallwise(tmp_path: Path, injected: int) -> str:
    document = {
        "seeded": 21,
        "arms": {a: {"retrievals": 3, "records_injected": injected} for a in ("stock", "gated")},
    }
    exe = tmp_path / "fake-recallwise"
    exe.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(document)}\nEOF\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(exe)


def test_a_drifted_figure_is_named_with_its_page_and_line_and_write_fixes_it(tmp_path: Path) -> None:
    root = _fake_root(tmp_path / "repo", "22")
    exe = _fake_recallwise(tmp_path, 15)
    only = {"demo.gated_injected": figures.FIGURES["demo.gated_injected"]}
    problems = [p for p in _checked(only, root, exe, write=False) if "written by no page" not in p]
    assert problems == ["README.md:1: demo.gated_injected is '22', the command prints '15'"]
    _checked(only, root, exe, write=True)
    assert "<!--fig:demo.gated_injected-->15<!--/fig-->" in (root / "README.md").read_text()
    assert [p for p in _checked(only, root, exe, write=False) if "written by no page" not in p] == []


def _checked(only: dict, root: Path, exe: str, *, write: bool) -> list[str]:
    saved = figures.FIGURES
    figures.FIGURES = only
    try:
        return figures.check(["demo"], [exe], write, root)
    finally:
        figures.FIGURES = saved


def test_a_marker_naming_no_figure_and_a_failing_command_are_errors(tmp_path: Path) -> None:
    root = _fake_root(tmp_path / "repo", "15")
    (root / "docs" / "x.md").write_text("p >= <!--fig:gate.nonsense-->0.5<!--/fig-->\n")
    problems = figures.check([], [EXE], False, root)
    assert "docs/x.md:1: marker names no figure 'gate.nonsense' (scripts/docs_figures.py FIGURES)" in problems
    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\necho 'recallwise: error: broken' >&2\nexit 2\n")
    failing.chmod(0o755)
    with pytest.raises(RuntimeError, match=r"source 'demo' .* exited 2: recallwise: error: broken"):
        figures.check(["demo"], [str(failing)], False, root)


@pytest.mark.slow
def test_the_pages_fast_figures_are_what_the_commands_print(capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which(EXE) is None:
        pytest.skip("no recallwise command beside this Python")
    fast = [name for name, source in figures.SOURCES.items() if not source.slow]
    problems = figures.check(fast, [EXE], False)
    assert problems == [], "run `python scripts/docs_figures.py --write` and commit the pages:\n" + "\n".join(
        problems
    )


@pytest.mark.slow
def test_the_pages_benchmark_figures_are_what_the_benchmarks_print() -> None:
    slow = [name for name, source in figures.SOURCES.items() if source.slow]
    problems = figures.check(slow, [EXE], False)
    assert problems == [], "run `python scripts/docs_figures.py --write` and commit the pages:\n" + "\n".join(
        problems
    )
