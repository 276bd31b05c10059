"""Consolidation: a repeated, reworded or updated memory changes the record instead of duplicating it.

Facts (one record each), compared with the actor's stored facts and with the facts written
earlier in the same run (so one conversation's near-duplicates merge too):

* the same text again (case and spacing aside) -> nothing changes;
* the same ``key`` (a single-valued slot such as ``"home city"``) with new text -> the old
  record is replaced: a later fact replaces an earlier one ("I moved to Porto" replaces "The
  user lives in Vancouver."), unless the new text only says less than the old (below);
* the same fact with ``not`` / ``never`` added or taken away -> the newer one replaces the old
  ("The user doesn't like horror movies." replaces "The user likes horror movies.");
* the same fact in other words -- a near-paraphrase (cosine of the store's embeddings at least
  ``duplicate_cosine``) or one whose content words are all in the other ("has been vegetarian
  for ten years" holds "is vegetarian for ten years") -> one record, in the **more specific**
  wording (more content words; the newer on a tie): the old record is replaced by a more
  specific new one, and a less specific new one changes nothing;
* otherwise -> a new record.

Preferences are kept as one AgentCore-shaped record per context
(``{"context", "preference", "categories"}``); each record remembers the statements it is
made of (``metadata["clauses"]``). A new statement replaces the statement with its key, or the
one it restates (the same rules as facts, by content words), keeping the more specific wording;
a repeat changes nothing; anything else is added to the record. A record whose statements
changed is replaced as a whole (new id, ``metadata["replaces"]`` names the old one), which is how
AgentCore reports an update too.

All new records of one run are embedded in at most two batches (facts, then preferences).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from ..english import FUNCTION_WORDS, english_dictionary
from ..records import MemoryRecord, resolve_namespace
from ..stores.base import MemoryStore
from ..stores.ranking import embed_missing
from .base import DEFAULT_STRATEGIES, PREFERENCE, SEMANTIC, ExtractedMemory, Strategy, preference_blob

__all__ = ["DUPLICATE_COSINE", "ConsolidationResult", "consolidate"]

#: Cosine similarity at or above which two facts are the same fact in other words. Measured
#: with the default MiniLM embedder (tests/test_extraction.py checks these): rewordings of a
#: persona fact ("is vegetarian" / "is a vegetarian", "called" / "named") score 0.96-1.00; the
#: closest two distinct persona facts 0.54; different values of one attribute 0.53-0.87
#: ("is vegetarian" / "is vegan" 0.87, which must not merge). Other embedders need their own.
DUPLICATE_COSINE = 0.93


@dataclass
class ConsolidationResult:
    """What consolidation did to the store."""

    added: list[MemoryRecord] = field(default_factory=list)
    #: (old record, record that replaced it)
    updated: list[tuple[MemoryRecord, MemoryRecord]] = field(default_factory=list)
    unchanged: int = 0
    #: the memories that added or changed a record (the others were in the store already)
    written: list[ExtractedMemory] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "added": len(self.added),
            "updated": len(self.updated),
            "unchanged": self.unchanged,
            "records": [
                {"id": r.id, "namespace": r.namespace, "text": r.text, "strategy": r.strategy}
                for r in [*self.added, *(new for _, new in self.updated)]
            ],
        }


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("\u2019", "'").split()).rstrip(".")


_STOP = FUNCTION_WORDS | frozenset(
    [
        "by",
        "am",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "some",
        "any",
        "when",
        "if",
        "than",
        "then",
        "there",
        "one",
    ]
)
_NEGATION = frozenset({"not", "no", "never"})


@lru_cache(maxsize=16384)
def _lemma(word: str) -> str:
    lemmas = english_dictionary().getAllLemmas(word)
    for upos in ("VERB", "NOUN", "ADJ", "AUX"):
        if upos in lemmas:
            return lemmas[upos][0].lower()
    return word


@lru_cache(maxsize=16384)
def content_words(text: str) -> frozenset[str]:
    """The lemmas of a memory's content words ("n't" counts as "not")."""
    words = re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower().replace("\u2019", "'"))
    out: set[str] = set()
    for word in words:
        if word.endswith("n't"):
            out.add("not")
            word = word[:-3]
        word = word.split("'", 1)[0]
        if word and word not in _STOP:
            out.add(_lemma(word))
    return frozenset(out)


