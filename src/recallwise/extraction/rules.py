"""The offline default extractor: what the user said about themselves -> facts and preferences.

No model. A user message goes through named steps, each its own module and tested on its own:

1. **split** (:mod:`.clauses`): sentences (``sentencex``), then clauses at conjunctions and
   commas that start a new statement about the user, so ``"..., but I tend to avoid gore"`` is
   a clause of its own;
2. **rewrite** (:mod:`.person`): the clause in the third person, the verb conjugated from a
   table (``"I tend to"`` -> ``"The user tends to"``, ``"I haven't"`` -> ``"The user hasn't"``)
   and every first-person form replaced (``"our office"`` -> ``"their office"``);
3. **keep or drop** (:mod:`.keep`): lasting facts and preferences about the user and their
   people are kept; questions, reactions to the assistant, requests and plans for this
   conversation, moods of the moment and clauses that say nothing alone are dropped;
4. **preferences** (:func:`.keep.is_preference`): a kept clause that states a preference also
   becomes a preference record, filed under
5. **its topic** (:mod:`.topics`), read from the clause's own words (then its sentence's).

``"I'm vegetarian"`` -> ``"The user is vegetarian."``; ``"I always book an aisle seat"`` ->
``"The user always books an aisle seat."`` and the preference ``{"context": "Booking flights",
"preference": "Always books an aisle seat", ...}``; ``"my favourite cuisine is Vietnamese"`` ->
``"The user's favourite cuisine is Vietnamese."``; a verbless standing request (``"Still water
only, please."``) -> a preference only.

Anything subtler (facts spread over turns, facts stated about the user by others, negated
updates) needs the LLM extractor (:mod:`recallwise.extraction.llm`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..records import Event
from .base import PREFERENCE, SEMANTIC, ExtractedMemory
from .clauses import Clause, clauses, sentences, strip_discourse
from .explicit import explicit_request, only_request
from .keep import PERSON, Verdict, is_preference, judge, points_back
from .person import Statement, clean, is_past, reason_lead, rewrite, swap_pronouns
from .topics import Topic, topic_key, topic_of

__all__ = ["ClauseTrace", "RuleExtractor", "third_person"]

# "X only, please" / "no X, please" / "please X": a standing request with no first person.
_VERBLESS_REQUEST = re.compile(r"^(?:please\s+(?P<a>.+)|(?P<b>(?:no|only)\s+.+?)|(?P<c>.+?\s+only))$", re.I)
# Single-valued relations: a later statement of the same relation replaces the earlier one.
_RELATION_KEYS = [
    (re.compile(r"^(?:lives?|live|living) in\b", re.I), "home city"),
    (re.compile(r"^(?:moved|have moved|has moved|just moved) to\b", re.I), "home city"),
    (re.compile(r"^(?:works?|work) (?:at|for)\b", re.I), "employer"),
    (re.compile(r"^is (?:\d+|[a-z-]+) years old\b", re.I), "age"),
    (re.compile(r"^is called\b|^name is\b", re.I), "name"),
]
#: an aside kept with the fact before it: short, and not a statement of its own
_ASIDE_WORDS = 6


@dataclass(frozen=True)
class ClauseTrace:
    """What the steps made of one clause (:meth:`RuleExtractor.explain`)."""

    clause: str
    statement: str | None
    verdict: Verdict
    preference: bool = False
    topic: str | None = None


class RuleExtractor:
    """Offline extraction from what the user says about themselves (the default; needs no model).

    Only the user's turns are read. Each kept clause becomes one semantic memory; a clause that
    states a preference about a known topic also becomes a preference memory under that topic.
    """

    name = "rules"

    def extract(self, events: Sequence[Event]) -> list[ExtractedMemory]:
        memories: list[ExtractedMemory] = []
        for event in events:
            if event.role.lower() != "user" or not event.text.strip():
                continue
            for memory in self.message(event.text, [event.id]):
                memory.session_id = event.session_id
                memories.append(memory)
        return memories

    def explain(self, text: str) -> list[ClauseTrace]:
        """Each clause of one user message with what every step made of it (for debugging rules)."""
        out: list[ClauseTrace] = []
        for sentence, explicit in _sentences(text):
            for unit in _units(sentence, explicit):
                statement, verdict, clause = unit.statement, unit.verdict, unit.clause
                preference = bool(statement and verdict.keep and is_preference(statement))
                topic = topic_of(clause.text, sentence) if preference else None
                out.append(
                    ClauseTrace(
                        clause.text,
                        statement.sentence if statement else None,
                        verdict,
                        preference,
                        topic.name if topic else None,
                    )
                )
        return out

    def reasons(self, text: str) -> list[str]:
        """Why a user message yields no memory: the reason of each of its clauses, in order, once each."""
        return list(dict.fromkeys(t.verdict.reason for t in self.explain(text) if not t.verdict.keep))

    def message(self, text: str, source: Sequence[str] = ()) -> list[ExtractedMemory]:
        """The memories one user message yields: its facts, then its preferences."""
        pieces = _Pieces()
        standing: list[ExtractedMemory] = []
        for sentence, explicit in _sentences(text):
            units = _units(sentence, explicit)
            before = len(pieces.items)
            _combine(units, pieces)
            constraint = _constraint(sentence)
            if constraint is not None:
                pieces.items.append(constraint)
                pieces.last_kept = False
            alone = len(units) == 1 and units[0].statement is None and not units[0].clause.question
            if len(pieces.items) == before and alone:
                standing.extend(self._standing_request(units[0].clause, source))
        facts: list[ExtractedMemory] = []
        preferences: list[ExtractedMemory] = []
        for piece in pieces.items:
            if points_back(piece.statement, piece.clause.text) and not piece.explicit:
                continue  # says nothing alone: what it points at was not in this message
            if _FIRST_PERSON_WORD.search(piece.statement.sentence):
                # a clause the rewriting did not reach ("lives near it when I'm tired"): a record
                # in the user's own first person would read as the assistant's; none is better
                continue
            facts.append(
                ExtractedMemory(
                    SEMANTIC,
                    piece.statement.sentence,
                    key=self._fact_key(piece.statement, piece.clause),
                    source_event_ids=list(source),
                )
            )
            preference = self._preference(piece.statement, piece.clause, source)
            if preference is not None:
                preferences.append(preference)
        return _unique([*facts, *preferences, *standing])

    def _preference(
        self, statement: Statement, clause: Clause, source: Sequence[str]
    ) -> ExtractedMemory | None:
        if not statement.about_user or not is_preference(statement):
            return None
        topic = topic_of(clause.text, clause.sentence)
        if topic is None:
            return None  # a preference about no known topic stays a fact only
        if statement.slot:
            wording = f"{statement.slot[:1].upper()}{statement.slot[1:]} is {statement.value}"
        elif statement.subject == "The user":
            wording = f"{statement.predicate[:1].upper()}{statement.predicate[1:]}"
        else:  # "The user's daughter is allergic to dairy": the preference names whose it is
            wording = statement.sentence.rstrip(".")
        if statement.lead:
            wording = f"{wording} ({statement.lead[:1].lower()}{statement.lead[1:]})"
        return self._preference_memory(wording, statement.slot, topic, source)

    def _standing_request(self, clause: Clause, source: Sequence[str]) -> list[ExtractedMemory]:
        text = strip_discourse(clean(clause.text))
        request = _VERBLESS_REQUEST.match(text)
        topic = topic_of(text) if request else None
        if request is None or topic is None:
            return []
        wording = next(g for g in request.groups() if g)
        return [self._preference_memory(wording[:1].upper() + wording[1:], None, topic, source)]

    @staticmethod
    def _preference_memory(
        wording: str, slot: str | None, topic: Topic, source: Sequence[str]
    ) -> ExtractedMemory:
        return ExtractedMemory(
            PREFERENCE,
            wording,
            key=f"{topic.name}:{(slot or topic_key(wording, topic)).lower()}",
            context=topic.context,
            categories=list(topic.categories),
            source_event_ids=list(source),
        )

    @staticmethod
    def _fact_key(statement: Statement, clause: Clause) -> str | None:
        if statement.slot:
            # "go-to" alone is ambiguous (go-to drink, go-to restaurant): qualify it by topic
            topic = topic_of(clause.text, clause.sentence)
            slot = statement.slot.lower()
            return f"{slot} ({topic.name})" if topic else slot
        if statement.subject != "The user":
            return None
        for pattern, key in _RELATION_KEYS:
            if pattern.match(statement.predicate):
                return key
        return None


def _unique(memories: list[ExtractedMemory]) -> list[ExtractedMemory]:
    """One memory per (kind, context, text): a message that says a thing twice yields it once."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for memory in memories:
        marker = (memory.kind, (memory.context or "").lower(), memory.text.lower().rstrip("."))
        if marker not in seen:
            seen.add(marker)
            out.append(memory)
    return out


