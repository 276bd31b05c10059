"""The embedded judge's per-record terms, kept by exact vector (:class:`RecordTermsCache`).

A judge of 60 records looked each one up by its vector's bytes in an LRU dictionary: hashing 60
new 1.5 KB keys, refreshing 60 entries and stacking 60 rows took more of a turn's judge than its
arithmetic (``recallwise bench latency``). Here the vectors and their terms sit in two matrices;
a row is found by the bits of the vector's first two floats (one integer per record, made for
the whole turn at once) and then checked against the whole vector, bit for bit, so a row is only
ever reused for the very vector it was computed from, as before. The oldest rows are replaced
first once ``capacity`` are held (first in, first out: a recomputed row is the same row).
"""

from __future__ import annotations

import numpy as np

__all__ = ["RecordTermsCache"]

#: rows allocated first; doubled as needed, up to the capacity
_FIRST_ROWS = 256


def _fingerprints(vectors: np.ndarray) -> list[int]:
    """One integer per row of ``vectors`` (float32, 2-D): the bits of its first two floats."""
    head = np.ascontiguousarray(vectors[:, :2])
    if head.shape[1] == 2:
        return head.view(np.uint64).ravel().tolist()
    return head.view(np.uint32).ravel().tolist()  # a one-dimensional embedder


class RecordTermsCache:
    """Rows of terms (float64) by the exact float32 vector they were computed from (see the
    module). Not thread-safe: the decider holds its lock around each call."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(0, int(capacity))
        self.clear()

    def clear(self) -> None:
        self._slots: dict[int, int] = {}  # fingerprint -> row
        self._owners: list[int] = []  # row -> its fingerprint
        self._vectors: np.ndarray | None = None
        self._terms: np.ndarray | None = None
        self._next = 0  # the row the next insertion takes once the matrices are full

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, vector: object) -> bool:
        row = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        width = 0 if self._terms is None else self._terms.shape[1]
        _, missing, _ = self.get(row, width)
        return not missing

    def get(self, vectors: np.ndarray, width: int) -> tuple[np.ndarray, list[int], list[int]]:
        """The terms of each row of ``vectors`` (n x ``width``; the rows not held are left
        uninitialised), the indices of those rows, and the fingerprints, for :meth:`put`."""
        keys = _fingerprints(vectors)
        terms = np.empty((len(keys), width), dtype=np.float64)
        if (
            not self._slots
            or self._vectors is None
            or self._terms is None
            or self._vectors.shape[1] != vectors.shape[1]
            or self._terms.shape[1] != width
        ):
            return terms, list(range(len(keys))), keys
        slots = self._slots
        index = np.array([slots.get(key, -1) for key in keys], dtype=np.intp)
        # bit for bit: a row is reused only for the very vector it was computed from
        held = (index >= 0) & (self._vectors[index].view(np.uint32) == vectors.view(np.uint32)).all(axis=1)
        if held.all():
            return self._terms[index], [], keys
        terms[held] = self._terms[index[held]]
        return terms, np.flatnonzero(~held).tolist(), keys

    def put(self, vectors: np.ndarray, keys: list[int], terms: np.ndarray) -> None:
        """Keep ``terms`` (a row each) of ``vectors`` (with their ``keys`` from :meth:`get`)."""
        if not self.capacity or not len(keys):
            return
        if (
            self._vectors is not None
            and self._terms is not None
            and (self._vectors.shape[1] != vectors.shape[1] or self._terms.shape[1] != terms.shape[1])
        ):
            self.clear()  # another model's vectors: start again
        for vector, key, row_terms in zip(vectors, keys, terms, strict=True):
            row = self._row(vectors.shape[1], terms.shape[1])
            assert self._vectors is not None and self._terms is not None
            self._vectors[row] = vector
            self._terms[row] = row_terms
            self._slots[key] = row
            self._owners[row] = key

    def _row(self, dimension: int, width: int) -> int:
        """A free row (the matrices grow, doubling, up to the capacity), else the oldest one."""
        used = len(self._owners)
        if used < self.capacity:
            if self._vectors is None or used == len(self._vectors):
                self._grow(dimension, width)
            self._owners.append(-1)
            return used
        row = self._next
        self._next = (row + 1) % self.capacity
        old = self._owners[row]
        if self._slots.get(old) == row:
            del self._slots[old]
        return row

    def _grow(self, dimension: int, width: int) -> None:
        allocated = 0 if self._vectors is None else len(self._vectors)
        rows = min(self.capacity, max(_FIRST_ROWS, allocated * 2))
        vectors = np.empty((rows, dimension), dtype=np.float32)
        terms = np.empty((rows, width), dtype=np.float64)
        if self._vectors is not None and self._terms is not None:
            vectors[:allocated] = self._vectors
            terms[:allocated] = self._terms
        self._vectors, self._terms = vectors, terms
