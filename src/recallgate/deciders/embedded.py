"""The offline default decider: answers typed questions from sentence embeddings.

It reuses the turn's query embedding (passed as a hint by the policy), caches the
embeddings of every question wording it has seen, and answers with a few dot products, so
a decision costs microseconds on top of the embedding the search needs anyway.

How each question shape is answered:

- ``noul`` with labelled ``examples``: mean similarity of the state to its nearest positive
  examples minus that to its nearest negative examples;
- ``noul`` about a ``subject`` (the judge: "does this memory help with this message?"):
  similarity of state and subject, minus the subject's typical similarity to unrelated
  queries (records that are close to *every* query are otherwise kept for every query);
- ``noul`` with only criteria: similarity to the 'true' text minus the 'false' text;
- ``choice`` / ``score``: a softmax over the similarity of the state to each option.

The instructions text of a subject question is not read: an embedding model cannot follow
instructions, and the measured quality (README, BENCHMARKS.md) is what it is without them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np

from .._blas import limit_blas_threads
from ..embeddings import Embedder, default_embedder
from .base import BaseDecider, Capabilities, DecisionHints, Reply
from .questions import Answer, ChoiceAnswer, Question, ScoreAnswer

__all__ = ["EmbeddedDecider", "EmbeddedParams"]


@dataclass(frozen=True)
class EmbeddedParams:
    """The embedded decider's scales. Each was measured (see thresholds.py for where)."""

    #: nearest examples averaged on each side of an example-based noul
    k_examples: int = 3
    #: logistic scale applied to similarity differences
    noul_scale: float = 12.0
    #: logistic scale and centre for the judge's debiased similarity
    judge_scale: float = 24.5
    judge_centre: float = -0.053
    #: how much of a record's typical similarity to unrelated queries is subtracted
    debias_weight: float = 1.0
    #: nearest generic queries averaged for a record's typical similarity
    debias_k: int = 8
    #: weight of the shared-life-domain term (message and memory about the same domain)
    domain_weight: float = 1.0
    #: softmax temperature of the domain distributions
    domain_temperature: float = 0.05
    #: weight of a hybrid search's BM25 score (lexical evidence: names, places, dates)
    lexical_weight: float = 0.03
    #: softmax temperature for choice and score options
    option_temperature: float = 0.05


def _sigmoid(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-x)))


def load_domains() -> list[str]:
    """Descriptions of broad life domains (food, travel, family, ...), package data."""
    text = resources.files("recallgate.data").joinpath("domains.json").read_text(encoding="utf-8")
    return [d["description"] for d in json.loads(text)]


def _softmax_rows(x: np.ndarray, temperature: float) -> np.ndarray:
    z = (x - x.max(axis=-1, keepdims=True)) / temperature
    z = np.exp(z)
    return np.asarray(z / z.sum(axis=-1, keepdims=True))


def load_generic_queries() -> list[str]:
    """A bank of assorted user messages, used to measure how generic a record is."""
    text = resources.files("recallgate.data").joinpath("gate_examples.jsonl").read_text(encoding="utf-8")
    return [json.loads(line)["text"] for line in text.splitlines() if line.strip()]


