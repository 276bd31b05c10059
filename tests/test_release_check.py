"""The release workflow's first step (.ci/release_check.py) refuses a tag its files disagree with."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the three files the check reads, at version 1.2.3, ready to release."""
    (tmp_path / "src" / "recallwise").mkdir(parents=True)
    (tmp_path / "clients" / "typescript").mkdir(parents=True)
    (tmp_path / "src" / "recallwise" / "_version.py").write_text('__version__ = "1.2.3"\n')
    manifest = json.loads((ROOT / "clients" / "typescript" / "package.json").read_text())
    manifest["version"] = "1.2.3"
    (tmp_path / "clients" / "typescript" / "package.json").write_text(json.dumps(manifest))
    (tmp_path / "CHANGELOG.md").write_text(
        "# Changelog\n\n## [Unreleased]\n\n## [1.2.3] - 2026-12-07\n\n### Added\n\n- A thing.\n\n"
        "## [1.2.2] - 2026-11-01\n\n- Older.\n\n"
        "[Unreleased]: https://example.org/compare/v1.2.3...HEAD\n[1.2.3]: https://example.org/v1.2.3\n"
    )
    return tmp_path


@pytest.fixture
def check(tree: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("release_check", ROOT / ".ci" / "release_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "ROOT", tree)
    return module


def test_a_ready_tree_passes_and_its_notes_are_the_version_s_section(check, capsys) -> None:
    assert check.main(["v1.2.3"]) == 0
    assert check.main(["v1.2.3", "--notes"]) == 0
    assert capsys.readouterr().out == "### Added\n\n- A thing.\n"


def test_a_tag_that_is_not_the_written_version_is_refused(check, capsys) -> None:
    assert check.main(["v1.2.4"]) == 1
    assert "src/recallwise/_version.py says 1.2.3" in capsys.readouterr().err


def test_a_typescript_client_of_another_version_is_refused(check, tree, capsys) -> None:
    manifest = tree / "clients" / "typescript" / "package.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "version": "1.2.2"}))
    assert check.main(["v1.2.3"]) == 1
    assert "package.json says 1.2.2" in capsys.readouterr().err


def test_an_undated_or_missing_changelog_section_is_refused(check, tree, capsys) -> None:
    changelog = tree / "CHANGELOG.md"
    changelog.write_text(changelog.read_text().replace("## [1.2.3] - 2026-12-07", "## [1.2.3] - unreleased"))
    assert check.main(["v1.2.3"]) == 1
    assert "has no date" in capsys.readouterr().err
    changelog.write_text(changelog.read_text().replace("## [1.2.3] - unreleased", "## 1.2.3"))
    assert check.main(["v1.2.3"]) == 1
    assert "no `## [1.2.3] - YYYY-MM-DD` section" in capsys.readouterr().err


def test_a_pre_release_matches_npm_s_spelling(check, tree) -> None:
    (tree / "src" / "recallwise" / "_version.py").write_text('__version__ = "1.2.3rc1"\n')
    manifest = tree / "clients" / "typescript" / "package.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "version": "1.2.3-rc.1"}))
    changelog = tree / "CHANGELOG.md"
    changelog.write_text(changelog.read_text().replace("[1.2.3]", "[1.2.3rc1]"))
    assert check.problems("v1.2.3rc1") == []


def test_the_real_tree_refuses_a_tag_it_was_not_written_for() -> None:
    spec = importlib.util.spec_from_file_location("release_check_real", ROOT / ".ci" / "release_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.problems("v0.0.0-not-a-release")[0].startswith("the tag is v0.0.0-not-a-release")
