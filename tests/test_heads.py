"""Learned heads: labelled turns, fitting and calibrating, loading them the way configs load, and
``tune gate|judge --fit`` / ``bench decisions`` end to end on the real embedded decider."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from cli_runner import run_cli
from recallwise import RecallPolicy
from recallwise.deciders import EmbeddedDecider
from recallwise.deciders.embedded import domain_names
from recallwise.deciders.heads import (
    GATE_FEATURES,
    JUDGE_FEATURES,
    Head,
    SpaceWeights,
    judge_width,
    read_head,
    shipped_head,
    write_head,
)
from recallwise.embeddings import HashingEmbedder
from recallwise.errors import UsageError
from recallwise.policy.config import FittedHead, read_config, write_config
from recallwise.policy.log import DecisionLog
from recallwise.policy.wording import GATE, gate_question, judge_question
from recallwise.stores import SQLiteStore
from recallwise.tuning import metrics
from recallwise.tuning.fitting import fit_logistic, fit_perceptron, fit_perceptrons, platt
from recallwise.tuning.gate_head import GATE_SEEDS, fit_gate_head, operating_threshold
from recallwise.tuning.heads import MIN_TURNS
from recallwise.tuning.judge_head import (
    KEEP_RELATIVE,
    RECORDS_PER_REQUEST,
    JudgedTurn,
    KeepRule,
    fit_judge_head,
    keep_rule,
    keep_threshold,
)
from recallwise.tuning.labelled import (
    LabelledTurn,
    labelled_turns_from_log,
    parse_labelled_turns,
    read_labelled_sources,
    read_labelled_turns,
)

DATA = Path(__file__).resolve().parents[1] / "src" / "recallwise" / "data"
GATE_SETS = [str(DATA / "gate_examples.jsonl"), str(DATA / "dev" / "gate_labels_multilingual.jsonl")]
JUDGE_SETS = ["builtin:dev", str(DATA / "dev" / "validator_cases_multilingual.json")]


# ---- labelled turns ---------------------------------------------------------------------------


def test_labelled_turns_read_as_jsonl_and_as_a_labels_object(tmp_path: Path) -> None:
    rows = [
        {"text": "What should I cook tonight?", "label": True, "lang": "en", "source": "mine"},
        {
            "text": "Suggest a wine",
            "records": [{"id": "r1", "text": "The user is vegetarian.", "label": False}],
        },
    ]
    jsonl = tmp_path / "turns.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    document = tmp_path / "labels.json"
    document.write_text(json.dumps({"labels": rows}), encoding="utf-8")
    for path in (jsonl, document):
        turns = read_labelled_turns(path)
        assert [t.text for t in turns] == ["What should I cook tonight?", "Suggest a wine"]
        assert turns[0].label is True and turns[0].lang == "en" and turns[0].source == "mine"
        assert turns[1].label is None and turns[1].records[0].label is False
    # a JSON string may hold U+2028 unescaped: it is not a line break of the file
    quirky = tmp_path / "quirky.jsonl"
    quirky.write_text('{"text": "a\u2028b", "label": false}\n', encoding="utf-8")
    assert read_labelled_turns(quirky)[0].text == "a\u2028b"


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"text": "hi"}', "line 2: unlabelled"),
        ('{"text": "hi", "label": "yes"}', "line 2: 'label' must be true or false"),
        ('{"label": true}', "line 2: missing 'text'"),
        ('{"text": "hi", "records": [{"id": "r", "label": true}]}', "line 2 records[0]: missing 'text'"),
        ('{"text": "hi", "label": true', "line 2: not a JSON object"),
    ],
)
def test_a_bad_line_is_named(tmp_path: Path, line: str, says: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "fine", "label": true}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"bad\.jsonl " + re.escape(says)):
        read_labelled_turns(path)


def test_labelled_turns_take_their_texts_from_the_decision_log(tmp_path: Path) -> None:
    store = SQLiteStore(f"sqlite:///{tmp_path / 'm.db'}")
    store_path = tmp_path / "log.db"
    from recallwise.records import MemoryRecord

    store.add_records([MemoryRecord("u1", "/facts/u1", "The user is vegetarian.", id="veg")])
    with DecisionLog(store_path) as log:
        policy = RecallPolicy(store, namespaces=["/facts/{actorId}"], log=log)
        policy.recall("What should I have for dinner?", actor_id="u1")
        log.write(
            policy.recall("Hello!", actor_id="u1").trace,
            actor_id="u1",
            session_id=None,
            decider="x",
            message="",
        )
        seqs = [t.id for t in log.turns()]
    labels = [
        {"decision_id": str(seqs[0]), "label": True, "records": [{"id": "veg", "label": True}]},
    ]
    turns = labelled_turns_from_log(store_path, labels)
    assert turns[0].text == "What should I have for dinner?" and turns[0].actor_id == "u1"
    assert turns[0].records[0].text == "The user is vegetarian."
    with pytest.raises(UsageError, match=r"logged without its message.*--log-content"):
        labelled_turns_from_log(store_path, [{"decision_id": str(seqs[-1]), "label": False}])
    with pytest.raises(UsageError, match="'999' is not in the log"):
        labelled_turns_from_log(store_path, [{"decision_id": "999", "label": False}])


def test_validator_cases_and_builtin_sets_read_as_turns() -> None:
    turns, sources = read_labelled_sources(JUDGE_SETS, "judge-*.jsonl", "judge")
    assert len(turns) == sum(s["turns"] for s in sources) and all(t.records for t in turns)
    assert any(r.label for r in turns[0].records) and any(not r.label for r in turns[0].records)
    with pytest.raises(UsageError, match="held-out sets are for reporting"):
        read_labelled_sources(["builtin:heldout"], "gate-*.jsonl", "gate")


# ---- the numerical part ----------------------------------------------------------------------


def test_logistic_and_platt_recover_what_made_the_data() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4000, 3))
    truth = np.array([2.0, -1.0, 0.5])
    y = rng.random(4000) < 1.0 / (1.0 + np.exp(-(x @ truth - 0.3)))
    weights, bias = fit_logistic(x, y, 1e-3)
    assert np.allclose(weights, truth, atol=0.15) and abs(bias + 0.3) < 0.15
    # logits twice too steep are brought back by Platt scaling
    a, c = platt(2.0 * (x @ truth - 0.3), y)
    assert a == pytest.approx(0.5, abs=0.06) and abs(c) < 0.1


def test_operating_threshold_opens_on_the_share_asked() -> None:
    p = np.linspace(0.01, 1.0, 100)
    t = operating_threshold(p, 0.97)
    assert np.mean(p >= t) >= 0.97 and np.mean(p >= t + 0.011) < 0.97


# ---- the gate head ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gate_fit():
    turns, _ = read_labelled_sources(GATE_SETS, "gate-*.jsonl", "gate")
    return fit_gate_head(turns, provenance={"data": GATE_SETS})


def test_gate_fit_reports_before_and_after_on_the_same_turns(gate_fit) -> None:
    keys = {"n", "accuracy", "auc", "ece"}
    assert keys <= set(gate_fit.before) and keys <= set(gate_fit.after)
    assert gate_fit.before["n"] == gate_fit.after["n"] == 208
    assert gate_fit.graded_on == "out of fold"
    assert set(gate_fit.head.spaces) == {"minilm-l6", "use-multilingual-v3"}
    # out of fold, the head separates the project's own sets and its p means something
    assert gate_fit.after["auc"] >= 0.95 and gate_fit.after["ece"] <= 0.1
    assert gate_fit.after["open_rate_true"] >= 0.96  # the operating point asked for (0.97), out of fold
    assert 0.0 < gate_fit.head.thresholds["gate"] < 1.0


def test_a_written_head_reads_back_the_same(gate_fit, tmp_path: Path) -> None:
    path = gate_fit.write(tmp_path / "gate.npz")
    head = read_head(path, "gate")
    assert head.features == GATE_FEATURES and head.thresholds == gate_fit.head.thresholds
    for name, weights in gate_fit.head.spaces.items():
        assert np.array_equal(head.spaces[name].weights, weights.weights)
    with pytest.raises(UsageError, match="is a gate head, not a judge head"):
        read_head(path, "judge")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(UsageError, match=r"junk\.npz: not a recallwise head file"):
        read_head(tmp_path / "junk.npz")


def test_the_decider_answers_the_gate_with_its_head(gate_fit) -> None:
    decider = EmbeddedDecider(heads={"gate": gate_fit.head})
    decision = decider.decide("What should I cook for my parents on Sunday?", {GATE: gate_question()})
    assert decision.usage.get("gate_head") == 1
    vector = decider.embedder.embed(["What should I cook for my parents on Sunday?"])[0]
    expected = gate_fit.head.spaces["minilm-l6"].probability(decider.gate_features(vector, gate_question()))
    assert decision.answers[GATE] == pytest.approx(expected)
    # a question without the gate role (a wording being compared) is answered as before
    plain = gate_question().__class__("noul", "Is this personal?")
    assert "gate_head" not in decider.decide("Hello!", {"q": plain}).usage


def test_a_head_fitted_for_another_embedder_is_refused(gate_fit) -> None:
    with pytest.raises(
        UsageError, match="fitted for minilm-l6, use-multilingual-v3; this decider embeds with hashing-64"
    ):
        EmbeddedDecider(HashingEmbedder(64), multilingual=False, heads={"gate": gate_fit.head})
    # the shipped heads have no weights for it either: it answers as before, and says no head
    decider = EmbeddedDecider(HashingEmbedder(64), multilingual=False)
    assert decider.heads_in_use() == {}


def test_a_perceptron_learns_what_a_logistic_regression_cannot() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(600, 2))
    y = (x[:, 0] > 0) != (x[:, 1] > 0)  # exclusive or: no line separates it
    hidden, hidden_bias, weights, bias = fit_perceptron(x, y, 8, 0.1, epochs=1500, learning_rate=0.05)
    p = 1.0 / (1.0 + np.exp(-(np.tanh(x @ hidden + hidden_bias) @ weights + bias)))
    assert np.mean((p >= 0.5) == y) >= 0.9
    assert np.array_equal(hidden, fit_perceptron(x, y, 8, 0.1, epochs=1500, learning_rate=0.05)[0])


def test_perceptrons_from_several_seeds_average_into_one_wider_perceptron() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(300, 3))
    y = x[:, 0] * x[:, 1] > 0
    hidden, hidden_bias, weights, bias = fit_perceptrons(x, y, 4, 0.1, 3)
    assert hidden.shape == (3, 12) and hidden_bias.shape == (12,) and weights.shape == (12,)
    each = [fit_perceptron(x, y, 4, 0.1, seed=seed) for seed in range(3)]
    mean_logit = np.mean([np.tanh(x @ h + c) @ w + b for h, c, w, b in each], axis=0)
    assert np.allclose(np.tanh(x @ hidden + hidden_bias) @ weights + bias, mean_logit)
    assert not np.allclose(each[0][0], each[1][0])  # the seeds start apart


def test_a_gate_head_with_a_hidden_layer_answers_and_reads_back(tmp_path: Path) -> None:
    turns, _ = read_labelled_sources(GATE_SETS, "gate-*.jsonl", "gate")
    fit = fit_gate_head(turns, hidden=6)
    weights = fit.head.spaces["minilm-l6"]
    units = 6 * GATE_SEEDS  # the seeds' perceptrons side by side
    assert weights.hidden is not None and weights.hidden.shape == (385, units)
    assert weights.weights.shape == (units,)
    assert fit.after["auc"] >= 0.9 and fit.head.provenance["fit"]["minilm-l6"]["hidden"] == 6
    head = read_head(fit.write(tmp_path / "gate.npz"), "gate")
    again = head.spaces["minilm-l6"]
    assert again.hidden is not None and np.array_equal(again.hidden, weights.hidden)
    decider = EmbeddedDecider(heads={"gate": head})
    message = "What should I cook for my parents on Sunday?"
    vector = decider.embedder.embed([message])[0]
    expected = weights.probability(decider.gate_features(vector, gate_question()))
    assert decider.decide(message, {GATE: gate_question()}).answers[GATE] == pytest.approx(expected)
    # a few hundred labels (a user's own) get the logistic regression unless asked
    assert fit_gate_head(turns).head.spaces["minilm-l6"].hidden is None


def _write_npz(path: Path, meta: dict, **arrays: np.ndarray) -> Path:
    with path.open("wb") as handle:
        np.savez(handle, meta=np.array(json.dumps(meta)), **arrays)
    return path


@pytest.mark.parametrize(
    ("arrays", "says"),
    [
        ({"h0": np.zeros((4, 3))}, "half a hidden layer"),
        ({"h0": np.zeros((4, 2)), "c0": np.zeros(2)}, "malformed hidden layer"),  # 3 output weights
        ({"h0": np.zeros(4), "c0": np.zeros(3)}, "malformed hidden layer"),
        ({"h0": np.full((4, 3), np.nan), "c0": np.zeros(3)}, "malformed hidden layer"),
    ],
)
def test_a_malformed_hidden_layer_is_refused(tmp_path: Path, arrays: dict, says: str) -> None:
    meta = {"format": "recallwise-head/1", "role": "gate", "features": list(GATE_FEATURES)}
    meta["spaces"] = [{"embedder": "x", "n": 1}]
    path = _write_npz(tmp_path / "gate.npz", meta, w0=np.zeros(3), b0=np.array(0.0), **arrays)
    with pytest.raises(UsageError, match=rf"gate\.npz: space 'x' has (a )?{says}"):
        read_head(path, "gate")


def test_a_judge_head_from_another_domain_bank_is_refused(tmp_path: Path) -> None:
    names = ("food", "travel")
    other = Head(
        "judge", {"minilm-l6": SpaceWeights("minilm-l6", np.zeros(judge_width(2)), 0.0)}, JUDGE_FEATURES
    )
    path = write_head(
        Head(other.role, other.spaces, other.features, {}, "argument", names), tmp_path / "j.npz"
    )
    head = read_head(path, "judge")
    assert head.domains == names
    with pytest.raises(
        UsageError, match=r"j\.npz: the judge head was fitted with 2 life domains \(food, travel"
    ):
        EmbeddedDecider(heads={"judge": head})
    # weights for another number of domains than it names, or no domains named: refused on read
    meta = {
        "format": "recallwise-head/1",
        "role": "judge",
        "features": list(JUDGE_FEATURES),
        "domains": list(names),
    }
    meta["spaces"] = [{"embedder": "minilm-l6", "n": 1}]
    bad = _write_npz(tmp_path / "k.npz", meta, w0=np.zeros(judge_width(3)), b0=np.array(0.0))
    with pytest.raises(UsageError, match=r"has 12 judge weights; it reads .* of 2 life domains: 7"):
        read_head(bad)
    bad = _write_npz(tmp_path / "n.npz", {**meta, "domains": []}, w0=np.zeros(6), b0=np.array(0.0))
    with pytest.raises(UsageError, match=r"n\.npz: the judge head names no life domains"):
        read_head(bad)
    # a head fitted without the table reads score and gap (the fifth round's) or score, gap and
    # need, whatever the bank
    need = {**meta, "features": ["score", "gap", "need"], "domains": []}
    head = read_head(_write_npz(tmp_path / "m.npz", need, w0=np.ones(3), b0=np.array(0.0)))
    assert head.reads_need and not head.reads_domains
    plain = {**meta, "features": ["score", "gap"], "domains": []}
    head = read_head(_write_npz(tmp_path / "p.npz", plain, w0=np.ones(2), b0=np.array(0.0)))
    assert not head.reads_domains
    EmbeddedDecider(heads={"judge": head})  # no bank to disagree with
    with pytest.raises(UsageError, match=r"has 3 judge weights; it reads \['score', 'gap'\]: 2"):
        read_head(_write_npz(tmp_path / "q.npz", plain, w0=np.ones(3), b0=np.array(0.0)))


def test_a_config_names_a_head_and_the_policy_uses_it(gate_fit, tmp_path: Path) -> None:
    from recallwise.deciders.heads import file_sha256

    path = gate_fit.write(tmp_path / "heads" / "gate.npz")
    config = tmp_path / "recallwise.json"
    write_config(config, "embedded", {}, heads={"gate": FittedHead(str(path), file_sha256(path), 184)})
    assert read_config(config).head("embedded", "gate").path == "heads/gate.npz"  # relative to the config
    store = SQLiteStore("sqlite://:memory:")
    policy = RecallPolicy.from_config(config, store)
    assert policy.heads["gate"].startswith(f"gate head: config {config}")
    (heads_line,) = [x for x in policy.stats.report().splitlines() if x.startswith("learned heads: ")]
    assert "gate head: config" in heads_line
    assert policy.thresholds["gate"] == gate_fit.head.thresholds["gate"]
    recall = policy.recall("What should I cook for my parents on Sunday?", actor_id="u1")
    assert recall.trace.heads["gate"] == policy.heads["gate"]
    # the head file changed since the config was written: refused, naming both
    write_head(Head("gate", {"x": SpaceWeights("x", np.zeros(3), 0.0)}, GATE_FEATURES), path)
    with pytest.raises(UsageError, match=r"recallwise.json: heads\['embedded'\]\['gate'\]: .* changed since"):
        RecallPolicy.from_config(config, store)


def test_the_shipped_heads_answer_the_default_policy() -> None:
    policy = RecallPolicy(SQLiteStore("sqlite://:memory:"))
    assert set(policy.heads) == {"gate", "judge", "follow_up"}
    assert all("shipped" in where for where in policy.heads.values())
    assert shipped_head("gate") is not None and shipped_head("judge") is not None
    assert policy.threshold_sources["gate"] == "head" and policy.threshold_sources["judge"] == "head"


# ---- the judge head --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def judge_fit():
    turns, _ = read_labelled_sources(JUDGE_SETS, "judge-*.jsonl", "judge")
    return fit_judge_head(turns)


@pytest.fixture(scope="module")
def judge_table_fit():
    turns, _ = read_labelled_sources(JUDGE_SETS, "judge-*.jsonl", "judge")
    return fit_judge_head(turns, domain_table=True)


def test_judge_fit_reports_records_kept_before_and_after(judge_fit) -> None:
    keys = {"n", "accuracy", "auc", "ece", "records_kept_per_request", "right_kept"}
    assert keys <= set(judge_fit.before) and keys <= set(judge_fit.after)
    # its keep rule keeps at most RECORDS_PER_REQUEST records per request
    assert judge_fit.after["records_kept_per_request"] <= RECORDS_PER_REQUEST
    assert judge_fit.head.thresholds["judge_relative"] == KEEP_RELATIVE
    # without --domain-table: score, gap and need only, no bank named
    assert judge_fit.head.features == ("score", "gap", "need") and judge_fit.head.domains == ()
    assert {w.inputs for w in judge_fit.head.spaces.values()} == {3}


_COOK = "What should I cook tonight?"
_TWO_RECORDS = ["The user is lactose intolerant.", "The user plays the cello."]


def _judge_p_and_features(decider: EmbeddedDecider, records: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The decider's judge p for each record of ``_COOK``, and the judge's features of them."""
    questions = {f"r{i}": judge_question(t) for i, t in enumerate(records)}
    answers = decider.decide(_COOK, questions).answers
    vectors = decider.embedder.embed([_COOK, *records])
    return np.array([answers[f"r{i}"] for i in range(len(records))]), decider.judge_features(
        vectors[0], vectors[1:]
    )


