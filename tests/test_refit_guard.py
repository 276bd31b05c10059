"""A refit that cannot silently make things worse: ``tune gate|judge --fit`` combines a user's labels
with the shipped fit data (weighted), reports before and after on the calibration split and on the
user's labels, and refuses to write a head worse on the calibration split unless ``--force``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from cli_runner import run_cli
from recallwise.errors import UsageError
from recallwise.tuning.fitting import fit_logistic, fit_perceptron
from recallwise.tuning.labelled import LabelledTurn
from recallwise.tuning.refit import SHIPPED, combine, shipped_data

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "data" / "decisions" / "dev"


def test_weights_count_as_repeated_rows() -> None:
    """A row of weight 3 fits as three copies of it (logistic); unit weights change nothing."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 3))
    y = (x @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=60)) > 0
    weights = np.ones(60)
    weights[:10] = 3.0
    w, b = fit_logistic(x, y, 1.0, sample_weight=weights)
    repeated_x = np.vstack([x, x[:10], x[:10]])
    repeated_y = np.concatenate([y, y[:10], y[:10]])
    w2, b2 = fit_logistic(repeated_x, repeated_y, 1.0)
    assert np.allclose(w, w2, atol=1e-6) and b == pytest.approx(b2, abs=1e-6)
    plain = fit_logistic(x, y, 1.0)
    ones = fit_logistic(x, y, 1.0, sample_weight=np.ones(60))
    assert np.allclose(plain[0], ones[0]) and plain[1] == pytest.approx(ones[1])
    a = fit_perceptron(x, y, 4, 1.0, epochs=20)
    c = fit_perceptron(x, y, 4, 1.0, epochs=20, sample_weight=np.ones(60))
    assert all(np.allclose(u, v) for u, v in zip(a, c, strict=True))
    with pytest.raises(ValueError, match="sample_weight"):
        fit_logistic(x, y, 1.0, sample_weight=np.ones(59))


def test_combine_weighs_the_users_turns_and_their_label_wins() -> None:
    base = [LabelledTurn(f"b{i}", i % 2 == 0, ()) for i in range(5)]
    user = [LabelledTurn("b0", False, ()), LabelledTurn("mine", True, ())]
    turns, weights = combine(user, base, 10.0)
    assert [t.text for t in turns] == ["b1", "b2", "b3", "b4", "b0", "mine"]
    assert weights == [1.0, 1.0, 1.0, 1.0, 10.0, 10.0]
    assert next(t for t in turns if t.text == "b0").label is False
    with pytest.raises(UsageError, match="--weight"):
        combine(user, base, 0.0)


def test_shipped_data_is_the_checkouts_and_says_what_to_do_without_it(tmp_path: Path) -> None:
    data = shipped_data(SHIPPED)
    assert data is not None and data.root == ROOT / "data" / "decisions"
    assert data.calibration_specs() == [str(ROOT / "data" / "decisions" / "calib")]
    assert shipped_data("none") is None
    with pytest.raises(UsageError, match=r"expected a folder holding fit/ and calib/"):
        shipped_data(str(tmp_path))


def _write(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture(scope="module")
def small_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A base folder like data/decisions/ (fit/ and calib/), small enough for a logistic head: the
    outside dev split's CLINC150 and written turns, shuffled into two halves."""
    rows = [
        json.loads(line)
        for name in ("gate-clinc150.jsonl", "gate-rw-written-en.jsonl")
        for line in (DEV / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    random.Random(0).shuffle(rows)
    rows = rows[:600]
    root = tmp_path_factory.mktemp("base")
    _write(root / "fit" / "gate-small.jsonl", rows[:300])
    _write(root / "calib" / "gate-small.jsonl", rows[300:])
    return root


def _labels(tmp_path: Path, *, inverted: bool) -> Path:
    rows = [
        json.loads(line)
        for line in (DEV / "gate-clinc150.jsonl").read_text(encoding="utf-8").splitlines()[-400:]
        if line.strip()
    ]
    positives = [r for r in rows if r["label"]][:15]
    negatives = [r for r in rows if not r["label"]][:15]
    out = [
        {"text": r["text"], "label": (not r["label"]) if inverted else r["label"]}
        for r in positives + negatives
    ]
    path = tmp_path / "labels.jsonl"
    _write(path, out)
    return path


def test_a_refit_that_is_worse_on_the_calibration_split_is_refused(tmp_path: Path, small_base: Path) -> None:
    """Labels that contradict the base data, weighed heavily, make a worse head: exit 2, one line
    saying by how much, nothing written; --force writes it, and the JSON says it was forced."""
    labels, head, config = _labels(tmp_path, inverted=True), tmp_path / "g.npz", tmp_path / "cfg.json"
    args = ["tune", "gate", "--fit", str(labels), "--base", str(small_base), "--weight", "40"]
    done = run_cli(*args, "--write-head", str(head), "--write-config", str(config))
    assert done.returncode == 2, done.stdout + done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert (
        "not written" in line
        and "calibration turns" in line
        and "--force" in line
        and "Traceback" not in done.stderr
    )
    assert " against the current " in line and "worse" in line
    assert not head.exists() and not config.exists()
    done = run_cli(*args, "--write-head", str(head), "--force", "--json")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["guard"]["worse"] and body["guard"]["forced"] and head.exists()
    assert body["guard"]["after"] < body["guard"]["before"] - body["guard"]["tolerance"]
    # report only (no --write-head): the figures and a note, exit 0
    done = run_cli(*args, "--json")
    assert done.returncode == 0 and any("not written" in n for n in json.loads(done.stdout)["notes"])


def test_a_sensible_refit_is_combined_reported_and_written(tmp_path: Path, small_base: Path) -> None:
    labels, head, config = _labels(tmp_path, inverted=False), tmp_path / "g.npz", tmp_path / "cfg.json"
    done = run_cli(
        "tune",
        "gate",
        "--fit",
        str(labels),
        "--base",
        str(small_base),
        "--write-head",
        str(head),
        "--write-config",
        str(config),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["graded_on"] == "calibration turns" and body["after"]["n"] == 300
    assert body["base"]["user_weight"] == 10.0
    assert sum(s["turns"] for s in body["base"]["data"]) > 300  # the base's fit plus the datasheet's sets
    assert set(body["on_labels"]) == {"before", "after"} and body["on_labels"]["after"]["n"] == 30
    assert not body["guard"]["worse"] and head.exists() and config.exists()
    text = run_cli("tune", "gate", "--fit", str(labels), "--base", str(small_base))
    assert text.returncode == 0 and "your labels: before" in text.stdout and "weigh 10 each" in text.stdout
