"""Name-like words: what the store-aware gate looks up in memory."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallwise.policy.names import name_terms


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("What does Gina's tattoo symbolize?", ["gina"]),
        ("When did Caroline go to the LGBTQ support group?", ["caroline", "lgbtq"]),
        ("Which part of Tokyo is Tokyo's Times Square?", ["tokyo", "times", "square"]),
        ("What is the capital of Peru?", ["peru"]),
        ("Who is the author of 1984?", []),
        ("Hello! I'm fine. Thanks, OK?", []),
        ("What did I say on Monday?", []),
        ("Gina likes tea", []),  # a sentence's first word is capitalised anyway
        # a line, a list item or a worksheet's slot starts with a capital too; function words
        # capitalised name nothing
        ("Complete the lyrics.\n\nThere's a place in your heart\nAnd I know that it is love", []),
        ("Put the words in the right order:\nis / Muiriel / The / password", []),
        ("Dialogue:\n\nW: Packages Express. May I help you?\n\nM: At noon", ["express"]),
    ],
)
def test_name_terms(text, names):
    assert name_terms(text) == names


@given(st.text())
def test_name_terms_never_fails_and_is_bounded(text):
    terms = name_terms(text)
    assert len(terms) <= 8 and all(t == t.lower() and len(t) > 1 for t in terms)
