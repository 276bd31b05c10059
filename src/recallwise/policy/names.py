"""Name-like words of a message: what a store-aware gate looks up in the actor's memory.

A question about a person, place or thing ("What does Gina's tattoo symbolize?") reads like
general knowledge to a gate that sees the message alone; whether the actor's memory mentions
"Gina" is the cheap fact that tells the two apart.
"""

from __future__ import annotations

import re

__all__ = ["name_terms"]

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
    and acronyms anywhere, without possessives, in order, without repeats."""
    found: dict[str, None] = {}
    for match in _TOKEN.finditer(text):
        word = match.group(0)
        before = text[: match.start()].rstrip()
        sentence_start = not before or before[-1] in '.!?:\n"“'
        base = re.sub(r"['’]s$", "", word)
        is_acronym = len(base) >= 2 and base.isupper() and base.isalpha()
        is_name = base[:1].isupper() and not sentence_start
        if (is_acronym or is_name) and base.lower() not in _NOT_NAMES and len(base) > 1:
            found.setdefault(base.lower(), None)
            if len(found) >= limit:
                break
    return list(found)
