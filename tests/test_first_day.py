"""The first day: the defaults find what the write path stored (library, a real ``recallwise serve``, a
real ``recallwise mcp`` over stdio), options that cannot work are refused where they enter (Python,
flags, config files, the environment), and the CLI never guesses."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import recallwise as rw
from recallwise.cli import build_parser, main
from recallwise.errors import UsageError
from recallwise.extraction import DEFAULT_STRATEGIES, extract_and_store
from recallwise.policy.config import ROLES, read_config
from recallwise.policy.options import OPTION_RANGES, ThresholdOptions, check_option
from recallwise.records import DEFAULT_NAMESPACES

EXE = str(Path(sys.executable).with_name("recallwise"))

#: what a user says, and a later message that needs it (the word the kept record must hold)
SAID = [
    ("diet", "I am vegetarian.", "What should I have for dinner?", "vegetarian"),
    ("allergy", "I'm allergic to peanuts.", "Can you suggest a snack for the road?", "peanuts"),
    ("family", "My daughter Maya is six.", "Any ideas for a birthday party for my daughter?", "daughter"),
    ("home city", "I live in Lisbon.", "What's a good day trip from where I live?", "Lisbon"),
    ("budget", "My budget for the trip is 2000 euros.", "Suggest a hotel for my trip.", "2000"),
]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---- the defaults agree end to end ------------------------------------------------------------------


def test_every_namespace_the_write_path_writes_is_searched_by_default() -> None:
    from recallwise.serve.runner import Settings
    from recallwise.serve.service import DEFAULT_NAMESPACES as SERVICE_NAMESPACES

    written = {s.namespace for s in DEFAULT_STRATEGIES}
    assert written == set(DEFAULT_NAMESPACES)
    policy = rw.RecallPolicy(rw.open_store("sqlite://:memory:"), decider=None)
    assert set(policy.namespaces) == written
    assert set(SERVICE_NAMESPACES) == written and set(Settings(store="x").namespaces) == written


def test_no_route_threshold_is_a_default_so_the_route_never_hides_a_namespace() -> None:
    store = rw.open_store("sqlite://:memory:")
    described = {"/facts/{actorId}": "facts", "/preferences/{actorId}": "preferences: food, drink"}
    policy = rw.RecallPolicy(store, namespaces=described)
    assert "route" not in policy.thresholds and not policy.routes
    assert "route" not in policy.gate_questions()
    routed = rw.RecallPolicy(store, namespaces=described, route_threshold=0.25)
    assert routed.routes and "route" in routed.gate_questions()


def test_the_library_default_recall_finds_what_the_write_path_stored(tmp_path: Path) -> None:
    store = rw.open_store(f"sqlite:///{tmp_path}/lib.db")
    for i, (_, text, _, _) in enumerate(SAID):
        event = store.create_event(rw.Event(actor_id="alice", session_id=f"s{i}", role="user", text=text))
        extract_and_store(store, "alice", [event])
    policy = rw.RecallPolicy(store)  # every option at its default
    for what, _, question, word in SAID:
        texts = [r.text for r in policy.recall(question, actor_id="alice").records]
        assert any(word in t for t in texts), (what, texts)
    policy.close()
    store.close()


@pytest.mark.slow
def test_a_real_service_recalls_what_its_events_route_stored(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from serve_server import serve

    rw.open_store(f"sqlite:///{tmp_path}/other.db").close()
    store = f"sqlite:///{tmp_path}/new.db"  # a new path (no near miss of other.db): made, and said so
    with serve(store, log_dir=tmp_path) as server, server.client() as http:
        assert f"there was no store at '{tmp_path}/new.db': created a new, empty one" in server.stderr()
        for i, (_, text, _, _) in enumerate(SAID):
            body = {"actor_id": "alice", "session_id": f"s{i}", "messages": [{"role": "user", "text": text}]}
            assert http.post("/v1/events", json=body).status_code == 200
        for what, _, question, word in SAID:
            for extra in ({}, {"namespaces": list(DEFAULT_NAMESPACES)}):
                out = http.post("/v1/recall", json={"actor_id": "alice", "message": question, **extra})
                assert out.status_code == 200, out.text
                texts = [r["text"] for r in out.json()["records"]]
                assert any(word in t for t in texts), (what, extra, texts)
        # a body sent without the JSON content-type: the error names the header
        raw = http.post("/v1/recall", content=json.dumps({"actor_id": "alice", "message": "hi"}))
        assert raw.status_code == 415 and raw.json()["error"]["field"] == "content-type"
        assert "content-type: application/json" in raw.json()["error"]["message"]
        typed = http.post("/v1/recall", content=b"{}", headers={"content-type": "text/plain"})
        assert typed.status_code == 415 and "'text/plain'" in typed.json()["error"]["message"]


@pytest.mark.slow
async def test_mcp_over_stdio_recalls_what_remember_stored(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=EXE, args=["mcp", "--store", f"sqlite:///{tmp_path}/mcp.db", "--actor", "alice"]
    )
    with anyio.fail_after(180):
        async with Client(params) as client:
            for _, text, _, _ in SAID:
                stored = await client.call_tool("remember", {"text": text})
                assert not stored.is_error and stored.structured_content["records"], text
            for what, _, question, word in SAID:
                got = await client.call_tool("recall", {"message": question})
                texts = [r["text"] for r in got.structured_content["records"]]
                assert any(word in t for t in texts), (what, texts)


# ---- options: one validation, wherever they enter ---------------------------------------------------


def _bad_values(name: str) -> list[Any]:
    allowed = OPTION_RANGES[name]
    bad: list[Any] = [allowed.low - 1, float("nan"), "high", True]
    if allowed.high != float("inf"):
        bad.append(allowed.high + 0.5)
    if allowed.kind is int:
        bad.append(allowed.low + 1.5)
    return bad


@pytest.mark.parametrize("name", sorted(OPTION_RANGES))
def test_every_numeric_option_is_refused_out_of_range_naming_it_the_value_and_the_range(name: str) -> None:
    store = rw.open_store("sqlite://:memory:")
    for value in _bad_values(name):
        with pytest.raises(UsageError) as caught:
            rw.RecallPolicy(store, decider=None, **{name: value})
        message = str(caught.value)
        assert (
            message.startswith(f"{name}={value!r} is not allowed: ")
            and OPTION_RANGES[name].describe() in message
        )


def test_the_issue_cases_gate_threshold_and_namespaces_as_one_string(tmp_path: Path) -> None:
    store = rw.open_store(f"sqlite:///{tmp_path}/o.db")
    store.add_records([rw.MemoryRecord(actor_id="a", namespace="/facts/a", text="The user is vegetarian.")])
    with pytest.raises(UsageError, match=r"gate_threshold=1\.5 is not allowed: a number in \[0, 1\]"):
        rw.RecallPolicy(store, decider=rw.default_decider(), gate_threshold=1.5)
    with pytest.raises(UsageError, match=r"gate_threshold=1\.5"):
        ThresholdOptions(gate=1.5)
    one = rw.RecallPolicy(store, decider=None, namespaces="/facts/{actorId}")
    assert one.namespaces == ["/facts/{actorId}"]
    assert [r.text for r in one.recall("What should I cook?", actor_id="a").records] == [
        "The user is vegetarian."
    ]
    turn = one.recall("What should I cook?", actor_id="a", namespaces="/facts/{actorId}")  # type: ignore[arg-type]
    assert turn.trace.namespaces_searched == ["/facts/a"]
    for bad in ([], [3], b"/facts/{actorId}", {"/facts/{actorId}": 3}):
        with pytest.raises(UsageError, match="namespaces"):
            rw.RecallPolicy(store, decider=None, namespaces=bad)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"max_records=0 is not allowed"):
        one.recall("tea?", actor_id="a", max_records=0)


def _config(path: Path, role: str, value: Any) -> Path:
    entry = {"value": value, "data": "d", "data_sha256": "0" * 64, "n": 10, "date": "2026-12-06"}
    path.write_text(
        json.dumps({"format": "recallwise-thresholds/1", "thresholds": {"embedded": {role: entry}}})
    )
    return path


@pytest.mark.parametrize("role", sorted(ROLES))
def test_a_config_files_threshold_gets_the_same_check(role: str, tmp_path: Path) -> None:
    name = ROLES[role]
    path = _config(tmp_path / "t.json", role, 1.5)
    with pytest.raises(UsageError) as caught:
        read_config(path)
    assert str(path) in str(caught.value) and f"{name}=1.5 is not allowed" in str(caught.value)
    with pytest.raises(UsageError):
        check_option(name, 1.5)  # the one check


def test_the_environments_config_gets_the_same_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALLWISE_CONFIG", str(_config(tmp_path / "env.json", "gate", -0.2)))
    with pytest.raises(
        UsageError, match=r"RECALLWISE_CONFIG: .*env\.json.*gate_threshold=-0\.2 is not allowed"
    ):
        rw.RecallPolicy(rw.open_store("sqlite://:memory:"))


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["log", "x.db", "--last", "0"], "--last"),
        (["ask", "--state", "hi", "--noul", "q", "--timeout", "-1"], "--timeout"),
        (["serve", "--store", "sqlite:///x.db", "--port", "70000"], "--port"),
        (["serve", "--store", "sqlite:///x.db", "--workers", "0"], "--workers"),
        (["serve", "--store", "sqlite:///x.db", "--max-body-bytes", "zero"], "--max-body-bytes"),
        (
            ["mcp", "--store", "sqlite:///x.db", "--actor", "a", "--mcp-token-budget", "0"],
            "--mcp-token-budget",
        ),
    ],
)
def test_a_flag_out_of_range_is_a_usage_error_naming_it(
    argv: list[str],
    flag: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(argv)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and f"argument {flag}: " in err and "is not allowed: " in err
    assert "Traceback" not in err and list(tmp_path.iterdir()) == []


# ---- the CLI never guesses --------------------------------------------------------------------------


def _parsers(parser: argparse.ArgumentParser, name: str = "recallwise") -> list[tuple[str, Any]]:
    found = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                found += _parsers(sub, f"{name} {sub_name}")
    return found


def test_no_parser_takes_an_abbreviated_flag() -> None:
    parsers = _parsers(build_parser())
    assert len(parsers) > 20
    assert [name for name, p in parsers if p.allow_abbrev] == []


def test_a_mistyped_flag_is_refused_naming_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [EXE, "serve", "--stor", f"sqlite:///{tmp_path}/x.db", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "unrecognized arguments: --stor" in done.stderr
    assert "Traceback" not in done.stderr and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [["search", "drink"], ["ingest", "chats.jsonl", "--actor", "a"], ["serve"], ["mcp", "--actor", "a"]],
)
def test_no_command_but_the_demo_has_a_default_store(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RECALLWISE_STORE", raising=False)
    (tmp_path / "chats.jsonl").write_text('{"role": "user", "text": "I live in Lisbon."}\n')
    code, out, err = _cli(capsys, *argv)
    assert code == 2 and out == "" and "--store" in err and "RECALLWISE_STORE" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chats.jsonl"]  # no recallwise-demo.db


def test_the_demo_alone_owns_the_demo_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RECALLWISE_STORE", raising=False)
    parser = build_parser()
    assert parser.parse_args(["demo"]).store == "sqlite:///recallwise-demo.db"
    assert parser.parse_args(["search", "x"]).store is None
    monkeypatch.setenv("RECALLWISE_STORE", "sqlite:///mine.db")  # an explicit default is the user's
    assert build_parser().parse_args(["search", "x"]).store == "sqlite:///mine.db"


def test_a_store_that_is_not_there_is_said_and_a_typo_of_one_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from recallwise.cli.common import new_store_note

    rw.open_store(f"sqlite:///{tmp_path}/memory.db").close()
    typo = f"sqlite:///{tmp_path}/memroy.db"
    for argv in (
        ["serve", "--store", typo],
        ["mcp", "--store", typo, "--actor", "a"],
        ["search", "x", "--store", typo],
    ):
        code, _, err = _cli(capsys, *argv)
        assert code == 2 and "no store at" in err and "memroy.db" in err and "Traceback" not in err, argv
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.db"]  # nothing was created
    with pytest.raises(UsageError, match=r"but there is 'memory\.db' beside it: a typo\?.*--create"):
        new_store_note("serve", typo, create=False)
    made = "there was no store at"
    assert made in (new_store_note("serve", typo, create=True) or "")  # --create: meant
    assert made in (new_store_note("serve", f"sqlite:///{tmp_path}/tenant-b.db", create=False) or "")
    assert new_store_note("serve", f"sqlite:///{tmp_path}/memory.db", create=False) is None  # it exists
    assert new_store_note("serve", "postgresql://db/x", create=False) is None


def test_log_on_a_missing_file_and_an_empty_filter_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _cli(capsys, "log", str(tmp_path / "nothere.db"))
    assert code == 2 and "no decision log at" in err and not (tmp_path / "nothere.db").exists()
    log = tmp_path / "log.db"
    store = rw.open_store("sqlite://:memory:")
    policy = rw.RecallPolicy(store, decider=None, log=str(log))
    policy.recall("hello", actor_id="alice")
    policy.close()
    code, out, _ = _cli(capsys, "log", str(log), "--actor", "nobody")
    assert code == 0 and out.strip() == f"no turns in {log} for actor 'nobody'"


# ---- ask says what the backend can answer -----------------------------------------------------------


def test_ask_refuses_a_question_the_embedded_decider_cannot_read(capsys: pytest.CaptureFixture[str]) -> None:
    state = ["--state", "What should I cook tonight?"]
    code, out, err = _cli(capsys, "ask", *state, "--noul", "Does answering need the user's memory?")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "cannot read a question's wording" in err and "systemone" in err and "--similarity" in err
    code, out, err = _cli(
        capsys, "ask", "--state", "hello", "--score", "urgency=low,medium,high", "--similarity"
    )
    assert code == 0 and "SIMILARITY, NOT ANSWERS" in out and "[similarity]" in out
    code, out, _ = _cli(capsys, "ask", *state, "--noul", "q", "--similarity", "--json")
    assert code == 0 and json.loads(out)["reads_wording"] is False


# ---- long benches are never silent when piped -------------------------------------------------------


def test_a_bench_writes_a_line_a_stage_when_stderr_is_not_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from recallwise.cli import progress_bar

    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    bench = argparse.Namespace(command="bench", json=True)
    with progress_bar(bench, 20, desc="bench decisions", unit="turn") as bar:
        bar.set_postfix_str("clinc")
        bar.update(10)
        bar.set_postfix_str("mt-bench")
        bar.update(10)
    lines = capsys.readouterr().err.splitlines()
    assert lines[:3] == [
        "bench decisions: started of 20 turn",
        "bench decisions: clinc (0/20 turn)",
        "bench decisions: 50% (10/20 turn)",
    ]
    assert "bench decisions: mt-bench (10/20 turn)" in lines and lines[-1].startswith(
        "bench decisions: done: 20/20"
    )
    with progress_bar(argparse.Namespace(command="tune", json=True), 5) as bar:  # not a long run: quiet
        bar.update(5)
    assert capsys.readouterr().err == ""


def test_an_environment_variables_number_gets_the_same_check(monkeypatch: pytest.MonkeyPatch) -> None:
    from recallwise.ranges import OptionRange, env_option

    threads = OptionRange(int, 0, what="threads")
    monkeypatch.setenv("RECALLWISE_ONNX_THREADS", "-2")
    with pytest.raises(UsageError, match=r"RECALLWISE_ONNX_THREADS=-2 is not allowed: an integer >= 0"):
        env_option("RECALLWISE_ONNX_THREADS", threads, 0)
    monkeypatch.setenv("RECALLWISE_ONNX_THREADS", "two")
    with pytest.raises(UsageError, match=r"RECALLWISE_ONNX_THREADS='two' is not allowed"):
        env_option("RECALLWISE_ONNX_THREADS", threads, 0)
    monkeypatch.setenv("RECALLWISE_ONNX_THREADS", "3")
    assert env_option("RECALLWISE_ONNX_THREADS", threads, 0) == 3
    monkeypatch.delenv("RECALLWISE_ONNX_THREADS")
    assert env_option("RECALLWISE_ONNX_THREADS", threads, 0) == 0


def test_ask_refuses_a_score_the_embedded_decider_cannot_read_too(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(capsys, "ask", "--state", "hello", "--score", "urgency=low,medium,high")
    assert code == 2 and out == "" and "cannot read a question's wording" in err


def test_the_benchmarks_and_reliability_pages_read_on_github() -> None:
    root = Path(__file__).resolve().parents[1]
    for page, target in (("benchmarks.md", "BENCHMARKS.md"), ("reliability.md", "RELIABILITY.md")):
        text = (root / "docs" / page).read_text()
        assert "{%" not in text and len(text.split()) > 40, page  # a page, not a template placeholder
        assert f"](../{target})" in text and (root / target).is_file()


def test_every_numeric_flag_of_every_command_is_range_checked() -> None:
    """No flag takes -1, NaN or a word for a number: each has flag_type's check (its own range, or
    a finite number >= 0)."""
    numeric = []
    for command, parser in _parsers(build_parser()):
        for action in parser._actions:
            if not action.option_strings or action.type is None or action.type in (str,):
                continue
            if callable(action.type) and getattr(action.type, "__module__", "") == "recallwise.ranges":
                numeric.append((command, action))
            else:
                assert action.type not in (int, float), f"{command} {action.option_strings[-1]}: unchecked"
    assert len(numeric) > 30
    for _command, action in numeric:
        for bad in ("-1", "nan", "inf", "many"):
            with pytest.raises(argparse.ArgumentTypeError, match="is not allowed: "):
                action.type(bad)  # type: ignore[misc]
