"""Is this commit ready to be released as TAG? (the release workflow's first step; docs/releasing.md)

    python .ci/release_check.py vX.Y.Z            # exit 1, naming what is wrong, when it is not
    python .ci/release_check.py vX.Y.Z --notes    # then print the version's CHANGELOG section

Ready means: TAG is ``v`` + the release number written in src/recallwise/_version.py; the
TypeScript client's package.json carries the same number; CHANGELOG.md has the version's section,
``## [X.Y.Z] - YYYY-MM-DD``, dated (not ``unreleased``), with a link line at the bottom.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def written_version() -> str:
    text = (ROOT / "src" / "recallwise" / "_version.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if match is None:
        raise SystemExit('src/recallwise/_version.py holds no `__version__ = "..."` line')
    return match.group(1)


def changelog_section(version: str) -> tuple[str | None, str]:
    """The version's heading's date (None when it has none) and its section's text."""
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    heading = re.search(rf"^## \[{re.escape(version)}\](.*)$", changelog, re.MULTILINE)
    if heading is None:
        return None, ""
    date = re.fullmatch(r" - (\d{4}-\d{2}-\d{2})", heading.group(1))
    rest = changelog[heading.end() :]
    end = re.search(r"^## \[|^\[[^\]]+\]: ", rest, re.MULTILINE)
    return (date.group(1) if date else None), rest[: end.start() if end else len(rest)].strip() + "\n"


def problems(tag: str) -> list[str]:
    version = written_version()
    found = []
    if tag != f"v{version}":
        found.append(f"the tag is {tag}, and src/recallwise/_version.py says {version}: tag v{version}")
    manifest = json.loads((ROOT / "clients" / "typescript" / "package.json").read_text(encoding="utf-8"))
    if Version(manifest["version"]) != Version(version):
        npm = manifest["version"]
        found.append(f"clients/typescript/package.json says {npm}, the Python package {version}")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    date, section = changelog_section(version)
    if not section:
        found.append(f"CHANGELOG.md has no `## [{version}] - YYYY-MM-DD` section")
    elif date is None:
        found.append(f"CHANGELOG.md's `## [{version}]` has no date: write `## [{version}] - YYYY-MM-DD`")
    if not re.search(rf"^\[{re.escape(version)}\]: \S+$", changelog, re.MULTILINE):
        found.append(f"CHANGELOG.md has no `[{version}]: URL` link line")
    return found


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    wrong = problems(argv[0])
    for problem in wrong:
        print(f"not ready to release {argv[0]}: {problem}", file=sys.stderr)
    if wrong:
        return 1
    if "--notes" in argv[1:]:
        sys.stdout.write(changelog_section(written_version())[1])
    else:
        print(f"ready to release {argv[0]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
