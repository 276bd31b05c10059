"""What every loader of scripts/build_decision_data.py shares: the pinned snapshots, the row
shape and the split draw of a group."""

from __future__ import annotations

import hashlib
import json
import random
import re
import subprocess
import unicodedata
from pathlib import Path
from typing import Any

# row-level split of the sources that are not held out whole
ROW_FRACTIONS = (("fit", 0.60), ("calib", 0.15), ("dev", 0.10), ("heldout", 0.15))

SNAPSHOTS = {
    "clinc/oos-eval": "828f8093932c8fe6ca7936c3d2e52903b1c523de",
    "yizhongw/self-instruct": "0b26ccaa415992100fa32df62d41b994cf928e23",
    "openai/human-eval": "6d43fb980f9fee3c892a914eda09951f772ad10d",
    "openai/grade-school-math": "3101c7d5072418e28b9008a6636bde82a006892c",
    "lm-sys/FastChat": "0e6d3e4beaab66f4d3f93db72541a4abab8af28d",
    "google-research-datasets/Synthetic-Persona-Chat": "1f367a0f05d388ca96ebbbc9e5752ab19ac76510",
    "google-research/url-nlp": "452a21ad3dae5668c06ceeac21ff073e1e40f9be",
    "google-deepmind/xquad": "7d30520c717524000f0d9d2f9c10a069acd9d285",
    "mainlp/xsid": "761d926c3f2e9f6bea13192d2f39cec1d04d9777",
    # second round (code with code, long pastes, exercises, ko/pl/pt, outside positives)
    "facebookresearch/cruxeval": "190faf16d175b5847b0af05d937872b1fb395942",
    "jkoppel/QuixBugs": "4257f44b0ff1181dedaedee6a447e133219fcebf",
    "Yogi-20MIS7040/DL": "d662033c07e0645e9334676c2e264beff68e5a8f",
    "sahil280114/codealpaca": "2f78ddc5c682ed6738ad092bbbfa59ba915afcb0",
    "facebookresearch/LASER": "74bc6ae7ffb7cba670fe0f428d0ede9f666fb821",
    "piresramon/gpt-4-enem": "cbba7fdd735845bb45ac80d5090baae1b949d782",
    "pswietojanski/slurp": "8eb16545762be97ace75334109d73824217311f1",
    "songys/Chatbot_data": "4cf20d13fc46f5037fd1c531cd566e2dd9f72974",
    # third round (questions about the user's own life)
    "zhongwanjun/MemoryBank-SiliconFriend": "cf61c4196e4cfdb0f2b7a0316249fa40312dc3a9",
    # fourth round (closing turns of task-oriented dialogues)
    "google-research-datasets/dstc8-schema-guided-dialogue": "e852981ae34990f4358979625854259302feaa78",
}

Row = dict[str, Any]


class Snapshots:
    """Read files of the pinned commits from the mirrored git directories."""

    def __init__(self, mirror: Path) -> None:
        self.mirror = mirror

    def git_dir(self, repo: str) -> Path:
        git_dir = self.mirror / repo.replace("/", "+") / "repo"
        if not git_dir.is_dir():
            raise SystemExit(f"error: no snapshot of {repo} at {git_dir} (fetch github:{repo} first)")
        return git_dir

    def read(self, repo: str, path: str) -> bytes:
        commit = SNAPSHOTS[repo]
        result = subprocess.run(
            ["git", f"--git-dir={self.git_dir(repo)}", "show", f"{commit}:{path}"],
            capture_output=True,
            check=False,
        )
        if result.returncode != 0:
            raise SystemExit(f"error: {repo}@{commit[:10]}:{path}: {result.stderr.decode().strip()}")
        return result.stdout

    def listing(self, repo: str, folder: str) -> list[str]:
        """Paths of the files directly in ``folder`` at the pinned commit, sorted."""
        result = subprocess.run(
            ["git", f"--git-dir={self.git_dir(repo)}", "ls-tree", "--name-only", SNAPSHOTS[repo], folder],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise SystemExit(f"error: {repo}:{folder}: {result.stderr.strip()}")
        return sorted(result.stdout.split())

    def text(self, repo: str, path: str) -> str:
        return self.read(repo, path).decode("utf-8")

    def jsonl(self, repo: str, path: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text(repo, path).splitlines() if line.strip()]


def row(text: str, label: bool, source: str, lang: str, kind: str, group: str, **extra: Any) -> Row:
    return {
        "text": text.strip(),
        "label": label,
        "source": source,
        "lang": lang,
        "kind": kind,
        "_group": f"{source}:{group}",
        **extra,
    }


def stable_unit(key: str) -> float:
    """A number in [0, 1) fixed by ``key``: the split draw of a group."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def row_split(group: str) -> str:
    draw = stable_unit(group)
    edge = 0.0
    for split, fraction in ROW_FRACTIONS:
        edge += fraction
        if draw < edge:
            return split
    return ROW_FRACTIONS[-1][0]


#: sources whose terms do not allow redistributing them (non-commercial, or no licence stated):
#: written to dev/ and heldout/ on the builder's machine and kept out of the repository
#: (data/decisions/.gitignore), so none of their text may reach a committed file either
EVAL_ONLY_SOURCES = frozenset(
    {"codealpaca", "t0-xsum", "t0-yelp-review", "t0-dream", "t0-imdb", "t0-multi-news", "t0-sciq"}
)


def eval_only_split(group: str) -> str:
    """For sources whose licence allows no fitting (non-commercial, or terms we could not confirm):
    dev or heldout only, never fit or calib."""
    return "dev" if stable_unit("eval-only:" + group) < 0.4 else "heldout"


def typo(text: str, rng: random.Random) -> str:
    """``text`` with one longer word's letters swapped or one dropped (a register of real typing)."""
    words = text.split(" ")
    candidates = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha()]
    if not candidates:
        return text
    i = rng.choice(candidates)
    w = words[i]
    j = rng.randrange(1, len(w) - 2)
    swapped, dropped = w[:j] + w[j + 1] + w[j] + w[j + 2 :], w[:j] + w[j + 1 :]
    words[i] = swapped if rng.random() < 0.5 else dropped
    return " ".join(words)


def normalise(text: str) -> str:
    """The exact-duplicate key of a text (case, width, digits and punctuation folded)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"\d+", "0", text)
    return re.sub(r"[\W_]+", " ", text).strip()