def _vectors(decider: EmbeddedDecider, records: list[str]) -> tuple[np.ndarray, np.ndarray]:
    vectors = decider.embedder.embed([_COOK, *records])
    return vectors[0], vectors[1:]


def test_the_judge_head_without_the_table_reads_score_gap_and_need(judge_fit) -> None:
    p, features = _judge_p_and_features(EmbeddedDecider(heads={"judge": judge_fit.head}), _TWO_RECORDS)
    weights = judge_fit.head.spaces["minilm-l6"]
    assert np.allclose(p, 1.0 / (1.0 + np.exp(-weights.logits(features[:, :3]))))


def test_the_judge_head_reads_the_score_and_which_domains_bear_on_which(judge_table_fit) -> None:
    """With ``--domain-table``, p is the head's logistic of the judge's features: the score and its
    gap to the turn's best, and the message's life-domain distribution times each record's
    centred domain affinities."""
    judge_fit = judge_table_fit
    assert judge_fit.head.domains == domain_names()
    decider = EmbeddedDecider(heads={"judge": judge_fit.head})
    message = "What should I cook tonight?"
    records = [
        "The user is lactose intolerant.",
        "The user loves spicy food.",
        "The user plays the cello.",
        "The user's flight to Berlin leaves on Friday.",
    ]
    questions = {f"r{i}": judge_question(t) for i, t in enumerate(records)}
    decision = decider.decide(message, questions)
    assert decision.usage.get("judge_head") == len(records)
    vectors = decider.embedder.embed([message, *records])
    features = decider.judge_features(vectors[0], vectors[1:])
    size = len(domain_names())
    assert features.shape == (len(records), judge_width(size))
    assert features[:, 1].max() == 0.0  # the gap of the best record
    terms = decider._judge_terms(vectors[0], vectors[1:])
    message_domains, centred = terms.state_domains, terms.centred
    assert message_domains.sum() == pytest.approx(1.0)
    assert np.allclose(
        features[:, 3:].reshape(-1, size, size), message_domains[None, :, None] * centred[:, None, :]
    )
    weights = judge_fit.head.spaces["minilm-l6"]
    p = np.array([decision.answers[f"r{i}"] for i in range(len(records))])
    assert np.allclose(p, 1.0 / (1.0 + np.exp(-weights.logits(features))))


