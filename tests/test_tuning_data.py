"""Label and case files are validated completely, with the file and line named, before any call."""

from __future__ import annotations

import json

import pytest

from recallwise.errors import UsageError
from recallwise.tuning import load_cases, load_labels, parse_cases, parse_labels


def _lines(*rows: object) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n"


GOOD = [{"text": "Order me lunch", "label": True}, {"text": "Hello", "label": False}]


def test_builtin_seed_loads_twenty_utterances_and_four_queries() -> None:
    labels = load_labels("builtin:seed")
    assert labels.n == 20 and sum(i.label for i in labels.items) == 10
    assert labels.source == "builtin:seed" and len(labels.sha256) == 64
    cases = load_cases("builtin:seed")
    assert len(cases.cases) == 4
    assert cases.n == sum(len(c.relevant) + len(c.irrelevant) for c in cases.cases)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ((GOOD[0], {"label": True}), "line 2: missing field 'text'"),
        ((GOOD[0], {"text": "hi"}), "line 2: missing field 'label'"),
        ((GOOD[0], {"text": "hi", "label": "maybe"}), "line 2: 'label' must be true or false, got 'maybe'"),
        ((GOOD[0], {"text": "hi", "label": 1}), "line 2: 'label' must be true or false, got 1"),
        ((GOOD[0], {"text": "  ", "label": True}), "line 2: 'text' must be a non-empty string"),
        (
            (GOOD[0], GOOD[1], {"text": "hello ", "label": True}),
            "line 3: duplicate text 'hello ' (first on line 2)",
        ),
        ((GOOD[0], "{not json"), "line 2: not a JSON object"),
        ((GOOD[0], "[1, 2]"), "line 2: expected a JSON object"),
        ((GOOD[0], {"text": "Book a flight", "label": True}), "every label is true (2 lines)"),
    ],
)
def test_bad_label_files_name_the_line(rows: tuple[object, ...], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_labels(_lines(*rows), "labels.jsonl")
    assert str(caught.value).startswith("labels.jsonl")
    assert message in str(caught.value)


def test_blank_lines_are_skipped_and_numbered_correctly() -> None:
    text = _lines(GOOD[0], "", GOOD[1], "", {"text": "x"})
    with pytest.raises(UsageError, match=r"labels\.jsonl line 5: missing field 'label'"):
        parse_labels(text, "labels.jsonl")
    labels = parse_labels(_lines(GOOD[0], "", GOOD[1]))
    assert [i.line for i in labels.items] == [1, 3]


def test_missing_file_and_unknown_builtin_are_usage_errors(tmp_path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        load_labels(str(tmp_path / "nope.jsonl"))
    with pytest.raises(UsageError, match="unknown built-in set 'builtin:other'"):
        load_labels("builtin:other")
    with pytest.raises(UsageError, match="line 1: not UTF-8"):
        (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe")
        load_labels(str(tmp_path / "bin.jsonl"))


def test_the_hash_is_of_the_file_bytes(tmp_path) -> None:
    import hashlib

    path = tmp_path / "l.jsonl"
    path.write_text(_lines(*GOOD))
    assert load_labels(str(path)).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


CASES = {
    "records": {
        "tea": "The user drinks green tea.",
        "code": "The user writes Python.",
        "pref": json.dumps({"context": "Ordering drinks", "preference": "No sugar", "categories": ["x"]}),
    },
    "cases": [
        {"query": "What should I drink?", "relevant": ["tea", "pref"], "irrelevant": ["code"]},
        {"query": "Review my code", "relevant": ["code"], "irrelevant": ["tea"]},
    ],
}


def test_cases_render_preference_blobs_like_the_policy() -> None:
    cases = parse_cases(json.dumps(CASES, indent=1), "cases.json")
    assert cases.records["pref"] == "When ordering drinks: No sugar"
    assert cases.cases[0].keys == ("tea", "pref", "code")
    assert cases.n == 5


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["cases"][1].update(relevant=["tea", "nope"]),
            "cases[1] (line 19): 'relevant' names unknown",
        ),
        (lambda d: d["cases"][1].update(irrelevant=[]), "cases[1] (line 19): 'irrelevant' is empty"),
        (lambda d: d["cases"][0].update(irrelevant=["tea"]), "cases[0] (line 9): record(s) 'tea' are both"),
        (lambda d: d["cases"][1].pop("query"), "cases[1]: missing field 'query'"),
        (lambda d: d["cases"][1].update(query="what should i  drink?"), "duplicate query"),
        (lambda d: d["records"].update(tea=""), "line 3: record 'tea' must be a non-empty string"),
        (lambda d: d.pop("cases"), "missing top-level field 'cases'"),
    ],
)
def test_bad_case_files_name_the_case_and_line(change, message: str) -> None:
    document = json.loads(json.dumps(CASES))
    change(document)
    with pytest.raises(UsageError) as caught:
        parse_cases(json.dumps(document, indent=1), "cases.json")
    assert str(caught.value).startswith("cases.json")
    assert message in str(caught.value)


def test_invalid_json_cases_name_the_line() -> None:
    with pytest.raises(UsageError, match=r"cases.json line 3: not valid JSON"):
        parse_cases('{\n "records": {},\n oops\n}', "cases.json")
