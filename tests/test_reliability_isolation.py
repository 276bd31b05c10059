"""Actor isolation: ids are validated before they reach a namespace, and a recall for actor A
never returns a record of actor B, in SQLite and in PostgreSQL (a real server).

The property test draws random valid actor ids (case variants, prefixes and punctuation
included) and random records spread over each actor's own namespace, a namespace shared by
every actor, and per-session namespaces; for every actor it checks, on both the stock
(dense) and the gated (hybrid dense + full-text) search paths, that the recall returns
exactly that actor's records of the namespaces it may read: nothing of anyone else's (the
isolation), and everything of its own (so the check cannot pass by returning nothing).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recallwise import InvalidIdError, MemoryRecord, RecallPolicy
from recallwise.cli import main
from recallwise.embeddings import HashingEmbedder
from recallwise.records import resolve_namespace, validate_id
from recallwise.stores import SQLiteStore
from recallwise.testing import ScriptedDecider

# ---- ids ---------------------------------------------------------------------------------

BAD_IDS = [
    "a/b",
    "/alice",
    "..",
    "a..b",
    "../alice",
    "alice/..",
    "*",
    "al*",
    "%",
    "alice%",
    "{actorId}",
    "{",
    "}",
    "a b",
    " alice",
    "alice ",
    "a\tb",
    "a\nb",
    "\nalice",
    "al\u00a0ice",
    "al\u2028ice",
    "",
    "x" * 129,
    "al\x00ice",
]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_unsafe_ids_are_rejected_with_a_clear_error(bad: str) -> None:
    with pytest.raises(InvalidIdError) as info:
        validate_id(bad, "actor_id")
    message = str(info.value)
    assert repr(bad) in message and "actor_id" in message
    assert "'/'" in message and "'..'" in message  # says what is not allowed
    with pytest.raises(InvalidIdError, match="session_id"):
        resolve_namespace("/s/{actorId}/{sessionId}", actor_id="alice", session_id=bad)
    with pytest.raises(InvalidIdError, match="actor_id"):
        resolve_namespace("/facts/{actorId}", actor_id=bad)


@pytest.mark.parametrize("value", [None, 7, b"alice", ["alice"]])
def test_non_string_ids_are_rejected(value: Any) -> None:
    with pytest.raises(InvalidIdError, match="must be a string"):
        validate_id(value, "actor_id")


def test_a_trailing_newline_is_rejected() -> None:
    with pytest.raises(InvalidIdError):
        validate_id("alice\n")


@pytest.mark.parametrize(
    "good", ["alice", "A", "user_42", "a.b", "a-b", "tenant:alice", "a@b.c", "a+b=c", "x" * 128]
)
def test_safe_ids_are_accepted(good: str) -> None:
    assert validate_id(good) == good
    assert resolve_namespace("/facts/{actorId}", actor_id=good) == f"/facts/{good}"


def test_a_recall_with_a_bad_id_raises_before_touching_the_store(store: SQLiteStore) -> None:
    store.add_records([MemoryRecord(actor_id="alice", namespace="/facts/alice", text="passport X1")])
    searched: list[Any] = []
    real = store.search
    store.search = lambda *a, **k: searched.append(a) or real(*a, **k)  # type: ignore[method-assign]
    policy = RecallPolicy(store, decider=None, namespaces=["/facts/{actorId}"])
    for bad in ("../alice", "*", "%", "{actorId}", "alice/..", "al ice"):
        with pytest.raises(InvalidIdError):
            policy.recall("passport", actor_id=bad)
        with pytest.raises(InvalidIdError):
            policy.recall("passport", actor_id="alice", session_id=bad)
    assert searched == []


def test_a_namespace_template_needing_an_id_that_was_not_given_is_an_error() -> None:
    with pytest.raises(InvalidIdError, match=r"needs \{sessionId\}"):
        resolve_namespace("/s/{actorId}/{sessionId}", actor_id="alice")


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "passport", "--actor", "../alice"],
        ["search", "passport", "--actor", "*"],
        ["search", "passport", "--actor", "al ice"],
    ],
)
def test_the_cli_refuses_a_bad_actor_in_one_line(
    tmp_path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code = main([*argv, "--store", f"sqlite:///{tmp_path}/cli.db"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("recallwise: error: invalid actor_id")


def test_ingest_refuses_a_bad_actor_in_one_line(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "chat.jsonl"
    source.write_text('{"role": "user", "text": "I live in Lisbon."}\n')
    code = main(["ingest", str(source), "--actor", "../bob", "--store", f"sqlite:///{tmp_path}/i.db"])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "invalid --actor '../bob'" in err


# ---- the property: A never sees B ---------------------------------------------------------

VOCAB = ["tea", "coffee", "flight", "passport", "dog", "salary", "allergy", "lisbon"]
valid_id = st.from_regex(r"\A[A-Za-z0-9_\-.:@+=]{1,24}\Z").filter(lambda s: ".." not in s)


@st.composite
def worlds(draw: st.DrawFn) -> dict[str, Any]:
    actors = draw(st.lists(valid_id, min_size=2, max_size=5, unique=True))
    if draw(st.booleans()):  # near-identical ids: case variants and prefixes of another actor's id
        base = actors[0]
        variants = [v for v in (base.swapcase(), base[:-1], base + "x", base + ".") if v and ".." not in v]
        actors = list(dict.fromkeys(actors + variants))
    rows = draw(
        st.lists(
            st.tuples(
                st.integers(0, len(actors) - 1),
                st.sampled_from(["own", "shared", "session"]),
                st.sampled_from(["s1", "s2"]),
                st.sampled_from(VOCAB),
                st.sampled_from(VOCAB),
            ),
            min_size=1,
            max_size=25,
        )
    )
    query = " ".join(draw(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3)))
    return {"actors": actors, "rows": rows, "query": query}


def check_isolation(store: Any, world: dict[str, Any]) -> None:
    tag = uuid.uuid4().hex[:10]  # examples share a store; each one lives in its own namespaces
    templates = [
        f"/t{tag}/facts/{{actorId}}",
        f"/t{tag}/shared",
        f"/t{tag}/sessions/{{actorId}}/{{sessionId}}",
    ]
    actors: list[str] = world["actors"]
    records = []
    for i, (who, kind, session, w1, w2) in enumerate(world["rows"]):
        actor = actors[who]
        namespace = {
            "own": f"/t{tag}/facts/{actor}",
            "shared": f"/t{tag}/shared",
            "session": f"/t{tag}/sessions/{actor}/{session}",
        }[kind]
        text = f"{w1} {w2} note {i} of {actor}"
        records.append(MemoryRecord(actor_id=actor, namespace=namespace, text=text, id=f"{tag}-{i}"))
    store.add_records(records)
    owner = {r.id: r.actor_id for r in records}
    for arm, decider in (
        ("stock", None),
        ("gated", ScriptedDecider(1.0, 1.0, local=True, name="always-yes")),
    ):
        policy = RecallPolicy(
            store,
            decider=decider,
            namespaces=templates,
            top_k=50,
            relevance_score=0.0,
            max_context_chars=1_000_000,
            cache_size=0,
        )
        for actor in actors:
            recall = policy.recall(world["query"], actor_id=actor, session_id="s1")
            readable = {
                r.id
                for r in records
                if r.actor_id == actor
                and r.namespace
                in (f"/t{tag}/facts/{actor}", f"/t{tag}/shared", f"/t{tag}/sessions/{actor}/s1")
            }
            seen = {c.id for c in recall.trace.candidates}
            strangers = {i: owner.get(i) for i in seen if owner.get(i) != actor}
            assert not strangers, f"{arm}: actor {actor!r} got records of {strangers}"
            assert {k.record.id for k in recall.records} == readable == seen, arm  # and all of its own
            lines = set(recall.context.splitlines()[1:-1])
            assert lines == {f"- {r.text}" for r in records if r.id in readable}, arm  # the text, too
        assert policy.stats.errors == 0
        policy.close()


ISOLATION = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def sqlite_store(tmp_path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(f"sqlite:///{tmp_path}/iso.db", embedder=HashingEmbedder(64))
    yield store
    store.close()


@ISOLATION
@given(world=worlds())
def test_sqlite_recall_never_crosses_actors(sqlite_store: SQLiteStore, world: dict[str, Any]) -> None:
    check_isolation(sqlite_store, world)


@pytest.fixture
def postgres_store(pg_url: str) -> Iterator[Any]:
    pytest.importorskip("psycopg")
    from recallwise.stores.postgres import PostgresStore

    schema = f"iso_{uuid.uuid4().hex[:12]}"
    store = PostgresStore(pg_url, embedder=HashingEmbedder(64), schema=schema)
    yield store
    store.drop_schema()
    store.close()


@pytest.mark.postgres
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(world=worlds())
def test_postgres_recall_never_crosses_actors(postgres_store: Any, world: dict[str, Any]) -> None:
    check_isolation(postgres_store, world)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_near_identical_ids_stay_apart(request: pytest.FixtureRequest, backend: str) -> None:
    store = request.getfixturevalue("sqlite_store" if backend == "sqlite" else "postgres_store")
    actors = ["bob", "Bob", "BOB", "bob.", "bob-", "bo", "bob:1", "bob@x", "bob+", "bob="]
    rows = [
        (i, kind, "s1", "tea", "dog") for kind in ("shared", "own", "session") for i in range(len(actors))
    ]
    check_isolation(store, {"actors": actors, "rows": rows, "query": "tea"})
