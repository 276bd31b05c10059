"""The committed outside decision data (data/decisions): what its held-out figures rest on.

BENCHMARKS' held-out figures count only if no text of ``heldout/`` (or ``dev/``) is also in what the
heads were fitted or calibrated on, and the repository may only hold text whose licence allows it.
These read the committed files as a user's clone has them.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from pathlib import Path

import pytest

from recallwise.tuning.labelled import read_labelled_turns

DATA = Path(__file__).resolve().parent.parent / "data" / "decisions"
SPLITS = ("fit", "calib", "dev", "heldout")

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="data/decisions is not in this checkout")


def _normalised(text: str) -> str:
    # the builder's exact-duplicate key (scripts/build_decision_data.py: normalise)
    text = re.sub(r"\d+", "0", unicodedata.normalize("NFKC", text).casefold())
    return re.sub(r"[\W_]+", " ", text).strip()


def _committed(split: str) -> list[Path]:
    ignored = {line for line in (DATA / ".gitignore").read_text().splitlines() if line and line[0] != "#"}
    return sorted(p for p in (DATA / split).glob("*.jsonl") if p.name not in ignored)


def test_no_gate_text_is_in_two_splits() -> None:
    splits_of: dict[str, set[str]] = defaultdict(set)
    for split in SPLITS:
        for path in _committed(split):
            if path.name.startswith("gate-"):
                for turn in read_labelled_turns(path):
                    splits_of[_normalised(turn.text or "")].add(split)
    shared = {text: sorted(s) for text, s in splits_of.items() if len(s) > 1}
    assert len(splits_of) > 20_000
    assert not shared, list(shared.items())[:5]


def test_judge_records_and_requests_stay_in_their_split() -> None:
    """A persona record is in one split's judge sets only, and a judge request is a gate turn of its
    own split (so the judge's held-out requests were never fitted on either)."""
    record_splits: dict[str, set[str]] = defaultdict(set)
    for split in SPLITS:
        gate_texts = {
            _normalised(t.text or "")
            for p in _committed(split)
            if p.name.startswith("gate-")
            for t in read_labelled_turns(p)
        }
        for path in _committed(split):
            if not path.name.startswith("judge-"):
                continue
            for turn in read_labelled_turns(path):
                assert len(turn.records) == 20, turn.where
                for record in turn.records:
                    record_splits[record.text or ""].add(split)
                if turn.label:  # a request that needs memory is one of the split's gate turns
                    assert _normalised(turn.text or "") in gate_texts, turn.where
    assert not {r: s for r, s in record_splits.items() if len(s) > 1}
