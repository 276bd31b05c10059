"""The offline default decider: answers typed questions from sentence embeddings.

It reuses the turn's query embedding (passed as a hint by the policy), caches the
embeddings of every question wording it has seen, and answers with a few dot products, so
a decision costs microseconds on top of the embedding the search needs anyway.

How each question shape is answered:

- the policy's gate and judge questions (``Question.role``), where the decider has a learned head
  for the turn's embedding space (:mod:`recallwise.deciders.heads`; shipped for the English and
  the multilingual model): the head's calibrated probability, a dot product on the message's
  embedding (gate) or on a few features of each record (judge);
- ``noul`` with labelled ``examples``: mean similarity of the state to its nearest positive
  examples minus that to its nearest negative examples;
- ``noul`` about a ``subject`` (the judge: "does this memory help with this message?"):
  similarity of state and subject, minus the subject's typical similarity to unrelated
  queries (records that are close to *every* query are otherwise kept for every query);
- ``noul`` with only criteria: similarity to the 'true' text minus the 'false' text;
- ``choice`` / ``score``: a softmax over the similarity of the state to each option.

The instructions text of a subject question is not read: an embedding model cannot follow
instructions, and the measured quality (README, BENCHMARKS.md) is what it is without them.

Languages: the default (English) model decides English text exactly as before; a message, or
a judged record, in any other language is decided with the multilingual model (Universal
Sentence Encoder multilingual v3, 16 languages in one space), which the decider runs itself
when the policy's vectors are the English model's: it embeds the message (and the records it
judges) once more, cached per text. Its English example bank and life domains need no
translation: the space is shared. A message in a script neither model covers (Greek, Hebrew,
Devanagari, ...) is not guessed at: the decider answers "open / keep" and says why in
``Decision.warnings`` (the policy puts it in the trace), which is the stock behaviour.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from types import MappingProxyType
from typing import Literal, NamedTuple

import numpy as np

from .._blas import limit_blas_threads
from ..embeddings import Embedder, default_embedder, make_embedder
from ..embeddings.domains import (
    DomainSpace,
    domain_names,
    domain_prototypes,
    load_domains,
    prototype_affinity,
    prototype_rows,
)
from ..embeddings.language import LanguageGuess, guess_language
from ..embeddings.multilingual import USE_NAME
from ..embeddings.shipped import shipped_vectors
from ..errors import UsageError
from .base import BaseDecider, Capabilities, DecisionHints, Reply
from .constraints import constraint_kinds
from .heads import HEAD_ROLES, Head, HeadRole, SpaceWeights, need_feature, shipped_head
from .questions import Answer, ChoiceAnswer, Question, ScoreAnswer
from .record_cache import RecordTermsCache

__all__ = ["EmbeddedDecider", "EmbeddedParams", "domain_names", "domain_prototypes", "load_domains"]


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
    #: weight of the shared-life-domain term (message and memory about the same domain): 1.5
    #: ranked the judge sets' right records best with the prototypes' affinity (fit and calib
    #: splits' mean per-request AUC 0.834 / 0.890; 0.821 / 0.883 at 1.0; 2.0 ranks those two a
    #: little better, 0.843 / 0.892, and dev and the validator cases worse, 0.910 / 0.965)
    domain_weight: float = 1.5
    #: softmax temperature of the domain distributions
    domain_temperature: float = 0.05
    #: weight of the standing-constraint term (:mod:`~recallwise.deciders.constraints`: a partner's
    #: diet on a restaurant, a savings goal on a purchase, the kids on a family meal plan): a record's
    #: score gains up to this when it is of a kind and the message a request the kind bears on.
    #: Each side's membership is a logistic of its affinity to the kind's prototypes (the mean of
    #: the two closest), centred on its floor; chosen on the calib and dev splits (BENCHMARKS.md,
    #: "Records that bear on a request from another domain"); the request floor then raised 0.45 ->
    #: 0.50 by the integration tests ("What should I drink this afternoon?" reads 0.48 to the
    #: diet's meal requests and lifted the allergy above the flat white). 0 turns the term off.
    constraint_weight: float = 1.0
    constraint_record_floor: float = 0.55
    constraint_request_floor: float = 0.50
    constraint_steepness: float = 40.0
    #: weight of a hybrid search's BM25 score (lexical evidence: names, places, dates)
    lexical_weight: float = 0.03
    #: softmax temperature for choice and score options
    option_temperature: float = 0.05
    #: the judge's logistic in the multilingual model's space (its cosines spread less): fitted
    #: on the dev sets only (data/dev/validator_cases_multilingual.json + validator_cases.json,
    #: 35 queries, 211 pairs, all judged in that space): the scale matches the English model's
    #: spread (24.5 x std 0.212 / 0.168 on the English dev cases), the centre is the middle of
    #: the flat best region of "p >= 0.5 and p >= best - 0.5" (pooled accuracy 0.90-0.92 for
    #: centres -0.03..0.06; 0.919 at 0.01).
    multilingual_judge_scale: float = 34.0
    multilingual_judge_centre: float = 0.01
    #: multilingual vectors of messages and judged records kept per decider (LRU)
    multilingual_cache_size: int = 4096
    #: judged records whose message-free judge terms (typical similarity, life-domain
    #: affinities) are kept per decider (by vector, the oldest replaced first; about 1.7 KB each,
    #: 14 MB when full): a user's records recur across turns
    record_cache_size: int = 8192
    #: whether the judge reads the life domains: a head fitted with the life-domain table
    #: (``tune judge --domain-table``) reads it, and the ranking score has its life-domain term.
    #: Off for episodic memories (``KeepOptions.judge_domains``, :meth:`without_domain_table`),
    #: where both ranked LoCoMo's evidence worse (the table: judge AUC 0.941 against 0.950 on dev,
    #: BENCHMARKS.md)
    judge_domain_table: bool = True

    def for_multilingual(self) -> EmbeddedParams:
        """These scales with the judge's logistic of the multilingual space, without the
        standing-constraint term (its floors are the English model's similarities)."""
        return replace(
            self,
            judge_scale=self.multilingual_judge_scale,
            judge_centre=self.multilingual_judge_centre,
            constraint_weight=0.0,
        )


#: embedders trained on English only: with one of these, non-English text goes to the multilingual model
ENGLISH_ONLY_EMBEDDERS = frozenset({"minilm-l6", "paraphrase-minilm-l3"})
#: question-text matrices :meth:`EmbeddedDecider._vectors` keeps (a few per policy; a client of the
#: system-one route may send any number of questions)
_STACKED_MAX = 256
Space = Literal["primary", "multilingual"]


def _sigmoid(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-x)))


