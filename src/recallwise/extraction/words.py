"""Word lists more than one rule step reads."""

from __future__ import annotations

__all__ = ["FUNCTION_WORDS"]

#: Words with no content of their own in a rewritten statement: articles, conjunctions and
#: prepositions, the auxiliaries and modals, a few adverbs, and the rewrite's own subject ("the
#: user", "they"). Each step adds the words it also passes over.
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