def third_person(text: str) -> list[str]:
    """The facts the rules find in one user message, as third-person sentences.

    >>> third_person("I'm vegetarian, and I always book an aisle seat.")
    ['The user is vegetarian.', 'The user always books an aisle seat.']
    """
    return [m.text for m in RuleExtractor().message(text) if m.kind == SEMANTIC]


# ---- one message: sentences -> clauses -> pieces (a kept statement, maybe joined with its neighbours) ----

#: the joiners and openers that give a reason: the reason stays in the record of what it explains
_REASON_WORDS = frozenset(
    ["because", "since", "as", "'cause", "cause", "cos", "given that", "seeing as", "now that"]
)
_SPOKEN_REASON = {"'cause": "because", "cause": "because", "cos": "because"}
# "they make me itch", "it gives me a headache": a clause whose subject is the last clause's object
_POINTER_SUBJECT = re.compile(r"^(?:they|it|those|these|both)\s+\w+", re.I)
_PERSON_SUBJECT = re.compile(r"^(?:he|she|he's|she's)\b", re.I)
_PERSON_POINTER = re.compile(r"\b(?:he|him|his|she|her|hers)\b", re.I)
_FIRST_PERSON_OBJECT = re.compile(r"\b(?:me|my|us|our|myself)\b")
#: a first-person word (case-sensitive "I", which also finds "I'm", "I've", "I'd", "I'll"): a text
#: said about someone else has none, and neither has a finished record
_FIRST_PERSON_WORD = re.compile(r"\bI\b|\b(?:me|my|mine|myself|we|us|our|ours|ourselves)\b")
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|you're|you've|you'd|you'll)\b", re.I)
# "any ideas that don't involve swimming?": a constraint said as part of a request
_CONSTRAINT = re.compile(
    r"\b(?P<noun>ideas|suggestions|options|recommendations|activities|things|something|anything|places|"
    r"recipes|meals|dishes|snacks|games|books|movies|films|shows|trips|hotels|restaurants|ways|exercises|"
    r"workouts|jobs|gifts|sports|hobbies|destinations|plans)\s+(?:that|which)\s+"
    r"(?P<neg>don't|doesn't|do not|does not|won't|wouldn't|aren't|isn't)\s+"
    r"(?P<rest>(?:involve|include|require|need|use|contain|have|mean|take)\b[^,.?!;]*)",
    re.I,
)
_GENERIC = frozenset(
    ["ideas", "suggestions", "options", "recommendations", "things", "something", "anything", "ways"]
)
_PLURAL_NEGATION = {"doesn't": "don't", "does not": "do not", "isn't": "aren't"}


