"""Default thresholds per decision backend, each with the measurement it came from.

The tuner (``recallwise tune ... --write-config``) fits thresholds on a user's own data and
``RecallPolicy.from_config`` reads them; these are the defaults when no config is given. A
threshold without a measurement behind it is marked ``measured=False`` and reported as such
by ``policy.stats.report()``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_THRESHOLDS", "Threshold", "default_threshold"]


@dataclass(frozen=True)
class Threshold:
    value: float
    measured: bool
    note: str


_UNMEASURED = "no measurement for this backend yet; run `recallwise tune` on your data"
# No backend has a route threshold: no labelled routing set exists, so the route is off unless a
# threshold is given or fitted (policy.thresholds: an opt-in role, as gate_named and follow_up).

DEFAULT_THRESHOLDS: dict[str, dict[str, Threshold]] = {
    "embedded": {
        # These are the defaults of the embedded decider WITHOUT a learned head (a custom embedder
        # the shipped heads have no weights for). With a head, the thresholds measured with it
        # travel in the head file and win over these (deciders/heads.py, Head.thresholds): the
        # shipped gate head opens at p >= 0.169, the shipped judge head keeps p >= 0.05
        # (data/heads/DATASHEET.md says how each was chosen).
        # Without a head: leave-one-out over the shipped example bank (data/gate_examples.jsonl:
        # each example scored against the other 119): accuracy 0.917 at 0.5, the best of 0.3-0.7.
        "gate": Threshold(0.5, True, "gate_examples.jsonl leave-one-out accuracy 0.917 (best of 0.3-0.7)"),
        # The judge's logistic (scale 24.5, centre -0.053 in debiased cosine) was fitted on
        # recallwise/data/dev/validator_cases.json (16 queries, 29 records, written for this).
        # Pooled accuracy of "p >= t and p >= best - d" there is flat (0.940-0.957) over
        # t in [0.3, 0.5], d in [0.2, 1.0]; t = 0.5, d = 0.5 is the recall-leaning end (0.940).
        "judge": Threshold(0.5, True, "dev/validator_cases.json: pooled accuracy 0.940 (flat 0.94-0.96)"),
        "judge_relative": Threshold(
            0.5, True, "dev/validator_cases.json: pooled accuracy 0.940 (flat 0.94-0.96)"
        ),
        # The store-aware gate: below the gate threshold, down to this, the gate opens when the
        # message names something the actor's memory mentions. Fitted with the shipped gate head
        # by `recallwise tune named-gate --locomo DIR --split dev` (LoCoMo dev, 630 questions; the
        # 60 non-memory messages of gate_examples.jsonl, against each of the 5 dev stores): 0.0,
        # i.e. a message naming something in memory opens the gate whatever its p. It opens on
        # 99.4% of the questions (53.7% on the message alone: LoCoMo asks about named people,
        # which a message alone cannot tell from general knowledge); closed rate 0.933 -> 0.917,
        # balanced accuracy 0.735 -> 0.955.
        # Follow-ups (policy/follow_up.py): the example-based question over the 44 messages of
        # data/follow_up_examples.jsonl. Fitted by `recallwise tune follow-up --labels builtin:dev`
        # (data/dev/follow_up_labels.jsonl, 50 other messages written for recallwise): accuracy
        # 1.00 at 0.565 (AUC 1.00, margin +0.13; every threshold in 0.50-0.63 is 1.00).
        # Reported only: builtin:heldout (50 more) accuracy 0.94 here, AUC 0.99.
        "follow_up": Threshold(0.565, True, "tune follow-up on builtin:dev: accuracy 1.00 (AUC 1.00)"),
        "gate_named": Threshold(
            0.0, True, "tune named-gate on LoCoMo dev with the shipped gate head: balanced accuracy 0.955"
        ),
    },
    # sparrow-decider 0.2.0 (sparrow-nano-general-v1.1) with the shipped judge wording, measured
    # by tests/test_deciders_local.py::test_sparrow_judge_thresholds_come_from_dev on
    # dev/validator_cases.json (16 queries, 116 query-record pairs): per-query AUC 0.594, p in
    # [0.017, 0.397]. The best "p >= t and p >= best - d" is t = 0.27, d = 0.05 at pooled
    # accuracy 0.716, against 0.707 for keeping nothing: sparrow barely tells relevant memories
    # from irrelevant ones with this wording. No gate labels exist under data/dev, so its gate
    # threshold is not measured.
    "sparrow": {
        # Fitted by `recallwise tune gate` on data/gate_examples.jsonl (120 utterances sparrow never
        # sees: the embedded decider's bank); best accuracy there at 0.972.
        "gate": Threshold(0.972, True, "gate_examples.jsonl: best-accuracy threshold (tune gate)"),
        "judge": Threshold(
            0.27, True, "dev/validator_cases.json: accuracy 0.716 (keep-none 0.707), AUC 0.594"
        ),
        "judge_relative": Threshold(
            0.05, True, "dev/validator_cases.json: accuracy 0.716 (keep-none 0.707), AUC 0.594"
        ),
    },
    # The HTTP and local-checkpoint backends answer with whatever model they reach, so no
    # default can be measured for them here.
    **{
        backend: {
            role: Threshold(0.5, False, f"{backend}: {why}; run `recallwise tune` against your model")
            for role in ("gate", "judge", "judge_relative")
        }
        for backend, why in (
            ("systemone", "depends on the model the server runs"),
            ("openrouter", "Jev is not reachable from this project's machines"),
            ("sagemaker", "depends on the deployed model"),
            ("strands-local", "no strands-decider checkpoint on this project's machines"),
            ("llm", "depends on the LLM and its tokenizer"),
        )
    },
}


def default_threshold(backend: str, role: str, fallback: float = 0.5) -> Threshold:
    """The default threshold of ``role`` ("gate", "judge", "judge_relative", "gate_named",
    "follow_up", "route") for ``backend``."""
    table = DEFAULT_THRESHOLDS.get(backend, {})
    if role in table:
        return table[role]
    return Threshold(fallback, False, _UNMEASURED)
