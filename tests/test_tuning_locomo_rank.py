"""The LoCoMo rank fit: refuses the test split, and picks the weights that put the relevant
record first on questions built so that only the session term can."""

import numpy as np
import pytest

from recallgate.errors import UsageError
from recallgate.tuning.locomo_rank import JudgedQuestion, fit, judge_split, main


def test_the_test_split_is_refused(tmp_path, capsys):
    with pytest.raises(UsageError, match="dev split only"):
        judge_split(tmp_path, "test")
    assert main(["--locomo", str(tmp_path), "--split", "test"]) == 2
    assert "dev split only" in capsys.readouterr().err


def _question(conv: str, shift: float) -> JudgedQuestion:
    # The best record (s1) is irrelevant; the relevant one shares its session but judges lower
    # than five records of another session, so only session support brings it into the top 5.
    base = np.array([10.0, 5.0, 6.0, 6.0, 6.0, 6.0, 6.0, -20.0]) + shift
    sessions = ["s1", "s1", "s2", "s2", "s2", "s2", "s2", "s3"]
    relevant = np.array([False, True, False, False, False, False, False, False])
    return JudgedQuestion(conv, 1, base, np.tile([1.0, 0.0], (8, 1)), sessions, relevant, 1)


def test_fit_chooses_session_support_when_it_is_what_finds_the_evidence():
    questions = [_question(c, s) for c in ("a", "b", "c") for s in (0.0, 1.0)]
    out = fit(questions, mean_records=5.0)
    assert out["recall_at_5"]["judge_alone"] == 0.0
    assert out["session_weight"] > 0 and out["recall_at_5"]["fitted"] == 1.0
    assert out["recall_at_5"]["held_out_by_conversation"] == 1.0
    assert out["pool_centre_weight"] == 0.0  # identical vectors: centrality is zero, ties go to the smaller
    assert out["budget"]["mean_records"] <= 5.0