Relation = Literal["same", "more specific", "less specific", "negated", "different"]


def relation(new: str, old: str, cosine: float | None = None, threshold: float = 1.01) -> Relation:
    """How a new memory text stands to an old one (see the module docstring)."""
    if _norm(new) == _norm(old):
        return "same"
    a, b = content_words(new), content_words(old)
    if a and b and a ^ b and (a ^ b) <= _NEGATION:
        return "negated"
    if (cosine is not None and cosine >= threshold) or (min(len(a), len(b)) >= 2 and (a <= b or b <= a)):
        return "more specific" if len(a) >= len(b) else "less specific"
    return "different"


def consolidate(
    store: MemoryStore,
    actor_id: str,
    memories: Sequence[ExtractedMemory],
    *,
    strategies: Sequence[Strategy] = DEFAULT_STRATEGIES,
    duplicate_cosine: float = DUPLICATE_COSINE,
    source: str = "",
    vectors: Mapping[str, np.ndarray] | None = None,
) -> ConsolidationResult:
    """Write ``memories`` (oldest first) into ``store`` for ``actor_id``, merging with what is there.

    ``vectors``: the memories' texts already embedded (the write path embeds them before it takes
    the actor's write lock); the texts missing from it are embedded here."""
    result = ConsolidationResult()
    by_kind = {s.kind: resolve_namespace(s.namespace, actor_id=actor_id) for s in strategies}
    facts = [m for m in memories if m.kind == SEMANTIC]
    preferences = [m for m in memories if m.kind == PREFERENCE]
    if facts and SEMANTIC in by_kind:
        _facts(store, actor_id, by_kind[SEMANTIC], facts, duplicate_cosine, source, result, vectors or {})
    if preferences and PREFERENCE in by_kind:
        _preferences(store, actor_id, by_kind[PREFERENCE], preferences, source, result)
    return result


def _metadata(memory: ExtractedMemory, source: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"extractor": source} if source else {}
    if memory.key:
        meta["key"] = memory.key
    if memory.session_id:
        meta["session_id"] = memory.session_id
    if memory.source_event_ids:
        meta["source_event_ids"] = list(memory.source_event_ids)
    return meta


def _replace(store: MemoryStore, old: MemoryRecord, new: MemoryRecord, result: ConsolidationResult) -> None:
    new.metadata["replaces"] = old.id
    new.metadata["previous_text"] = old.text
    store.add_records([new])
    store.delete_records([old.id])
    result.updated.append((old, new))


def _facts(
    store: MemoryStore,
    actor_id: str,
    namespace: str,
    memories: list[ExtractedMemory],
    threshold: float,
    source: str,
    result: ConsolidationResult,
    vectors: Mapping[str, np.ndarray],
) -> None:
    existing = store.list_records(namespace, actor_id=actor_id)
    missing = [r for r in existing if r.embedding is None]
    if missing:  # e.g. a hosted store that does not hand vectors back
        for record, vector in zip(missing, store.embedder.embed([r.rendered for r in missing]), strict=True):
            record.embedding = vector
    todo = list(dict.fromkeys(m.text for m in memories if m.text not in vectors))
    known = {**vectors, **dict(zip(todo, store.embedder.embed(todo), strict=True))} if todo else vectors
    new_vectors = [known[m.text] for m in memories]
    for memory, vector in zip(memories, new_vectors, strict=True):
        text = memory.text.strip()
        if any(_norm(r.text) == _norm(text) for r in existing):
            result.unchanged += 1
            continue
        record = MemoryRecord(
            actor_id=actor_id,
            namespace=namespace,
            text=text,
            strategy=SEMANTIC,
            metadata=_metadata(memory, source),
            embedding=np.asarray(vector, dtype=np.float32),
        )
        target = None
        if memory.key:
            target = next((r for r in existing if r.metadata.get("key") == memory.key), None)
            if target is not None and relation(text, target.text) == "less specific":
                result.unchanged += 1  # "lives in Vancouver" after "lives in Vancouver, Canada"
                continue
        if target is None and existing:
            matrix = np.stack([np.asarray(r.embedding, dtype=np.float32) for r in existing])
            cosines = matrix @ np.asarray(vector, dtype=np.float32)
            for index in np.argsort(-cosines):
                found = relation(text, existing[index].text, float(cosines[index]), threshold)
                if found == "less specific":
                    break
                if found != "different":
                    target = existing[int(index)]
                    break
            else:
                found = "different"
            if found == "less specific":  # what the store already says, said more precisely
                result.unchanged += 1
                continue
        if target is not None:
            _replace(store, target, record, result)
            existing = [r for r in existing if r.id != target.id]
        else:
            store.add_records([record])
            result.added.append(record)
        result.written.append(memory)
        existing.append(record)