@dataclass(frozen=True)
class _Unit:
    """One clause with its rewrite and verdict, and the reason word that joins or opens it."""

    clause: Clause
    statement: Statement | None
    verdict: Verdict
    reason: str
    explicit: bool


@dataclass(frozen=True)
class _Piece:
    """What becomes one record: a kept statement, with what was joined to it."""

    statement: Statement
    clause: Clause
    explicit: bool
    sentence: int


def _sentences(text: str) -> list[tuple[str, bool]]:
    """The sentences of a message, each with whether the user asked for it to be remembered; the
    request words are taken off (:mod:`.explicit`)."""
    out: list[tuple[str, bool]] = []
    rest_explicit = False
    for sentence in sentences(text):
        if only_request(sentence):
            rest_explicit = True  # "Please remember this:": the sentences after it are what to keep
            continue
        request = explicit_request(sentence)
        out.append((request.content, True) if request is not None else (sentence, rest_explicit))
    return out


def _as_said(text: str) -> Statement | None:
    """What the user asked to be remembered, about someone else: "Tom's birthday is May 3"."""
    said = clean(text)
    if _FIRST_PERSON_WORD.search(said) or len(said.split()) < 3:
        return None
    subject, _, predicate = said.partition(" ")
    return Statement(subject[:1].upper() + subject[1:], predicate)


