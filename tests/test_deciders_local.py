"""In-process backends (sparrow, strands-local), the registry, `recallwise ask` and the demo."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from recallwise.cli import main
from recallwise.deciders import DEFAULT_THRESHOLDS, available_deciders, make_decider
from recallwise.deciders import ask as policy_ask
from recallwise.errors import DeciderError, UsageError
from recallwise.records import render_text
from wire_servers import llm_fake, serve_socket, sparrow_serve

pytest.importorskip("sparrow_decider", reason="sparrow-decider is in the dev extra")


# ---- registry -----------------------------------------------------------------------------


def test_every_backend_is_registered() -> None:
    assert {"embedded", "sparrow", "systemone", "openrouter", "sagemaker", "strands-local", "llm"} <= set(
        available_deciders()
    )


def test_a_missing_extra_is_a_usage_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sparrow_decider", None)  # import sparrow_decider -> ImportError
    with pytest.raises(UsageError, match=r"pip install 'recallwise\[sparrow\]'"):
        make_decider("sparrow")
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(UsageError, match=r"pip install 'recallwise\[sagemaker\]'"):
        make_decider("sagemaker", url="sagemaker://ep?region=us-east-1")


def test_in_process_backends_refuse_a_url() -> None:
    with pytest.raises(UsageError, match="takes no --url"):
        make_decider("sparrow", url="http://127.0.0.1:1")


# ---- sparrow --------------------------------------------------------------------------


def test_sparrow_answers_depend_on_the_state() -> None:
    sparrow = make_decider("sparrow")
    question = {
        "q": {
            "type": "choice",
            "instructions": "Topic?",
            "criteria": {"drinks": "", "travel": "", "code": ""},
        }
    }
    assert sparrow.ask("What should I drink? Coffee or tea?", question)["q"].choice == "drinks"
    assert sparrow.ask("Book me a flight and a hotel for my trip", question)["q"].choice == "travel"


def test_sparrow_unknown_model_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no model"):
        make_decider("sparrow", model="no-such-model")


def _auc(pos: list[float], neg: list[float]) -> float:
    return float(np.mean([1.0 if a > b else 0.5 if a == b else 0.0 for a in pos for b in neg]))


def test_sparrow_judge_thresholds_come_from_dev() -> None:
    """Re-measures the sparrow judge defaults in thresholds.py on data/dev (never seed/heldout)."""
    from recallwise.policy.wording import judge_question

    data = json.loads(resources.files("recallwise.data").joinpath("dev/validator_cases.json").read_text())
    sparrow = make_decider("sparrow")
    probs, labels, best, aucs = [], [], [], []
    for case in data["cases"]:
        ids = case["relevant"] + case["irrelevant"]
        questions = {f"r{i}": judge_question(render_text(data["records"][r])) for i, r in enumerate(ids)}
        answers = policy_ask(sparrow, case["query"], questions)
        ps = [float(answers[f"r{i}"]) for i in range(len(ids))]
        ls = [True] * len(case["relevant"]) + [False] * len(case["irrelevant"])
        aucs.append(
            _auc(
                [p for p, lab in zip(ps, ls, strict=True) if lab],
                [p for p, lab in zip(ps, ls, strict=True) if not lab],
            )
        )
        probs += ps
        labels += ls
        best += [max(ps)] * len(ps)
    p, y, top = np.array(probs), np.array(labels), np.array(best)
    grid = [
        (float(((p >= t) & (p >= top - d) == y).mean()), -t, -d)
        for t in np.round(np.arange(0.0, 1.0, 0.01), 2)
        for d in (0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)
    ]
    accuracy, t, d = max(grid)
    table = DEFAULT_THRESHOLDS["sparrow"]
    assert table["judge"].measured and table["judge_relative"].measured
    assert (table["judge"].value, table["judge_relative"].value) == (-t, -d)
    assert accuracy == pytest.approx(0.716, abs=0.001)
    assert float(np.mean(aucs)) == pytest.approx(0.594, abs=0.001)
    assert float((~y).mean()) == pytest.approx(0.707, abs=0.001)  # keeping nothing


# ---- strands-local --------------------------------------------------------------------


def test_strands_local_needs_a_local_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RECALLWISE_STRANDS_CHECKPOINT", raising=False)
    with pytest.raises(UsageError, match="needs a local checkpoint"):
        make_decider("strands-local")
    with pytest.raises(UsageError, match="never downloads"):
        make_decider("strands-local", url="StrandsAgents/strands-decider-2B-hobson-v21")
    with pytest.raises(UsageError, match="never downloads"):
        make_decider("strands-local", url="https://huggingface.co/x")
    with pytest.raises(UsageError, match=r"holds no strands_decider_config\.json"):
        make_decider("strands-local", checkpoint=str(tmp_path))


def test_strands_local_without_the_package_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "strands_decider_config.json").write_text('{"max_length": 4096}')
    monkeypatch.setitem(sys.modules, "strands_decider", None)
    monkeypatch.setitem(sys.modules, "strands_decider.infer", None)
    with pytest.raises(UsageError, match=r"recallwise\[strands-local\]"):
        make_decider("strands-local", url=f"file://{tmp_path}")


@pytest.mark.slow
def test_strands_local_with_a_real_checkpoint() -> None:
    checkpoint = os.environ.get("RECALLWISE_STRANDS_CHECKPOINT")
    if not checkpoint:
        pytest.skip(
            "set RECALLWISE_STRANDS_CHECKPOINT to a local strands-decider checkpoint directory (with "
            "its base model in the local Hugging Face cache) and install recallwise[strands-local]; "
            "none is available on this project's machines and this backend never downloads"
        )
    pytest.importorskip("strands_decider", reason="pip install 'recallwise[strands-local]'")
    decider = make_decider("strands-local", checkpoint=checkpoint)
    questions = {
        "gate": {"type": "noul", "instructions": "Is the user asking for a recommendation?"},
        "topic": {
            "type": "choice",
            "instructions": "Topic?",
            "criteria": {"drinks": "", "travel": "", "code": ""},
        },
    }
    answers = decider.ask("I'd like a drink, what should I get?", questions)
    assert answers["topic"].choice == "drinks" and 0.0 <= answers["gate"] <= 1.0


# ---- recallwise ask -------------------------------------------------------------------


@pytest.fixture(scope="module")
def sparrow_url() -> Iterator[str]:
    with sparrow_serve() as url:
        yield url


ASK = [
    "--state",
    "I'd like a drink, what should I get?",
    "--noul",
    "The user is asking for a recommendation.",
    "--choice",
    "topic=drinks,travel,code",
    "--score",
    "How personal?=not,a bit,very",
]


def test_ask_json_systemone_and_sparrow_agree(sparrow_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--decider", "systemone", "--url", sparrow_url, *ASK, "--json"]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert main(["ask", "--decider", "sparrow", *ASK, "--json"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert remote["backend"] == "systemone" and local["backend"] == "sparrow"
    assert set(remote["answers"]) == {"noul_0", "choice_0", "score_0"}
    assert remote["answers"]["noul_0"]["noul"] == pytest.approx(local["answers"]["noul_0"]["noul"], abs=0.01)
    assert remote["answers"]["choice_0"] == local["answers"]["choice_0"]
    assert remote["answers"]["score_0"]["probabilities"] == local["answers"]["score_0"]["probabilities"]
    assert remote["latency_ms"] > 0 and remote["warnings"] == []
    # Every backend prints the same keys; usage is what the backend reported for this call.
    assert (
        set(remote)
        == set(local)
        == {*("backend", "model", "latency_ms", "answers", "warnings", "reads_wording", "usage")}
    )
    assert set(remote["usage"]) == {"calls", "input_tokens", "output_tokens"} and local["usage"] == {
        "calls": 1
    }


def test_ask_json_reports_the_calls_warnings(sparrow_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["ask", "--decider", "systemone", "--url", sparrow_url, "--option", "max_state_chars=10", *ASK]
    assert main([*argv, "--json"]) == 0
    (warning,) = json.loads(capsys.readouterr().out)["warnings"]
    assert "state truncated from 36 to 10 characters" in warning
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith(f"warning: {warning}\n")


def test_ask_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "ask",
                "--decider",
                "sparrow",
                *ASK,
                "--criteria-true",
                "asks for a pick",
                "--criteria-false",
                "anything else",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "choice_0 -> drinks" in out and "noul_0 =" in out and "score_0 -> level" in out


def test_ask_options_reach_the_backend(capsys: pytest.CaptureFixture[str]) -> None:
    with serve_socket(llm_fake()) as server:
        code = main(
            [
                "ask",
                "--decider",
                "llm",
                "--url",
                server.url,
                "--model",
                "tiny",
                "--option",
                "mode=completions",
                "--option",
                "top_logprobs=5",
                "--state",
                "a drink please",
                "--noul",
                "drink?",
                "--json",
            ]
        )
        assert code == 0
        sent = server.received[-1]
    assert sent.path == "/v1/completions" and sent.body["model"] == "tiny" and sent.body["logprobs"] == 5
    assert json.loads(capsys.readouterr().out)["usage"]["requests"] == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--state", "x"], "ask at least one question"),
        (["--state", "", "--noul", "q"], "state is empty"),
        (["--state", "x", "--choice", "pick=a"], "'choice_0': a choice needs 2"),
        (["--state", "x", "--choice", "no options"], "expected 'question=option"),
        (["--state", "x", "--noul", "q", "--criteria-true", "t"], "go together"),
        (["--state", "x", "--noul", "q", "--option", "oops"], "KEY=VALUE"),
        (["--state", "x", "--noul", "q", "--option", "colour=red"], "does not take colour"),
    ],
)
def test_ask_usage_errors_exit_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", "--decider", "sparrow", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_ask_dead_url_exits_1_with_a_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--decider", "systemone", "--url", "http://127.0.0.1:9", *ASK, "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "cannot connect to http://127.0.0.1:9/v1/systemone" in captured.err


def test_sparrow_errors_are_decider_errors() -> None:
    sparrow = make_decider("sparrow")
    sparrow._model.ask = lambda *a: (_ for _ in ()).throw(ValueError("refused"))  # type: ignore[attr-defined]
    with pytest.raises(DeciderError, match="refused"):
        sparrow.ask("x", {"q": {"type": "noul", "instructions": "y"}})


# ---- the demo with other backends ------------------------------------------------------


def test_demo_runs_with_sparrow_and_with_systemone(
    sparrow_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = {}
    for name, extra in (("sparrow", []), ("systemone", ["--url", sparrow_url])):
        store = f"sqlite:///{tmp_path}/{name}.db"
        assert main(["demo", "--decider", name, *extra, "--store", store, "--json"]) == 0
        results[name] = json.loads(capsys.readouterr().out)
    for name, result in results.items():
        gated = result["arms"]["gated"]
        assert result["decider"] == name
        assert gated["decider_errors"] == 0 and gated["decider_calls"] > 0
    # The same model behind HTTP and in-process: the same gate probabilities, turn by turn
    # (the decisions may differ: sparrow's threshold is measured, systemone's is a default).
    local = [t["gated"]["gate_p"] for t in results["sparrow"]["per_turn"]]
    served = [t["gated"]["gate_p"] for t in results["systemone"]["per_turn"]]
    assert served == pytest.approx(local, abs=0.01)
