"""What the release artifacts hold, against the tree they were built from (run by .ci/artifacts.sh).

    python check_artifacts.py TREE DIST AGAIN

TREE is the clean tree (what git tracks) the artifacts were built from; DIST holds the wheel and sdist
``python -m build`` made (the wheel built from the sdist) and the npm tarball; AGAIN holds a wheel and
an sdist built a second time from TREE with the same ``SOURCE_DATE_EPOCH``, and the npm tarball packed
a second time. Checks:

- the version: the wheel's and the sdist's metadata and the npm package carry TREE's
  ``src/recallwise/_version.py``;
- the wheel holds every file of ``src/recallwise`` (the package data the code reads at run time: the
  heads and their datasheet, the embedder's vocabulary, the inspector's static files, ...) and nothing
  else: no evaluation data (``data/decisions``, LoCoMo, PrefEval) and no tests;
- the sdist holds exactly TREE (the test suite reads ``tests/``, ``data/``, ``docs/``, ``examples/``
  and ``clients/typescript/openapi.json``), plus its PKG-INFO;
- the npm tarball holds every file its package.json's ``exports`` name;
- reproducible: the second wheel, sdist and npm tarball are byte-identical to the first.

Prints one line a check; exits 1 when any fails.
"""

from __future__ import annotations

import email.parser
import hashlib
import json
import re
import sys
import tarfile
import zipfile
from pathlib import Path

from packaging.version import Version

# what the release-artifacts check greps the wheel's listing for: evaluation data
EVALUATION_DATA = re.compile(r"(decisions/|locomo|prefeval).*\.(jsonl|json|csv|zip)$", re.IGNORECASE)
IGNORED = re.compile(r"(^|/)(__pycache__/|.*\.pyc$)")

problems: list[str] = []
passed: list[str] = []


def check(ok: bool, what: str, detail: str = "") -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {what}{': ' + detail if detail and not ok else ''}")
    (passed if ok else problems).append(what)


def only(directory: Path, pattern: str) -> Path:
    found = sorted(directory.glob(pattern))
    if len(found) != 1:
        print(f"FAIL expected one {pattern} in {directory}, found {[p.name for p in found]}")
        raise SystemExit(1)
    return found[0]


def tree_files(root: Path, under: str = "") -> set[str]:
    base = root / under
    return {
        p.relative_to(base).as_posix()
        for p in base.rglob("*")
        if p.is_file() and not IGNORED.search(p.relative_to(base).as_posix())
    }


def shown(names: set[str], limit: int = 8) -> str:
    listed = sorted(names)
    return ", ".join(listed[:limit]) + (f" (+{len(listed) - limit} more)" if len(listed) > limit else "")


def check_wheel(wheel: Path, tree: Path, version: str) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        dist_info = f"recallwise-{version}.dist-info"
        metadata = email.parser.Parser().parsestr(archive.read(f"{dist_info}/METADATA").decode())
        entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
    check(metadata["Version"] == version, "wheel: metadata version", f"{metadata['Version']} != {version}")
    check(
        re.search(r"^recallwise = recallwise\.cli:main$", entry_points, re.MULTILINE) is not None,
        "wheel: the `recallwise` console script",
        entry_points,
    )
    licences = {n.rsplit("/", 1)[-1] for n in names if n.startswith(f"{dist_info}/licenses/")}
    check({"LICENSE", "NOTICE"} <= licences, "wheel: LICENSE and NOTICE", f"has {sorted(licences)}")
    package = {n.removeprefix("recallwise/") for n in names if n.startswith("recallwise/")}
    source = tree_files(tree, "src/recallwise")
    check(not source - package, "wheel: every file of src/recallwise", f"missing {shown(source - package)}")
    check(not package - source, "wheel: nothing but src/recallwise", f"extra {shown(package - source)}")
    outside = {n for n in names if not n.startswith(("recallwise/", f"{dist_info}/"))}
    check(not outside, "wheel: no files outside the package", shown(outside))
    evaluation = {n for n in names if EVALUATION_DATA.search(n)}
    check(not evaluation, "wheel: no evaluation data", shown(evaluation))
    data_files = [n for n in names if n.startswith("recallwise/") and not n.endswith(".py")]
    size = wheel.stat().st_size
    print(f"     wheel: {len(names)} files, {len(data_files)} of them package data, {size:,} bytes")


