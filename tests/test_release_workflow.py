"""The release workflow publishes only what it tested, by trusted publishing (docs/releasing.md).

CI lints the file itself (.ci/lint-workflows.sh: the workflow schema, zizmor, actionlint where it
installs); this reads what the lint cannot know: which jobs publish, from what, with which rights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def runs(job: dict[str, Any]) -> str:
    return "\n".join(str(step.get("run", "")) for step in job["steps"])


def uses(job: dict[str, Any]) -> list[str]:
    return [str(step["uses"]).split("@")[0] for step in job["steps"] if "uses" in step]


def test_a_version_tag_and_nothing_else_starts_it(workflow) -> None:
    trigger = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert trigger == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+*"]}}


def test_the_build_job_checks_the_tag_then_builds_and_tests_with_ci_s_own_script(workflow) -> None:
    build = workflow["jobs"]["build"]
    commands = runs(build)
    assert commands.index(".ci/release_check.py") < commands.index("bash .ci/artifacts.sh dist")
    assert build["permissions"] == {"contents": "read"}


def test_only_the_publishing_jobs_get_an_id_token_and_they_publish_the_tested_files(workflow) -> None:
    jobs = workflow["jobs"]
    assert workflow["permissions"] == {}
    with_token = {name for name, job in jobs.items() if job.get("permissions", {}).get("id-token") == "write"}
    assert with_token == {"pypi", "npm"}
    for name in with_token:
        assert jobs[name]["needs"] == "build"
        assert jobs[name]["environment"]["name"] == name
        assert "actions/checkout" not in uses(jobs[name]), f"{name} publishes what build tested"
        assert "actions/download-artifact" in uses(jobs[name])
    assert "pypa/gh-action-pypi-publish" in uses(jobs["pypi"])
    assert "npm publish" in runs(jobs["npm"]) and "--provenance" in runs(jobs["npm"])
    assert "npm install" not in runs(jobs["npm"]).replace("npm install --global npm@", "")


def test_every_action_but_pypa_s_publisher_is_pinned_by_commit(workflow) -> None:
    for name, job in workflow["jobs"].items():
        for step in job["steps"]:
            if "uses" not in step:
                continue
            action, ref = str(step["uses"]).split("@")
            if action == "pypa/gh-action-pypi-publish":
                assert ref == "release/v1"
            else:
                assert len(ref) == 40 and all(c in "0123456789abcdef" for c in ref), (name, step["uses"])
