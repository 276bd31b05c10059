"""LoCoMo: the conversations, their observations and questions, as recallwise reads them.

LoCoMo (Maharana et al., ACL 2024) holds ten very long conversations. Each session's
observations (short third-person facts pointing at the turn they came from) are the memory
records; each question's evidence turns make the observations from those turns its relevant
records. recallwise reads the data from a directory the user has (it is not shipped: the
upstream repository carries no licence) and never fits anything on the test split.

Owns the loader (:func:`load_conversation`, :func:`load_split`), the dev/test split
(:data:`SPLITS`) and :func:`build_store` (a conversation's observations in an in-memory
store). ``recallwise bench locomo`` and ``recallwise tune named-gate`` both read LoCoMo here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..embeddings import Embedder
from ..errors import UsageError
from ..records import MemoryRecord
from ..stores.sqlite import SQLiteStore

__all__ = [
    "ADVERSARIAL",
    "SPLITS",
    "Conversation",
    "LocomoQuestion",
    "Observation",
    "build_store",
    "load_conversation",
    "load_split",
]

#: The dev/test split given with the data (../shared/data/locomo/README.md).
SPLITS: dict[str, tuple[str, ...]] = {
    "dev": ("26", "30", "41", "42", "43"),
    "test": ("44", "47", "48", "49", "50"),
}
SPLITS["all"] = SPLITS["dev"] + SPLITS["test"]

ADVERSARIAL = 5


@dataclass
class Observation:
    id: str
    speaker: str
    text: str
    dia_ids: frozenset[str]
    session: int
    date: str


@dataclass
class LocomoQuestion:
    text: str
    answer: str
    category: int
    relevant: frozenset[str]


@dataclass
class Conversation:
    id: str
    speakers: tuple[str, str]
    observations: list[Observation]
    questions: list[LocomoQuestion]

    @property
    def actor_id(self) -> str:
        return f"locomo-{self.id}"


def load_conversation(path: Path) -> Conversation:
    """Parse one LoCoMo file; questions keep only non-adversarial ones with a relevant record."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read LoCoMo file {str(path)!r}: {exc}") from exc
    try:
        speakers = (str(data["speaker_a"]), str(data["speaker_b"]))
        observations: list[Observation] = []
        for key, value in data.items():
            match = re.fullmatch(r"session_(\d+)_observation", key)
            if not match or not isinstance(value, dict):
                continue
            session = int(match.group(1))
            date = str(data.get(f"session_{session}_date_time", ""))
            for speaker, facts in value.items():
                for fact, dia in facts:
                    ids = frozenset(dia if isinstance(dia, list) else [dia])
                    observations.append(
                        Observation(f"o{len(observations)}", speaker, fact, ids, session, date)
                    )
        questions = []
        for qa in data["qa"]:
            if qa.get("category") == ADVERSARIAL:
                continue
            evidence = set(qa.get("evidence") or [])
            relevant = frozenset(o.id for o in observations if o.dia_ids & evidence)
            if relevant:
                questions.append(
                    LocomoQuestion(
                        str(qa["question"]), str(qa.get("answer", "")), int(qa.get("category", 0)), relevant
                    )
                )
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{str(path)!r} does not look like a LoCoMo conversation: {exc}") from exc
    return Conversation(path.stem, speakers, observations, questions)


def load_split(data_dir: str | Path, split: str) -> list[Conversation]:
    if split not in SPLITS:
        raise UsageError(f"unknown split {split!r}: dev, test or all")
    root = Path(data_dir)
    if not root.is_dir():
        raise UsageError(f"LoCoMo data directory {str(root)!r} does not exist")
    missing = [cid for cid in SPLITS[split] if not (root / f"{cid}.json").exists()]
    if missing:
        raise UsageError(f"LoCoMo directory {str(root)!r} lacks {', '.join(m + '.json' for m in missing)}")
    return [load_conversation(root / f"{cid}.json") for cid in SPLITS[split]]


def build_store(
    conv: Conversation, embedder: Embedder, layout: str = "speakers"
) -> tuple[SQLiteStore, dict[str, str]]:
    """An in-memory store with every observation; returns it and the namespace templates.

    ``layout="speakers"``: one namespace per speaker (described, so a decider can route);
    ``layout="shared"``: one namespace for both.
    """
    store = SQLiteStore("sqlite://:memory:", embedder=embedder)
    namespaces: dict[str, str] = {}
    records = []
    for obs in conv.observations:
        if layout == "shared":
            template = "/observations/{actorId}"
            namespaces[template] = ""
        else:
            template = "/observations/{actorId}/" + re.sub(r"[^A-Za-z0-9_-]", "_", obs.speaker)
            namespaces[template] = f"What {obs.speaker} said and did: {obs.speaker}'s life, plans and events"
        records.append(
            MemoryRecord(
                actor_id=conv.actor_id,
                namespace=template.replace("{actorId}", conv.actor_id),
                text=obs.text,
                id=f"{conv.actor_id}-{obs.id}",
                metadata={
                    "speaker": obs.speaker,
                    "session": obs.session,
                    "date": obs.date,
                    "dia_ids": sorted(obs.dia_ids),
                },
            )
        )
    store.add_records(records)
    return store, namespaces
