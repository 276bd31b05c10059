"""``strands-local``: strands-decider in-process from a local checkpoint directory.

strands-decider is a 2B-parameter decision model (an LLM torso with a pointer readout) that
answers the systemone questions; it needs torch (``pip install 'recallwise[strands-local]'``).
This backend **never downloads**: the checkpoint must be a local directory, and the Hugging
Face libraries run with ``HF_HUB_OFFLINE=1`` while it loads, so a checkpoint whose base model
is not already in the local Hugging Face cache (or named by a local path in its config)
fails with a clear error instead of fetching 4.5 GB.

Options: ``checkpoint`` (``RECALLWISE_STRANDS_CHECKPOINT``; ``--url`` may carry the path,
optionally as ``file://...``), ``device`` (``cpu``, ``cuda``, ``mps``; default
``RECALLWISE_STRANDS_DEVICE`` or ``cpu``). A state longer than the checkpoint's window is
cut by strands-decider itself; this backend counts the tokens first and records a warning.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import DeciderError, UsageError
from ..extras import require_extra
from .base import BaseDecider, Capabilities, DecisionHints, Reply
from .questions import Question
from .wire import answers_from_body

__all__ = ["StrandsLocalDecider", "find_checkpoint"]

CONFIG_FILES = ("strands_decider_config.json", "hobson_config.json")


def find_checkpoint(path: str | None) -> Path:
    """The checkpoint directory named by ``path`` (or the environment), checked to exist."""
    raw = path or os.environ.get("RECALLWISE_STRANDS_CHECKPOINT")
    if not raw:
        raise UsageError(
            "the strands-local decider needs a local checkpoint directory: "
            "set RECALLWISE_STRANDS_CHECKPOINT or pass --url /path/to/checkpoint"
        )
    if raw.startswith("file://"):
        raw = raw[len("file://") :]
    elif "://" in raw:
        raise UsageError(f"strands-local loads a local directory, not {raw!r}; it never downloads")
    directory = Path(raw).expanduser()
    if not directory.is_dir():
        raise UsageError(
            f"strands-local: checkpoint {str(directory)!r} is not a directory "
            "(a Hub id is not accepted: this backend never downloads)"
        )
    if not any((directory / name).is_file() for name in CONFIG_FILES):
        raise UsageError(
            f"strands-local: {str(directory)!r} holds no {' or '.join(CONFIG_FILES)}; "
            "is it a strands-decider checkpoint?"
        )
    return directory


@contextmanager
def _offline() -> Iterator[None]:
    """Hugging Face libraries may read their local cache but never fetch."""
    names = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")
    saved = {n: os.environ.get(n) for n in names}
    os.environ.update(dict.fromkeys(names, "1"))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class StrandsLocalDecider(BaseDecider):
    """strands-decider loaded from a local checkpoint; answers in-process."""

    name = "strands-local"
    #: In-process, but a forward pass takes seconds on a CPU: not ``local``, so the policy
    #: calls it on a worker thread under its deadline, as it does a remote backend.
    capabilities = Capabilities(local=False)

    def __init__(
        self, url: str | None = None, *, checkpoint: str | None = None, device: str | None = None
    ) -> None:
        self.checkpoint = find_checkpoint(checkpoint or url)
        self.device = device or os.environ.get("RECALLWISE_STRANDS_DEVICE") or "cpu"
        require_extra("strands-local", "the strands-local decider")
        from strands_decider.infer import EngineConfig, SystemOneEngine
        from strands_decider.modeling import StrandsDeciderModel

        config = {}
        for name in CONFIG_FILES:
            if (self.checkpoint / name).is_file():
                config = json.loads((self.checkpoint / name).read_text(encoding="utf-8"))
                break
        self.max_length = int(config.get("max_length", 0)) or None
        self.model = self.checkpoint.name
        try:
            with _offline():
                model = StrandsDeciderModel.load(str(self.checkpoint))
        except OSError as exc:
            raise UsageError(
                f"strands-local: cannot load {str(self.checkpoint)!r} offline ({exc}). Its base model "
                f"({config.get('base_model', '?')}) must be in the local Hugging Face cache or named "
                "by a local path in the checkpoint's config."
            ) from exc
        self._engine = SystemOneEngine(model, EngineConfig(device=self.device, model_name=self.model))
        self._lock = threading.Lock()  # strands-decider's engine is not safe under concurrent calls

    def _limit_state(self, state: str, warnings: list[str]) -> str:
        """Count the state's tokens: strands-decider cuts a state longer than its window itself."""
        state = super()._limit_state(state, warnings)
        tokenizer = getattr(self._engine, "tok", None)
        if not self.max_length or tokenizer is None:
            return state
        n = len(tokenizer(state, add_special_tokens=True)["input_ids"])
        if n > self.max_length:
            warnings.append(
                f"state is {n} tokens; the checkpoint's window is {self.max_length} "
                "(strands-decider cuts the state to fit)"
            )
        return state

    def _refused(self, exc: Exception) -> DeciderError:
        error = DeciderError(f"strands-local: {exc}")
        error.kind = "bad_request"
        return error

    def _answer(self, state: str, questions: Mapping[str, Question], hints: DecisionHints) -> Reply:
        from strands_decider.schema import SystemOneRequest

        body: dict[str, Any] = {"state": state, "questions": {n: q.to_wire() for n, q in questions.items()}}
        if "model" in set(getattr(SystemOneRequest, "model_fields", {})):
            body["model"] = self.model
        try:
            request = SystemOneRequest.model_validate(body)
            with self._lock:
                response = self._engine.evaluate(request)
        except ValueError as exc:  # pydantic's ValidationError, or the engine refusing the request
            raise self._refused(exc) from exc
        return Reply(answers_from_body(self.name, questions, response.model_dump()))

    def __repr__(self) -> str:
        return f"StrandsLocalDecider({str(self.checkpoint)!r}, device={self.device!r})"