def check_sdist(sdist: Path, tree: Path, version: str) -> None:
    top = f"recallwise-{version}/"
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.isfile()]
        names = {m.name.removeprefix(top) for m in members if m.name.startswith(top)}
        pkg_info = archive.extractfile(f"{top}PKG-INFO")
        metadata = email.parser.Parser().parsestr(pkg_info.read().decode() if pkg_info else "")
    check(len(names) == len(members), "sdist: one top directory", f"expected everything under {top}")
    check(metadata["Version"] == version, "sdist: metadata version", f"{metadata['Version']} != {version}")
    source = tree_files(tree)
    missing = shown(source - names)
    check(not source - names, "sdist: the whole tree (tests and their data)", f"missing {missing}")
    extra = names - source - {"PKG-INFO"}
    check(not extra, "sdist: nothing but the tree", f"extra {shown(extra)}")
    print(f"     sdist: {len(names)} files, {sdist.stat().st_size:,} bytes")


def check_npm(tarball: Path, version: str) -> None:
    with tarfile.open(tarball) as archive:
        names = {m.name.removeprefix("package/") for m in archive.getmembers() if m.isfile()}
        manifest_file = archive.extractfile("package/package.json")
        manifest = json.loads(manifest_file.read() if manifest_file else b"{}")
    check(
        Version(manifest["version"]) == Version(version),
        "npm: package.json's version is the Python package's",
        f"{manifest['version']} != {version}",
    )
    targets: set[str] = set()

    def collect(entry: object) -> None:
        if isinstance(entry, str):
            targets.add(entry.removeprefix("./"))
        elif isinstance(entry, dict):
            for value in entry.values():
                collect(value)

    collect(manifest.get("exports", {}))
    targets |= {manifest["main"].removeprefix("./"), manifest["types"].removeprefix("./")}
    check(not targets - names, "npm: every file package.json exports", f"missing {shown(targets - names)}")
    print(f"     npm: {len(names)} files, {tarball.stat().st_size:,} bytes")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_reproducible(first: Path, second: Path, what: str) -> None:
    a, b = digest(first), digest(second)
    check(a == b, f"reproducible: {what} built twice is byte-identical", f"sha256 {a[:16]} != {b[:16]}")
    if a == b:
        print(f"     {first.name}: sha256 {a}")


def main() -> int:
    tree, dist, again = (Path(arg) for arg in sys.argv[1:4])
    match = re.search(r'^__version__ = "([^"]+)"$', (tree / "src/recallwise/_version.py").read_text(), re.M)
    if match is None:
        print('FAIL src/recallwise/_version.py holds no `__version__ = "..."` line')
        return 1
    version = match.group(1)
    wheel, sdist = only(dist, "recallwise-*.whl"), only(dist, "recallwise-*.tar.gz")
    check_wheel(wheel, tree, version)
    check_sdist(sdist, tree, version)
    check_npm(only(dist, "recallwise-*.tgz"), version)
    twice = "the wheel (once from the sdist, once from the tree)"
    check_reproducible(wheel, only(again, "recallwise-*.whl"), twice)
    check_reproducible(sdist, only(again, "recallwise-*.tar.gz"), "the sdist")
    check_reproducible(only(dist, "recallwise-*.tgz"), only(again, "recallwise-*.tgz"), "the npm tarball")
    if problems:
        print(f"failing: {', '.join(problems)}")
    print(f"artifacts: {len(passed)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
