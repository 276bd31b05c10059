"""The embedded decider's question texts: embedded once, and their matrix built once per set of texts."""

from __future__ import annotations

import numpy as np
import pytest

from recallwise.deciders.embedded import _STACKED_MAX, EmbeddedDecider
from recallwise.embeddings import HashingEmbedder


class Counting(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.texts = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += len(texts)
        return super().embed(texts)


def test_a_set_of_texts_is_stacked_once_and_shared_read_only():
    embedder = Counting()
    decider = EmbeddedDecider(embedder=embedder)
    texts = ["a cat", "a dog", "a ferry"]
    first = decider._vectors(texts)
    embedded = embedder.texts
    again = decider._vectors(list(texts))
    assert again is first and embedder.texts == embedded  # nothing embedded or stacked again
    with pytest.raises(ValueError):
        first[0, 0] = 1.0  # shared by every turn: read-only
    reordered = decider._vectors(["a ferry", "a cat"])
    assert np.array_equal(reordered, embedder.embed(["a ferry", "a cat"]))


def test_the_matrices_kept_are_bounded():
    decider = EmbeddedDecider(embedder=HashingEmbedder(64))
    for i in range(_STACKED_MAX + 10):
        decider._vectors([f"question {i}"])
    assert len(decider._stacked) <= _STACKED_MAX
    assert np.array_equal(decider._vectors(["question 3"]), HashingEmbedder(64).embed(["question 3"]))
