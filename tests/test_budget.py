"""The adaptive keep budget: more records when the judge cannot separate them, fewer when one
stands out, always within [min_records, max_records]."""

import pytest

from recallwise.policy.budget import ADAPTIVE_BUDGET, AdaptiveBudget, keep_count


def test_one_dominant_record_keeps_the_minimum_and_a_flat_field_keeps_the_maximum():
    budget = AdaptiveBudget(delta=2.0, min_records=2, max_records=4)
    assert keep_count([10.0, 3.0, 2.0, 1.0, 0.0], budget) == 2
    assert keep_count([5.0, 4.9, 4.8, 4.7, 4.6, 4.5], budget) == 4
    assert keep_count([5.0, 4.0, 3.5, 2.0, 1.0], budget) == 3  # 5.0, 4.0, 3.5 within 2.0


def test_never_more_than_were_judged_and_none_of_nothing():
    budget = AdaptiveBudget(delta=1.0, min_records=3, max_records=5)
    assert keep_count([1.0], budget) == 1
    assert keep_count([], budget) == 0


def test_bad_budgets_are_refused():
    with pytest.raises(ValueError):
        AdaptiveBudget(delta=-1.0, min_records=1, max_records=2)
    with pytest.raises(ValueError):
        AdaptiveBudget(delta=1.0, min_records=4, max_records=2)


def test_the_shipped_budget_is_the_dev_fit_and_never_keeps_more_than_five():
    assert (ADAPTIVE_BUDGET.delta, ADAPTIVE_BUDGET.min_records, ADAPTIVE_BUDGET.max_records) == (12.0, 3, 5)
    assert keep_count([0.0] * 60) == 5
    assert ADAPTIVE_BUDGET.describe() == "within 12 log-odds of the best, 3-5 records"
