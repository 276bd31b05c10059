"""``recallwise tune keep``: refuses the test split; picks the weights that put the relevant record
in the top 5 on questions built so that only the session term can; replays the keep step as the
policy runs it; and runs end to end on a small file in LoCoMo's format."""

import json

import numpy as np
import pytest

from recallwise.errors import UsageError
from recallwise.policy.budget import AdaptiveBudget, keep_count
from recallwise.tuning.locomo_rank import (
    JudgedQuestion,
    KeepThresholds,
    _Ranked,
    fit,
    fit_depths,
    judge_split,
)


def test_the_test_split_is_refused(tmp_path, capsys):
    from recallwise.cli import main

    with pytest.raises(UsageError, match="dev split only"):
        judge_split(tmp_path, "test")
    assert main(["tune", "keep", "--locomo", str(tmp_path), "--split", "test"]) == 2
    assert "dev only" in capsys.readouterr().err
    assert main(["tune", "keep", "--locomo", str(tmp_path), "--depths", "ten"]) == 2
    assert "--depths" in capsys.readouterr().err


def _question(conv: str, shift: float) -> JudgedQuestion:
    # The best record (s1) is irrelevant; the relevant one shares its session but judges lower
    # than five records of another session, so only session support brings it into the top 5.
    base = np.array([10.0, 5.0, 6.0, 6.0, 6.0, 6.0, 6.0, -20.0]) + shift
    sessions = ["s1", "s1", "s2", "s2", "s2", "s2", "s2", "s3"]
    relevant = np.array([False, True, False, False, False, False, False, False])
    return JudgedQuestion(conv, 1, base, np.tile([1.0, 0.0], (8, 1)), sessions, relevant, 1)


def test_fit_chooses_session_support_when_it_is_what_finds_the_evidence():
    questions = [_question(c, s) for c in ("a", "b", "c") for s in (0.0, 1.0)]
    out = fit(questions, cap=5)
    assert out["recall_at_cap"]["judge_alone"] == 0.0
    assert out["session"] > 0 and out["recall_at_cap"]["rescored"] == 1.0
    assert out["recall_at_cap"]["rescored_held_out_by_conversation"] == 1.0
    assert out["centre_cosine"] == 0.0  # identical vectors: centrality is zero, ties go to the smaller
    assert out["with_budget"]["recall"] == 1.0
    # the budget keeps the fewest records for that recall: here the top 2 (the best, then the
    # relevant one, lifted to the top of its session) are enough
    assert out["with_budget"]["records_per_question"] == 2.0
    assert out["with_budget"]["max_records_per_question"] <= 5


def test_the_replayed_keep_step_is_the_policys():
    rng = np.random.default_rng(3)
    questions, scores = [], []
    for _ in range(40):
        n = int(rng.integers(1, 12))
        s = rng.normal(0.0, 6.0, n)
        questions.append(
            JudgedQuestion("a", 1, s, np.zeros((n, 2)), [None] * n, rng.random(n) < 0.3, max(1, n // 3))
        )
        scores.append(s)
    thresholds = KeepThresholds(absolute=0.5, relative=0.5)
    ranked = _Ranked.of(questions, scores, thresholds)
    budget = AdaptiveBudget(delta=4.0, min_records=2, max_records=4)
    kept = ranked.kept(budget, cap=5)
    recall = ranked.recall(kept)
    for row, (q, s, k) in enumerate(zip(questions, scores, kept, strict=True)):
        p = 1 / (1 + np.exp(-s))
        passing = int(((p >= 0.5) & (p >= p.max() - 0.5)).sum())
        assert k == min(keep_count(s, budget), passing)  # as stages.apply_keep_rule keeps
        order = np.argsort(-s, kind="stable")[:k]
        assert recall[row] == pytest.approx(q.relevant[order].sum() / q.n_relevant)


def test_the_best_depth_wins_and_the_smaller_on_a_tie():
    shallow = [_question("a", 0.0)]
    shallow[0].relevant = np.array([False] * 7 + [True])  # judged p ~ 0: never kept
    deep = [_question("a", 0.0)]
    out = fit_depths({10: shallow, 30: deep}, cap=5)
    assert out["gated_top_k"] == 30
    assert fit_depths({10: deep, 30: deep}, cap=5)["gated_top_k"] == 10


def test_tune_keep_end_to_end_on_a_small_file(tmp_path, capsys):
    from recallwise.cli import main
    from recallwise.datasets.locomo import SPLITS

    # the bench's tiny conversation: two sessions, two answerable questions per file
    from test_bench_locomo import _tiny

    for cid in SPLITS["dev"]:
        _tiny(tmp_path, cid)
    assert main(["tune", "keep", "--locomo", str(tmp_path), "--depths", "1,3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["split"] == "dev" and out["cap"] == 5 and set(out["by_depth"]) == {"1", "3"}
    chosen = out["chosen"]
    assert chosen["questions"] == 10 and chosen["turns_with_errors"] == 0
    assert out["gated_top_k"] in (1, 3)
    assert chosen["with_budget"]["max_records_per_question"] <= 5
    assert out["shipped"]["gated_top_k"] == 30
    assert main(["tune", "keep", "--locomo", str(tmp_path), "--depths", "3"]) == 0
    text = capsys.readouterr().out
    assert "chosen: gated_top_k 3" in text and "shipped: gated_top_k 30" in text
