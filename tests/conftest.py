"""Shared fixtures: real SQLite files in a temp dir, the real offline embedder, a hashing double."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from recallgate.embeddings import HashingEmbedder, default_embedder
from recallgate.stores import SQLiteStore


@pytest.fixture
def hashing() -> HashingEmbedder:
    return HashingEmbedder(64)


@pytest.fixture
def store(tmp_path, hashing):
    """A real SQLite file with the instant hashing embedder (for plumbing tests)."""
    s = SQLiteStore(f"sqlite:///{tmp_path}/t.db", embedder=hashing)
    yield s
    s.close()


@pytest.fixture(scope="session")
def minilm():
    return default_embedder()


@pytest.fixture
def real_store(tmp_path, minilm):
    """A real SQLite file with the real offline embedder."""
    s = SQLiteStore(f"sqlite:///{tmp_path}/real.db", embedder=minilm)
    yield s
    s.close()
