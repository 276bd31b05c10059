"""``--embedder`` on the commands, and the multilingual bad input, run as a user runs them."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from cli_runner import run_cli

RG = shutil.which("recallwise") or ""


run = run_cli


def _conversation(path: Path, bad_line: bool = False) -> Path:
    lines = [
        json.dumps({"role": "user", "text": "I drink oat-milk flat whites, never after 3 pm."}).encode(),
        json.dumps(
            {"role": "user", "text": "Me llamo Lucía y vivo en Sevilla."}, ensure_ascii=False
        ).encode(),
        json.dumps({"role": "user", "text": "I always book an aisle seat."}).encode(),
    ]
    if bad_line:
        lines.insert(1, b'{"role": "user", "text": "caf\xe9 au lait"}')  # Latin-1, not UTF-8
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_ingest_and_search_with_the_multilingual_embedder(tmp_path):
    store = f"sqlite:///{tmp_path}/m.db"
    source = _conversation(tmp_path / "chat.jsonl")
    out = run("ingest", str(source), "--store", store, "--embedder", "multilingual", "--actor", "u", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["records_added"] >= 2
    # the store remembers its embedder: search without --embedder uses it
    out = run("search", "¿Qué café tomo?", "--store", store, "--actor", "u", "--json")
    assert out.returncode == 0, out.stderr
    best = json.loads(out.stdout)["records"][0]["text"]
    assert "flat white" in best
    # and refuses another, naming both
    out = run("search", "coffee", "--store", store, "--actor", "u", "--embedder", "minilm-l6")
    assert out.returncode == 2 and out.stdout == ""
    assert "use-multilingual-v3" in out.stderr and "minilm-l6" in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_ingest_reports_a_line_that_is_not_utf8_and_loads_the_rest(tmp_path):
    source = _conversation(tmp_path / "chat.jsonl", bad_line=True)
    out = run("ingest", str(source), "--store", f"sqlite:///{tmp_path}/u.db", "--actor", "u", "--json")
    assert out.returncode == 1, out.stderr  # some lines skipped: not a clean run
    data = json.loads(out.stdout)
    assert data["errors"] == [{"line": 2, "error": "not UTF-8 text (byte 0xe9 at column 30)"}]
    assert data["events_loaded"] == 3
    text = run("ingest", str(source), "--store", f"sqlite:///{tmp_path}/v.db", "--actor", "u")
    assert f"{source}:2: not UTF-8 text" in text.stderr


@pytest.mark.parametrize("files", [[], ["model.onnx"], ["tokenizer.json"]])
def test_a_broken_onnx_directory_is_one_line_naming_it_and_exit_2(tmp_path, files):
    directory = tmp_path / "model"
    directory.mkdir()
    for name in files:
        (directory / name).write_text("{}")
    out = run("search", "x", "--store", f"sqlite:///{tmp_path}/o.db", "--embedder", f"onnx:{directory}")
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and str(directory) in lines[0] and "Traceback" not in out.stderr


def test_unknown_embedder_and_embedder_for_a_decider_without_one(tmp_path):
    out = run("search", "x", "--store", f"sqlite:///{tmp_path}/a.db", "--embedder", "nope")
    assert out.returncode == 2 and "unknown embedder 'nope'; available:" in out.stderr
    out = run(
        "tune", "gate", "--labels", "builtin:seed", "--decider", "sparrow", "--embedder", "multilingual"
    )
    assert out.returncode == 2 and "--embedder picks the embedded decider's model" in out.stderr


def test_tune_with_the_multilingual_embedder_reports_per_language(tmp_path):
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        "\n".join(
            json.dumps(row, ensure_ascii=False)
            for row in (
                {"text": "¿Qué le regalo a mi madre?", "label": True, "lang": "es"},
                {"text": "¿Cuánto es dos más dos?", "label": False, "lang": "es"},
                {"text": "What should I cook for my kids tonight?", "label": True, "lang": "en"},
                {"text": "What is the capital of Chile?", "label": False, "lang": "en"},
            )
        )
    )
    out = run("tune", "gate", "--labels", str(labels), "--embedder", "multilingual", "--json")
    assert out.returncode == 0, out.stderr
    shipped = json.loads(out.stdout)["candidates"]["shipped"]
    assert set(shipped["by_language"]) == {"es", "en"}
    assert shipped["by_language"]["es"]["n"] == 2


def test_bench_locomo_takes_an_embedder(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    from recallwise.bench.locomo import SPLITS
    from test_bench_locomo import _tiny

    for cid in SPLITS["dev"]:
        _tiny(tmp_path, cid)
    out = run("bench", "locomo", "--data", str(tmp_path), "--embedder", "multilingual", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["embedder"] == "use-multilingual-v3" and data["questions"] == 10
    assert data["gated"]["decider_errors"] == 0
