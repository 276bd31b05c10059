"""The per-actor profile (issue 49 part 3): kept at write time by the SQLite store, exact under
writes, deletes and other connections, read by the gate in-process; a store without one falls
back visibly. The two gate cases are sessions through ``RecallPolicy`` with default options."""

from __future__ import annotations

import shutil
import threading
from collections import Counter
from pathlib import Path

import pytest

from recallwise import RecallPolicy
from recallwise.embeddings import default_embedder
from recallwise.records import MemoryRecord, SearchHit
from recallwise.stores import SQLiteStore
from recallwise.stores.base import SearchRequest
from recallwise.stores.profile import record_words

NS = "/preferences/{actorId}"
FIXTURE = Path(__file__).parent / "data" / "sqlite_store_v1.db"


@pytest.fixture(scope="module")
def embedder():
    return default_embedder()


def _store(tmp_path: Path, embedder, name: str = "m.db") -> SQLiteStore:
    return SQLiteStore(f"sqlite:///{tmp_path / name}", embedder=embedder)


def _records(actor: str, texts: list[str]) -> list[MemoryRecord]:
    return [MemoryRecord(actor, f"/preferences/{actor}", t, id=f"{actor}-{i}") for i, t in enumerate(texts)]


#: a learning request the shipped gate leaves closed on the message alone (p 0.13, below 0.198)
COURSES_CLOSED = "Any good statistics courses?"

PERSONA = [
    "The user prefers free, self-paced online learning over paid classes.",
    "The user lives in Leeds with their partner.",
    "The user is vegetarian.",
    "The user drinks oat milk flat whites.",
]


def test_a_recommendation_in_a_domain_the_user_has_preferences_in_opens(tmp_path, embedder) -> None:
    """A learning request opens, in a session with default options, and keeps the learning
    preference. The gate closed it (p 0.020) until the gate head was fitted with
    ``dev/gate_labels_domains.jsonl``, recommendation requests in the life domains the fit data
    barely covered (this message is not among them; the domain rule stays opt-in)."""
    store = _store(tmp_path, embedder)
    store.add_records(_records("ann", PERSONA))
    policy = RecallPolicy(store, namespaces=[NS])
    hello = policy.recall("Hi there!", actor_id="ann", session_id="s1")
    assert hello.trace.gate_open is False and hello.context == ""
    turn = policy.recall(
        "Which online courses would you suggest for picking up statistics?", actor_id="ann", session_id="s1"
    )
    assert turn.trace.gate_open is True
    kept = [r.record.id for r in turn.records]
    assert "ann-0" in kept
    assert "ann-2" not in kept  # the diet has nothing to do with a course
    assert policy.stats.profile_fallbacks == 0


def test_the_domain_rule_given_opens_on_the_profile_without_a_search(tmp_path, embedder) -> None:
    """The opt-in domain rule (``gate_domain_threshold``): the message's life domain is looked up
    in the actor's profile, in-process; a domain none of the actor's records touch opens nothing."""
    store = _store(tmp_path, embedder)
    store.add_records(_records("ann", PERSONA))
    policy = RecallPolicy(store, namespaces=[NS], gate_domain_threshold=0.02)
    courses = policy.recall(COURSES_CLOSED, actor_id="ann", session_id="s")
    assert courses.trace.gate_open is True and courses.trace.profile_domain == "learning"
    assert "ann-0" in [r.record.id for r in courses.records]
    assert any("records are about learning" in note for note in courses.trace.notes)
    store.delete_records(["ann-0"])  # the profile follows at once: no learning record any more
    again = policy.recall(COURSES_CLOSED, actor_id="ann", session_id="t")
    assert again.trace.profile_domain == "learning" and again.trace.gate_open is False


def test_a_general_question_sharing_a_word_with_a_record_stays_closed(tmp_path, embedder) -> None:
    """(b) "Python" and "Go" are in a record, but they are English words, not names in the user's
    life, and the message's domain opens nothing at its p: no search, nothing injected."""
    store = _store(tmp_path, embedder)
    store.add_records(_records("bo", ["The user writes Python and Go.", "The user has a dog named Biscuit."]))
    policy = RecallPolicy(store, namespaces=[NS])
    for text in (
        "What's the difference between a list and a tuple in Python?",
        "How do I install Go on Ubuntu?",
    ):
        recall = policy.recall(text, actor_id="bo", session_id="s1")
        assert recall.trace.gate_open is False, (text, recall.trace.notes)
        assert recall.trace.names_in_store == [] and recall.context == ""
        assert recall.trace.namespaces_searched == []
    assert policy.stats.retrievals == 0


def test_a_name_only_the_users_memory_holds_still_opens(tmp_path, embedder) -> None:
    store = _store(tmp_path, embedder)
    store.add_records(_records("cy", ["The user's sister Gina got a tattoo of a rose last spring."]))
    policy = RecallPolicy(store, namespaces=[NS])
    recall = policy.recall("Who is Gina?", actor_id="cy")
    assert recall.trace.gate_p is not None and recall.trace.gate_p < recall.trace.gate_threshold
    assert recall.trace.gate_open is True and recall.trace.names_in_store == ["gina"]
    assert recall.trace.profile == "profile"


