"""Every framework gate is configured the same way (issue 51: "one shared base, so that signatures do
not drift"): the keywords every gate takes (``GateKeywords``) with the same names, types and
defaults, the keywords several gates share (``actor_id``, ``session_id``, ``namespaces``,
``over_fetch``, ``top_k``) spelt and typed alike, and one rule for the embedder a gate scores its
framework's memories with (the one given, else the decider's own, else the offline default)."""

from __future__ import annotations

import importlib
import inspect
from typing import Any, ForwardRef

import pytest

from recallwise.deciders import EmbeddedDecider
from recallwise.embeddings import HashingEmbedder, default_embedder
from recallwise.integrations._foreign import DEFAULT_DECIDER, FrameworkGate, GateKeywords
from recallwise.testing import ScriptedDecider

#: (module, constructor) of every gate a user builds with the gate keywords: a class, or a class's
#: factory (the extra's module is skipped when its framework is not installed: CrewAI lives in its
#: own venv)
GATES = [
    ("recallwise.integrations.strands", "MemoryGate"),
    ("recallwise.integrations.agentcore", "GatedAgentCoreMemorySessionManager"),
    ("recallwise.integrations.langgraph", "GatedStore"),
    ("recallwise.integrations.adk", "GatedMemoryService"),
    ("recallwise.integrations.mem0", "GatedMem0"),
    ("recallwise.integrations.mem0", "AsyncGatedMem0"),
    ("recallwise.integrations.llamaindex", "GatedMemoryBlock.over"),
    ("recallwise.integrations.llamaindex", "GatedMemoryBlock.wrapping"),
    ("recallwise.integrations.crewai", "CrewMemoryGate"),
    ("recallwise.integrations.agent_framework", "GatedContextProvider"),
    ("recallwise.integrations.agent_framework", "GatedMem0ContextProvider"),
    ("recallwise.integrations.openai_agents", "GatedInputFilter"),
    ("recallwise.integrations.agno", "GatedKnowledgeRetriever"),
    ("recallwise.integrations.agno", "AgnoMemoryGate"),
    ("recallwise.integrations._foreign", "StoreGate"),
]

#: the keywords several gates take: where a gate has one, it is keyword-only with this annotation
SHARED = {
    "actor_id": "str",
    "session_id": "str | None",
    "namespaces": "Sequence[str] | Mapping[str, str] | None",
    "over_fetch": "float",
    "top_k": "int",
}


def _parameters(module: str, name: str) -> dict[str, inspect.Parameter]:
    """The parameters of the constructor ``name`` in ``module`` (a class's ``__init__``)."""
    try:
        found: Any = importlib.import_module(module)
    except ImportError as exc:  # the extra's framework is not installed here
        pytest.skip(f"{module}: {exc}")
    for part in name.split("."):
        found = getattr(found, part)
    return dict(inspect.signature(found.__init__ if isinstance(found, type) else found).parameters)


def _annotation(found: Any) -> str:
    return found.__forward_arg__ if isinstance(found, ForwardRef) else str(found)


@pytest.mark.parametrize(("module", "name"), GATES, ids=[n for _, n in GATES])
def test_every_gate_takes_the_gate_keywords_alike(module, name):
    parameters = _parameters(module, name)
    rest = [p for p in parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
    if rest and rest[0].annotation == "Unpack[GateKeywords]":
        assert not set(GateKeywords.__annotations__) & set(parameters), "named twice"
        return
    # a gate whose ** is its framework's (the AgentCore drop-in) names each one, as GateKeywords does
    for keyword, annotation in GateKeywords.__annotations__.items():
        found = parameters.get(keyword)
        assert found is not None, f"{name} lacks {keyword}="
        assert found.kind is inspect.Parameter.KEYWORD_ONLY, keyword
        assert found.annotation == _annotation(annotation), (keyword, found.annotation)
        assert found.default is (DEFAULT_DECIDER if keyword == "decider" else None), keyword


@pytest.mark.parametrize(("module", "name"), GATES, ids=[n for _, n in GATES])
def test_the_keywords_gates_share_are_spelt_and_typed_alike(module, name):
    parameters = _parameters(module, name)
    for keyword, annotation in SHARED.items():
        found = parameters.get(keyword)
        if found is None:
            continue
        assert found.kind is inspect.Parameter.KEYWORD_ONLY, f"{name}({keyword}=) is not keyword-only"
        assert found.annotation == annotation, (name, keyword, found.annotation)
        if keyword in ("session_id", "namespaces"):
            assert found.default is None, (name, keyword)
        if keyword == "actor_id":  # required, or named for the framework (what traces and logs show)
            assert found.default in (inspect.Parameter.empty, module.rsplit(".", 1)[-1]), found.default
    # thresholds and the rest go in options=; a gate builds its own policy
    assert not {"thresholds", "policy"} & set(parameters), name


# ---- the embedder a gate scores with: one rule on every gate --------------------------------------


class _Bare(FrameworkGate):
    def __init__(self, **gate: Any) -> None:
        self._configure(**gate)


def test_the_judge_embedder_is_the_given_one_else_the_deciders_else_the_default():
    given, deciders = HashingEmbedder(64), HashingEmbedder(32)
    decider = EmbeddedDecider(embedder=deciders)
    assert _Bare(embedder=given, decider=decider)._judge_embedder() is given
    assert _Bare(decider=decider)._judge_embedder() is deciders
    assert _Bare(decider=ScriptedDecider.always_open())._judge_embedder() is default_embedder()
    assert _Bare(decider=None)._judge_embedder() is default_embedder()


def test_the_older_gates_score_with_the_deciders_embedder_as_the_newer_ones_do():
    """LangGraph's and ADK's gates embedded with the default model whatever the decider's (their
    own spelling of the rule); now every gate follows the one rule."""
    langgraph = pytest.importorskip("langgraph.store.memory")
    adk = pytest.importorskip("google.adk.memory")
    from recallwise.integrations.adk import GatedMemoryService
    from recallwise.integrations.langgraph import GatedStore

    deciders = HashingEmbedder(32)
    decider = EmbeddedDecider(embedder=deciders)
    store = GatedStore(langgraph.InMemoryStore(), decider=decider)
    service = GatedMemoryService(adk.InMemoryMemoryService(), decider=decider)
    assert store._searcher.embedder is deciders
    assert service._searcher.embedder is deciders
    given = HashingEmbedder(16)
    assert GatedStore(langgraph.InMemoryStore(), embedder=given, decider=decider)._searcher.embedder is given
