"""The tuner's figures on hand-worked examples."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallwise.tuning import metrics as m

SCORES = [0.9, 0.8, 0.7, 0.4, 0.6, 0.3, 0.2, 0.1]
LABELS = [True, True, True, True, False, False, False, False]


def test_margin_is_lowest_positive_minus_highest_negative() -> None:
    assert m.margin(SCORES, LABELS) == pytest.approx(0.4 - 0.6)
    assert m.margin([0.9, 0.7, 0.2], [True, True, False]) == pytest.approx(0.5)


def test_best_threshold_and_accuracy() -> None:
    accuracy, threshold = m.best_threshold(SCORES, LABELS)
    assert accuracy == pytest.approx(7 / 8)
    assert m.accuracy_at(SCORES, LABELS, threshold) == pytest.approx(accuracy)
    # Separable data: the threshold sits in the widest gap between the classes.
    accuracy, threshold = m.best_threshold([0.9, 0.85, 0.3, 0.2], [True, True, False, False])
    assert accuracy == 1.0 and threshold == pytest.approx(0.575)


def test_auc_counts_ties_as_half() -> None:
    assert m.auc(SCORES, LABELS) == pytest.approx(15 / 16)
    assert m.auc([0.5, 0.5, 0.5], [True, False, False]) == 0.5
    assert math.isnan(m.auc([0.5], [True]))


def test_roc_curve_runs_from_origin_to_one_one() -> None:
    fpr, tpr = m.roc_curve(SCORES, LABELS)
    assert (fpr[0], tpr[0]) == (0.0, 0.0) and (fpr[-1], tpr[-1]) == (1.0, 1.0)
    area = sum((fpr[i + 1] - fpr[i]) * (tpr[i + 1] + tpr[i]) / 2 for i in range(len(fpr) - 1))
    assert area == pytest.approx(m.auc(SCORES, LABELS))


def test_calibration() -> None:
    # A constant 0.5 on balanced labels is perfectly calibrated but uninformative.
    assert m.expected_calibration_error([0.5] * 4, [True, False, True, False]) == 0.0
    assert m.brier([0.5] * 4, [True, False, True, False]) == pytest.approx(0.25)
    # Confidently wrong: every score 0.95 on a negative.
    assert m.expected_calibration_error([0.95, 0.95], [False, False]) == pytest.approx(0.95)
    assert m.brier([1.0, 0.0], [True, False]) == 0.0


def test_cv_accuracy_grades_thresholds_on_items_that_did_not_choose_them() -> None:
    # In-sample, a threshold can always isolate the lone high negative's neighbourhood;
    # out of fold the choice is graded honestly and cannot beat the in-sample figure.
    rng = np.random.default_rng(3)
    scores = rng.uniform(size=40)
    labels = list(rng.uniform(size=40) < 0.5)
    in_sample, _ = m.best_threshold(scores, labels)
    assert m.cv_accuracy(scores, labels) < in_sample
    separable = [0.9, 0.8, 0.85, 0.7, 0.75, 0.2, 0.1, 0.3, 0.15, 0.25]
    truth = [True] * 5 + [False] * 5
    assert m.cv_accuracy(separable, truth) == 1.0


def test_stratified_folds_cover_every_item_once_with_both_classes() -> None:
    labels = [True] * 7 + [False] * 5
    folds = m.stratified_folds(labels, 5)
    assert sorted(np.concatenate(folds).tolist()) == list(range(12))
    assert all({labels[i] for i in fold} == {True, False} for fold in folds)


def test_precision_at_k_counts_ties_at_chance() -> None:
    assert m.precision_at_k([0.9, 0.8, 0.1, 0.2], [True, True, False, False]) == 1.0
    assert m.precision_at_k([0.9, 0.1, 0.8, 0.2], [True, True, False, False]) == 0.5
    # A constant scorer earns the base rate, never a perfect mark.
    assert m.precision_at_k([0.5] * 4, [True, False, False, False]) == pytest.approx(0.25)


def test_relative_rule_keeps_records_near_each_querys_best() -> None:
    groups = [([0.9, 0.85, 0.3], [True, True, False]), ([0.25, 0.2, 0.05], [True, True, False])]
    # No absolute threshold separates 0.25 and 0.2 (relevant) from 0.3 (irrelevant) ...
    assert m.best_threshold([0.9, 0.85, 0.3, 0.25, 0.2, 0.05], [True, True, False, True, True, False])[0] < 1
    # ... but "within delta of the query's best" does.
    accuracy, delta = m.best_relative_delta(groups)
    assert accuracy == 1.0 and 0.05 < delta < 0.2
    assert m.relative_accuracy(groups, 0.0) == pytest.approx(4 / 6)


def test_joint_keep_rule_is_at_least_as_good_as_either_rule_alone() -> None:
    groups = [
        ([0.9, 0.85, 0.3, 0.02], [True, True, False, False]),
        ([0.4, 0.35, 0.05], [True, True, False]),
        ([0.1, 0.08], [False, False]),  # nothing relevant: only an absolute floor drops these
    ]
    scores = [s for g in groups for s in g[0]]
    labels = [y for g in groups for y in g[1]]
    joint, threshold, delta = m.best_keep_rule(groups)
    assert joint == 1.0
    assert joint >= m.best_relative_delta(groups)[0] and joint >= m.best_threshold(scores, labels)[0]
    kept = [s >= threshold and s >= max(g[0]) - delta for g in groups for s in g[0]]
    assert kept == labels


@given(
    st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=2, max_size=30).filter(
        lambda rows: len({y for _, y in rows}) == 2
    )
)
def test_best_threshold_reaches_its_reported_accuracy(rows: list[tuple[float, bool]]) -> None:
    scores, labels = [s for s, _ in rows], [y for _, y in rows]
    accuracy, threshold = m.best_threshold(scores, labels)
    assert m.accuracy_at(scores, labels, threshold) == pytest.approx(accuracy)
    assert accuracy >= max(np.mean(labels), 1 - np.mean(labels)) - 1e-9
    assert (m.margin(scores, labels) > 0) == (accuracy == 1.0 and m.auc(scores, labels) == 1.0)