def _units(sentence: str, explicit: bool) -> list[_Unit]:
    out = []
    for clause in clauses(sentence):
        word, _ = reason_lead(clause.text)
        statement = rewrite(clause.text)
        if statement is None and explicit and not clause.question:
            statement = _as_said(clause.text)
        verdict = judge(clause, statement, explicit=explicit)
        reason = word or (clause.joined_by if clause.joined_by in _REASON_WORDS else "")
        out.append(_Unit(clause, statement, verdict, reason, explicit))
    return out


def _first_verb(statement: Statement) -> str:
    for word in statement.predicate.split():
        if word.lower() not in (
            "always",
            "usually",
            "often",
            "never",
            "also",
            "just",
            "really",
            "once",
            "first",
        ):
            return word.lower()
    return ""


def _continuation(previous: Statement, statement: Statement) -> str:
    """``statement`` said after ``previous`` in one record: "loved the temples", "their kids love it"."""
    if statement.subject == "The user" and previous.subject == "The user":
        return statement.predicate
    if statement.subject.startswith("The user's ") and previous.about_user:
        whose = statement.subject[len("The user's ") :]
        return f"their {whose} {statement.predicate}"
    text = statement.sentence.rstrip(".")
    return text[:1].lower() + text[1:] if text.startswith("The ") else text


def _reason_text(unit: _Unit) -> str:
    """A reason clause as it reads after "because": "they get seasick", "it's relaxing"."""
    _, rest = reason_lead(unit.clause.text)
    return swap_pronouns(clean(rest))


class _Pieces:
    """The pieces of one message so far, and whether the last clause read made the last piece."""

    def __init__(self) -> None:
        self.items: list[_Piece] = []
        self.last_kept = False
        self.sentence = -1

    def add(self, statement: Statement, clause: Clause, explicit: bool) -> None:
        self.items.append(_Piece(statement, clause, explicit, self.sentence))
        self.last_kept = True

    def join(self, joiner: str, tail: str, clause: Clause) -> None:
        last = self.items[-1]
        before = last.statement
        statement = Statement(before.subject, f"{before.predicate} {joiner} {tail}", before.lead)
        merged = Clause(f"{last.clause.text} {joiner} {clause.text}", last.clause.sentence, last.clause.kind)
        self.items[-1] = _Piece(statement, merged, last.explicit, last.sentence)
        self.last_kept = True


