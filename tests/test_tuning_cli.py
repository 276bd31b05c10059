"""``recallwise tune gate`` / ``tune validator`` end to end, on the real embedded decider."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cli_runner import run_cli
from recallwise.cli import main
from recallwise.deciders import available_deciders, register_decider
from recallwise.policy.config import read_config
from recallwise.testing import ScriptedDecider
from tune_figures import GATE_KEYS, VALIDATOR_KEYS

#: counts calls (to prove bad input stops the run before any)
COUNTING = ScriptedDecider(0.5, 0.5, name="counting")
register_decider("counting", lambda **_: COUNTING)


def test_tune_gate_json_on_the_seed() -> None:
    code, out, err = run_cli("tune", "gate", "--labels", "builtin:seed", "--json")
    assert code == 0 and err == ""
    body = json.loads(out)
    assert set(body) == {"backend", "n", "default", "candidates"}
    assert body["backend"] == "embedded" and body["n"] == 20 and body["default"] == "shipped"
    assert list(body["candidates"]) == ["shipped", "plain", "criteria", "inverted", "graded"]
    for figures in body["candidates"].values():
        assert set(figures) == GATE_KEYS | {"errors"}
        assert figures["errors"] == 0
    shipped = body["candidates"]["shipped"]
    # The shipped wording earns its place on the seed: it beats the instructions alone.
    assert shipped["auc"] > body["candidates"]["plain"]["auc"]
    assert shipped["accuracy_at_configured"] >= 0.9


def test_tune_validator_json_on_the_seed() -> None:
    code, out, _ = run_cli("tune", "validator", "--cases", "builtin:seed", "--json")
    assert code == 0
    body = json.loads(out)
    assert set(body) == {"backend", "default", "candidates"}
    for figures in body["candidates"].values():
        assert set(figures) == VALIDATOR_KEYS | {"errors"}
    assert body["candidates"]["shipped"]["mean_auc"] >= 0.9


def test_text_output_is_a_table_with_the_default_marked() -> None:
    code, out, _ = run_cli("tune", "gate", "--labels", "builtin:seed")
    assert code == 0
    assert "shipped *" in out and "cv acc" in out
    assert "direction, not magnitude" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"text": "hi", "label": "maybe"}\n', "line 1: 'label' must be true or false, got 'maybe'"),
        ('{"text": "hi", "label": true}\n{"label": false}\n', "line 2: missing field 'text'"),
        ('{"text": "hi", "label": true}\n{"text": "hi", "label": false}\n', "line 2: duplicate text"),
        ('{"text": "hi", "label": true}\n{"text": "yo", "label": true}\n', "every label is true"),
    ],
)
def test_bad_labels_stop_before_any_decider_call(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    COUNTING.calls.clear()
    code, out, err = run_cli("tune", "gate", "--labels", str(path), "--decider", "counting", "--json")
    assert code == 2 and out == ""
    assert message in err and str(path) in err
    assert "Traceback" not in err and err.count("\n") == 1
    assert not COUNTING.calls


def test_bad_candidates_stop_before_any_decider_call(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "good:\n  instructions: Needs the user?\nbad:\n  type: score\n  instructions: How much?\n"
    )
    COUNTING.calls.clear()
    code, _, err = run_cli(
        "tune", "gate", "--labels", "builtin:seed", "--candidates", str(path), "--decider", "counting"
    )
    assert code == 2 and "candidate 'bad'" in err and "needs criteria" in err
    assert not COUNTING.calls


def test_candidate_file_in_yaml(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "ours:\n  use: shipped\n"
        "opposite:\n  instructions: Could this be answered without knowing the user?\n"
        "  criteria:\n    true: general or small talk\n    false: about the user\n  inverted: true\n"
        "kinds:\n  type: choice\n  instructions: What kind of message?\n"
        "  criteria: {personal: about the user, general: anything else}\n  positive: personal\n"
        "  default: true\n"
    )
    code, out, _ = run_cli("tune", "gate", "--labels", "builtin:seed", "--candidates", str(path), "--json")
    assert code == 0
    body = json.loads(out)
    assert list(body["candidates"]) == ["ours", "opposite", "kinds"] and body["default"] == "kinds"
    assert all(c["errors"] == 0 for c in body["candidates"].values())


def test_write_config_needs_the_shipped_wording(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"candidates": {"plain": {"instructions": "Needs the user?"}}}))
    COUNTING.calls.clear()
    code, _, err = run_cli(
        "tune",
        "gate",
        "--labels",
        "builtin:seed",
        "--candidates",
        str(path),
        "--decider",
        "counting",
        "--write-config",
        str(tmp_path / "t.json"),
    )
    assert code == 2 and "use: shipped" in err and not COUNTING.calls


def test_write_config_records_the_fit_and_its_data(tmp_path: Path) -> None:
    config = tmp_path / "thresholds.json"
    code, out, _ = run_cli(
        "tune", "gate", "--labels", "builtin:seed", "--json", "--write-config", str(config)
    )
    assert code == 0
    gate = json.loads(out)["candidates"]["shipped"]
    code, out, _ = run_cli(
        "tune", "validator", "--cases", "builtin:seed", "--json", "--write-config", str(config)
    )
    assert code == 0
    saved = read_config(config)
    fitted = saved.get("embedded", "gate")
    assert fitted is not None
    assert fitted.value == pytest.approx(gate["best_threshold"], abs=1e-4)
    assert fitted.n == 20 and fitted.data == "builtin:seed" and len(fitted.data_sha256) == 64
    assert fitted.date and fitted.question == "shipped"
    # The validator run added the judge's pair to the same file.
    assert saved.get("embedded", "judge") is not None and saved.get("embedded", "judge_relative") is not None
    assert saved.get("embedded", "judge").n == 35  # type: ignore[union-attr]
    # ... and the embedded policy built from it uses all three.
    from recallwise import RecallPolicy, default_decider
    from recallwise.stores import SQLiteStore

    policy = RecallPolicy.from_config(config, SQLiteStore("sqlite://:memory:"), decider=default_decider())
    for role in ("gate", "judge", "judge_relative"):
        assert policy.thresholds[role] == saved.get("embedded", role).value  # type: ignore[union-attr]
        assert policy.threshold_sources[role] == f"config {config}"


def test_progress_bar_only_on_a_terminal_and_never_with_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # in-process with capsys (not run_cli, whose stderr is no terminal): isatty is patched here
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    main(["tune", "gate", "--labels", "builtin:seed", "--json"])
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)
    main(["tune", "gate", "--labels", "builtin:seed"])
    assert "utterance" in capsys.readouterr().err  # tqdm's bar, on stderr
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    main(["tune", "gate", "--labels", "builtin:seed"])
    assert capsys.readouterr().err == ""


@pytest.mark.slow
@pytest.mark.skipif("sparrow" not in available_deciders(), reason="the sparrow decider is not registered")
def test_both_commands_run_on_sparrow() -> None:
    code, out, err = run_cli("tune", "gate", "--labels", "builtin:seed", "--decider", "sparrow", "--json")
    assert code == 0, err
    body = json.loads(out)
    assert body["backend"].startswith("sparrow") and len(body["candidates"]) >= 3
    assert all(set(c) == GATE_KEYS | {"errors"} for c in body["candidates"].values())
    code, out, err = run_cli("tune", "validator", "--cases", "builtin:seed", "--decider", "sparrow", "--json")
    assert code == 0, err
    assert all(set(c) == VALIDATOR_KEYS | {"errors"} for c in json.loads(out)["candidates"].values())


def test_the_readmes_tune_then_from_config_sequence_gives_config_sources(tmp_path, real_store) -> None:
    """README "Tuning": `tune gate/validator ... --write-config` then `RecallPolicy.from_config`."""
    import subprocess
    import sys

    from recallwise import RecallPolicy

    config = tmp_path / "thresholds.json"
    for command in (
        ["tune", "gate", "--labels", "builtin:seed", "--write-config", str(config), "--json"],
        ["tune", "validator", "--cases", "builtin:seed", "--write-config", str(config), "--json"],
    ):
        done = subprocess.run([sys.executable, "-m", "recallwise", *command], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    policy = RecallPolicy.from_config(config, real_store)
    for role in ("gate", "judge", "judge_relative"):
        assert policy.threshold_sources[role] == f"config {config}", role
    policy.close()
