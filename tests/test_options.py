"""RecallOptions: one nested object, RecallPolicy's flat shorthand, and the gates taking the same object."""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

import pytest

from recallwise import (
    KeepOptions,
    LimitOptions,
    RecallOptions,
    RecallPolicy,
    RecallStats,
    ReliabilityOptions,
    SearchOptions,
    ThresholdOptions,
)
from recallwise.errors import UsageError
from recallwise.integrations._foreign import NO_BUDGET, GateKeywords, gate_options
from recallwise.policy.options import FLAT_NAMES, shorthand_value, with_shorthand
from recallwise.policy.thresholds import ROLES
from recallwise.testing import InMemoryStore, ScriptedDecider


def test_each_shorthand_name_sets_exactly_one_nested_field() -> None:
    default = RecallOptions()
    samples = {int: 7, float: 0.42, str: "relative"}
    for name, (group, field) in FLAT_NAMES.items():
        current = shorthand_value(default, name)
        if name == "keep":
            value: object = "relative"
        elif name == "search_mode":
            value = "dense"
        elif name in ("conversation_rescore", "adaptive_budget"):
            continue  # typed values, covered by test_policy_episodic
        elif current is None:
            value = 0.42 if group == "thresholds" else 7
        elif isinstance(current, bool):
            value = not current
        else:
            value = samples[type(current)]
        changed = with_shorthand(None, {name: value})
        assert shorthand_value(changed, name) == value, name
        # nothing else moved
        others = {
            n for n in FLAT_NAMES if n != name and shorthand_value(changed, n) != shorthand_value(default, n)
        }
        assert not others, (name, others)
        nested = getattr(changed, group) if field is not None else changed.cache_size
        assert (getattr(nested, field) if field is not None else nested) == value


def test_the_policys_shorthand_is_the_nested_options() -> None:
    nested = RecallOptions(
        search=SearchOptions(top_k=5),
        thresholds=ThresholdOptions(gate=0.6),
        keep=KeepOptions(rule="relative"),
        limits=LimitOptions(max_records=3),
        reliability=ReliabilityOptions(decider_timeout_s=1.0),
    )
    policy = RecallPolicy(
        InMemoryStore(),
        decider=None,
        top_k=5,
        gate_threshold=0.6,
        keep="relative",
        max_records=3,
        decider_timeout_s=1.0,
    )
    assert policy.options == nested
    # shorthand goes on top of the options given with it; the original is unchanged (frozen)
    mixed = RecallPolicy(
        InMemoryStore(),
        decider=None,
        options=dataclasses.replace(nested, search=SearchOptions(9, mode="dense")),
        top_k=4,
    )
    assert mixed.options.search == SearchOptions(top_k=4, mode="dense") and nested.search.top_k == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        nested.cache_size = 1  # type: ignore[misc]
    policy.close()
    mixed.close()


def test_options_have_one_spelling() -> None:
    options = RecallOptions()
    assert not hasattr(options, "top_k") and not hasattr(options, "gate_threshold")
    with pytest.raises(TypeError):
        RecallOptions(top_k=3)  # type: ignore[call-arg]
    policy = RecallPolicy(InMemoryStore(), decider=None, namespaces=["n"], options=options)
    assert not hasattr(policy, "top_k") and policy.options.search.top_k == 10
    policy.close()


def test_bad_options_name_the_field() -> None:
    with pytest.raises(UsageError, match=r"unknown RecallPolicy option\(s\) \['top_kk'\]; known: .*top_k"):
        RecallPolicy(InMemoryStore(), decider=None, top_kk=3)
    with pytest.raises(UsageError, match=r"top_k=0 is not allowed: an integer >= 1"):
        SearchOptions(top_k=0)
    with pytest.raises(UsageError, match="keep must be"):
        KeepOptions(rule="most")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="must be a KeepOptions"):
        RecallOptions(keep="relative")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="must be a SearchOptions"):
        RecallOptions(search={"top_k": 3})  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"gate_threshold='high' is not allowed: a number in \[0, 1\]"):
        ThresholdOptions(gate="high")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"max_records=0 is not allowed: an integer >= 1"):
        RecallPolicy(InMemoryStore(), decider=None, max_records=0)
    with pytest.raises(UsageError, match="cache_size"):
        RecallOptions(cache_size=-1)
    with pytest.raises(UsageError, match=r"options= must be a recallwise\.RecallOptions"):
        RecallPolicy(InMemoryStore(), decider=None, options={"top_k": 3})  # type: ignore[arg-type]


def test_threshold_roles_are_the_field_names_and_reach_the_policy() -> None:
    assert sorted(f.name for f in dataclasses.fields(ThresholdOptions)) == sorted(ROLES)
    decider = ScriptedDecider(gate=0.7)
    policy = RecallPolicy(
        InMemoryStore(),
        decider=decider,
        namespaces=["n"],
        options=RecallOptions(thresholds=ThresholdOptions(gate=0.8)),
    )
    assert policy.thresholds["gate"] == 0.8 and policy.threshold_sources["gate"] == "argument"
    assert policy.recall("anything at all", actor_id="a").trace.gate_open is False
    policy.close()