def test_episodic_options_judge_without_the_domain_table(judge_table_fit) -> None:
    """``judge_domains=False`` (episodic memories): a head fitted with the table reads the score
    (without its life-domain term) and gap alone, the domain block as zeros; the policy's
    decider is the copy, the caller's is left as it was."""
    decider = EmbeddedDecider(heads={"judge": judge_table_fit.head})
    with_table, with_domains = _judge_p_and_features(decider, _TWO_RECORDS)
    p, features = _judge_p_and_features(decider.without_domain_table(), _TWO_RECORDS)
    assert not np.allclose(features[:, 0], with_domains[:, 0])  # no life-domain term in the score
    plain = decider.judge_features(*_vectors(decider, _TWO_RECORDS), domains=False)
    terms = decider._judge_terms(*_vectors(decider, _TWO_RECORDS))
    params = decider.params
    plain[:, 0] -= params.domain_weight * terms.domain + params.constraint_weight * terms.bears
    plain[:, 1] = plain[:, 0] - plain[:, 0].max()
    features[:, 3:] = 0.0
    assert np.allclose(features[:, :3], plain)
    weights = judge_table_fit.head.spaces["minilm-l6"]
    assert np.allclose(p, 1.0 / (1.0 + np.exp(-weights.logits(features))))
    assert not np.allclose(p, with_table)
    policy = RecallPolicy(SQLiteStore("sqlite://:memory:"), decider=decider, judge_domains=False)
    assert policy.decider is not decider and not policy.decider.params.judge_domain_table
    assert decider.params.judge_domain_table
    with pytest.raises(UsageError, match="judge_domains"):
        RecallPolicy(SQLiteStore("sqlite://:memory:"), judge_domains="no")


