"""Name-like words of a message: what a store-aware gate looks up in the actor's memory.

A question about a person, place or thing ("What does Gina's tattoo symbolize?") reads like
general knowledge to a gate that sees the message alone; whether the actor's memory mentions
"Gina" is the cheap fact that tells the two apart.
"""

from __future__ import annotations

import re

from ..english import english_dictionary
from ..stores.ranking import STOPWORDS

__all__ = ["name_terms", "proper_names"]

# What a capitalised word after which starts something (a sentence, a line, a quote, a list item)
# rather than naming something.
_STARTS = frozenset('.!?:;\n\r"“(/-*•>')
# A capitalised word (letters, digits, inner ' or -) or an acronym; possessive 's dropped.
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")
# Capitalised for reasons other than naming something.
_NOT_NAMES = frozenset(
    [
        "i",
        "i'm",
        "i'd",
        "i've",
        "i'll",
        "ok",
        "okay",
        "hi",
        "hello",
        "hey",
        "thanks",
        "thank",
        "yes",
        "no",
        "please",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "mr",
        "mrs",
        "ms",
        "dr",
    ]
)


def name_terms(text: str, limit: int = 8) -> list[str]:
    """Lower-cased name-like words of ``text``: capitalised words that do not start a sentence,
    a line or a list item, and acronyms anywhere, without possessives and function words ("The",
    "And" capitalised in a pasted worksheet or poem name nothing), in order, without repeats."""
    found: dict[str, None] = {}
    for match in _TOKEN.finditer(text):
        word = match.group(0)
        before = text[: match.start()].rstrip(" \t")
        sentence_start = not before or before[-1] in _STARTS
        base = re.sub(r"['’]s$", "", word)
        is_acronym = len(base) >= 2 and base.isupper() and base.isalpha()
        is_name = base[:1].isupper() and not sentence_start
        lowered = base.lower()
        if (
            (is_acronym or is_name)
            and lowered not in _NOT_NAMES
            and lowered not in STOPWORDS
            and len(base) > 1
            and base.strip("'’-")
        ):
            found.setdefault(base.lower(), None)
            if len(found) >= limit:
                break
    return list(found)


def proper_names(terms: list[str]) -> list[str]:
    """The ``terms`` that are names and not also English words: "gina", "porto" and "ubuntu" stay;
    "python", "go", "rust" and "grace" go (lemminflect's dictionary knows them as a noun or a
    verb). A general question that shares such a word with a record ("How do I install Go on
    Ubuntu?" with "The user writes Python and Go" stored) names nothing in the user's life."""
    return [t for t in terms if not _english_word(t)]


def _english_word(term: str) -> bool:
    return bool(english_dictionary().getAllLemmas(term))
