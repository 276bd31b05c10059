"""``recallwise bench decisions --conversations DIR``: whole labelled conversations, in order, each its
own session of one default policy over a real SQLite store (bench/conversations.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_cli
from recallwise.bench.conversations import FIGURES, load_conversations, run_conversations
from recallwise.errors import UsageError
from recallwise.testing import ScriptedDecider

PERSONA = [
    {"id": "m1", "text": "The user is vegetarian."},
    {"id": "m2", "text": "The user plays the violin."},
    {"id": "m3", "text": "The user has two cats."},
]


def _turn(
    text: str, needs: bool, follow: bool, records: list[str] | None = None, source: str = "x"
) -> dict[str, Any]:
    return {
        "text": text,
        "source": source,
        "needs_memory": needs,
        "follow_up": follow,
        "records": records or [],
    }


CONVERSATIONS = [
    {
        "id": "c1",
        "persona": PERSONA,
        "turns": [
            _turn("Find me a place to eat tonight.", True, False, ["m1"], "sgd"),
            _turn("In San Jose, for four at 7.", True, True, ["m1"], "sgd"),
            _turn("What is the tallest mountain in Africa?", False, False, source="hh"),
        ],
    },
    {
        "id": "c2",
        "persona": PERSONA,
        "turns": [
            _turn("Write a limerick about cats.", False, False, source="hh"),
            _turn("Now make it shorter.", False, True, source="hh"),
        ],
    },
]


def _write(folder: Path, rows: list[dict[str, Any]], name: str = "conversations-x.jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def test_figures_are_what_the_module_defines(tmp_path: Path) -> None:
    # The gate opens on the dinner request and the mountain question only; the judge keeps every
    # record it is asked about (the scripted decider has no follow-up threshold: follow-ups are off).
    decider = ScriptedDecider(
        {"Find me a place to eat tonight.": 0.9, "What is the tallest mountain in Africa?": 0.9},
        {"vegetarian": 0.9},
        local=True,
    )
    conversations = load_conversations(_write(tmp_path / "heldout", CONVERSATIONS))
    result = run_conversations(conversations, decider)
    overall = result["overall"]
    assert list(overall) == list(FIGURES)
    assert overall["conversations"] == 2 and overall["turns"] == 5
    assert overall["opened_when_needed"] == 1.0  # the one request that needs memory opened
    assert overall["closed_when_not_needed"] == pytest.approx(2 / 3, abs=1e-4)  # the mountain opened
    assert overall["follow_up_precision"] is None  # nothing was taken for a follow-up
    assert overall["follow_up_recall"] == 0.0  # "In San Jose, for four at 7." did not retrieve
    assert overall["right_record_kept"] == 0.5  # kept on the request, not on its closed follow-up
    assert overall["records_per_needed_turn"] == 0.5
    assert overall["records_per_unneeded_turn"] == pytest.approx(1 / 3, abs=1e-4)
    assert result["splits"]["heldout"]["turns"] == 5
    assert result["sources"]["hh"]["closed_when_not_needed"] == pytest.approx(2 / 3, abs=1e-4)
    assert result["counts"]["needed_request_turns"] == 1


def test_the_default_policy_takes_a_continuation_and_not_a_new_request(tmp_path: Path) -> None:
    conversations = load_conversations(_write(tmp_path / "dev", CONVERSATIONS[:1]))
    result = run_conversations(conversations, None)  # the stock arm: every turn retrieves
    assert result["overall"]["closed_when_not_needed"] == 0.0
    assert result["decider"] == "none"


def test_cli_prints_one_json_object_with_the_overall_keys(tmp_path: Path) -> None:
    folder = _write(tmp_path / "heldout", CONVERSATIONS)
    done = run_cli("bench", "decisions", "--conversations", str(folder), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert list(out["overall"]) == list(FIGURES)
    assert set(out["sources"]) == {"sgd", "hh"}
    text = run_cli("bench", "decisions", "--conversations", str(folder))
    assert text.returncode == 0 and "overall" in text.stdout and "follow-up P" in text.stdout


def test_a_folder_of_split_folders_reports_each_split(tmp_path: Path) -> None:
    _write(tmp_path / "all" / "dev", CONVERSATIONS[:1])
    _write(tmp_path / "all" / "heldout", CONVERSATIONS[1:])
    conversations = load_conversations(tmp_path / "all")
    assert {c.split for c in conversations} == {"dev", "heldout"}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "not JSON"),
        (json.dumps({"id": "a", "persona": [], "turns": []}), "at least one turn"),
        (
            json.dumps({"id": "a", "persona": PERSONA, "turns": [_turn("hi", "yes", False)]}),
            "'needs_memory' must be bool",
        ),
        (
            json.dumps({"id": "a", "persona": PERSONA, "turns": [_turn("hi", True, False, ["m9"])]}),
            "not in the persona",
        ),
        (json.dumps({"persona": PERSONA, "turns": [_turn("hi", True, False)]}), "'id' must be str"),
    ],
)
def test_bad_conversations_name_the_file_line_and_field(tmp_path: Path, line: str, message: str) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "c.jsonl").write_text(line + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match=message) as caught:
        load_conversations(folder)
    assert "c.jsonl:1" in str(caught.value)
    done = run_cli("bench", "decisions", "--conversations", str(folder), "--json")
    assert done.returncode == 2 and done.stdout == "" and "c.jsonl:1" in done.stderr
    assert "Traceback" not in done.stderr


def test_repeated_ids_and_missing_folders_are_usage_errors(tmp_path: Path) -> None:
    folder = _write(tmp_path / "dup", CONVERSATIONS + CONVERSATIONS[:1])
    with pytest.raises(UsageError, match="'c1' is also at"):
        load_conversations(folder)
    assert run_cli("bench", "decisions", "--conversations", str(tmp_path / "nope")).returncode == 2
    both = run_cli("bench", "decisions", "--conversations", str(folder), "--data", str(folder))
    assert both.returncode == 2


def test_the_shipped_conversations_load_and_keep_their_splits() -> None:
    root = Path(__file__).resolve().parents[1] / "data" / "conversations"
    conversations = load_conversations(root)
    assert {c.split for c in conversations} == {"fit", "calib", "dev", "heldout"}
    sources = {
        split: {t.source for c in conversations if c.split == split for t in c.turns}
        for split in ("fit", "calib", "dev", "heldout")
    }
    # Taskmaster-4 is held out whole: nothing was fitted on it
    assert "tm4" in sources["heldout"] and not any("tm4" in sources[s] for s in ("fit", "calib", "dev"))
    # no turn text of a held-out conversation's task is in the fit split
    fit_texts = {t.text for c in conversations if c.split == "fit" for t in c.turns if t.needs_memory}
    held = [
        t.text
        for c in conversations
        if c.split == "heldout"
        for t in c.turns
        if t.needs_memory and len(t.text) > 40
    ]
    assert sum(text in fit_texts for text in held) <= len(held) * 0.01


def test_an_unknown_follow_up_label_counts_in_no_follow_up_figure(tmp_path: Path) -> None:
    row = {
        "id": "c3",
        "persona": PERSONA,
        "turns": [
            _turn("Find me a place to eat tonight.", True, False, ["m1"]),
            {**_turn("What is rohypnol?", False, False), "follow_up": None},
        ],
    }
    conversations = load_conversations(_write(tmp_path / "dev", [row]))
    assert conversations[0].turns[1].follow_up is None
    # the scripted decider's follow-up question says "yes" to everything, given a threshold
    decider = ScriptedDecider({"Find me a place to eat tonight.": 0.9}, 0.9, follow_up=1.0, local=True)
    result = run_conversations(conversations, decider, policy_options={"follow_up_threshold": 0.5})
    assert result["counts"]["taken_for_follow_ups"] == 0  # taken, but its label is unknown
    assert result["overall"]["follow_up_precision"] is None
    assert result["overall"]["closed_when_not_needed"] == 0.0  # it rode along all the same
    assert result["counts"]["unneeded_opened_by"] == {"follow-up": 1}
