"""The offline default extractor: plain first-person statements -> facts and preferences.

No model: a handful of rules over the user's own sentences.

* ``"I'm vegetarian"`` -> ``"The user is vegetarian."``; ``"I always book an aisle seat"``
  -> ``"The user always books an aisle seat."``; ``"my favourite cuisine is Vietnamese"``
  and ``"decaf is my go-to"`` -> ``"The user's favourite cuisine is Vietnamese."``,
  ``"The user's go-to is decaf."``.
* A statement that carries a preference word (prefer, always, never, go-to, favourite,
  can't stand, hate, love, like, only, ...) and mentions a known topic (coffee, flights,
  code, ... see ``categories.json``) also becomes a preference record filed under that
  topic's context; so does a verbless request such as ``"Still water only, please."``.
* Questions, requests for the current turn (``"I'd like ..."``, ``"I need ..."``), filler
  (``"I think so"``, ``"I'm not sure"``) and the assistant's turns yield nothing.

It handles what people write when they tell an assistant about themselves; anything
subtler (negated updates, facts stated in the third person, facts spread over several
turns) needs the LLM extractor (:mod:`recallwise.extraction.llm`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from ..records import Event
from .base import PREFERENCE, SEMANTIC, ExtractedMemory

__all__ = ["RuleExtractor", "third_person"]


# ---- vocabulary ----------------------------------------------------------------------------

_DISCOURSE = re.compile(
    r"^(?:and|but|so|also|oh|well|yeah|yes|plus|btw|by the way|anyway|ok|okay|um|uh|honestly|"
    r"actually|basically|oh and|and also)\b[,\s]*",
    re.IGNORECASE,
)
_HEDGES = re.compile(r"\b(?:really|probably|honestly|basically|actually|literally|totally)\s+", re.IGNORECASE)
_TRAILING = re.compile(r"(?:,?\s+(?:please|now|these days|nowadays|at the moment|anymore))+$", re.IGNORECASE)
_ADVERBS = frozenset(
    [
        "always",
        "usually",
        "often",
        "never",
        "mostly",
        "sometimes",
        "generally",
        "also",
        "still",
        "just",
        "strongly",
        "typically",
        "rarely",
        "normally",
        "definitely",
        "absolutely",
        "seriously",
        "mainly",
        "primarily",
        "occasionally",
        "regularly",
        "tend",
    ]
)
_MODALS = frozenset(
    [
        "can",
        "could",
        "will",
        "would",
        "should",
        "must",
        "might",
        "may",
        "shall",
        "can't",
        "cannot",
        "couldn't",
        "won't",
        "wouldn't",
        "shouldn't",
        "mustn't",
        "did",
        "didn't",
        "was",
        "wasn't",
    ]
)
_PAST = frozenset(
    [
        "went",
        "got",
        "had",
        "made",
        "took",
        "grew",
        "began",
        "bought",
        "became",
        "left",
        "met",
        "ran",
        "saw",
        "spent",
        "thought",
        "told",
        "wrote",
        "came",
        "gave",
        "found",
        "knew",
        "lost",
        "sold",
        "quit",
        "broke",
        "drove",
        "flew",
        "ate",
        "drank",
    ]
)
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is", "don't": "doesn't"}
# Verbs that make a first-person clause about the conversation, not about the user.
_SKIP_VERBS = frozenset(
    [
        "think",
        "guess",
        "mean",
        "see",
        "know",
        "wonder",
        "agree",
        "suppose",
        "understand",
        "bet",
        "hope",
        "assume",
        "believe",
        "need",
        "want",
        "wanted",
        "needed",
        "wish",
        "ask",
        "asked",
        "forgot",
        "remember",
        "feel",
        "felt",
    ]
)
# "I'm <x>" clauses that describe the moment, not the person.
_SKIP_STATES = re.compile(
    r"^(?:not sure|sure|fine|good|ok|okay|great|sorry|glad|here|back|done|ready|curious|wondering|"
    r"looking for|confused|lost|thinking|asking|just asking|kidding|joking|not certain|happy to|afraid)\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"^(?:i'd like|i would like|i'd love|i would love|i'm looking for|could you|can you)\b", re.I
)
_PREFERENCE_WORDS = re.compile(
    r"\b(?:prefers?|preferred|always|never|go-to|favou?rite|can't stand|cannot stand|hates?|dislikes?|"
    r"doesn't like|don't like|loves?|likes?|enjoys?|only|rather|avoids?|won't)\b",
    re.IGNORECASE,
)
# "X only, please" / "no X, please" / "please X": a standing request with no first person.
_VERBLESS_REQUEST = re.compile(r"^(?:please\s+(?P<a>.+)|(?P<b>(?:no|only)\s+.+?)|(?P<c>.+?\s+only))$", re.I)
_FIRST_PERSON = re.compile(r"^(?:i|i'm|i've|i'd|i'll|my)\b", re.IGNORECASE)
_POSSESSIVE_SLOT = re.compile(
    r"^my\s+(?P<slot>[\w\s'-]{1,40}?)\s+(?P<verb>is|are|was|were)\s+(?P<value>.+)$", re.I
)
_INVERTED_SLOT = re.compile(r"^(?P<value>.+?)\s+(?P<verb>is|are)\s+my\s+(?P<slot>[\w\s'-]{1,40})$", re.I)
# Single-valued relations: a later statement of the same relation replaces the earlier one.
_RELATION_KEYS = [
    (re.compile(r"^(?:lives?|live|living) in\b", re.I), "home city"),
    (re.compile(r"^(?:moved|have moved|has moved|just moved) to\b", re.I), "home city"),
    (re.compile(r"^(?:works?|work) (?:at|for)\b", re.I), "employer"),
    (re.compile(r"^is (?:\d+|[a-z-]+) years old\b", re.I), "age"),
    (re.compile(r"^is called\b|^name is\b", re.I), "name"),
]
_PRONOUNS = [
    (re.compile(r"\bI'm\b"), "they're"),
    (re.compile(r"\bI've\b"), "they've"),
    (re.compile(r"\bI'd\b"), "they'd"),
    (re.compile(r"\bI'll\b"), "they'll"),
    (re.compile(r"\bI am\b"), "they are"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bmy\b", re.I), "their"),
    (re.compile(r"\bmine\b", re.I), "theirs"),
    (re.compile(r"\bmyself\b", re.I), "themselves"),
    (re.compile(r"\bme\b", re.I), "them"),
]


def _normalise(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = re.sub(r"\s*(?:\u2014|\u2013| - )\s*", " -- ", text)
    return " ".join(text.split())


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [p.strip() for p in parts if p and p.strip()]


def _strip_discourse(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = _DISCOURSE.sub("", text).strip()
    return text


def _looks_like_clause(text: str) -> bool:
    text = _strip_discourse(text)
    return bool(_FIRST_PERSON.match(text) or re.search(r"\b(?:is|are) my\b", text, re.I))


_CONJUNCTION = re.compile(r"(?:,\s*|\s+)(?:and|but|so|because|since|though|although|while)\s+|,\s+", re.I)


def _split_clauses(sentence: str) -> list[tuple[str, str]]:
    """``(kind, clause)`` pairs: kind is ``"main"`` or ``"aside"`` (after a dash)."""
    out: list[tuple[str, str]] = []
    for index, part in enumerate(re.split(r"\s+--\s+|\s*;\s*", sentence)):
        part = part.strip()
        if not part:
            continue
        kind = "aside" if index and not _looks_like_clause(part) else "main"
        start = 0
        pieces: list[str] = []
        for match in _CONJUNCTION.finditer(part):
            rest = part[match.end() :]
            if _looks_like_clause(rest) or (match.group(0).strip(", ").lower() == "so" and rest):
                pieces.append(part[start : match.start()])
                start = match.end()
        pieces.append(part[start:])
        for piece in pieces:
            piece = piece.strip(" ,")
            if piece:
                out.append((kind, piece))
                kind = "main"
    return out


def _third_singular(verb: str) -> str:
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def _swap_pronouns(text: str) -> str:
    for pattern, replacement in _PRONOUNS:
        text = pattern.sub(replacement, text)
    return text


@dataclass
class _Statement:
    """A first-person clause in the third person: ``subject`` + ``predicate``."""

    subject: str  # "The user" or "The user's <slot>"
    predicate: str  # "is vegetarian", "always books an aisle seat", "is Vietnamese"
    slot: str | None = None  # for "my X is Y" / "Y is my X"
    value: str | None = None

    @property
    def sentence(self) -> str:
        return f"{self.subject} {self.predicate}"


def _convert(clause: str) -> _Statement | None:
    """Turn one first-person clause into a third-person statement, or None."""
    clause = _strip_discourse(clause)
    clause = _HEDGES.sub("", clause)
    clause = _TRAILING.sub("", clause).strip(" ,.!")
    if not clause or _REQUEST.match(clause):
        return None
    slot = _POSSESSIVE_SLOT.match(clause) or _INVERTED_SLOT.match(clause)
    if slot:
        name = slot.group("slot").strip().lower()
        value = _swap_pronouns(slot.group("value").strip())
        verb = slot.group("verb").lower()
        if not value or (name in ("name",) and verb != "is"):
            return None
        return _Statement(f"The user's {name}", f"{verb} {value}", slot=name, value=value)
    words = clause.split()
    head = words[0].lower()
    if head == "my" and len(words) >= 3:  # "my sister lives in Oslo"
        return _Statement("The user's", _swap_pronouns(" ".join(words[1:])))
    if head == "i'm" or (head == "i" and len(words) > 1 and words[1].lower() == "am"):
        rest = " ".join(words[1:] if head == "i'm" else words[2:])
        if not rest or _SKIP_STATES.match(rest):
            return None
        return _Statement("The user", "is " + _swap_pronouns(rest))
    if head == "i've":
        tail = words[2:] if len(words) > 1 and words[1].lower() == "got" else words[1:]
        return _Statement("The user", "has " + _swap_pronouns(" ".join(tail))) if tail else None
    if head == "i'd":
        return _Statement("The user", "would " + _swap_pronouns(" ".join(words[1:]))) if words[1:] else None
    if head == "i'll":
        return _Statement("The user", "will " + _swap_pronouns(" ".join(words[1:]))) if words[1:] else None
    if head != "i" or len(words) < 2:
        return None
    adverbs: list[str] = []
    index = 1
    while index < len(words) and words[index].lower() in _ADVERBS:
        adverbs.append(words[index])
        index += 1
    if index >= len(words):
        return None
    verb, rest_words = words[index], words[index + 1 :]
    lower = verb.lower()
    if lower in _SKIP_VERBS or (
        lower in ("don't", "do") and rest_words and rest_words[0].lower() in _SKIP_VERBS
    ):
        return None
    if lower in _MODALS or lower in _PAST or lower.endswith("ed"):
        verb_out = verb  # modals and past tense read the same in the third person
    elif lower == "have" and rest_words and rest_words[0].lower() == "got":
        verb_out, rest_words = "has", rest_words[1:]
    else:
        verb_out = _third_singular(verb)
    predicate = " ".join([*adverbs, verb_out, _swap_pronouns(" ".join(rest_words))]).strip()
    return _Statement("The user", predicate)


def third_person(text: str) -> list[str]:
    """The facts the rules find in one user message, as third-person sentences.

    >>> third_person("I'm vegetarian, and I always book an aisle seat.")
    ['The user is vegetarian.', 'The user always books an aisle seat.']
    """
    return [m.text for m in RuleExtractor()._message(text, []) if m.kind == SEMANTIC]


def _informative(statement: _Statement) -> bool:
    content = [w for w in re.findall(r"[\w'-]+", statement.predicate) if w.lower() not in _FILLER]
    return len(content) >= 2 or any(len(w) >= 3 or any(c.isdigit() for c in w) for w in content)


_FILLER = frozenset(
    [
        "is",
        "are",
        "was",
        "has",
        "have",
        "does",
        "do",
        "would",
        "will",
        "the",
        "a",
        "an",
        "it",
        "that",
        "this",
        "so",
        "to",
        "of",
    ]
)


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


# ---- categories ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Category:
    name: str
    context: str
    categories: tuple[str, ...]
    pattern: re.Pattern[str] | None


@lru_cache(maxsize=1)
def _categories() -> tuple[list[_Category], _Category]:
    raw = resources.files("recallwise.extraction").joinpath("categories.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(raw)
    out = []
    for entry in data["categories"]:
        words = sorted(entry["keywords"], key=len, reverse=True)
        pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)
        out.append(_Category(entry["name"], entry["context"], tuple(entry["categories"]), pattern))
    fb = data["fallback"]
    return out, _Category(fb["name"], fb["context"], tuple(fb["categories"]), None)


def _category_of(*texts: str) -> _Category | None:
    """The category whose keywords ``texts`` mention most (first text first), or None."""
    categories, _ = _categories()
    for text in texts:
        best, best_hits = None, 0
        for category in categories:
            assert category.pattern is not None
            hits = len(category.pattern.findall(text))
            if hits > best_hits:
                best, best_hits = category, hits
        if best is not None:
            return best
    return None


# ---- the extractor -------------------------------------------------------------------------


class RuleExtractor:
    """Offline extraction from plain first-person statements (the default; needs no model).

    Only the user's turns are read. Each fact becomes one semantic memory; preference
    statements about the same topic in one message become one preference memory.
    """

    name = "rules"

    def extract(self, events: Sequence[Event]) -> list[ExtractedMemory]:
        memories: list[ExtractedMemory] = []
        for event in events:
            if event.role.lower() != "user" or not event.text.strip():
                continue
            for memory in self._message(event.text, [event.id]):
                memory.session_id = event.session_id
                memories.append(memory)
        return memories

    def _message(self, text: str, source: list[str]) -> list[ExtractedMemory]:
        facts: list[ExtractedMemory] = []
        preferences: dict[str, tuple[_Category, list[tuple[str, str]]]] = {}
        for sentence in _sentences(_normalise(text)):
            if sentence.rstrip().endswith("?"):
                continue  # a question asks; it tells us nothing to keep
            body = sentence.rstrip(" .!")
            clauses = _split_clauses(body)
            last: _Statement | None = None
            last_fact: ExtractedMemory | None = None
            converted: list[tuple[_Statement, str]] = []
            for kind, clause in clauses:
                statement = _convert(clause) if _looks_like_clause(clause) else None
                if statement is None:
                    aside = _strip_discourse(_TRAILING.sub("", clause)).strip(" ,.")
                    if kind == "aside" and last is not None and last_fact is not None and aside:
                        # "... allergic to peanuts -- that one's serious": keep the aside with its fact
                        addition = f" ({_swap_pronouns(aside)})"
                        last.predicate += addition
                        last_fact.text = last.sentence + "."
                        converted[-1] = (last, converted[-1][1] + addition)
                        continue
                    request = _VERBLESS_REQUEST.match(aside) if not _looks_like_clause(clause) else None
                    if request and len(clauses) == 1:
                        wording = next(g for g in request.groups() if g)
                        self._add_preference(preferences, _capitalise(wording), None, (body, text))
                    continue
                if not _informative(statement):
                    continue
                key = self._fact_key(statement, clause, body)
                last_fact = ExtractedMemory(
                    SEMANTIC, statement.sentence + ".", key=key, source_event_ids=list(source)
                )
                facts.append(last_fact)
                last = statement
                converted.append((statement, clause))
            for statement, clause in converted:
                if not _PREFERENCE_WORDS.search(statement.sentence):
                    continue
                if statement.slot:
                    wording = f"{_capitalise(statement.slot)} is {statement.value}"
                else:
                    wording = _capitalise(statement.predicate)
                self._add_preference(preferences, wording, statement.slot, (clause, body))
        for category, items in preferences.values():
            for wording, clause_key in items:
                facts.append(
                    ExtractedMemory(
                        PREFERENCE,
                        wording,
                        key=f"{category.name}:{clause_key}",
                        context=category.context,
                        categories=list(category.categories),
                        source_event_ids=list(source),
                    )
                )
        return facts

    @staticmethod
    def _add_preference(
        preferences: dict[str, tuple[_Category, list[tuple[str, str]]]],
        wording: str,
        slot: str | None,
        texts: tuple[str, str],
    ) -> None:
        category = _category_of(*texts)
        if category is None:
            return  # a preference about no known topic stays a fact only
        clause_key = slot or _preference_key(wording, category)
        entry = preferences.setdefault(category.name, (category, []))
        if all(existing != wording for existing, _ in entry[1]):
            entry[1].append((wording, clause_key))

    @staticmethod
    def _fact_key(statement: _Statement, *texts: str) -> str | None:
        if statement.slot:
            # "go-to" alone is ambiguous (go-to drink, go-to restaurant): qualify it by topic
            category = _category_of(*texts)
            return f"{statement.slot} ({category.name})" if category else statement.slot
        for pattern, key in _RELATION_KEYS:
            if pattern.match(statement.predicate):
                return key
        return None


def _preference_key(wording: str, category: _Category) -> str:
    """What a preference is about: the topic keywords it mentions (for replacing updates)."""
    assert category.pattern is not None or category.name == "general"
    if category.pattern is None:
        return wording.lower()
    found = sorted({m.lower() for m in category.pattern.findall(wording)})
    return "+".join(found) if found else wording.lower()
