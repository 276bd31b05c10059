"""The documentation: the README is short and its links land, and the site builds strictly."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(((?!https?:)[^)#\s]+)(?:#([^)\s]+))?\)")


def slug(heading: str) -> str:
    """The anchor mkdocs' toc extension (and a forge) gives a heading."""
    text = re.sub(r"[`*]", "", heading).strip().lower()
    return re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", text))


def anchors(path: Path) -> set[str]:
    return {slug(line.lstrip("#")) for line in path.read_text().splitlines() if line.startswith("#")}


def test_the_readme_is_short_and_keeps_the_two_setup_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    setup = readme[readme.index("## Set up") : readme.index("## Try it")]
    block = re.search(r"```bash\n(.*?)\n```", setup, re.S)
    assert block is not None and block.group(1).splitlines() == ['pip install -e ".[dev]"', "pytest"]


def test_every_relative_link_in_the_readme_lands() -> None:
    readme = ROOT / "README.md"
    links = LINK.findall(readme.read_text())
    assert len(links) >= 10
    for target, anchor in links:
        path = ROOT / target
        assert path.exists(), f"README links to {target}, which does not exist"
        if anchor:
            assert anchor in anchors(path), f"README links to {target}#{anchor}: no such heading"


def test_no_page_refers_to_issue_numbers() -> None:
    roots = [ROOT / name for name in ("README.md", "BENCHMARKS.md", "RELIABILITY.md")]
    pages = [*roots, *(ROOT / "docs").glob("*.md")]
    for page in pages:
        assert not re.search(r"\bissues? \d+", page.read_text(), re.I), page.name


def test_the_site_builds_with_no_broken_link_or_anchor(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    assert mkdocs is not None
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    benchmarks = (tmp_path / "site" / "benchmarks" / "index.html").read_text()
    assert "recallwise bench serve" in benchmarks  # the root file is included, not a copy