def _combine(units: Sequence[_Unit], pieces: _Pieces) -> None:
    """Add the pieces of one sentence's ``units`` to the message's ``pieces``.

    A reason stays with what it explains ("Because I get seasick, I avoid boat tours" -> "The user
    avoids boat tours because they get seasick."); a clause that points back ("..., but I find them
    uncomfortable", "and I tend to decline", "I have two cats. I love them.") or continues a past
    event ("Last summer we went to Kyoto and I loved the temples") is joined to the clause before
    it; a short aside is kept in brackets. What is left pointing at nothing is dropped when the
    message's records are written.
    """
    pieces.sentence += 1
    start = len(pieces.items)
    pending: _Unit | None = None  # "Because I get seasick, ...": waits for what it explains
    for index, unit in enumerate(units):
        statement = unit.statement
        last = pieces.items[-1] if pieces.items else None
        # the clause just before made the last piece: in this sentence, or (for the first clause)
        # at the end of the sentence before
        here = last is not None and pieces.last_kept and len(pieces.items) > start
        before = last is not None and pieces.last_kept and index == 0 and last.sentence == pieces.sentence - 1
        leans = statement is not None and statement.about_user and points_back(statement, unit.clause.text)
        if (
            leans
            and last is not None
            and _PERSON_POINTER.search(unit.clause.text)
            and not PERSON.search(last.clause.text)
        ):
            leans = False  # "her", "him": only a person named just before can be who it is
        joiner = unit.clause.joined_by or "and"
        if unit.verdict.keep and statement is not None:
            if unit.reason and unit.clause.joined_by == unit.reason and here and pending is None:
                pieces.join(_SPOKEN_REASON.get(unit.reason, unit.reason), _reason_text(unit), unit.clause)
            elif unit.reason and not unit.clause.joined_by and pending is None and index + 1 < len(units):
                pending = unit
                pieces.last_kept = False
            elif last is not None and (
                (here and (leans or _past_event(last.statement, statement, unit))) or (before and leans)
            ):
                pieces.join(joiner, _continuation(last.statement, statement), unit.clause)
            else:
                pieces.add(statement, unit.clause, unit.explicit)
                if pending is not None and statement.about_user:
                    pieces.join(
                        _SPOKEN_REASON.get(pending.reason, pending.reason),
                        _reason_text(pending),
                        pending.clause,
                    )
                    pending = None
            continue
        if pending is not None and pending.statement is not None:
            pieces.add(pending.statement, pending.clause, pending.explicit)  # what it explains was not kept
            pending = None
            continue
        if not pieces.items or unit.clause.question:
            pieces.last_kept = False
            continue
        last = pieces.items[-1]
        text = clean(unit.clause.text)
        if statement is not None and unit.verdict.reason == "says nothing alone" and (here or before):
            if unit.reason and here:  # "..., because I'm allergic to it": the reason of the clause before
                pieces.join(_SPOKEN_REASON.get(unit.reason, unit.reason), _reason_text(unit), unit.clause)
                continue
            if leans:
                pieces.join(joiner, _continuation(last.statement, statement), unit.clause)
                continue
        if (
            statement is None
            and (here or before)
            and _PERSON_SUBJECT.match(text)
            and PERSON.search(last.clause.text)
            and not _SECOND_PERSON.search(text)
        ):
            # "I have a sister. She's a pole dancer.": he or she is the one person the user just named
            pieces.join(joiner, _pronoun_tail(text), unit.clause)
            continue
        if statement is None and here and text and not _SECOND_PERSON.search(text):
            if unit.clause.kind == "aside":
                aside = swap_pronouns(text)
                if len(aside.split()) <= _ASIDE_WORDS:
                    previous = last.statement
                    pieces.items[-1] = _Piece(
                        Statement(previous.subject, f"{previous.predicate} ({aside})", previous.lead),
                        last.clause,
                        last.explicit,
                        last.sentence,
                    )
                    continue
            elif unit.reason and unit.clause.joined_by and len(text.split()) <= 12:
                # "I love hiking because it's relaxing": the reason, about something else, stays with it
                pieces.join(_SPOKEN_REASON.get(unit.reason, unit.reason), swap_pronouns(text), unit.clause)
                continue
            elif _POINTER_SUBJECT.match(text) and _FIRST_PERSON_OBJECT.search(text):
                # "I tried wool sweaters, but they make me itch": its subject is the clause before's object
                pieces.join(joiner, _pronoun_tail(text), unit.clause)
                continue
        pieces.last_kept = False
    if pending is not None and pending.statement is not None:
        pieces.add(pending.statement, pending.clause, pending.explicit)


def _pronoun_tail(text: str) -> str:
    """A clause with a pronoun subject, as it reads joined to the clause before: "they make the user
    itch", "she works nights" (the user's own words in the third person)."""
    tail = _FIRST_PERSON_OBJECT.sub(lambda m: "their" if m.group(0) in ("my", "our") else "the user", text)
    return tail[:1].lower() + tail[1:]


def _past_event(previous: Statement, statement: Statement, unit: _Unit) -> bool:
    """ "we went to Kyoto and I loved the temples": one event, told in two past-tense clauses."""
    if unit.clause.joined_by != "and" or previous.subject != "The user" or statement.subject != "The user":
        return False
    return is_past(_first_verb(previous)) and is_past(_first_verb(statement))


def _constraint(sentence: str) -> _Piece | None:
    """ "Any ideas that don't involve swimming?" -> "The user wants options that don't involve swimming."."""
    match = _CONSTRAINT.search(sentence)
    if match is None or _SECOND_PERSON.search(match.group("rest")):
        return None
    noun = match.group("noun").lower()
    negation = match.group("neg").lower()
    if noun in _GENERIC:
        noun, negation = "options", _PLURAL_NEGATION.get(negation, negation)
    rest = swap_pronouns(match.group("rest").strip())
    statement = Statement("The user", f"wants {noun} that {negation} {rest}")
    return _Piece(statement, Clause(match.group(0), sentence), False, -1)
