"""The spine's commands, in-process (``main(argv)``), and the text demo through the console script."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from cli_runner import run_cli

RG = shutil.which("recallwise") or ""


def run_console_script(*args, cwd=None):
    cmd = [RG, *args] if RG else [sys.executable, "-m", "recallwise", *args]
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


run = run_cli


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    out = run("demo", "--json", "--store", f"sqlite:///{path}")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), path


def test_demo_json_shape(demo):
    data, _ = demo
    assert set(data) >= {"turns", "arms", "per_turn"}
    assert len(data["turns"]) == 8
    for arm in ("stock", "gated"):
        assert {
            "turns",
            "retrievals",
            "records_injected",
            "decider_errors",
            "store_errors",
            "wall_ms",
        } <= set(data["arms"][arm])
    row = data["per_turn"][0]
    assert {"turn", "stock", "gated"} <= set(row)
    assert {"gate_p", "retrieved", "injected", "dropped"} <= set(row["gated"])


def test_demo_gates_and_judges_as_documented(demo):
    data, _ = demo
    by = {t["turn"]: t["gated"] for t in data["per_turn"]}
    for closed in (
        "Hello!",
        "What is 17 times 23?",
        "Thanks!",
        "Can you explain what a bloom filter is?",
        "ok cool",
    ):
        assert not by[closed]["retrieved"], closed
    drink = " ".join(by["I'd like a drink, what should I get?"]["injected"]).lower()
    assert "flat white" in drink and "spaces" not in drink and "aisle" not in drink
    dinner = " ".join(by["What should I have for dinner?"]["injected"]).lower()
    assert "vegetarian" in dinner and "peanut" in dinner
    flight = " ".join(by["I'm booking a flight next week, anything you should know?"]["injected"])
    assert "aisle" in flight and "YVR" in flight
    stock, gated = data["arms"]["stock"], data["arms"]["gated"]
    assert stock["retrievals"] == 8 and gated["retrievals"] == 3
    assert gated["records_injected"] <= 0.2 * stock["records_injected"]
    assert gated["decider_errors"] == 0


def test_demo_second_run_does_not_reseed(demo):
    _, path = demo
    out = run("demo", "--json", "--store", f"sqlite:///{path}")
    assert json.loads(out.stdout)["seeded"] == 0


def test_demo_text_output(demo):
    _, path = demo
    out = run_console_script("demo", "--store", f"sqlite:///{path}")
    assert out.returncode == 0
    assert "records injected" in out.stdout and "gate p=" in out.stdout


def test_search_lists_every_record_with_spread(demo):
    _, path = demo
    out = run("search", "drink preference", "--json", "--store", f"sqlite:///{path}")
    data = json.loads(out.stdout)
    from recallwise import open_store

    assert (
        len(data["records"]) == len(open_store(f"sqlite:///{path}").list_records(actor_id="demo_user")) >= 15
    )
    scores = [r["score"] for r in data["records"]]
    assert scores == sorted(scores, reverse=True)
    assert data["spread"] == {"min": min(scores), "max": max(scores)}


@pytest.mark.parametrize("url", ["mysql://nope", "sqlite:////nonexistent-dir/x.db"])
def test_bad_store_url_is_one_line_exit_2(url, tmp_path):
    out = run("demo", "--json", "--store", url, cwd=tmp_path)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1
    assert out.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_unknown_decider_is_exit_2(tmp_path):
    out = run("demo", "--decider", "nope", "--store", f"sqlite:///{tmp_path}/x.db")
    assert out.returncode == 2 and "unknown decider" in out.stderr


def test_usage_error_exit_2():
    out = run("search")
    assert out.returncode == 2
