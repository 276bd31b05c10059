"""The LoCoMo benchmark: loader and both arms on a small file in LoCoMo's format, and the real
data (evaluation only, read from the shared data directory) when it is on this machine."""

import json
import os
from pathlib import Path

import pytest

from cli_runner import run_cli
from recallwise.bench.locomo import run_locomo
from recallwise.datasets.locomo import SPLITS, load_conversation
from recallwise.errors import UsageError


def _tiny(path: Path, cid: str) -> None:
    data = {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:00 pm on 3 May, 2023",
        "session_1": [],
        "session_1_observation": {
            "Ana": [["Ana adopted a grey cat named Pixel.", "D1:1"], ["Ana works as a pharmacist.", "D1:3"]],
            "Ben": [["Ben ran the Lisbon marathon in April.", "D1:2"], ["Ben is learning Korean.", ["D1:4"]]],
        },
        "session_2_observation": {"Ana": [["Ana repainted her kitchen yellow.", "D2:1"]]},
        "qa": [
            {
                "question": "What is the name of Ana's cat?",
                "answer": "Pixel",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Which marathon did Ben run?",
                "answer": "Lisbon",
                "evidence": ["D1:2"],
                "category": 4,
            },
            {
                "question": "What is Ben's favourite food?",
                "adversarial_answer": "x",
                "evidence": [],
                "category": 5,
            },
            {
                "question": "What colour is the kitchen?",
                "answer": "yellow",
                "evidence": ["D9:9"],
                "category": 1,
            },
        ],
    }
    (path / f"{cid}.json").write_text(json.dumps(data))


@pytest.fixture
def tiny_dir(tmp_path):
    for cid in SPLITS["dev"]:
        _tiny(tmp_path, cid)
    return tmp_path


def test_loader_keeps_answerable_non_adversarial_questions(tiny_dir):
    conv = load_conversation(tiny_dir / "26.json")
    assert conv.speakers == ("Ana", "Ben")
    assert len(conv.observations) == 5
    assert [q.text for q in conv.questions] == [
        "What is the name of Ana's cat?",
        "Which marathon did Ben run?",
    ]
    assert conv.questions[0].relevant == {"o0"}


def test_both_arms_on_the_tiny_split(tiny_dir, minilm):
    from recallwise import default_decider

    out = run_locomo(tiny_dir, "dev", default_decider(), embedder=minilm, policy_options={"max_records": 5})
    assert out["questions"] == 10 and out["conversations"] == 5
    assert out["stock"]["recall"] == 1.0  # five records, top-10 per namespace keeps them all
    assert out["gated"]["gate_open_rate"] == 1.0
    assert out["gated"]["recall"] == 1.0
    assert out["gated"]["records_per_question"] <= 5
    assert set(out["latency_ms"]) == {"embed_p50", "decide_p50", "search_p50"}
    assert 0 <= out["gate_heldout"]["non_memory_closed_rate"] <= 1


def test_bad_inputs_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        run_locomo(tmp_path / "nope", "dev", None)
    with pytest.raises(UsageError, match="lacks"):
        run_locomo(tmp_path, "test", None)
    (tmp_path / "26.json").write_text("{not json")
    with pytest.raises(UsageError, match=r"26\.json"):
        load_conversation(tmp_path / "26.json")


def _real_data() -> Path | None:
    for candidate in (
        os.environ.get("RECALLWISE_LOCOMO_DIR"),
        Path(__file__).resolve().parents[2] / "shared/data/locomo",
        "/work/shared/data/locomo",
    ):
        if candidate and (Path(candidate) / "30.json").exists():
            return Path(candidate)
    return None


