"""``recallwise bench decisions --conversations DIR``: decisions over whole labelled conversations.

A conversation is one user's session: the user's stored records (a persona, ``persona``) and the
user's turns in order (``turns``), each labelled (``data/conversations/SOURCES.md`` says how the
shipped ones were built and labelled). One line of a ``*.jsonl`` file is one conversation::

    {"id": "...", "persona": [{"id": "m1", "text": "The user is vegan."}, ...],
     "turns": [{"text": "...", "source": "sgd", "needs_memory": true, "follow_up": false,
                "records": ["m1"]}, ...]}

- ``needs_memory``: answering the turn well depends on one of the user's stored records;
- ``follow_up``: the turn carries on the conversation's previous request (rather than starting a
  new one or closing the conversation); ``null`` where the labels cannot tell (hh-rlhf's later
  turns: the same conversation, but whether they carry on its request or ask something new inside
  it, no rule says);
- ``records``: ids of the persona's records that belong in the prompt for the turn.

Every persona is stored in one real SQLite file (a temporary one; each conversation's user its own
actor, its records in ``/preferences/{actorId}``), and every conversation is run in order through
one :class:`~recallwise.policy.RecallPolicy` with its default options (the default decider, its
default namespaces, follow-ups and the decision cache on), each conversation its own session. What
is graded is what an agent gets: whether a turn retrieved, whether it retrieved as a follow-up of
the conversation's request (the trace's ``follow_up``), and which records were injected.

The figures (``overall``, and the same per turn source and per split), each a share or a mean over
the turns it names; a figure over no turns is None:

- ``opened_when_needed``: over the turns that need memory and start a request (``needs_memory``
  and not ``follow_up``), the share on which the policy retrieved;
- ``closed_when_not_needed``: over the turns that need no memory, the share on which the policy
  retrieved nothing (neither the gate nor a follow-up opened it);
- ``follow_up_precision``: over the turns the policy took for follow-ups (it searched them with the
  conversation's earlier request) whose ``follow_up`` label is known, the share labelled true;
- ``follow_up_recall``: over the turns labelled ``follow_up`` that carry on a request needing
  memory (``follow_up`` and ``needs_memory``), the share on which the policy retrieved (taken for a
  follow-up, or opened by the gate on its own: a message the gate opens on is searched alone);
- ``records_per_unneeded_turn``: records injected per turn that needs no memory (a closed turn
  counts 0);
- ``right_record_kept``: over the turns that need memory and name their records, the share on
  which every one of those records was injected;
- ``records_per_needed_turn``: records injected per turn of that same set.

``conversations`` and ``turns`` count what was run. ``counts`` (beside ``overall``) holds how many
turns each figure is over, and what opened the turns that needed no memory (``unneeded_opened_by``:
the gate on its own, a name in the store below the gate's threshold, a follow-up). Nothing is
fitted here.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..deciders import Decider
from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy import RecallPolicy
from ..records import MemoryRecord
from ..stores.sqlite import SQLiteStore

__all__ = [
    "FIGURES",
    "NAMESPACE",
    "Conversation",
    "ConversationTurn",
    "load_conversations",
    "run_conversations",
]

#: where each persona's records are stored (one of the default policy's namespaces)
NAMESPACE = "/preferences/{actorId}"
#: the keys of ``overall`` (and of each source's and split's figures), in order
FIGURES: tuple[str, ...] = (
    "conversations",
    "turns",
    "opened_when_needed",
    "closed_when_not_needed",
    "follow_up_precision",
    "follow_up_recall",
    "records_per_unneeded_turn",
    "right_record_kept",
    "records_per_needed_turn",
)
Progress = Callable[[int], None]


@dataclass(frozen=True)
class ConversationTurn:
    text: str
    source: str
    needs_memory: bool
    #: None: the labels cannot tell
    follow_up: bool | None
    records: tuple[str, ...] = ()


@dataclass(frozen=True)
class Conversation:
    id: str
    #: the split it belongs to: the name of the folder its file is in
    split: str
    persona: tuple[tuple[str, str], ...]
    turns: tuple[ConversationTurn, ...]
    where: str = ""


def _field(item: Mapping[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = item.get(name)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise UsageError(f"{where}: field {name!r} must be {expected}, got {type(value).__name__}")
    return value


def _parse(item: Any, split: str, where: str) -> Conversation:
    if not isinstance(item, dict):
        raise UsageError(f"{where}: a conversation must be a JSON object")
    conversation_id = _field(item, "id", str, where)
    persona: list[tuple[str, str]] = []
    for n, record in enumerate(_field(item, "persona", list, where)):
        at = f"{where}: persona[{n}]"
        if not isinstance(record, dict):
            raise UsageError(f"{at}: a record must be an object with 'id' and 'text'")
        persona.append((_field(record, "id", str, at), _field(record, "text", str, at)))
    ids = {rid for rid, _ in persona}
    if len(ids) != len(persona):
        raise UsageError(f"{where}: persona record ids repeat")
    turns: list[ConversationTurn] = []
    for n, raw in enumerate(_field(item, "turns", list, where)):
        at = f"{where}: turns[{n}]"
        if not isinstance(raw, dict):
            raise UsageError(f"{at}: a turn must be an object")
        records = tuple(_field(raw, "records", list, at)) if "records" in raw else ()
        unknown = [r for r in records if r not in ids]
        if unknown:
            raise UsageError(f"{at}: records {unknown} are not in the persona")
        text = _field(raw, "text", str, at)
        if not text.strip():
            raise UsageError(f"{at}: field 'text' is empty")
        turns.append(
            ConversationTurn(
                text,
                str(raw.get("source") or "unknown"),
                _field(raw, "needs_memory", bool, at),
                None if raw.get("follow_up", False) is None else _field(raw, "follow_up", bool, at),
                records,
            )
        )
    if not turns:
        raise UsageError(f"{where}: a conversation needs at least one turn")
    return Conversation(conversation_id, split, tuple(persona), tuple(turns), where)


def load_conversations(directory: str | Path) -> list[Conversation]:
    """Every conversation of ``directory``'s ``*.jsonl`` files, or of its split folders' (a folder
    of folders, as ``data/conversations``), read and checked before anything runs; a conversation's
    split is the name of the folder its file is in."""
    root = Path(directory)
    if not root.is_dir():
        raise UsageError(f"{directory}: no such folder of conversations")
    files = sorted(root.glob("*.jsonl")) or sorted(root.glob("*/*.jsonl"))
    if not files:
        raise UsageError(f"{directory}: no *.jsonl conversation files (nor in its subfolders)")
    out: list[Conversation] = []
    seen: dict[str, str] = {}
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{path}: cannot read: {exc}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise UsageError(f"{where}: not JSON: {exc}") from None
            conversation = _parse(item, path.parent.name, where)
            if conversation.id in seen:
                raise UsageError(
                    f"{where}: conversation id {conversation.id!r} is also at {seen[conversation.id]}"
                )
            seen[conversation.id] = where
            out.append(conversation)
    return out


@dataclass
class Tally:
    """What the turns of one group (a source, a split, all) did."""

    conversations: set[str] = field(default_factory=set)
    turns: int = 0
    opened_needed: list[bool] = field(default_factory=list)
    closed_unneeded: list[bool] = field(default_factory=list)
    #: labels of the turns the policy took for follow-ups
    taken_labels: list[bool] = field(default_factory=list)
    #: whether the policy retrieved on each follow-up of a request needing memory
    follow_ups_taken: list[bool] = field(default_factory=list)
    records_unneeded: list[int] = field(default_factory=list)
    right_kept: list[bool] = field(default_factory=list)
    records_needed: list[int] = field(default_factory=list)
    #: what opened the turns that needed no memory: "gate", "name" (the store-aware gate), "follow-up"
    unneeded_opened_by: dict[str, int] = field(default_factory=dict)
    errors: int = 0

    def add(
        self,
        conversation: str,
        turn: ConversationTurn,
        retrieved: bool,
        follow_up: bool,
        kept: set[str],
        opened_by: str | None = None,
    ) -> None:
        self.conversations.add(conversation)
        self.turns += 1
        if turn.needs_memory and not turn.follow_up:
            self.opened_needed.append(retrieved)
        if not turn.needs_memory:
            self.closed_unneeded.append(not retrieved)
            self.records_unneeded.append(len(kept))
            if retrieved and opened_by:
                self.unneeded_opened_by[opened_by] = self.unneeded_opened_by.get(opened_by, 0) + 1
        if follow_up and turn.follow_up is not None:
            self.taken_labels.append(turn.follow_up)
        if turn.follow_up and turn.needs_memory:
            self.follow_ups_taken.append(retrieved)
        if turn.needs_memory and turn.records:
            self.right_kept.append(set(turn.records) <= kept)
            self.records_needed.append(len(kept))

    def figures(self) -> dict[str, Any]:
        return {
            "conversations": len(self.conversations),
            "turns": self.turns,
            "opened_when_needed": _share(self.opened_needed),
            "closed_when_not_needed": _share(self.closed_unneeded),
            "follow_up_precision": _share(self.taken_labels),
            "follow_up_recall": _share(self.follow_ups_taken),
            "records_per_unneeded_turn": _mean(self.records_unneeded),
            "right_record_kept": _share(self.right_kept),
            "records_per_needed_turn": _mean(self.records_needed),
        }

    def counts(self) -> dict[str, Any]:
        return {
            "needed_request_turns": len(self.opened_needed),
            "unneeded_turns": len(self.closed_unneeded),
            "taken_for_follow_ups": len(self.taken_labels),
            "follow_ups_needing_memory": len(self.follow_ups_taken),
            "turns_with_records": len(self.right_kept),
            "unneeded_opened_by": dict(sorted(self.unneeded_opened_by.items())),
            "decider_errors": self.errors,
        }


def _share(values: Sequence[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _mean(values: Sequence[int]) -> float | None:
    return round(float(statistics.fmean(values)), 4) if values else None


def _store(conversations: Sequence[Conversation], path: Path, embedder: Embedder) -> SQLiteStore:
    """Every persona in one SQLite file; a record text several users hold is embedded once."""
    store = SQLiteStore(f"sqlite:///{path}", embedder=embedder)
    texts = list(dict.fromkeys(text for c in conversations for _, text in c.persona))
    vectors: dict[str, Any] = {}
    for start in range(0, len(texts), 256):
        batch = texts[start : start + 256]
        vectors.update(zip(batch, embedder.embed(batch), strict=True))
    records = [
        MemoryRecord(
            c.id, NAMESPACE.replace("{actorId}", c.id), text, id=f"{c.id}:{rid}", embedding=vectors[text]
        )
        for c in conversations
        for rid, text in c.persona
    ]
    for start in range(0, len(records), 512):
        store.add_records(records[start : start + 512])
    return store


def _opened_by(trace: Any) -> str | None:
    """What opened a turn that retrieved, from its trace (None: it did not retrieve)."""
    if not trace.gated:
        return "stock"
    if not trace.gate_open:
        return None
    if trace.follow_up and (trace.gate_p is None or trace.gate_p < (trace.gate_threshold or 0.0)):
        return "follow-up"
    if trace.gate_p is None:
        return "failed open"
    if trace.gate_p < (trace.gate_threshold or 0.0):
        return "name"
    return "gate"


def run_conversations(
    conversations: Sequence[Conversation],
    decider: Decider | None,
    *,
    embedder: Embedder | None = None,
    data: str = "",
    progress: Progress | None = None,
    policy_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Run the conversations in order through one default policy (see the module); returns the
    bench's JSON object. ``policy_options`` are ``RecallPolicy`` keywords (none: the defaults)."""
    embedder = embedder or default_embedder()
    overall = Tally()
    by_source: dict[str, Tally] = {}
    by_split: dict[str, Tally] = {}
    with tempfile.TemporaryDirectory(prefix="recallwise-conversations-") as scratch:
        store = _store(conversations, Path(scratch) / "personas.db", embedder)
        policy = RecallPolicy(store, decider=decider, **dict(policy_options or {}))
        try:
            for conversation in conversations:
                for turn in conversation.turns:
                    recall = policy.recall(turn.text, actor_id=conversation.id, session_id=conversation.id)
                    trace = recall.trace
                    retrieved = bool(trace.gate_open) if trace.gated else True
                    kept = {r.record.id.split(":", 1)[1] for r in recall.records}
                    groups = (
                        overall,
                        by_source.setdefault(turn.source, Tally()),
                        by_split.setdefault(conversation.split, Tally()),
                    )
                    for tally in groups:
                        tally.add(
                            conversation.id, turn, retrieved, bool(trace.follow_up), kept, _opened_by(trace)
                        )
                        tally.errors += bool(trace.errors)
                    if progress is not None:
                        progress(1)
            heads, thresholds = dict(policy.heads), dict(policy.thresholds)
        finally:
            policy.close()
            store.close()
    return {
        "data": data,
        "decider": getattr(decider, "name", None) or "none",
        "embedder": embedder.name,
        "heads": heads,
        "thresholds": {k: round(v, 4) for k, v in thresholds.items()},
        "overall": overall.figures(),
        "counts": overall.counts(),
        "sources": {name: {**t.figures(), "counts": t.counts()} for name, t in sorted(by_source.items())},
        "splits": {name: {**t.figures(), "counts": t.counts()} for name, t in sorted(by_split.items())},
    }