def _judged(labels: list[bool]) -> JudgedTurn:
    turn = LabelledTurn("m", True, where="t")
    ids = [str(i) for i in range(len(labels))]
    return JudgedTurn(turn, ids, np.array(labels), 0, "primary", {}, {}, ids)


def test_the_keep_rule_count_follows_the_evidence() -> None:
    """Turns with one clear best and turns with several records level: an absolute threshold alone
    keeps as many in both; with the relative rule the first keep one, the second all that belong.
    (The fitted head's own rule has it off, KEEP_RELATIVE: its gap feature does this already.)"""
    clear = (_judged([True, False, False, False]), np.array([0.95, 0.12, 0.12, 0.12]))
    level = (_judged([True, True, True, False]), np.array([0.3, 0.2, 0.1, 0.01]))
    judged, probabilities = zip(*[clear, level] * 3, strict=True)
    assert keep_rule(judged, probabilities, 2.0).relative == KEEP_RELATIVE == 1.0
    rule = keep_rule(judged, probabilities, 2.0, relative=0.8)
    assert rule.relative == 0.8
    assert rule.kept(clear[1]).tolist() == [True, False, False, False]
    assert rule.kept(level[1]).tolist() == [True, True, True, False]
    # without the relative rule, the threshold that keeps 2 per request drops a right record
    alone = KeepRule(keep_threshold(judged, probabilities, 2.0), 1.0)
    assert alone.kept(level[1]).tolist() == [True, True, False, False]


