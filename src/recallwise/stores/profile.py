"""The per-actor profile a store keeps at write time: which life domains an actor's records touch
and which words they hold, so the gate can use both without a search or a store round trip.

A store that keeps one (SQLite) writes each record's terms (its closest life domain, its words)
in the transaction that writes the record, deletes them with it, and keeps an in-process copy per
actor that is dropped when this process writes for the actor or another connection commits
(SQLite's ``PRAGMA data_version``): what the gate reads is exact, never a stale count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["DOMAIN", "WORD", "ActorProfile", "record_words"]

#: the kinds of term a record contributes to its actor's profile
DOMAIN, WORD = "domain", "word"

# the same words as the gate's name look-up reads (policy.names.name_terms), lower-cased
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")


def record_words(text: str) -> list[str]:
    """The distinct lower-cased words of a record (possessive 's dropped), in order."""
    found: dict[str, None] = {}
    for match in _TOKEN.finditer(text):
        word = re.sub(r"['’]s$", "", match.group(0)).strip("'’-").lower()
        if len(word) > 1:
            found.setdefault(word, None)
    return list(found)


@dataclass(frozen=True)
class ActorProfile:
    """One actor's memory as the gate sees it, per resolved namespace: how many records fall in
    each life domain (``domains``) and the words the records hold (``words``)."""

    actor_id: str
    domains: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    words: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def from_counts(cls, actor_id: str, rows: Iterable[tuple[str, str, str, int]]) -> ActorProfile:
        """From ``(namespace, kind, term, records)`` rows (:data:`DOMAIN` or :data:`WORD`)."""
        domains: dict[str, dict[str, int]] = {}
        words: dict[str, set[str]] = {}
        for namespace, kind, term, count in rows:
            if kind == DOMAIN:
                domains.setdefault(namespace, {})[term] = int(count)
            elif kind == WORD:
                words.setdefault(namespace, set()).add(term)
        return cls(actor_id, domains, {ns: frozenset(w) for ns, w in words.items()})

    def records_in(self, namespaces: Sequence[str], domain: str) -> int:
        """How many of the actor's records in ``namespaces`` fall in ``domain``."""
        return sum(self.domains.get(ns, {}).get(domain, 0) for ns in namespaces)

    def mentions(self, namespaces: Sequence[str], terms: Sequence[str]) -> set[str]:
        """Which ``terms`` (lower-cased words) some record of the actor in ``namespaces`` holds."""
        held = [self.words.get(ns, frozenset()) for ns in namespaces]
        return {t for t in terms if any(t in words for words in held)}
