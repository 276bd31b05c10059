"""The judge's keep rule on a new user's memory, as a new user meets it: 15 facts written through
the store, default options, a fresh session per request.

A record that bears on the request from another life domain stays in (the issue's three cases: the
kids on a family meal plan, a savings cap on a purchase, the home city on "nearby"), and a general
request that the gate opens on keeps little or nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from recallwise import RecallPolicy, default_decider, open_store
from recallwise.records import MemoryRecord

ACTOR = "new_user"
#: a new user's first facts (written for this test), in the store's two default namespaces
FACTS = {
    "veg": "The user is vegetarian.",
    "peanut": "The user is allergic to peanuts.",
    "kids": "The user has two kids, Maya who is 7 and Leo who is 4.",
    "home": "The user lives in Portland, Oregon.",
    "savings": "The user is saving for a house and keeps discretionary spending under $200 a month.",
    "seat": "The user always books an aisle seat on flights.",
    "coffee": "The user drinks decaf oat flat whites.",
    "running": "The user runs three times a week and is training for a half marathon.",
    "code": "The user writes Python and Go.",
    "sister": "The user's sister Anna lives in Berlin.",
    "dog": "The user has a dog named Biscuit.",
    "courses": "The user prefers free, self-paced online courses to live classes.",
    "books": "The user loves science fiction novels.",
    "async": "The user works remotely and prefers async communication to meetings.",
    "partner": "The user's partner Sam cannot eat gluten.",
}
PREFERENCES = {"veg", "coffee", "seat", "courses", "books", "async", "running"}


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> RecallPolicy:
    path: Path = tmp_path_factory.mktemp("keep") / "memory.db"
    store = open_store(f"sqlite:///{path}")
    store.add_records(
        [
            MemoryRecord(ACTOR, f"/{'preferences' if key in PREFERENCES else 'facts'}/{ACTOR}", text, id=key)
            for key, text in FACTS.items()
        ]
    )
    return RecallPolicy(store, decider=default_decider())


def _kept(policy: RecallPolicy, message: str) -> list[str]:
    # a fresh session per request: none is read as a follow-up of the test before it
    recall = policy.recall(message, actor_id=ACTOR, session_id=f"s{abs(hash(message))}")
    return [k.record.id for k in recall.records]


@pytest.mark.parametrize(
    ("message", "decisive"),
    [
        ("Plan meals for next week for the family", "kids"),
        ("Should I buy the $1,200 espresso machine?", "savings"),
        ("Find a restaurant nearby for tonight", "home"),
    ],
)
def test_a_record_from_another_domain_that_bears_on_the_request_stays_in(
    policy: RecallPolicy, message: str, decisive: str
) -> None:
    kept = _kept(policy, message)
    assert decisive in kept, kept
    # The standing-constraint term only lifts the records it bears on: the meal plan keeps the
    # four that bear on it (the diet, the allergy, the partner's gluten, the kids) and the three
    # the judge kept without the term (running, async work, the aisle seat), stock ten.
    assert len(kept) <= 7, kept


def test_the_allergy_stays_in_for_a_restaurant(policy: RecallPolicy) -> None:
    kept = _kept(policy, "Book us a table at a Thai restaurant on Friday")
    assert "peanut" in kept, kept


@pytest.mark.parametrize(
    "message",
    [
        "What's the difference between a list and a tuple in Python?",
        "How do I install Go on Ubuntu?",
        "What is the tallest mountain in Africa?",
        "Write a limerick about cats",
    ],
)
def test_a_general_request_keeps_nothing(policy: RecallPolicy, message: str) -> None:
    assert _kept(policy, message) == []


def test_the_shipped_judge_reads_the_turns_need() -> None:
    """The same records for the same message: a turn the gate barely opened (p 0.02) gets lower
    judge p's than one it opened with conviction (0.9); a turn opened otherwise (no need given: a
    follow-up) reads the top of the need's range."""
    from recallwise.deciders import DecisionHints, EmbeddedDecider
    from recallwise.policy.wording import judge_question

    decider = EmbeddedDecider()
    head = decider.heads["judge"]
    assert head is not None and head.reads_need
    message = "What should I have for dinner?"
    questions = {key: judge_question(FACTS[key]) for key in ("veg", "peanut", "seat")}

    def judged(need: float | None) -> list[float]:
        answers = decider.decide(message, questions, DecisionHints(need=need)).answers
        return [float(answers[k]) for k in questions]  # type: ignore[arg-type]

    low, high, unknown = judged(0.02), judged(0.9), judged(None)
    assert all(a < b for a, b in zip(low, high, strict=True))
    assert all(b <= c for b, c in zip(high, unknown, strict=True))
    assert decider.decide(message, questions, DecisionHints(need=0.9)).usage.get("judge_need") == 3


def test_booking_a_table_is_about_food_not_flights(policy: RecallPolicy) -> None:
    # "booking" was one of travel's prototypes: the table booking kept the aisle seat and dropped the diet
    kept = _kept(policy, "Can you help me in booking a table for four people at a restaurant?")
    assert "veg" in kept and "peanut" in kept, kept