def test_keep_rule_matches_the_policy() -> None:
    kept = KeepRule(0.3, 0.2).kept(np.array([0.9, 0.75, 0.6, 0.35]))
    assert kept.tolist() == [True, True, False, False]
    assert KeepRule(0.3, 1.0).kept(np.array([0.9, 0.35, 0.2])).tolist() == [True, True, False]


# ---- bad input --------------------------------------------------------------------------------


def _turns(n: int, label: bool | None = None) -> list[LabelledTurn]:
    return [
        LabelledTurn(f"message {i}", label if label is not None else i % 2 == 0, where=f"f line {i}")
        for i in range(n)
    ]


def test_gate_fit_refuses_one_class_too_few_and_unlabelled() -> None:
    with pytest.raises(UsageError, match="every label is true"):
        fit_gate_head(_turns(40, True))
    with pytest.raises(UsageError, match=f"a gate head needs at least {MIN_TURNS}"):
        fit_gate_head(_turns(MIN_TURNS - 2))
    unlabelled = [*_turns(30), LabelledTurn("no label here", None, (), where="data.jsonl line 31")]
    with pytest.raises(UsageError, match=r"data\.jsonl line 31: unlabelled for the gate"):
        fit_gate_head(unlabelled)


# ---- the commands ------------------------------------------------------------------------------