def test_a_gate_takes_the_same_options_object_and_owns_what_it_sets() -> None:
    owned = {"top_k": 10, **NO_BUDGET}
    given = RecallOptions(
        thresholds=ThresholdOptions(gate=0.9), reliability=ReliabilityOptions(decider_timeout_s=0.5)
    )
    out = gate_options("SomeGate", given, owned=owned, why="")
    assert out.thresholds.gate == 0.9 and out.reliability.decider_timeout_s == 0.5
    assert out.limits.max_context_chars == NO_BUDGET["max_context_chars"] and out.search.top_k == 10
    with pytest.raises(UsageError, match=r"SomeGate sets top_k itself: its page size"):
        gate_options(
            "SomeGate", RecallOptions(search=SearchOptions(top_k=3)), owned=owned, why=": its page size"
        )
    with pytest.raises(UsageError, match="SomeGate sets max_context_chars itself"):
        gate_options(
            "SomeGate", RecallOptions(limits=LimitOptions(max_context_chars=10)), owned=owned, why=""
        )
    with pytest.raises(UsageError, match=r"must be a recallwise\.RecallOptions"):
        gate_options("SomeGate", {"gate_threshold": 0.5}, owned=owned, why="")  # type: ignore[arg-type]


def _gates() -> list[type]:
    """The five framework gates (each needs its framework installed: the dev extra has them all)."""
    from recallwise.integrations.adk import GatedMemoryService
    from recallwise.integrations.agentcore import GatedAgentCoreMemorySessionManager
    from recallwise.integrations.langgraph import GatedStore
    from recallwise.integrations.mem0 import GatedMem0
    from recallwise.integrations.strands import MemoryGate

    return [GatedMemoryService, GatedAgentCoreMemorySessionManager, GatedStore, GatedMem0, MemoryGate]


def test_every_gate_takes_the_same_keywords() -> None:
    shared = set(GateKeywords.__annotations__)
    assert shared == {"decider", "options", "embedder", "stats", "log"}
    for gate in _gates():
        parameters = inspect.signature(gate.__init__).parameters
        named = set(parameters) & shared
        varying = [p for p in parameters.values() if p.kind is p.VAR_KEYWORD]
        if varying and varying[0].annotation == "Unpack[GateKeywords]":
            assert not named, gate.__name__  # declared once, in GateKeywords
        else:  # the AgentCore drop-in: its ``**`` is upstream's, so it names them one by one
            assert named == shared and varying[0].name == "upstream_keywords", gate.__name__
            for keyword in shared:
                declared = GateKeywords.__annotations__[keyword].__forward_arg__
                assert parameters[keyword].annotation == declared, keyword
        # RecallOptions is the one place thresholds, keep and limits live
        assert not {"thresholds", "keep", "max_records"} & set(parameters), gate.__name__


def test_every_gate_has_the_same_attributes_and_errors() -> None:
    from langgraph.store.memory import InMemoryStore as LangGraphMemory

    from recallwise.integrations.langgraph import GatedStore
    from recallwise.integrations.strands import MemoryGate

    closed = RecallOptions(thresholds=ThresholdOptions(gate=0.99), keep=KeepOptions(rule="absolute"))
    store = GatedStore(LangGraphMemory(), decider=ScriptedDecider(gate=0.9), options=closed)
    assert store.policy is not None and store.policy.thresholds["gate"] == 0.99
    assert store.options.keep.rule == "absolute" and store.policy.search_depth == 10
    with pytest.raises(UsageError, match="GatedStore sets gated_top_k itself"):
        GatedStore(
            LangGraphMemory(),
            decider=ScriptedDecider(),
            options=RecallOptions(search=SearchOptions(gated_top_k=50)),
        )
    limited = RecallOptions(limits=LimitOptions(max_records=2), cache_size=0)
    gate = MemoryGate(decider=ScriptedDecider(), options=limited)
    assert gate.options.limits.max_records == 2 and gate.options.cache_size == 0
    with pytest.raises(UsageError, match="MemoryGate sets top_k itself"):
        MemoryGate(decider=ScriptedDecider(), options=RecallOptions(search=SearchOptions(top_k=3)))
    for make in (lambda **k: GatedStore(LangGraphMemory(), **k), lambda **k: MemoryGate(**k)):
        with pytest.raises(UsageError, match=r"over_fetch must be a number >= 1, got 0\.5"):
            make(over_fetch=0.5)
        with pytest.raises(UsageError, match=r"options=\.\.\.\) must be a recallwise\.RecallOptions"):
            make(options={"keep": "absolute"})
        transparent = make(decider=None)
        assert transparent.policy is None and isinstance(transparent.stats, RecallStats)
        assert transparent.stats.decider is None and transparent.last_recall is None
        transparent.close()
    store.close()
    gate.close()


def test_what_the_caller_asked_of_a_turn_is_frozen() -> None:
    from recallwise.policy.trace import Trace
    from recallwise.policy.turn import Turn, TurnRequest

    request = TurnRequest(
        "hi", "a", None, top_k=30, max_records=None, extensions={}, conversation=("a", None, ())
    )
    turn = Turn(request, Trace(), ["/facts/a"], ["/facts/{actorId}"], "hi")
    assert (turn.actor_id, turn.top_k, turn.conversation) == ("a", 30, ("a", None, ()))
    with pytest.raises(AttributeError):
        turn.top_k = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.actor_id = "b"  # type: ignore[misc]


def test_the_guide_documents_the_shorthand_in_one_table() -> None:
    guide = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+)` \| `([\w.]+)` \|$", guide, re.M))
    assert rows == {name: ".".join(f for f in where if f) for name, where in FLAT_NAMES.items()}
