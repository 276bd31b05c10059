"""Bring your own embedder from a local directory: ``onnx:/dir`` and ``sentence-transformers:/dir``.

Both read only the directory they are given; neither ever downloads anything.

- ``onnx:/dir``: ``model.onnx`` (a BERT-style encoder taking ``input_ids`` and
  ``attention_mask``, optionally ``token_type_ids``) and ``tokenizer.json`` (the ``tokenizers``
  format every Hugging Face fast tokenizer saves). Pooling follows the sentence-transformers
  layout: ``1_Pooling/config.json`` with ``pooling_mode_cls_token`` -> CLS, otherwise mean
  pooling; ``sentence_bert_config.json``'s ``max_seq_length`` caps the tokens (default 256).
  A model whose output is already one vector per text is used as it is. The directory is
  checked and one probe text embedded when the embedder is made, so a missing file or an
  output of the wrong shape is one :class:`~recallwise.errors.UsageError` naming the path.
- ``sentence-transformers:/dir``: a model saved with ``SentenceTransformer.save(dir)``; needs
  the extra ``[sentence-transformers]`` (torch). Loaded with ``local_files_only=True`` and the
  Hugging Face offline switches set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UsageError
from ..extras import require_extra
from ..text import clean_text
from .onnx_minilm import OnnxSentenceEmbedder, Pooling

__all__ = ["SentenceTransformersEmbedder", "onnx_directory", "sentence_transformers_directory"]

DEFAULT_MAX_LENGTH = 256


def _directory(kind: str, argument: str) -> Path:
    path = Path(argument).expanduser()
    if not path.exists():
        raise UsageError(f"{kind} embedder: {str(path)!r}: no such directory")
    if not path.is_dir():
        raise UsageError(f"{kind} embedder: {str(path)!r} is not a directory")
    return path.resolve()


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{str(path)!r}: not a readable JSON file ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{str(path)!r}: expected a JSON object")
    return data


def _pooling(directory: Path) -> Pooling:
    config_path = directory / "1_Pooling" / "config.json"
    if not config_path.is_file():
        return "mean"
    config = _read_json(config_path)
    if config.get("pooling_mode_cls_token"):
        return "cls"
    if config.get("pooling_mode_mean_tokens", True):
        return "mean"
    modes = sorted(k for k, v in config.items() if k.startswith("pooling_mode") and v)
    raise UsageError(
        f"{str(config_path)!r}: pooling {', '.join(modes) or 'none'} is not supported (mean or CLS)"
    )


def _max_length(directory: Path) -> int:
    config_path = directory / "sentence_bert_config.json"
    if config_path.is_file():
        value = _read_json(config_path).get("max_seq_length")
        if isinstance(value, int) and value > 0:
            return value
    return DEFAULT_MAX_LENGTH


def _tokenizer_factory(path: Path) -> Any:
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # the tokenizers library raises plain Exceptions for a bad file
        raise UsageError(f"{str(path)!r}: not a tokenizers tokenizer.json ({exc})") from None
    vocab = tokenizer.get_vocab()
    pad_id = next((vocab[t] for t in ("[PAD]", "<pad>", "<PAD>") if t in vocab), 0)
    pad_token = next((t for t in ("[PAD]", "<pad>", "<PAD>") if t in vocab), "[PAD]")

    def make(max_length: int) -> Any:
        tokenizer.enable_truncation(max_length=max_length)
        tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token)
        return tokenizer

    return make


def onnx_directory(argument: str) -> OnnxSentenceEmbedder:
    """``onnx:/dir``: checked, loaded and probed now (see the module docs)."""
    directory = _directory("onnx", argument)
    missing = [name for name in ("model.onnx", "tokenizer.json") if not (directory / name).is_file()]
    if missing:
        raise UsageError(
            f"onnx embedder directory {str(directory)!r} has no {' and no '.join(missing)} "
            "(it needs model.onnx and tokenizer.json)"
        )
    model_path = directory / "model.onnx"
    embedder = OnnxSentenceEmbedder(
        f"onnx:{directory}",
        model_path,
        dimension=0,
        max_length=_max_length(directory),
        pooling=_pooling(directory),
        tokenizer=_tokenizer_factory(directory / "tokenizer.json"),
    )
    try:
        embedder._load()
    except UsageError:
        raise
    except Exception as exc:  # onnxruntime's own exception types: a file it cannot load
        raise UsageError(f"{str(model_path)!r}: onnxruntime cannot load it ({_one_line(exc)})") from None
    inputs = set(embedder._inputs)
    if not {"input_ids", "attention_mask"} <= inputs:
        raise UsageError(
            f"{str(model_path)!r} takes inputs {sorted(inputs)}; expected input_ids and attention_mask"
        )
    output = next(o for o in embedder._session.get_outputs() if o.name == embedder._output)
    if len(output.shape) not in (2, 3):
        raise UsageError(
            f"{str(model_path)!r}: output {output.name!r} has shape {output.shape}; expected "
            "(batch, tokens, hidden) or (batch, hidden)"
        )
    try:
        probe = embedder._embed_batch(["probe"])
    except Exception as exc:
        raise UsageError(
            f"{str(model_path)!r}: running it on a probe text failed ({_one_line(exc)})"
        ) from None
    if probe.ndim != 2 or probe.shape[0] != 1 or probe.shape[1] < 1 or not np.isfinite(probe).all():
        raise UsageError(
            f"{str(model_path)!r}: output {output.name!r} gave shape {probe.shape} for one text; expected "
            "(1, hidden) after pooling, finite"
        )
    embedder.dimension = int(probe.shape[1])
    return embedder


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


class SentenceTransformersEmbedder:
    """A local sentence-transformers model (``sentence-transformers:/dir``); never downloads."""

    def __init__(self, directory: Path, model: Any) -> None:
        self.name = f"sentence-transformers:{directory}"
        self.directory = directory
        self._model = model
        dimension = model.get_sentence_embedding_dimension()
        if not dimension:
            dimension = int(np.asarray(model.encode(["probe"])).shape[1])
        self.dimension = int(dimension)
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(
            [clean_text(t) for t in texts],
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def sentence_transformers_directory(argument: str) -> SentenceTransformersEmbedder:
    """``sentence-transformers:/dir``: the model saved in ``dir``, loaded offline."""
    directory = _directory("sentence-transformers", argument)
    if not (directory / "modules.json").is_file() and not (directory / "config.json").is_file():
        raise UsageError(
            f"sentence-transformers embedder directory {str(directory)!r} has no modules.json or "
            "config.json (save the model there with SentenceTransformer.save)"
        )
    # Never reach a model hub: a local path must load from the disk or fail.
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[var] = "1"
    require_extra("sentence-transformers", "embedder 'sentence-transformers:'")
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(str(directory), device="cpu", local_files_only=True)
    except Exception as exc:
        raise UsageError(f"sentence-transformers cannot load {str(directory)!r} ({_one_line(exc)})") from None
    return SentenceTransformersEmbedder(directory, model)