class EmbeddedDecider(BaseDecider):
    """Answers gate, route and judge questions offline from embeddings (see module docs)."""

    name = "embedded"
    #: in-process, reuses the turn's vectors, and ignores instructions wording (it compares texts)
    capabilities = Capabilities(local=True, uses_hints=True, reads_wording=False)

    def __init__(self, embedder: Embedder | None = None, params: EmbeddedParams | None = None) -> None:
        self._embedder = embedder
        self.params = params or EmbeddedParams()
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._bank: np.ndarray | None = None
        self._domains: np.ndarray | None = None
        self._shipped_loaded = False
        limit_blas_threads()

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = default_embedder()
        return self._embedder

    # ---- embedding caches ----------------------------------------------------------------
    def _load_shipped_vectors(self) -> None:
        """Seed the cache with the shipped embeddings of the default wordings' texts.

        Embedding the gate's examples, the generic bank and the life domains takes ~0.4 s on
        the first turn; for the default embedder they ship precomputed (package data, checked
        against the embedder by the test suite), so that turn costs what every other does.
        """
        with self._lock:
            if self._shipped_loaded:
                return
            self._shipped_loaded = True
        name = getattr(self.embedder, "name", "")
        resource = resources.files("recallgate.data").joinpath(f"text_vectors/{name}.npz")
        if not name or not resource.is_file():
            return
        with resource.open("rb") as handle, np.load(handle, allow_pickle=False) as shipped:
            texts, vectors = shipped["texts"], shipped["vectors"]
            if vectors.ndim != 2 or vectors.shape[1] != self.embedder.dimension:
                return
            with self._lock:
                for text, vector in zip(texts.tolist(), vectors.astype(np.float32), strict=True):
                    self._cache.setdefault(str(text), vector)

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of question texts, cached for the life of the decider."""
        if not self._shipped_loaded:
            self._load_shipped_vectors()
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            vectors = self.embedder.embed(missing)
            with self._lock:
                for text, vector in zip(missing, vectors, strict=True):
                    self._cache[text] = vector
        if not texts:
            return np.zeros((0, self.embedder.dimension), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def _generic_bank(self) -> np.ndarray:
        if self._bank is None:
            self._bank = self._vectors(load_generic_queries())
        return self._bank

    def _domain_matrix(self) -> np.ndarray:
        if self._domains is None:
            self._domains = self._vectors(load_domains())
        return self._domains

    def warm_up(self, questions: Mapping[str, Question] | None = None) -> None:
        """Embed the banks (and ``questions``' texts) now rather than on the first turn."""
        self._generic_bank()
        self._domain_matrix()
        for question in (questions or {}).values():
            self._example_matrices(question)

    def _example_matrices(self, question: Question) -> tuple[np.ndarray, np.ndarray]:
        positives = [e.state for e in question.examples if e.label is True]
        negatives = [e.state for e in question.examples if e.label is False]
        return self._vectors(positives), self._vectors(negatives)

    # ---- answering ----------------------------------------------------------------------
    def _answer(self, state: str, questions: Mapping[str, Question], hints: DecisionHints) -> Reply:
        state_vector = hints.state_vector
        if state_vector is None:
            state_vector = self.embedder.embed([state])[0]
        answers: dict[str, Answer] = {}
        subjects = {n: q for n, q in questions.items() if q.type == "noul" and q.subject is not None}
        if subjects:
            answers.update(self._judge(state_vector, subjects, hints))
        for name, question in questions.items():
            if name in answers:
                continue
            if question.type == "noul":
                answers[name] = self._noul(state_vector, question)
            else:
                answers[name] = self._options(state_vector, question)
        return Reply(answers)

    def gate_score(self, state_vector: np.ndarray, question: Question) -> float:
        """The raw (pre-logistic) score of a noul question about the state itself."""
        p = self.params
        if question.examples:
            positives, negatives = self._example_matrices(question)
            if len(positives) and len(negatives):
                return _top_mean(positives @ state_vector, p.k_examples) - _top_mean(
                    negatives @ state_vector, p.k_examples
                )
        if isinstance(question.criteria, Mapping) and question.criteria:
            true = question.criteria.get("true", question.instructions)
            false = question.criteria.get("false", "")
            vectors = self._vectors([true, false])
            return float(vectors[0] @ state_vector - vectors[1] @ state_vector)
        vector = self._vectors([question.instructions])[0]
        return float(vector @ state_vector) - 0.25

    def _noul(self, state_vector: np.ndarray, question: Question) -> float:
        return _sigmoid(self.params.noul_scale * self.gate_score(state_vector, question))

    def judge_scores(self, state_vector: np.ndarray, subject_vectors: np.ndarray) -> np.ndarray:
        """Debiased similarities of the state to each subject (rows of ``subject_vectors``)."""
        p = self.params
        raw = subject_vectors @ state_vector
        if p.debias_weight:
            generic = subject_vectors @ self._generic_bank().T
            k = min(p.debias_k, generic.shape[1])
            typical = np.partition(generic, generic.shape[1] - k, axis=1)[:, -k:].mean(axis=1)
            raw = raw - p.debias_weight * typical
        if p.domain_weight:
            # How well the memory fits the life domains the message is about, relative to how
            # well it fits domains in general: "dinner" reaches "peanut allergy" through food.
            domains = self._domain_matrix()
            state_domains = _softmax_rows((domains @ state_vector)[None, :], p.domain_temperature)[0]
            affinity = subject_vectors @ domains.T
            raw = raw + p.domain_weight * (affinity @ state_domains - affinity.mean(axis=1))
        return np.asarray(raw)

    def _judge(
        self, state_vector: np.ndarray, questions: Mapping[str, Question], hints: DecisionHints
    ) -> dict[str, Answer]:
        names = list(questions)
        known = [n for n in names if n in hints.subject_vectors]
        vectors = {n: hints.subject_vectors[n] for n in known}
        unknown = [n for n in names if n not in vectors]
        if unknown:
            # Not cached: subjects are memory records, an unbounded set (wordings are cached).
            embedded = self.embedder.embed([questions[n].subject or "" for n in unknown])
            vectors.update(zip(unknown, embedded, strict=True))
        matrix = np.stack([vectors[n] for n in names])
        scores = self.judge_scores(state_vector, matrix)
        if self.params.lexical_weight and hints.subject_lexical:
            lexical = np.array([hints.subject_lexical.get(n, 0.0) for n in names])
            scores = scores + self.params.lexical_weight * lexical
        p = self.params
        probs = 1.0 / (1.0 + np.exp(-p.judge_scale * (scores - p.judge_centre)))
        return {n: float(v) for n, v in zip(names, probs, strict=True)}

    def _options(self, state_vector: np.ndarray, question: Question) -> Answer:
        options = question.options
        if question.type == "choice" and isinstance(question.criteria, Mapping):
            texts = [f"{k}: {v}" if v else k for k, v in question.criteria.items()]
        else:
            texts = options
        sims = self._vectors(texts) @ state_vector
        logits = sims / self.params.option_temperature
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        best = int(np.argmax(probs))
        if question.type == "choice":
            return ChoiceAnswer(
                options[best], {o: float(v) for o, v in zip(options, probs, strict=True)}, float(probs[best])
            )
        return ScoreAnswer(best, options, [float(v) for v in probs], float(probs[best]))


def _top_mean(values: np.ndarray, k: int) -> float:
    if values.size == 0:
        return 0.0
    k = min(k, values.size)
    return float(np.partition(values, values.size - k)[-k:].mean())