def _softmax_rows(x: np.ndarray, temperature: float) -> np.ndarray:
    z = (x - x.max(axis=-1, keepdims=True)) / temperature
    z = np.exp(z)
    return np.asarray(z / z.sum(axis=-1, keepdims=True))


def load_generic_queries() -> list[str]:
    """A bank of assorted user messages, used to measure how generic a record is."""
    text = resources.files("recallwise.data").joinpath("gate_examples.jsonl").read_text(encoding="utf-8")
    return [json.loads(line)["text"] for line in text.splitlines() if line.strip()]


class EmbeddedDecider(BaseDecider):
    """Answers gate, route and judge questions offline from embeddings (see module docs)."""

    name = "embedded"
    #: in-process, reuses the turn's vectors, and ignores instructions wording (it compares texts)
    capabilities = Capabilities(local=True, uses_hints=True, reads_wording=False)

    def __init__(
        self,
        embedder: Embedder | None = None,
        params: EmbeddedParams | None = None,
        *,
        multilingual: Embedder | bool | None = None,
        heads: Mapping[str, Head | None] | None = None,
    ) -> None:
        """``embedder``: the model of the policy's vectors (default: the offline English one).

        ``multilingual``: the model for text that is not English. ``None`` (default) uses the
        built-in multilingual model when ``embedder`` is an English-only built-in one; ``True``
        always; ``False`` never; or pass an embedder.

        ``heads``: the learned heads by role (``"gate"``, ``"judge"``); a role left out uses the
        shipped head, ``None`` none (the example vote and the debiased-similarity logistic answer).
        """
        self._embedder = embedder
        unknown = sorted(set(heads or {}) - set(HEAD_ROLES))
        if unknown:
            raise UsageError(f"unknown head role(s) {unknown}; known: {', '.join(HEAD_ROLES)}")
        given = dict(heads or {})
        #: the learned head answering each role (None: no head), and whether it was given
        self.heads: dict[HeadRole, Head | None] = {
            role: given[role] if role in given else shipped_head(role) for role in HEAD_ROLES
        }
        for role, head in self.heads.items():
            if head is not None and head.role != role:
                raise UsageError(f"heads[{role!r}]: is a {head.role} head")
        self.heads_given: frozenset[str] = frozenset(given)
        if params is None:
            params = EmbeddedParams()
            if getattr(embedder, "name", None) == USE_NAME:  # its judge logistic, fitted for it
                params = params.for_multilingual()
        self.params = params
        self._cache: dict[str, np.ndarray] = {}
        self._stacked: dict[tuple[str, ...], np.ndarray] = {}
        #: id(question.criteria) -> (the criteria, the question's type, its options, their matrix)
        self._option_cache: dict[int, tuple[object, str, list[str], np.ndarray]] = {}
        #: id(question.examples) -> (the examples, their float32 matrices, their float64 ones)
        self._example_cache: dict[
            int, tuple[object, tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
        ] = {}
        self._lock = threading.Lock()
        self._bank: np.ndarray | None = None
        #: the life domains in this decider's space, made on first use: the stores' profile files
        #: records with the same prototypes (the shipped vectors, for the default model)
        self._domains: DomainSpace | None = None
        self._constraints: _ConstraintMatrices | None = None
        self._shipped_loaded = False
        self._multilingual_choice = multilingual
        self._multilingual: EmbeddedDecider | None = None
        self._multilingual_resolved = False
        self._ml_vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._record_terms = RecordTermsCache(self.params.record_cache_size)
        limit_blas_threads()
        for head in given.values():
            if head is not None:
                self._check_head(head)

    def _check_head(self, head: Head) -> None:
        """A :class:`UsageError` when ``head`` has no weights for any model this decider embeds with
        (it was fitted for another embedder), or weights of the wrong size."""
        models = {getattr(self.embedder, "name", ""): self.embedder.dimension}
        ml = self.multilingual_decider()
        if ml is not None:
            models[ml.embedder.name] = ml.embedder.dimension
        if not any(head.for_space(name) is not None for name in models):
            raise UsageError(
                f"{head.origin}: the {head.role} head was fitted for {', '.join(head.spaces)}; this "
                f"decider embeds with {', '.join(models)}: refit it with --embedder for this model"
            )
        for name, dimension in models.items():
            head.check_dimension(name, dimension)
        head.check_domains(domain_names())

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = default_embedder()
        return self._embedder

    # ---- learned heads ------------------------------------------------------------------
    def with_heads(self, **heads: Head | None) -> EmbeddedDecider:
        """This decider answering ``role`` with ``heads[role]`` (None: no head); it shares this
        one's models and cached embeddings."""
        merged: dict[str, Head | None] = {r: h for r, h in self.heads.items() if r in self.heads_given}
        merged.update(heads)
        return self._sharing(merged, self.params, self.multilingual_decider())

    def without_domain_table(self) -> EmbeddedDecider:
        """This decider without the life domains (episodic memories: ``KeepOptions.judge_domains``
        off): its judge head reads no life-domain table and its ranking score has neither the
        life-domain term nor the standing-constraint one. It shares this one's models, heads and
        embeddings.

        The domains are about preferences and facts ("dinner" reaches "peanut allergy" through
        food); a conversation's turns are about everything at once, and the term ranked LoCoMo's
        evidence worse: dev recall at <= 5 records 0.7414 without it, 0.7323 at weight 1.0, 0.7343
        at 1.5 (``recallwise bench locomo --split dev``, before the episodic options were refitted
        without it)."""
        if not self.params.judge_domain_table:
            return self
        given: dict[str, Head | None] = {r: h for r, h in self.heads.items() if r in self.heads_given}
        ml = self.multilingual_decider()
        return self._sharing(
            given,
            replace(self.params, judge_domain_table=False, domain_weight=0.0, constraint_weight=0.0),
            None if ml is None else ml.without_domain_table(),
        )

    def _sharing(
        self, heads: dict[str, Head | None], params: EmbeddedParams, multilingual: EmbeddedDecider | None
    ) -> EmbeddedDecider:
        other = EmbeddedDecider(self._embedder, params, multilingual=self._multilingual_choice, heads=heads)
        other._cache, other._stacked, other._lock = self._cache, self._stacked, self._lock
        other._ml_vectors, other._record_terms = self._ml_vectors, self._record_terms
        other._bank, other._domains, other._shipped_loaded = self._bank, self._domains, self._shipped_loaded
        other._constraints = self._constraints
        other._multilingual = multilingual
        other._multilingual_resolved = True
        return other

    def head_weights(self, role: HeadRole, embedder: str | None) -> SpaceWeights | None:
        """The weights answering ``role`` for vectors made by ``embedder`` (None: no head there)."""
        head = self.heads.get(role)
        return head.for_space(embedder) if head is not None else None

    def judge_slope(self) -> float:
        """The judge's log-odds per unit of its ranking score within one turn, in the primary
        model's space: its head's (score and gap weights), or its logistic's scale."""
        head = self.head_weights("judge", getattr(self.embedder, "name", None))
        if head is None:
            return self.params.judge_scale
        return float(head.weights[0] + head.weights[1])

    def head_thresholds(self) -> dict[str, float]:
        """The thresholds measured with the heads that answer for this decider's primary model
        (a head carries the operating point chosen when it was fitted); a policy uses them unless
        an argument or a fitted config sets the role."""
        primary = getattr(self.embedder, "name", "")
        out: dict[str, float] = {}
        for head in self.heads.values():
            if head is not None and head.for_space(primary) is not None:
                out.update(head.thresholds)
        return out

    def heads_in_use(self) -> dict[str, str]:
        """``{role: description}`` of the heads that answer for this decider's models (a head
        with no weights for them answers nothing and is left out)."""
        spaces = [getattr(self.embedder, "name", "")]
        ml = self.multilingual_decider()
        if ml is not None:
            spaces.append(ml.embedder.name)
        out: dict[str, str] = {}
        for role, head in self.heads.items():
            if head is None:
                continue
            used = [s for s in spaces if head.for_space(s) is not None]
            if used:
                out[role] = head.describe() + (
                    "" if len(used) == len(head.spaces) else f" (used: {'+'.join(used)})"
                )
        return out

    # ---- the multilingual space ---------------------------------------------------------
    def multilingual_decider(self) -> EmbeddedDecider | None:
        """The decider answering in the multilingual model's space (None when not used)."""
        if self._multilingual_resolved:
            return self._multilingual
        with self._lock:
            if not self._multilingual_resolved:
                self._multilingual = self._make_multilingual()
                self._multilingual_resolved = True
        return self._multilingual

    def _make_multilingual(self) -> EmbeddedDecider | None:
        choice = self._multilingual_choice
        if choice is False:
            return None
        if choice is None or choice is True:
            primary = getattr(self.embedder, "name", "")
            if choice is None and primary not in ENGLISH_ONLY_EMBEDDERS:
                return None  # a custom or already multilingual model decides everything
            if primary == USE_NAME:
                return None
            model: Embedder = make_embedder("multilingual")
        else:
            model = choice
        return EmbeddedDecider(model, self.params.for_multilingual(), multilingual=False)

    def _multilingual_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Multilingual vectors of messages and records (LRU-cached: records recur across turns)."""
        ml = self.multilingual_decider()
        assert ml is not None
        self._embed_missing(self._ml_vectors, ml.embedder, texts)
        out = []
        with self._lock:
            for text in texts:
                vector = self._ml_vectors.get(text)
                if vector is None:  # evicted by a concurrent turn between the two steps
                    vector = ml.embedder.embed([text])[0]
                self._ml_vectors[text] = vector
                self._ml_vectors.move_to_end(text)
                out.append(vector)
            while len(self._ml_vectors) > self.params.multilingual_cache_size:
                self._ml_vectors.popitem(last=False)
        return np.stack(out) if out else np.zeros((0, ml.embedder.dimension), dtype=np.float32)

    def _hint_space(self, hints: DecisionHints) -> Space | None:
        """Which model made the policy's vectors: named by the hints, else told by their dimension."""
        vector = hints.state_vector
        if vector is None:
            return None
        named = hints.embedder_name  # the policy says which model made its vectors
        ml = self.multilingual_decider()
        if named is not None:
            if named == getattr(self.embedder, "name", None):
                return "primary"
            if ml is not None and named == ml.embedder.name:
                return "multilingual"
            return None
        size = int(np.asarray(vector).shape[-1])
        if size == self.embedder.dimension:
            return "primary"
        if ml is not None and size == ml.embedder.dimension:
            return "multilingual"
        return None

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
        shipped = shipped_vectors(self.embedder)
        with self._lock:
            for text, vector in shipped.items():
                self._cache.setdefault(text, vector)

    def _embed_missing(
        self, cache: MutableMapping[str, np.ndarray], embedder: Embedder, texts: Sequence[str]
    ) -> None:
        """Embed the ``texts`` ``cache`` lacks, in one batch, and add them to it (the lock is not
        held while the model runs: concurrent turns embed their own texts meanwhile)."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            vectors = embedder.embed(missing)
            with self._lock:
                for text, vector in zip(missing, vectors, strict=True):
                    cache[text] = vector

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of question texts (one read-only matrix, a row each), cached for the life of
        the decider: the vectors by text, and the matrix by the texts asked together (a question's
        examples and options are asked every turn; stacking them anew cost more than the gate's
        arithmetic, measured under ``bench serve``)."""
        key = tuple(texts)
        stacked = self._stacked.get(key)
        if stacked is not None:
            return stacked
        if not self._shipped_loaded:
            self._load_shipped_vectors()
        self._embed_missing(self._cache, self.embedder, texts)
        if not texts:
            return np.zeros((0, self.embedder.dimension), dtype=np.float32)
        stacked = np.stack([self._cache[t] for t in texts])
        stacked.flags.writeable = False  # shared by every turn: a caller changing it would be a bug
        if len(self._stacked) >= _STACKED_MAX:  # questions sent over the wire are not bounded
            self._stacked.clear()
        self._stacked[key] = stacked
        return stacked

    def _generic_bank(self) -> np.ndarray:
        if self._bank is None:
            self._bank = self._vectors(load_generic_queries())
        return self._bank

    def _domain_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """The life domains' prototype vectors (float32, one row each) and, per domain, the rows
        of its prototypes (:func:`~recallwise.embeddings.domains.prototype_rows`)."""
        space = self._domains
        if space is None:  # two racing turns make two, of the one shared matrix
            space = self._domains = DomainSpace(self.embedder)
        return space.prototypes()

    def _constraint_matrices(self) -> _ConstraintMatrices:
        """The standing constraints' prototype vectors and rows: their records' and the
        requests' they bear on (:func:`~recallwise.deciders.constraints.constraint_kinds`)."""
        if self._constraints is None:
            kinds = constraint_kinds()
            record_texts, record_rows = prototype_rows([list(k.records) for k in kinds])
            request_texts, request_rows = prototype_rows([list(k.requests) for k in kinds])
            self._constraints = _ConstraintMatrices(
                np.asarray(self._vectors(record_texts), dtype=np.float32),
                record_rows,
                np.asarray(self._vectors(request_texts), dtype=np.float32),
                request_rows,
            )
        return self._constraints

    def domain_affinity(self, vectors: np.ndarray) -> np.ndarray:
        """How well each text (rows of ``vectors``) fits each life domain: the mean similarity
        of its two closest prototypes of that domain (n x D, float64)."""
        prototypes, rows = self._domain_matrix()
        return prototype_affinity(vectors, prototypes, rows)

    def warm_up(self, questions: Mapping[str, Question] | None = None) -> None:
        """Embed the banks (and ``questions``' texts) now rather than on the first turn, in both
        models' spaces."""
        self._generic_bank()
        self._domain_matrix()
        self._constraint_matrices()
        for question in (questions or {}).values():
            self.example_vectors(question)
        ml = self.multilingual_decider()
        if ml is not None:  # loads the multilingual model too: the first Spanish turn is not slow
            ml.warm_up(questions)

    def example_vectors(self, question: Question) -> tuple[np.ndarray, np.ndarray]:
        """The embeddings of ``question``'s positive and of its negative examples (cached)."""
        positives = [e.state for e in question.examples if e.label is True]
        negatives = [e.state for e in question.examples if e.label is False]
        return self._vectors(positives), self._vectors(negatives)

    # ---- answering ----------------------------------------------------------------------
    def _answer(self, state: str, questions: Mapping[str, Question], hints: DecisionHints) -> Reply:
        parsed = questions
        language = guess_language(state)
        if language.kind == "unsupported":
            return self._cannot_read(state, language, parsed)
        ml = self.multilingual_decider()
        hint_space = self._hint_space(hints)
        subjects = {n: q for n, q in parsed.items() if q.type == "noul" and q.subject is not None}
        others = {n: q for n, q in parsed.items() if n not in subjects}
        state_space, judge_space = self.answer_spaces(
            state, [q.subject or "" for q in subjects.values()], hint_space
        )
        vectors: dict[Space, np.ndarray] = {}

        def state_vector(space: Space) -> np.ndarray:
            if space not in vectors:
                if hint_space == space and hints.state_vector is not None:
                    vectors[space] = np.asarray(hints.state_vector, dtype=np.float32)
                elif space == "multilingual":
                    vectors[space] = self._multilingual_vectors([state])[0]
                else:
                    vectors[space] = self.embedder.embed([state])[0]
            return vectors[space]

        answers: dict[str, Answer] = {}
        usage: dict[str, float] = {}
        if subjects:
            if judge_space == "multilingual":
                # Said in the usage: the judge's log-odds there have another scale, and what was
                # fitted on them (policy.conversation) does not apply.
                usage["multilingual_judged"] = len(subjects)
                assert ml is not None
                head = self.head_weights("judge", ml.embedder.name)
                answers.update(
                    ml._judge(
                        state_vector("multilingual"),
                        subjects,
                        self._ml_hints(hints, subjects, hint_space),
                        head,
                    )
                )
            else:
                primary_hints = hints if hint_space == "primary" else _without_vectors(hints)
                head = self.head_weights("judge", getattr(self.embedder, "name", None))
                answers.update(self._judge(state_vector("primary"), subjects, primary_hints, head))
            if head is not None:
                usage["judge_head"] = len(subjects)
                judge_head = self.heads.get("judge")
                if judge_head is not None and judge_head.reads_need:
                    usage["judge_need"] = len(subjects)
        decider = ml if state_space == "multilingual" and ml is not None else self
        for name, question in others.items():
            vector = state_vector(state_space)
            if question.type == "noul":
                gate_head = (
                    self.head_weights("gate", getattr(decider.embedder, "name", None))
                    if question.role == "gate"
                    else None
                )
                if gate_head is not None:
                    answers[name] = gate_head.probability(decider.gate_features(vector, question))
                    usage["gate_head"] = 1
                else:
                    answers[name] = decider._noul(vector, question)
            else:
                answers[name] = decider._options(vector, question)
        return Reply(answers, usage=usage)

    def answer_spaces(
        self, state: str, subjects: Sequence[str] = (), hint_space: Space | None = None
    ) -> tuple[Space, Space]:
        """(the space the message's questions are answered in, the space its records are judged in).

        The message's questions (gate, route): English (or no words) in the primary space;
        anything else in the multilingual one, as are the policy's vectors when they are that
        model's. The judge: one space for every record of the turn, so their scores compare;
        the multilingual one as soon as the message or any record is not English.
        """
        if self.multilingual_decider() is None:
            return "primary", "primary"
        state_space: Space = "primary"
        if hint_space == "multilingual" or guess_language(state).kind == "other":
            state_space = "multilingual"
        judge_space: Space = state_space
        if judge_space == "primary" and any(
            guess_language(text).kind in ("other", "unsupported") for text in subjects
        ):
            judge_space = "multilingual"
        return state_space, judge_space

    def space_decider(self, space: Space) -> EmbeddedDecider:
        """The decider answering in ``space`` (this one, or its multilingual one)."""
        ml = self.multilingual_decider()
        return ml if space == "multilingual" and ml is not None else self

    def _ml_hints(
        self, hints: DecisionHints, subjects: Mapping[str, Question], hint_space: Space | None
    ) -> DecisionHints:
        """The judge's hints in the multilingual space: the policy's record vectors when they are
        multilingual ones, otherwise each record embedded (cached) with the multilingual model."""
        if hint_space == "multilingual":
            return hints
        names = list(subjects)
        embedded = self._multilingual_vectors([subjects[n].subject or "" for n in names])
        return DecisionHints(
            subject_vectors=dict(zip(names, embedded, strict=True)),
            subject_scores=dict(hints.subject_scores),
            subject_lexical=dict(hints.subject_lexical),
            need=hints.need,
        )

    def _cannot_read(self, state: str, language: LanguageGuess, questions: Mapping[str, Question]) -> Reply:
        """A message in a script no model here was trained on: answer as the stock behaviour
        would (retrieve, keep every record, no route preference), and say so."""
        warning = (
            f"message is in {language.script.title()} script, which neither embedding model reads "
            "(supported: ar, de, en, es, fr, it, ja, ko, nl, pl, pt, ru, th, tr, zh): "
            "answered open / keep all, as without a gate"
        )
        answers: dict[str, Answer] = {}
        for name, question in questions.items():
            if question.type == "noul":
                answers[name] = 1.0
            elif question.type == "choice":
                share = 1.0 / len(question.options)
                answers[name] = ChoiceAnswer(
                    question.options[0], dict.fromkeys(question.options, share), share
                )
            else:
                share = 1.0 / len(question.options)
                answers[name] = ScoreAnswer(0, question.options, [share] * len(question.options), share)
        return Reply(answers, warnings=[warning])

    def gate_score(self, state_vector: np.ndarray, question: Question) -> float:
        """The raw (pre-logistic) score of a noul question about the state itself."""
        if question.examples:
            positives, negatives = self.example_vectors(question)
            if len(positives) and len(negatives):
                return self.example_vote(state_vector, question)
        if isinstance(question.criteria, Mapping) and question.criteria:
            true = question.criteria.get("true", question.instructions)
            false = question.criteria.get("false", "")
            vectors = self._vectors([true, false])
            return float(vectors[0] @ state_vector - vectors[1] @ state_vector)
        vector = self._vectors([question.instructions])[0]
        return float(vector @ state_vector) - 0.25

    def example_vote(self, state_vector: np.ndarray, question: Question) -> float:
        """Mean similarity to the nearest positive examples minus that to the nearest negative
        ones (0 when the question has no examples of both kinds)."""
        positives, negatives = self._example_matrices(question, state_vector)
        if not (len(positives) and len(negatives)):
            return 0.0
        k = self.params.k_examples
        return _top_mean(positives @ state_vector, k) - _top_mean(negatives @ state_vector, k)

    def _option_matrix(self, question: Question) -> tuple[list[str], np.ndarray]:
        """A choice or score question's options and their texts' matrix, kept per question when its
        criteria cannot change (a read-only mapping or a tuple, as the policy's route is): the
        route's texts were written and hashed anew on every turn."""
        criteria = question.criteria
        fixed = isinstance(criteria, (MappingProxyType, tuple))
        if fixed:
            entry = self._option_cache.get(id(criteria))
            if entry is not None and entry[0] is criteria and entry[1] == question.type:
                return entry[2], entry[3]
        options = question.options
        if question.type == "choice" and isinstance(criteria, Mapping):
            texts = [f"{k}: {v}" if v else k for k, v in criteria.items()]
        else:
            texts = options
        matrix = self._vectors(texts)
        if fixed:
            if len(self._option_cache) >= _STACKED_MAX:
                self._option_cache.clear()
            self._option_cache[id(criteria)] = (
                criteria,
                question.type,
                options,
                matrix,
            )  # held: id not reused
        return options, matrix

    def _example_matrices(
        self, question: Question, state_vector: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`example_vectors`, kept per question (by its examples tuple) and, for a float64
        state, already in float64: the product is the same as float32 examples times it (numpy
        casts them first), without sorting the examples by label and casting them on every turn
        (a third of the gate's time, measured with ``bench latency``)."""
        dtype = getattr(state_vector, "dtype", None)
        if dtype != np.float64 and dtype != np.float32:
            return self.example_vectors(question)
        examples = question.examples
        entry = self._example_cache.get(id(examples))
        if entry is None or entry[0] is not examples:
            positives, negatives = self.example_vectors(question)
            wide = (positives.astype(np.float64), negatives.astype(np.float64))
            for matrix in wide:
                matrix.flags.writeable = False
            entry = (examples, (positives, negatives), wide)
            if len(self._example_cache) >= _STACKED_MAX:
                self._example_cache.clear()
            self._example_cache[id(examples)] = entry  # the tuple is held: its id is not reused
        return entry[2] if dtype == np.float64 else entry[1]

    def gate_features(self, state_vector: np.ndarray, question: Question) -> np.ndarray:
        """What the gate head reads (:data:`~recallwise.deciders.heads.GATE_FEATURES`)."""
        vector = np.asarray(state_vector, dtype=np.float32)
        return np.append(vector, np.float32(self.example_vote(vector, question)))

    def _noul(self, state_vector: np.ndarray, question: Question) -> float:
        return _sigmoid(self.params.noul_scale * self.gate_score(state_vector, question))

    def _judge_terms(self, state_vector: np.ndarray, subject_vectors: np.ndarray) -> JudgeTerms:
        """The judge's terms of each subject (rows of ``subject_vectors``), float64."""
        p = self.params
        # the product in float32 (the vectors' own precision), the terms from it in float64: a
        # float64 copy of 60 records' vectors was a fresh 180 KB each turn
        state = np.asarray(state_vector, dtype=np.float32)
        cosine = (np.asarray(subject_vectors, dtype=np.float32) @ state).astype(np.float64)
        terms = self.record_terms(subject_vectors)
        domains = len(self._domain_matrix()[1])
        typical, affinity, kinds = terms[:, 0], terms[:, 1 : 1 + domains], terms[:, 1 + domains :]
        # How well the memory fits the life domains the message is about, relative to how well
        # it fits domains in general: "dinner" reaches "peanut allergy" through food.
        state_domains = _softmax_rows(self.domain_affinity(state[None, :]), p.domain_temperature)[0]
        # the sum over the count is what mean() computes (one reduction, one division), less its overhead
        centred = affinity - affinity.sum(axis=1, keepdims=True) / affinity.shape[1]
        domain = centred @ state_domains
        bears = np.zeros_like(cosine)
        if p.constraint_weight and len(cosine):
            # a record of a kind, on a request the kind bears on: both memberships near 1
            matrices = self._constraint_matrices()
            requests = prototype_affinity(state[None, :], matrices.requests, matrices.request_rows)[0]
            steep = p.constraint_steepness
            on_request = 1.0 / (1.0 + np.exp(-steep * (requests - p.constraint_request_floor)))
            of_kind = 1.0 / (1.0 + np.exp(-steep * (kinds - p.constraint_record_floor)))
            bears = (of_kind * on_request[None, :]).max(axis=1)
        return JudgeTerms(cosine, typical, domain, state_domains, centred, bears)

    def record_terms(self, subject_vectors: np.ndarray) -> np.ndarray:
        """What the judge knows of each subject (rows of ``subject_vectors``) before any message:
        its typical similarity to unrelated messages, its affinity to each life domain, then to
        each kind of standing constraint (n x 1 + D + K, float64). Cached by vector
        (``record_cache_size`` rows, :class:`~recallwise.deciders.record_cache.RecordTermsCache`):
        the products with the banks
        are most of a judge's time, and a user's records recur across turns."""
        vectors = np.asarray(subject_vectors, dtype=np.float32)
        if not len(vectors):
            return np.zeros((0, 1 + len(domain_names()) + len(constraint_kinds())))
        # before the lock: these may embed the prototypes
        constraints = self._constraint_matrices()
        width = 1 + len(self._domain_matrix()[1]) + len(constraints.record_rows)
        with self._lock:
            terms, missing, keys = self._record_terms.get(vectors, width)
        if missing:
            fresh = vectors[missing]
            generic = fresh @ self._generic_bank().T
            k = min(self.params.debias_k, generic.shape[1])
            typical = np.partition(generic, generic.shape[1] - k, axis=1)[:, -k:].mean(axis=1)
            rows = np.column_stack(
                [
                    typical.astype(np.float64),
                    self.domain_affinity(fresh),
                    prototype_affinity(fresh, constraints.records, constraints.record_rows),
                ]
            )
            terms[missing] = rows
            with self._lock:
                self._record_terms.put(fresh, [keys[i] for i in missing], rows)
        return terms

    def forget_records(self) -> None:
        """Drop the cached judge terms of records (:meth:`record_terms`): the next turn judges
        its records as if it had never seen them (``recallwise bench latency`` times both)."""
        with self._lock:
            self._record_terms.clear()

    def judge_scores(self, state_vector: np.ndarray, subject_vectors: np.ndarray) -> np.ndarray:
        """Debiased similarities of the state to each subject (rows of ``subject_vectors``)."""
        t = self._judge_terms(state_vector, subject_vectors)
        return self._ranking(t) + self.params.constraint_weight * t.bears

    def _ranking(self, t: JudgeTerms) -> np.ndarray:
        """The judge's ranking score from its terms, without lexical evidence and without the
        standing-constraint term (the gap is measured on it, below)."""
        p = self.params
        return np.asarray(t.cosine - p.debias_weight * t.typical + p.domain_weight * t.domain)

    def judge_features(
        self,
        state_vector: np.ndarray,
        subject_vectors: np.ndarray,
        lexical: np.ndarray | None = None,
        *,
        domains: bool = True,
        need: float | None = None,
        reads_need: bool = True,
    ) -> np.ndarray:
        """The judge head's features of each subject (one row each, :data:`JUDGE_FEATURES`):
        score, gap, (``reads_need``) the turn's ``need`` for memory as log-odds
        (:func:`~recallwise.deciders.heads.need_feature`), then (``domains``) the message's domain
        distribution times the subject's centred domain affinities (D x D, row-major: the message's
        domain first)."""
        p = self.params
        t = self._judge_terms(state_vector, subject_vectors)
        state_domains, centred = t.state_domains, t.centred
        lex = np.zeros_like(t.cosine) if lexical is None else np.asarray(lexical, dtype=np.float64)
        ranked = self._ranking(t) + p.lexical_weight * lex
        score = ranked + p.constraint_weight * t.bears
        # A standing constraint is kept beside the request's own records, not instead of them:
        # the gap is to the best record without the term, and 0 at most, so the term lifts the
        # records it bears on and leaves every other record's features as they were (with the
        # term in the best, "What should I pack for Mexico City?" lifted the vegan diet and the
        # gap dropped the trip records: calib judge requests right kept 0.819 -> 0.785).
        gap = np.minimum(score - ranked.max(), 0.0) if len(score) else score
        columns = [score, gap]
        if reads_need:
            columns.append(np.full(len(score), need_feature(need)))
        if domains:
            columns.append((state_domains[None, :, None] * centred[:, None, :]).reshape(len(score), -1))
        if not len(score):
            return np.zeros((0, 2 + int(reads_need) + (len(state_domains) ** 2 if domains else 0)))
        return np.column_stack(columns)

    def _judge(
        self,
        state_vector: np.ndarray,
        questions: Mapping[str, Question],
        hints: DecisionHints,
        head: SpaceWeights | None = None,
    ) -> dict[str, Answer]:
        names = list(questions)
        given = hints.subject_vectors
        unknown = [n for n in names if n not in given]
        if unknown:
            vectors = {n: given[n] for n in names if n in given}
            # Not cached: subjects are memory records, an unbounded set (wordings are cached).
            embedded = self.embedder.embed([questions[n].subject or "" for n in unknown])
            vectors.update(zip(unknown, embedded, strict=True))
            matrix = np.array([vectors[n] for n in names])  # as np.stack, in one C call
        else:  # the policy's turn: every record came with its vector
            matrix = np.array([given[n] for n in names])
        if head is not None and all(questions[n].role == "judge" for n in names):
            lexical = np.array([hints.subject_lexical.get(n, 0.0) for n in names], dtype=np.float64)
            # a head fitted with the life-domain table reads it unless told not to (episodic
            # memories), and then reads its block as zeros; one fitted without it never needs it
            judge_head = self.heads.get("judge")
            reads_need = judge_head is not None and judge_head.reads_need
            table = judge_head is not None and judge_head.reads_domains
            features = self.judge_features(
                state_vector,
                matrix,
                lexical,
                domains=table and self.params.judge_domain_table,
                need=hints.need,
                reads_need=reads_need,
            )
            if features.shape[1] < head.inputs:
                features = np.pad(features, ((0, 0), (0, head.inputs - features.shape[1])))
            logits = head.logits(features)
            return dict(zip(names, (1.0 / (1.0 + np.exp(-logits))).tolist(), strict=True))
        # float64 from here: in float32 the logistic below rounds to exactly 1.0 for a debiased
        # score above ~0.64, which half the LoCoMo questions' best records reach, and the keep
        # rule then orders those ties by search position instead of by the judge. (A hybrid
        # search's lexical scores used to promote the sum to float64 by accident; a dense
        # search or a foreign store without BM25 did not.)
        scores = self.judge_scores(state_vector, matrix).astype(np.float64)
        if self.params.lexical_weight and hints.subject_lexical:
            lexical = np.array([hints.subject_lexical.get(n, 0.0) for n in names])
            scores = scores + self.params.lexical_weight * lexical
        p = self.params
        probs = 1.0 / (1.0 + np.exp(-p.judge_scale * (scores - p.judge_centre)))
        return dict(zip(names, probs.tolist(), strict=True))

    def _options(self, state_vector: np.ndarray, question: Question) -> Answer:
        options, matrix = self._option_matrix(question)
        sims = matrix @ state_vector
        logits = sims / self.params.option_temperature
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        best = int(np.argmax(probs))
        if question.type == "choice":
            return ChoiceAnswer(
                options[best], {o: float(v) for o, v in zip(options, probs, strict=True)}, float(probs[best])
            )
        return ScoreAnswer(best, options, [float(v) for v in probs], float(probs[best]))


class JudgeTerms(NamedTuple):
    """The judge's terms of each judged subject against one message (float64)."""

    #: the subject's similarity to the message
    cosine: np.ndarray
    #: its typical similarity to unrelated messages (subtracted: a generic record is close to all)
    typical: np.ndarray
    #: how well it fits the life domains the message is about, relative to domains in general
    domain: np.ndarray
    #: the message's distribution over the life domains (D)
    state_domains: np.ndarray
    #: each subject's centred life-domain affinities (n x D)
    centred: np.ndarray
    #: how much it is a standing constraint bearing on this request (0..1; 0 with the term off)
    bears: np.ndarray


class _ConstraintMatrices(NamedTuple):
    """The standing constraints' prototype vectors (float32) and their rows per kind."""

    records: np.ndarray
    record_rows: np.ndarray
    requests: np.ndarray
    request_rows: np.ndarray


def _without_vectors(hints: DecisionHints) -> DecisionHints:
    """``hints`` without vectors made by another model than the one answering."""
    return DecisionHints(
        subject_scores=dict(hints.subject_scores),
        subject_lexical=dict(hints.subject_lexical),
        need=hints.need,
    )


def _top_mean(values: np.ndarray, k: int) -> float:
    if values.size == 0:
        return 0.0
    k = min(k, values.size)
    # sum / k is what ndarray.mean computes (the same reduction, then one division), without its
    # Python-level overhead
    return float(np.partition(values, values.size - k)[-k:].sum() / k)
