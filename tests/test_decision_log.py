"""The opt-in decision log: one row per turn, readable afterwards, never failing a turn."""

from __future__ import annotations

import json
import threading

import pytest

from recallwise import DecisionLog, MemoryRecord, RecallPolicy
from recallwise.cli import main
from recallwise.testing import ScriptedDecider

NS = ["/facts/{actorId}"]


def scripted() -> ScriptedDecider:
    """Gate probability by message; every record judged 0.9 except those about code."""
    return ScriptedDecider(
        gate=lambda message: 0.1 if message in ("Hello!", "ok") else 0.95,
        judge=lambda memory: 0.1 if "code" in memory else 0.9,
    )


@pytest.fixture
def seeded(store):
    store.add_records(
        [
            MemoryRecord(actor_id="u", namespace="/facts/u", text="The user drinks green tea."),
            MemoryRecord(actor_id="u", namespace="/facts/u", text="The user writes code in Python."),
            MemoryRecord(actor_id="v", namespace="/facts/v", text="V likes black coffee."),
        ]
    )
    return store


def test_every_turn_is_logged_as_the_policy_decided_it(seeded, tmp_path):
    path = tmp_path / "decisions.db"
    policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=str(path))
    recalls = [
        policy.recall("Hello!", actor_id="u", session_id="s1"),
        policy.recall("What tea should I buy?", actor_id="u", session_id="s1"),
        policy.recall("What should I drink?", actor_id="v", session_id="s2"),
    ]
    policy.close()
    with DecisionLog(path) as log:
        turns = log.turns()
        assert [t.message for t in turns] == ["Hello!", "What tea should I buy?", "What should I drink?"]
        for turn, recall in zip(turns, recalls, strict=True):
            assert turn.gate_p == pytest.approx(recall.trace.gate_p)
            assert turn.gate_open == recall.trace.gate_open
            assert turn.kept == len(recall.records) == len(recall.trace.kept)
            assert turn.dropped == len(recall.trace.dropped)
            assert turn.trace["candidates"] == json.loads(json.dumps(recall.trace.as_dict()))["candidates"]
            assert turn.decider == "scripted" and turn.errors == 0
        assert turns[0].retrieved is False and turns[1].retrieved is True
        assert turns[1].kept == 1 and turns[1].dropped == 1  # the code record was judged out
        assert [t.message for t in log.turns(actor_id="v")] == ["What should I drink?"]
        assert [t.message for t in log.turns(session_id="s1", last=1)] == ["What tea should I buy?"]


def test_the_environment_names_a_log_for_every_policy(seeded, tmp_path, monkeypatch):
    path = tmp_path / "from-env.db"
    monkeypatch.setenv("RECALLWISE_LOG", str(path))
    policy = RecallPolicy(seeded, decider=None, namespaces=NS)
    policy.recall("anything", actor_id="u")
    policy.close()
    with DecisionLog(path) as log:
        (turn,) = log.turns()
    assert turn.decider == "none" and turn.gate_p is None and turn.kept == 2


def test_a_failing_log_never_fails_the_turn_and_is_counted(seeded, tmp_path):
    log = DecisionLog(tmp_path / "d.db")
    policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=log)
    log.close()  # every write now fails
    recall = policy.recall("What tea should I buy?", actor_id="u")
    assert "green tea" in recall.context
    assert policy.stats.log_errors == 1
    assert list(policy.stats.errors_by_kind) == ["log:ProgrammingError"]
    assert policy.stats.report().startswith("ERRORS: 1")
    assert any(e.startswith("log:") for e in recall.trace.errors)
    policy.close()  # a log passed in belongs to the caller: not closed twice


def test_concurrent_turns_are_all_logged(seeded, tmp_path):
    path = tmp_path / "d.db"
    policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=path)

    def worker(i: int) -> None:
        for j in range(25):
            policy.recall(f"tea question {i}-{j}", actor_id="u", session_id=f"s{i}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    policy.close()
    with DecisionLog(path) as log:
        turns = log.turns(last=1000)
    assert len(turns) == 200 and len({t.message for t in turns}) == 200


def test_log_command_prints_the_latest_turns(seeded, tmp_path, capsys):
    path = tmp_path / "d.db"
    policy = RecallPolicy(seeded, decider=scripted(), namespaces=NS, log=path)
    for message in ("Hello!", "What tea should I buy?", "ok"):
        policy.recall(message, actor_id="u")
    policy.close()
    assert main(["log", str(path), "--last", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [t["message"] for t in data["turns"]] == ["What tea should I buy?", "ok"]
    assert main(["log", str(path)]) == 0
    out = capsys.readouterr().out
    assert "0.95 open" in out and "0.10 closed" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--last", "0"], "--last must be at least 1"),
        ([], "no decision log at"),
    ],
)
def test_log_command_usage_errors(tmp_path, capsys, args, message):
    assert main(["log", str(tmp_path / "missing.db"), *args]) == 2
    assert message in capsys.readouterr().err


def test_a_file_that_is_not_a_log_is_named(tmp_path, capsys):
    bad = tmp_path / "notes.txt"
    bad.write_text("not a database\n" * 100)
    assert main(["log", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "notes.txt" in err and "Traceback" not in err
