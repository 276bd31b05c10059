"""One release number: written once (src/recallwise/_version.py), and everything that shows it agrees.

The Python package's metadata takes it from there (hatch's version source); ``recallwise.__version__``,
``recallwise --version`` and ``GET /healthz`` read it; the TypeScript client's package.json (and its
lock file) must carry the same number, and CHANGELOG.md must have its section. A release bump that
misses one of them fails here (docs/releasing.md).
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from packaging.version import Version

import recallwise
from recallwise.cli import main

ROOT = Path(__file__).resolve().parents[1]
TYPESCRIPT = ROOT / "clients" / "typescript"


def test_the_version_is_written_once_and_hatch_reads_it_there() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    source = ROOT / project["tool"]["hatch"]["version"]["path"]
    written = re.findall(r'^__version__ = "([^"]+)"$', source.read_text(encoding="utf-8"), re.MULTILINE)
    assert written == [recallwise.__version__]
    assert str(Version(recallwise.__version__)) == recallwise.__version__, "not a normalised PEP 440 version"


def test_no_other_python_file_writes_a_version_literal() -> None:
    literal = re.compile(r'^__version__ = ["\']', re.MULTILINE)
    writers = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "src" / "recallwise").rglob("*.py")
        if literal.search(path.read_text(encoding="utf-8"))
    ]
    assert writers == ["src/recallwise/_version.py"]


def test_recallwise_version_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"recallwise {recallwise.__version__}\n"


def test_the_typescript_client_carries_the_same_version() -> None:
    manifest = json.loads((TYPESCRIPT / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((TYPESCRIPT / "package-lock.json").read_text(encoding="utf-8"))
    expected = Version(recallwise.__version__)
    found = {
        "package.json": manifest["version"],
        "package-lock.json": lock["version"],
        'package-lock.json packages[""]': lock["packages"][""]["version"],
    }
    wrong = {where: version for where, version in found.items() if Version(version) != expected}
    assert not wrong, (
        f"clients/typescript carries {wrong}, the Python package {expected}: run "
        f"`npm version --no-git-tag-version {expected}` in clients/typescript"
    )


def test_the_typescript_client_compiles_when_packed() -> None:
    """``npm pack`` (and ``npm publish``) compile first: a clean clone has no dist/ to pack."""
    scripts = json.loads((TYPESCRIPT / "package.json").read_text(encoding="utf-8"))["scripts"]
    assert scripts.get("prepack") == scripts["build"]


def test_the_changelog_has_the_version_s_section() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\]", changelog, re.MULTILINE)
    assert headings[:1] == ["Unreleased"], "Keep a Changelog: `## [Unreleased]` comes first"
    assert recallwise.__version__ in headings, f"CHANGELOG.md has no `## [{recallwise.__version__}]` section"
    links = dict(re.findall(r"^\[([^\]]+)\]: (\S+)$", changelog, re.MULTILINE))
    assert set(headings) <= set(links), f"sections without a link at the bottom: {set(headings) - set(links)}"
