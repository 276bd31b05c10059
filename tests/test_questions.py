import pytest

from bad_questions import BAD_REQUESTS, NOUL
from recallwise.deciders import ChoiceAnswer, ScoreAnswer, make_decider, parse_answers, validate_request
from recallwise.errors import DeciderBadResponse, QuestionError, UsageError


@pytest.mark.parametrize(("state", "questions", "match"), BAD_REQUESTS)
def test_bad_requests_name_the_problem(state, questions, match):
    with pytest.raises(QuestionError, match=match):
        validate_request(state, questions)


def test_parse_answers_accepts_wire_shapes():
    qs = validate_request(
        "s",
        {
            "a": NOUL,
            "b": {"type": "choice", "instructions": "x", "criteria": {"x": "X", "y": "Y"}},
            "c": {"type": "score", "instructions": "x", "criteria": ["lo", "mid", "hi"]},
        },
    )
    out = parse_answers(
        qs,
        {
            "answers": {
                "a": {"type": "noul", "noul": 0.25},
                "b": {
                    "type": "choice",
                    "choice": "y",
                    "probabilities": {"x": 0.2, "y": 0.8},
                    "confidence": 0.8,
                },
                "c": {
                    "type": "score",
                    "score": 2,
                    "legend": ["lo", "mid", "hi"],
                    "probabilities": [0.1, 0.2, 0.7],
                },
            }
        },
    )
    assert out["a"] == 0.25
    assert isinstance(out["b"], ChoiceAnswer) and out["b"].choice == "y"
    assert isinstance(out["c"], ScoreAnswer) and out["c"].score == 2
    assert out["c"].expected == pytest.approx(0.8)


@pytest.mark.parametrize(
    "raw", [{}, {"a": 1.5}, {"a": -0.1}, {"a": "yes"}, {"a": True}, {"a": float("nan")}, [], None]
)
def test_bad_answers_are_errors(raw):
    qs = validate_request("s", {"a": NOUL})
    with pytest.raises(DeciderBadResponse):
        parse_answers(qs, raw)


def test_unknown_decider_name():
    with pytest.raises(UsageError, match="unknown decider"):
        make_decider("nope")
