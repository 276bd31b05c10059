"""English word lists that the write path's rules and the bench grading them both read.

Plain data (which words carry no content, which are modals, which say how the speaker feels), no rule:
what each side decides with them is its own, so :mod:`recallwise.bench.extract` still never grades
a rule of :mod:`recallwise.extraction` with that rule. Each side adds the words its own use needs.
"""

from __future__ import annotations

__all__ = ["FUNCTION_WORDS", "MODALS", "MOODS"]

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