def _flags(flag: str, values: list[str]) -> list[str]:
    return [item for value in values for item in (flag, value)]


#: the project's own sets alone (not combined with the shipped fit data: tests/test_refit_guard.py),
#: and written even when worse out of fold: the shipped head was fitted on these very sets, so it is
#: graded in sample and the refit out of fold
ALONE = ["--base", "none", "--force"]


def test_tune_gate_fit_writes_a_head_and_a_config(tmp_path: Path) -> None:
    head, config = tmp_path / "gate.npz", tmp_path / "cfg.json"
    args = ["tune", "gate", *_flags("--fit", GATE_SETS), *ALONE]
    done = run_cli(*args, "--write-head", str(head), "--write-config", str(config), "--json")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["role"] == "gate" and body["written"] == {"head": str(head), "config": str(config)}
    assert set(body["before"]) == set(body["after"]) and body["after"]["n"] == 208
    assert read_head(head).provenance["command"].startswith("recallwise tune gate --fit")
    assert read_config(config).head("embedded", "gate") is not None
    # and the text report
    done = run_cli(*args)
    assert done.returncode == 0 and "before (current)" in done.stdout and "nothing written" in done.stdout


def test_tune_gate_fit_bad_input_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "labels.jsonl"
    lines = [json.dumps({"text": f"message {i}", "label": i % 2 == 0}) for i in range(30)]
    lines.insert(6, json.dumps({"text": "forgot the label"}))
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    head = tmp_path / "gate.npz"
    done = run_cli("tune", "gate", "--fit", str(bad), "--base", "none", "--write-head", str(head))
    assert done.returncode == 2 and "labels.jsonl line 7: unlabelled" in done.stderr
    assert "Traceback" not in done.stderr and not head.exists()
    one_class = tmp_path / "one.jsonl"
    one_class.write_text(
        "\n".join(json.dumps({"text": f"m {i}", "label": True}) for i in range(30)), encoding="utf-8"
    )
    done = run_cli("tune", "gate", "--fit", str(one_class), "--base", "none", "--write-head", str(head))
    assert done.returncode == 2 and "every label is true" in done.stderr and not head.exists()