# ---- exactness: the profile follows every write, delete and other connection -------------------
def _expected(store: SQLiteStore, actor: str) -> tuple[dict[str, dict[str, int]], dict[str, frozenset[str]]]:
    """The profile recomputed from the records themselves."""
    domains: dict[str, Counter[str]] = {}
    words: dict[str, set[str]] = {}
    for record in store.list_records(None, actor_id=actor):
        assert record.embedding is not None
        domains.setdefault(record.namespace, Counter())[store.domain_of(record.embedding)] += 1
        words.setdefault(record.namespace, set()).update(record_words(record.rendered))
    return {ns: dict(c) for ns, c in domains.items()}, {ns: frozenset(w) for ns, w in words.items()}


def _check(store: SQLiteStore, actor: str) -> None:
    profile = store.actor_profile(actor)
    domains, words = _expected(store, actor)
    assert {ns: dict(d) for ns, d in profile.domains.items()} == domains
    assert dict(profile.words) == words


def test_the_profile_follows_writes_replacements_and_deletes(tmp_path, embedder) -> None:
    store = _store(tmp_path, embedder)
    assert store.actor_profile("dee").domains == {}
    store.add_records(_records("dee", PERSONA))
    _check(store, "dee")
    assert store.actor_profile("dee").mentions(["/preferences/dee"], ["leeds", "paris"]) == {"leeds"}
    # a record replaced by id: its old words and domain go
    store.add_records([MemoryRecord("dee", "/preferences/dee", "The user moved to Porto.", id="dee-1")])
    _check(store, "dee")
    assert store.actor_profile("dee").mentions(["/preferences/dee"], ["leeds", "porto"]) == {"porto"}
    store.delete_records(["dee-2", "dee-3"])
    _check(store, "dee")
    store.add_records(_records("eve", ["The user runs marathons."]))
    assert store.forget_actor("dee")["records"] == 2
    assert store.actor_profile("dee").domains == {} and store.actor_profile("dee").words == {}
    _check(store, "eve")


def test_a_failed_transaction_leaves_the_profile_as_it_was(tmp_path, embedder) -> None:
    store = _store(tmp_path, embedder)
    store.add_records(_records("fay", PERSONA[:2]))
    before = store.actor_profile("fay")
    with pytest.raises(RuntimeError), store.transaction("fay"):
        store.add_records(_records("fay", ["The user plays the cello."]))
        store.actor_profile("fay")  # read inside: not kept, it may roll back
        raise RuntimeError("roll back")
    assert store.actor_profile("fay") == before
    _check(store, "fay")


def test_another_connections_writes_are_seen_at_once(tmp_path, embedder) -> None:
    """Two stores on one file (two processes' worth): the reader's in-process copy is dropped when
    the writer commits (``PRAGMA data_version``), so the gate never reads a stale profile."""
    reader, writer = _store(tmp_path, embedder), _store(tmp_path, embedder)
    writer.add_records(_records("gus", PERSONA[:1]))
    assert reader.actor_profile("gus").records_in(["/preferences/gus"], "learning") == 1
    writer.add_records(_records("gus", ["The user is learning Spanish at evening classes."])[:1])
    _check(reader, "gus")
    writer.delete_records(["gus-0"])
    assert reader.actor_profile("gus").domains == {}
    writer.close()
    reader.close()


def test_concurrent_writes_and_deletes_keep_it_exact(tmp_path, embedder) -> None:
    store = _store(tmp_path, embedder)
    other = _store(tmp_path, embedder)  # a second connection writing the same file
    texts = [*PERSONA, "The user cycles to work.", "The user has two cats.", "The user saves for a house."]
    vectors = dict(zip(texts, embedder.embed(texts), strict=True))
    errors: list[BaseException] = []

    def writer(target: SQLiteStore, worker: int) -> None:
        try:
            for n in range(12):
                text = texts[(worker + n) % len(texts)]
                record_id = f"hal-{worker}-{n % 4}"
                record = MemoryRecord("hal", "/preferences/hal", text, id=record_id, embedding=vectors[text])
                target.add_records([record])
                if n % 3 == 2:
                    target.delete_records([f"hal-{worker}-{(n + 1) % 4}"])
                target.actor_profile("hal")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(store if w % 2 else other, w)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    _check(store, "hal")
    _check(other, "hal")
    other.close()


def test_a_file_made_before_the_profile_gets_one_on_open(tmp_path, embedder) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURE, path)
    with SQLiteStore(f"sqlite:///{path}", embedder=embedder) as store:
        assert store.actor_profile("alice").words
        _check(store, "alice")


# ---- a store that keeps no profile: today's behaviour, visibly -------------------------------
class _Foreign:
    """A foreign memory: the Searcher seam only (no profile, no mentions)."""

    local = True

    def __init__(self, inner: SQLiteStore) -> None:
        self.inner = inner
        self.embedder = inner.embedder

    def search(self, request: SearchRequest) -> list[SearchHit]:
        return self.inner.search(request)


def test_a_store_without_a_profile_falls_back_visibly(tmp_path, embedder) -> None:
    store = _store(tmp_path, embedder)
    store.add_records(_records("ivy", PERSONA))
    policy = RecallPolicy(_Foreign(store), namespaces=[NS])
    recall = policy.recall(COURSES_CLOSED, actor_id="ivy")
    assert recall.trace.profile == "search" and recall.trace.profile_domain is None
    assert recall.trace.gate_open is False  # as before the profile: the message alone decides
    assert policy.stats.profile_fallbacks == 1
