"""English word lists that the write path's rules and the bench grading them both read, and the
English dictionary (lemminflect's) they and the gate's name look-up consult.

Plain data (which words carry no content, which are modals, which say how the speaker feels), no rule:
what each side decides with them is its own, so :mod:`recallwise.bench.extract` still never grades
a rule of :mod:`recallwise.extraction` with that rule. Each side adds the words its own use needs.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["FUNCTION_WORDS", "MODALS", "MOODS", "english_dictionary"]

_LEMMINFLECT: Any = None
_LEMMINFLECT_LOCK = threading.Lock()


def english_dictionary() -> Any:
    """``lemminflect``, its lemma and inflection dictionaries loaded: once a process, under a lock.

    lemminflect loads each dictionary on its first call, with no lock: under a server's first
    burst every request thread loaded it again (0.3 s of CPU apiece, a fifth of the server's CPU
    in a `bench serve` run of 1,000 turns).
    """
    global _LEMMINFLECT
    if _LEMMINFLECT is None:
        with _LEMMINFLECT_LOCK:
            if _LEMMINFLECT is None:
                import lemminflect

                lemminflect.getAllLemmas("warm")
                lemminflect.getInflection("warm", "VBZ")
                _LEMMINFLECT = lemminflect
    return _LEMMINFLECT


#: Words with no content of their own in a rewritten statement: articles, conjunctions and
#: prepositions, the auxiliaries and modals, a few adverbs, and the rewrite's own subject ("the
#: user", "they").
FUNCTION_WORDS = frozenset(
    [
        "the",
        "user",
        "user's",
        "a",
        "an",
        "and",
        "or",
        "but",
        "so",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "about",
        "as",
        "into",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "would",
        "will",
        "can",
        "could",
        "should",
        "may",
        "might",
        "must",
        "they",
        "them",
        "their",
        "theirs",
        "themselves",
        "very",
        "really",
        "just",
        "also",
        "still",
        "while",
        "here",
    ]
)

#: The modal verbs and their negated contractions.
MODALS = frozenset(
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
        "couldn't",
        "won't",
        "wouldn't",
        "shouldn't",
        "mustn't",
    ]
)

#: Words that say how the speaker feels ("excited", "tired"): with nothing they are about, a
#: passing state, not a lasting fact.
MOODS = frozenset(
    [
        "excited",
        "nervous",
        "happy",
        "glad",
        "sure",
        "thrilled",
        "worried",
        "curious",
        "interested",
        "tired",
        "busy",
        "okay",
        "fine",
        "ready",
        "grateful",
        "thankful",
        "sorry",
        "confused",
        "impressed",
        "relieved",
        "hopeful",
        "keen",
        "eager",
        "stoked",
        "pumped",
        "overwhelmed",
        "stressed",
        "bored",
        "surprised",
        "amazed",
    ]
)
