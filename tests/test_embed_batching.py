"""The embedding micro-batcher: concurrent calls share batches, each gets its own rows, errors reach
every caller of the failing batch, and nothing is left waiting after close()."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from recallwise.embeddings import HashingEmbedder
from recallwise.embeddings.batching import BatchingEmbedder
from recallwise.errors import UsageError


def _wait_until(condition, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.001)


class SlowRecording:
    """A hashing embedder that records each call's size and holds the first call until released,
    so the calls made meanwhile queue up into one batch."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(32)
        self.name, self.dimension = self.inner.name, self.inner.dimension
        self.sizes: list[int] = []
        self.release = threading.Event()
        self.fail_next = False

    def embed(self, texts):
        self.sizes.append(len(texts))
        if len(self.sizes) == 1:
            self.release.wait(5)
        if self.fail_next:
            self.fail_next = False
            raise RuntimeError("model exploded")
        return self.inner.embed(texts)


def test_concurrent_calls_are_batched_and_each_gets_its_rows():
    inner = SlowRecording()
    batcher = BatchingEmbedder(inner, max_batch=16)
    texts = [f"text number {i}" for i in range(13)]
    with ThreadPoolExecutor(13) as pool:
        first = pool.submit(batcher.embed, [texts[0]])
        _wait_until(lambda: inner.sizes)  # the worker is inside the first call
        rest = [pool.submit(batcher.embed, [t]) for t in texts[1:]]
        _wait_until(lambda: batcher._queue.qsize() >= 12)
        inner.release.set()
        results = [first.result(), *(f.result() for f in rest)]
    expected = HashingEmbedder(32).embed(texts)
    for i, got in enumerate(results):
        assert got.shape == (1, 32)
        np.testing.assert_allclose(got[0], expected[i], rtol=1e-6)
    assert inner.sizes == [1, 12]
    stats = batcher.stats.as_dict()
    assert stats["batches"] == 2 and stats["texts"] == 13 and stats["largest"] == 12
    batcher.close()


def test_a_large_call_goes_straight_through():
    inner = SlowRecording()
    inner.release.set()
    batcher = BatchingEmbedder(inner, max_batch=4)
    out = batcher.embed([f"t{i}" for i in range(10)])
    assert out.shape == (10, 32) and inner.sizes == [10] and batcher.stats.direct == 1
    assert batcher.embed([]).shape == (0, 32)
    batcher.close()


def test_an_error_reaches_every_caller_of_the_batch_and_the_next_batch_works():
    inner = SlowRecording()
    inner.release.set()
    inner.fail_next = True
    batcher = BatchingEmbedder(inner)
    with pytest.raises(RuntimeError, match="model exploded"):
        batcher.embed(["boom"])
    assert batcher.embed(["fine"]).shape == (1, 32)
    batcher.close()


def test_after_close_calls_embed_directly_and_nothing_waits():
    inner = SlowRecording()
    inner.release.set()
    batcher = BatchingEmbedder(inner)
    batcher.close()
    assert batcher.embed(["after"]).shape == (1, 32)
    assert batcher.name == inner.name and batcher.dimension == 32


def test_bad_settings_are_usage_errors():
    with pytest.raises(UsageError, match="max_batch"):
        BatchingEmbedder(HashingEmbedder(8), max_batch=0)
    with pytest.raises(UsageError, match="max_wait_ms"):
        BatchingEmbedder(HashingEmbedder(8), max_wait_ms=-1)
