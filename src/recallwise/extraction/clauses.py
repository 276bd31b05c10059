"""Step 1 of the rules: a user message -> sentences -> clauses.

Sentences come from ``sentencex`` (Wikimedia's rule-based segmenter: abbreviations, decimals and
initials stay inside their sentence; no model). A sentence is then cut into clauses where a new
statement about the user starts: after a coordinating or subordinating conjunction (``but``,
``and``, ``since``, ``because``, ...), a comma or a semicolon that is followed by a first-person
subject, and at a dash, whose tail is kept as an *aside* of the clause before it
(``"allergic to peanuts -- that one's serious"``). So ``"..., but I tend to avoid violence or
gore"`` is a clause of its own, and becomes a record of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import sentencex

__all__ = ["TIME", "Clause", "clauses", "normalise", "sentences", "strip_discourse"]

ClauseKind = Literal["main", "aside"]


@dataclass(frozen=True)
class Clause:
    """One clause of a user's sentence, as written (normalised), with the sentence it came from."""

    text: str
    sentence: str
    kind: ClauseKind = "main"
    #: the conjunction that joined it to the clause before ("but", "since", ...), lower case
    joined_by: str = ""
    #: the sentence ends with a question mark and this is its last clause
    question: bool = False


_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})
# chat spellings of first-person forms, written without the apostrophe or the capital
_CHAT_FORMS = [
    (re.compile(r"(?<![\w.'])i(?=['\s,!?;:]|$)"), "I"),
    (re.compile(r"\b[Ii]m\b"), "I'm"),
    (re.compile(r"\b[Ii]ve\b"), "I've"),
    (
        re.compile(r"\b[Ii]ll\b(?=\s+(?:be|have|try|go|do|get|make|take|need|probably|just|never|always)\b)"),
        "I'll",
    ),
    (
        re.compile(r"\b(don|doesn|didn|can|won|haven|hasn|isn|wasn|aren|couldn|wouldn|shouldn)t\b", re.I),
        r"\1't",
    ),
    (re.compile(r"\bcannot\b", re.I), "can't"),
]


def normalise(text: str) -> str:
    """Typographic quotes to plain ones, dashes to `` -- ``, chat spellings of "I" forms fixed."""
    text = text.translate(_QUOTES)
    text = re.sub(r"\s*(?:\u2014|\u2013|\s-\s|--)\s*", " -- ", text)
    for pattern, replacement in _CHAT_FORMS:
        text = pattern.sub(replacement, text)
    return text


_BEFORE_I = re.compile(r"(?<=[.!?])\s+(?=(?:I|I'm|I've|I'd|I'll|My|We|We're|Our)\b)")


def sentences(text: str) -> list[str]:
    """The sentences of a message: each line on its own, then ``sentencex`` within a line."""
    out: list[str] = []
    for line in normalise(text).splitlines():
        line = " ".join(line.split())
        if line:
            for sentence in sentencex.segment("en", line):
                # "Ah ok. I prefer ...": a stop before a first-person subject always ends a sentence
                out.extend(p.strip() for p in _BEFORE_I.split(sentence) if p.strip())
    return out


# Openers that carry nothing ("By the way, ...", "Honestly, ...", "Unrelated, but ...").
_DISCOURSE = re.compile(
    r"^(?:and|but|so|also|oh|well|yeah|yes|yep|plus|btw|by the way|anyway|anyways|ok|okay|um|uh|hmm|"
    r"honestly|actually|basically|haha|lol|ha|fun fact|fyi|for context|just so you know|unrelated|"
    r"random(?:ly)?|side note|on another note|oh and|and also|also random|to be honest|tbh|in fact|"
    r"as for me|for me|personally|for what it's worth|true|right|sure|cool|nice|great|though|now|"
    r"nowadays)\b[,:!.\s]*",
    re.IGNORECASE,
)


def strip_discourse(text: str) -> str:
    """``text`` without leading discourse words ("Oh and by the way, honestly, I ..." -> "I ...")."""
    previous = None
    text = text.strip()
    while previous != text:
        previous = text
        text = _DISCOURSE.sub("", text).strip(" ,")
    return text