def _join(statements: Iterable[str]) -> str:
    """Statements joined into one preference: "Dislikes sparkling water; still water only"."""
    out: list[str] = []
    for text in statements:
        text = text.strip().rstrip(".")
        first = text.split(" ", 1)[0]
        if out and not (len(first) > 1 and first.isupper()):  # keep acronyms ("YVR") as written
            text = text[:1].lower() + text[1:]
        out.append(text)
    return "; ".join(out)


def _clauses_of(record: MemoryRecord) -> tuple[str, list[str], list[dict[str, Any]]] | None:
    """(context, categories, clauses) of a stored preference record, or None if it is not one."""
    try:
        blob = json.loads(record.text)
    except ValueError:
        return None
    if not isinstance(blob, dict) or not isinstance(blob.get("context"), str):
        return None
    categories = [c for c in blob.get("categories") or [] if isinstance(c, str)]
    clauses = record.metadata.get("clauses")
    if not isinstance(clauses, list) or not clauses:
        preference = blob.get("preference")
        clauses = [{"key": None, "text": preference}] if isinstance(preference, str) and preference else []
    return blob["context"], categories, [dict(c) for c in clauses]


def _preferences(
    store: MemoryStore,
    actor_id: str,
    namespace: str,
    memories: list[ExtractedMemory],
    source: str,
    result: ConsolidationResult,
) -> None:
    existing: dict[str, tuple[MemoryRecord, str, list[str], list[dict[str, Any]]]] = {}
    for record in store.list_records(namespace, actor_id=actor_id):
        parsed = _clauses_of(record)
        if parsed is not None:
            existing.setdefault(parsed[0].strip().lower(), (record, *parsed))
    groups: dict[str, list[ExtractedMemory]] = {}
    for memory in memories:
        assert memory.context is not None
        groups.setdefault(memory.context.strip().lower(), []).append(memory)
    writes: list[tuple[MemoryRecord | None, MemoryRecord]] = []
    for context_key, group in groups.items():
        old = existing.get(context_key)
        context: str
        categories: list[str]
        clauses: list[dict[str, Any]]
        if old is None:
            context, categories, clauses = group[0].context or "", [], []
        else:
            _, context, categories, clauses = old
            clauses = [dict(c) for c in clauses]
        changed = False
        for memory in group:
            text = memory.text.strip()
            if any(_norm(str(c.get("text", ""))) == _norm(text) for c in clauses):
                result.unchanged += 1
                continue
            related = [(c, relation(text, str(c.get("text", "")))) for c in clauses]
            if any(found == "less specific" for _, found in related):
                result.unchanged += 1
                continue
            target = next((c for c in clauses if memory.key and c.get("key") == memory.key), None)
            if target is None:
                target = next((c for c, found in related if found != "different"), None)
            if target is not None:
                target["text"] = text
                target["key"] = memory.key or target.get("key")
            else:
                clauses.append({"key": memory.key, "text": text})
            for category in memory.categories:
                if category not in categories:
                    categories = [*categories, category]
            changed = True
            result.written.append(memory)
        if not changed:
            continue
        sessions = sorted({m.session_id for m in group if m.session_id})
        record = MemoryRecord(
            actor_id=actor_id,
            namespace=namespace,
            text=preference_blob(context, _join(str(c["text"]) for c in clauses), categories),
            strategy=PREFERENCE,
            metadata={
                **({"extractor": source} if source else {}),
                "clauses": clauses,
                **({"session_ids": sessions} if sessions else {}),
                "updated_at": time.time(),
            },
        )
        writes.append((old[0] if old is not None else None, record))
        parsed = _clauses_of(record)
        assert parsed is not None
        existing[context_key] = (record, *parsed)
    embed_missing(store.embedder, [record for _, record in writes])  # one batch for the run
    for previous, record in writes:
        if previous is None:
            store.add_records([record])
            result.added.append(record)
        else:
            _replace(store, previous, record, result)