@pytest.mark.slow
@pytest.mark.skipif(
    _real_data() is None, reason="LoCoMo data not on this machine (set RECALLWISE_LOCOMO_DIR)"
)
def test_cli_json_on_the_real_dev_split():
    out = run_cli("bench", "locomo", "--data", str(_real_data()), "--split", "dev", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    for key in ("split", "conversations", "questions", "stock", "gated", "latency_ms"):
        assert key in data
    assert data["questions"] == 630
    assert {"recall", "any_hit", "records_per_question", "tokens_per_question"} <= set(data["stock"])
    assert {"gate_open_rate", "judge_mean_auc", "judge_p_at_k"} <= set(data["gated"])
    assert data["gated"]["records_per_question"] <= 5


def test_cli_bad_split_is_exit_2(tmp_path):
    out = run_cli("bench", "locomo", "--data", str(tmp_path), "--split", "dev", "--json")
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_heldout_closure_is_also_measured_against_each_store(tiny_dir, minilm):
    from recallwise import default_decider

    out = run_locomo(tiny_dir, "dev", default_decider(), embedder=minilm)
    held = out["gate_heldout"]
    assert 0 <= held["non_memory_closed_rate_with_store"] <= 1
    assert 0 <= held["memory_open_rate_with_store"] <= 1


def test_tune_named_gate_fits_on_dev_and_refuses_test(tiny_dir, tmp_path, capsys):
    from recallwise.cli import main

    config = tmp_path / "fitted.json"
    assert (
        main(["tune", "named-gate", "--locomo", str(tiny_dir), "--json", "--write-config", str(config)]) == 0
    )
    fit = json.loads(capsys.readouterr().out)
    assert fit["split"] == "dev" and fit["positives"] == 10
    assert fit["negatives"] == 5 * 60  # the bank's non-memory messages against each store
    assert fit["positives_named"] == 1.0  # "Ana", "Ben" are in every tiny store
    assert 0.0 <= fit["named_threshold"] <= fit["gate_threshold"]
    assert fit["balanced_accuracy"]["with_store"] >= fit["balanced_accuracy"]["message_only"]
    saved = json.loads(config.read_text())
    assert json.dumps(saved).count("gate_named") == 1
    assert main(["tune", "named-gate", "--locomo", str(tiny_dir), "--split", "test"]) == 2
    assert "dev only" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "hi"}\n')
    assert main(["tune", "named-gate", "--locomo", str(tiny_dir), "--negatives", str(bad)]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err


def test_per_category_and_token_budget_keys(tiny_dir, minilm):
    from recallwise import default_decider
    from recallwise.bench.locomo import TOKEN_BUDGETS

    out = run_locomo(tiny_dir, "dev", default_decider(), embedder=minilm, policy_options={"max_records": 1})
    for arm in ("stock", "gated"):
        cats = out[arm]["recall_by_category"]
        assert list(cats) == ["4"]  # the tiny file's answerable questions are all category 4
        assert cats["4"] == out[arm]["recall"]
        at = out[arm]["recall_at_tokens"]
        assert list(at) == [str(b) for b in TOKEN_BUDGETS]
        assert all(0.0 <= v <= 1.0 for v in at.values())
        assert list(at.values()) == sorted(at.values())  # a bigger budget never finds less
    # no block fits in 50 tokens' worth of tags alone? every record line here is short: the best
    # record of each arm fits, and the stock arm cut to the gated arm's tokens finds no more
    assert out["stock"]["recall_at_gated_tokens"] <= out["stock"]["recall"]
    assert out["gated"]["records_per_question"] == 1.0
    assert "recall_at_gated_tokens" not in out["gated"]


def test_the_cli_runs_the_gated_arm_with_the_episodic_options_and_says_so(tiny_dir, capsys):
    from recallwise.cli import main
    from recallwise.policy import ADAPTIVE_BUDGET, CONVERSATION_WEIGHTS

    assert main(["bench", "locomo", "--data", str(tiny_dir), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["top_k"] == 10 and out["gated_top_k"] == 30
    keep = out["gated_keep"]
    assert keep["max_records"] == 5
    assert keep["conversation_rescore"] == {
        "centre": CONVERSATION_WEIGHTS.centre,
        "session": CONVERSATION_WEIGHTS.session,
    }
    assert keep["adaptive_budget"]["max_records"] == ADAPTIVE_BUDGET.max_records
    assert out["gated"]["rescored_rate"] == 1.0  # every tiny conversation has two sessions
    args = ["bench", "locomo", "--data", str(tiny_dir), "--json", "--gated-top-k", "10"]
    assert main([*args, "--no-conversation-rescore", "--no-adaptive-budget"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert before["gated_top_k"] == 10
    assert before["gated_keep"]["conversation_rescore"] is None
    assert before["gated_keep"]["adaptive_budget"] is None
    assert before["gated"]["rescored_rate"] == 0.0
    assert main([*args, "--gated-top-k", "0"]) == 2
    assert "--gated-top-k" in capsys.readouterr().err