# A clause about the user starts here: a first-person subject, or "my/our <noun>".
_FIRST_PERSON_START = re.compile(
    r"^(?:(?:and|but|so|also|honestly|actually|really)\s+)*"
    r"(?:I|I'm|I've|I'd|I'll|we|we're|we've|we'd|we'll|my|our|me and)\b",
    re.IGNORECASE,
)
_JOINERS = r"and|but|so|because|since|though|although|while|as|plus|yet|whereas|cause|'cause|cos"
_SPLIT = re.compile(rf"(?:\s*[,;]\s*(?:(?:{_JOINERS})\s+)?|\s+(?:{_JOINERS})\s+)", re.IGNORECASE)
_QUESTION_START = re.compile(
    r"^(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|would|"
    r"should|will|shall|may|might|have|has|any|anything|is there|are there|maybe|perhaps|or|right|"
    r"thoughts|ideas|suggestions|recommendations)\b",
    re.IGNORECASE,
)


_MONTHS = r"january|february|march|april|may|june|july|august|september|october|november|december"
#: a time said before a statement ("Last summer, we ..."): the rewrite moves it after the predicate
TIME = (
    r"(?:last|this past|the past) (?:summer|winter|spring|autumn|fall|year|month|christmas|easter|"
    r"semester|term|holidays?)|(?:back )?in (?:19|20)\d\d|in (?:" + _MONTHS + r")(?: (?:19|20)\d\d)?|"
    r"back in the day|(?:a|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|several|many|"
    r"\d+) (?:days|weeks|months|years|decades) ago|a (?:year|month|decade) ago|years ago|long ago|"
    r"when (?:I|we) (?:was|were) (?:a kid|little|young|younger|a child|a teenager|in (?:school|college|"
    r"high school|university)|\d+)|growing up|over the summer|during (?:the pandemic|covid|lockdown|"
    r"college|university|high school)"
)
# what is said before a statement and belongs to it ("As a teacher, I ...", "Last summer, we ..."):
# no clause ends after it
_LEAD_ONLY = re.compile(rf"^(?:(?:as|being) an? [\w' -]{{1,30}}|{TIME})$", re.IGNORECASE)
_INVERTED_SLOT = re.compile(r"^[^,]{1,60}?\b(?:is|are) my\b", re.IGNORECASE)
_SHARED_SUBJECT = re.compile(r"^\s*(?:me|my|our|both)\b(?:\s+\S+){0,2}\s*$", re.IGNORECASE)


def _starts_statement(text: str) -> bool:
    text = strip_discourse(text)
    return bool(_FIRST_PERSON_START.match(text) or _INVERTED_SLOT.search(text))


def clauses(sentence: str) -> list[Clause]:
    """The clauses of one sentence (already split from its message), in order."""
    sentence = sentence.strip()
    is_question = sentence.endswith("?")
    body = sentence.rstrip(" .!?")
    out: list[Clause] = []
    for index, part in enumerate(re.split(r"\s+--\s+|\s*\(\s*|\s*\)\s*", body)):
        part = part.strip(" ,;")
        if not part:
            continue
        kind: ClauseKind = "aside" if index and not _starts_statement(part) else "main"
        pieces: list[tuple[str, str]] = []
        start, joined = 0, ""
        for match in _SPLIT.finditer(part):
            rest = part[match.end() :]
            left = part[start : match.start()]
            if _SHARED_SUBJECT.match(left) and match.group(0).strip().lower() == "and":
                continue  # "My partner and I are saving ...": one subject, not two clauses
            if _LEAD_ONLY.match(strip_discourse(left)) and match.group(0).strip() == ",":
                continue  # "As a teacher, I have summers off": the lead is part of the statement
            joiner = re.sub(r"[,;\s]+", " ", match.group(0)).strip().lower()
            # ", so ..." / ", but ..." start a clause of their own even without a first-person
            # subject ("..., so decaf is my go-to", "..., but a class might work")
            consequence = joiner in ("so", "but") and "," in match.group(0)
            if (
                _starts_statement(rest)
                or consequence
                or (_QUESTION_START.match(rest.strip()) and is_question)
            ):
                pieces.append((part[start : match.start()], joined))
                start = match.end()
                joined = joiner
        pieces.append((part[start:], joined))
        for text, joiner in pieces:
            text = text.strip(" ,;")
            if text:
                out.append(Clause(text, sentence, kind, joiner))
                kind = "main"
    if is_question and out:
        last = out[-1]
        out[-1] = Clause(last.text, last.sentence, last.kind, last.joined_by, question=True)
    return out
