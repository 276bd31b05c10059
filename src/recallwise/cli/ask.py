"""``recallwise ask``: put typed questions about one state to any decision backend.

    recallwise ask --decider systemone --url http://127.0.0.1:8000 \\
        --state "I'd like a drink, what should I get?" \\
        --noul "The user is asking for a recommendation." \\
        --choice "topic=drinks,travel,code" --score "How personal is it?=not,a bit,very" --json

Questions are named ``noul_0``, ``choice_0``, ``score_0`` ... in the order given. With
``--json`` the one object printed holds ``answers`` (systemone-shaped), ``backend``,
``model``, ``latency_ms``, ``warnings``, ``reads_wording`` and ``usage`` (this call: ``calls``
and, where the backend reports them, tokens, requests and cost), the same keys for every backend.

A backend that cannot read a question's wording (the embedded decider compares the state with the
question's text and options by similarity: "Does answering need the user's memory?" is not a
question it can answer) is refused with one line naming the backends that can; ``--similarity``
asks it anyway, and every answer is then marked as a similarity, not an answer to the wording.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from ..deciders import as_decider, available_deciders, make_decider
from ..deciders.questions import ChoiceAnswer, Question, ScoreAnswer, validate_request
from ..deciders.wire import answers_to_wire
from ..errors import UsageError
from ..ranges import OptionRange, flag_type
from . import emit_json
from .common import add_decider, add_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """ask a decision backend typed questions about one state

    Ask any decision backend noul (yes/no), choice and score questions about one state, in one call.
    Choice: 'question=option,option,...'; score: 'question=lowest,...,highest'.
    """
    add_decider(parser)
    parser.add_argument("--state", required=True, help="the text to decide about")
    parser.add_argument(
        "--noul",
        action="append",
        default=[],
        metavar="QUESTION",
        help="a yes/no question (repeatable; default none)",
    )
    parser.add_argument(
        "--criteria-true", default=None, metavar="TEXT", help="when a noul is true (default: no criteria)"
    )
    parser.add_argument(
        "--criteria-false", default=None, metavar="TEXT", help="when a noul is false (default: no criteria)"
    )
    parser.add_argument(
        "--choice",
        action="append",
        default=[],
        metavar="Q=A,B,C",
        help="a choice question (repeatable; default none)",
    )
    parser.add_argument(
        "--score",
        action="append",
        default=[],
        metavar="Q=L1,L2,L3",
        help="a score question (repeatable; default none)",
    )
    parser.add_argument(
        "--similarity",
        action="store_true",
        help="with a backend that cannot read wording (embedded): answer anyway, each answer marked as "
        "the state's similarity to the question's text and options (default: refused, naming the "
        "backends that read wording)",
    )
    parser.add_argument(
        "--model", default=None, help="model name for backends that take one (default: the backend's default)"
    )
    parser.add_argument(
        "--timeout",
        type=flag_type(OptionRange(float, 0.0, what="seconds"), "--timeout"),
        default=None,
        help="total timeout in seconds (HTTP backends; default: the backend's, e.g. 10 for systemone)",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other backend option, e.g. checkpoint=/path or endpoint_name=my-endpoint "
        "(repeatable; default none)",
    )
    add_json(parser)


def _split(spec: str, flag: str) -> tuple[str, list[str]]:
    if "=" not in spec:
        raise UsageError(f"{flag} {spec!r}: expected 'question=option,option,...'")
    question, _, rest = spec.rpartition("=")
    options = [o.strip() for o in rest.split(",") if o.strip()]
    if not question.strip():
        raise UsageError(f"{flag} {spec!r}: the question before '=' is empty")
    return question.strip(), options


def build_questions(args: argparse.Namespace) -> dict[str, Question]:
    """The questions the flags describe, validated (names noul_0, choice_0, score_0, ...)."""
    if (args.criteria_true is None) != (args.criteria_false is None):
        raise UsageError("--criteria-true and --criteria-false go together")
    if args.criteria_true is not None and not args.noul:
        raise UsageError("--criteria-true/--criteria-false describe a --noul question; none given")
    criteria = (
        {"true": args.criteria_true, "false": args.criteria_false} if args.criteria_true is not None else None
    )
    wire: dict[str, Any] = {}
    for i, text in enumerate(args.noul):
        wire[f"noul_{i}"] = {
            "type": "noul",
            "instructions": text,
            **({"criteria": criteria} if criteria else {}),
        }
    for i, spec in enumerate(args.choice):
        question, options = _split(spec, "--choice")
        wire[f"choice_{i}"] = {
            "type": "choice",
            "instructions": question,
            "criteria": dict.fromkeys(options, ""),
        }
    for i, spec in enumerate(args.score):
        question, levels = _split(spec, "--score")
        wire[f"score_{i}"] = {"type": "score", "instructions": question, "criteria": levels}
    if not wire:
        raise UsageError("ask at least one question: --noul, --choice or --score")
    return validate_request(args.state, wire)


def _options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if args.url:
        options["url"] = args.url
    if args.model:
        options["model"] = args.model
    if args.timeout is not None:
        options["timeout"] = args.timeout
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--option {item!r}: expected KEY=VALUE")
        options[key.strip().replace("-", "_")] = _value(value)
    return options


def _value(text: str) -> Any:
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def readers_of_wording(but: str) -> list[str]:
    """The registered backends that read a question's wording (all but ``but`` and the ones that
    declare ``reads_wording=False``, as far as they can be told without loading them)."""
    from ..deciders.embedded import EmbeddedDecider

    cannot = {EmbeddedDecider.name} if not EmbeddedDecider.capabilities.reads_wording else set()
    return [name for name in available_deciders() if name != but and name not in cannot]


def run(args: argparse.Namespace) -> int:
    questions = build_questions(args)  # bad questions fail before a backend is built
    decider = as_decider(make_decider(args.decider, **_options(args)))
    reads_wording = decider.capabilities.reads_wording
    if not reads_wording and not args.similarity:
        decider.close()
        raise UsageError(
            f"the {decider.name} decider cannot read a question's wording (it scores the state's similarity "
            "to the question's text and options, whatever they ask); ask a backend that reads it "
            f"(--decider {' | '.join(readers_of_wording(decider.name))}), or add --similarity for "
            "answers marked as similarities"
        )
    started = time.perf_counter()
    try:
        decision = decider.decide(args.state, questions)
    finally:
        latency_ms = (time.perf_counter() - started) * 1000.0
        decider.close()

    answers, warnings = decision.answers, decision.warnings
    payload: dict[str, Any] = {
        "backend": decider.name,
        "model": getattr(decider, "model", None),
        "latency_ms": round(latency_ms, 3),
        "answers": answers_to_wire(answers),
        "warnings": warnings,
        # False: the answers are similarities to the questions' text, not answers to their wording
        "reads_wording": reads_wording,
        "usage": {"calls": 1, **decision.usage},  # this call: tokens, requests, cost where reported
    }
    if args.json:
        emit_json(payload)
        return 0
    for message in warnings:
        print(f"warning: {message}")
    print(f"{payload['backend']} ({latency_ms:.1f} ms)")
    if not reads_wording:
        print(
            f"SIMILARITY, NOT ANSWERS: {decider.name} does not read the questions' wording; each figure "
            "is how close the state is to the question's text (noul) or to each option (choice, score)"
        )
    kind = "" if reads_wording else " [similarity]"
    for name, answer in answers.items():
        question = questions[name]
        if isinstance(answer, ChoiceAnswer):
            confidence = f"(confidence {answer.confidence:.3f}){kind}"
            print(f"{name} -> {answer.choice} {confidence}   {question.instructions}")
            for option, p in sorted(answer.probabilities.items(), key=lambda kv: -kv[1]):
                print(f"    {option:<24} {p:.3f}")
        elif isinstance(answer, ScoreAnswer):
            print(
                f"{name} -> level {answer.score}: {question.options[answer.score]} "
                f"(confidence {answer.confidence:.3f}){kind}   {question.instructions}"
            )
            for i, (level, p) in enumerate(zip(question.options, answer.probabilities, strict=True)):
                print(f"    {i}: {level:<21} {p:.3f}")
        else:
            print(f"{name} = {answer:.3f}{kind}   {question.instructions}")
    return 0