def test_tune_gate_from_the_decision_log(tmp_path: Path) -> None:
    """Decisions labelled in the log (as the inspector stores them), exported by `recallwise log
    --labels --json`, refit the gate: from the export alone, or with texts from the log."""
    rows = [
        json.loads(line) for line in (DATA / "gate_examples.jsonl").read_text().splitlines() if line.strip()
    ]
    rows = [r for r in rows if r["label"]][:20] + [r for r in rows if not r["label"]][:20]
    log_path = tmp_path / "log.db"
    with DecisionLog(log_path) as log:
        policy = RecallPolicy(SQLiteStore("sqlite://:memory:"), log=log)
        for row in rows:
            policy.recall(row["text"], actor_id="u1")
        for turn, row in zip(log.turns(last=40), rows, strict=True):
            log.add_labels(turn.id, gate=row["label"])
    exported = run_cli("log", str(log_path), "--labels", "--json")
    assert exported.returncode == 0, exported.stderr
    labels = json.loads(exported.stdout)["labels"]
    assert len(labels) == 40 and all("text" in label for label in labels)
    label_file = tmp_path / "labels.json"
    label_file.write_text(exported.stdout, encoding="utf-8")
    head = tmp_path / "gate.npz"
    for source in (["--fit", str(label_file)], ["--from-log", str(log_path), "--labels", str(label_file)]):
        done = run_cli("tune", "gate", *source, *ALONE, "--write-head", str(head), "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["after"]["n"] == 40 and head.exists()
    # labels without texts (ids only) take them from the log
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"labels": [{k: v for k, v in x.items() if k != "text"} for x in labels]}))
    done = run_cli("tune", "gate", "--from-log", str(log_path), "--labels", str(bare), *ALONE, "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["after"]["n"] == 40
    done = run_cli("tune", "gate", "--fit", str(bare))
    assert done.returncode == 2 and "no text" in done.stderr and "--from-log" in done.stderr
    # a log that keeps no content cannot give the texts: said, nothing written
    quiet = tmp_path / "quiet.db"
    with DecisionLog(quiet, content=False) as log:
        policy = RecallPolicy(SQLiteStore("sqlite://:memory:"), log=log)
        policy.recall("What should I cook tonight?", actor_id="u1")
        seq = log.turns(last=1)[0].id
    quiet_labels = tmp_path / "quiet.json"
    quiet_labels.write_text(json.dumps({"labels": [{"decision_id": seq, "label": True}]}))
    done = run_cli(
        "tune",
        "gate",
        "--from-log",
        str(quiet),
        "--labels",
        str(quiet_labels),
        "--write-head",
        str(tmp_path / "q.npz"),
    )
    assert done.returncode == 2 and "--log-content" in done.stderr and not (tmp_path / "q.npz").exists()
    done = run_cli("tune", "gate", "--from-log", str(log_path))
    assert done.returncode == 2 and "needs --labels" in done.stderr


def test_tune_judge_fit_end_to_end(tmp_path: Path) -> None:
    head = tmp_path / "judge.npz"
    args = ["tune", "judge", *_flags("--fit", JUDGE_SETS), *ALONE]
    done = run_cli(*args, "--write-head", str(head), "--json")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert {"records_kept_per_request", "right_kept"} <= set(body["after"])
    assert read_head(head, "judge").thresholds["judge"] > 0
    done = run_cli("tune", "judge", "--fit", str(DATA / "gate_examples.jsonl"))
    assert done.returncode == 2 and "gate_examples.jsonl line 1: no 'records'" in done.stderr


def test_bench_decisions_reports_each_set(tmp_path: Path) -> None:
    data = tmp_path / "sets"
    data.mkdir()
    gate = [
        json.loads(line) for line in (DATA / "heldout" / "gate_labels.jsonl").read_text().splitlines()[:30]
    ]
    (data / "gate-own.jsonl").write_text("\n".join(json.dumps(r) for r in gate) + "\n", encoding="utf-8")
    records = [
        {"id": "veg", "text": "The user is vegetarian.", "label": True},
        {"id": "seat", "text": "The user always books an aisle seat.", "label": False},
        {"id": "dog", "text": "The user has a dog called Biscuit.", "label": False},
    ]
    judge = [
        {"text": "What should I have for dinner?", "label": True, "records": records},
        {"text": "What is 17 times 23?", "label": False, "records": [{**r, "label": False} for r in records]},
    ]
    (data / "judge-own.jsonl").write_text("\n".join(json.dumps(r) for r in judge) + "\n", encoding="utf-8")
    done = run_cli("bench", "decisions", "--data", str(data), "--json")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert list(body["sets"]) == ["gate-own.jsonl", "judge-own.jsonl"]
    own = body["sets"]["gate-own.jsonl"]
    assert own["gate_turns"] == 30 and 0 <= own["open_rate_true"] <= 1 and own["reliability"]
    judged = body["sets"]["judge-own.jsonl"]
    assert judged["requests"] == 1 and judged["right_kept"] == 1.0 and judged["general_turns"] == 1
    assert judged["records_per_general_turn"] == 0.0  # the gate closed on the arithmetic
    assert body["overall"]["turns"] == 32 and metrics.auc([0.2, 0.8], [False, True]) == 1.0
    empty = tmp_path / "empty"
    empty.mkdir()
    done = run_cli("bench", "decisions", "--data", str(empty))
    assert done.returncode == 2 and "no *.jsonl files" in done.stderr


def test_parse_refuses_a_validator_case_document_as_turns() -> None:
    with pytest.raises(UsageError, match="one JSON document without 'labels'"):
        parse_labelled_turns(json.dumps({"records": {}, "cases": []}), "cases.json")
