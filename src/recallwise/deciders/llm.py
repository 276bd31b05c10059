"""``llm``: any OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp server, OpenAI itself).

An LLM writes text, so each typed question becomes a prompt whose answer is one token, and
the answer is read from the **log-probabilities** of the allowed tokens rather than from
what the model happened to sample:

- ``noul``: "answer yes or no" with the criteria; P(true) = P(yes) / (P(yes) + P(no));
- ``choice``: options labelled ``A``, ``B``, ... (``1``, ``2``, ... past 26); the
  distribution is the probability mass on each label, renormalised;
- ``score``: levels numbered ``0`` (lowest) to ``n-1``; likewise over the digits.

Labels missing from the server's ``top_logprobs`` get probability 0; when none of the
allowed tokens is among them the answer is an error, never a guess.

Two modes: ``chat`` (default; ``POST /v1/chat/completions``, one request per question, sent
concurrently up to ``concurrency``) and ``completions`` (``POST /v1/completions`` with a
list of prompts, one request for every question, where the server takes a prompt list, as
vLLM does).

Options: ``url`` (``--url``, ``RECALLWISE_LLM_URL``; e.g. ``http://localhost:11434/v1``),
``model`` (``RECALLWISE_LLM_MODEL``), ``api_key`` (``RECALLWISE_LLM_API_KEY``), ``mode``,
``concurrency`` (8), ``top_logprobs`` (20), ``timeout`` (30 s), ``connect_timeout`` (2 s),
``retries`` (2), ``max_state_chars`` (8000), ``transport`` (an ``httpx.BaseTransport``).
"""

from __future__ import annotations

import math
import os
import string
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from ..errors import DeciderBadResponse, UsageError
from ..http import HttpSettings, JsonClient, backend_error, token_count
from .base import BaseDecider, Capabilities, DecisionHints, Reply
from .questions import Answer, ChoiceAnswer, Question, ScoreAnswer

__all__ = ["LLMDecider", "Prompt", "build_prompt", "distribution"]

SYSTEM = (
    "You answer one question about a piece of text (the state) for a software system. "
    "Reply with exactly one of the allowed answers and nothing else."
)
_STRIP = string.whitespace + string.punctuation.replace("-", "")
#: What reading a malformed answer can raise: a missing key or row, a row that is not an
#: object (``'str'.get``), a log-probability that is not a number or too large for a float.
_SHAPE_ERRORS = (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError)


@dataclass(frozen=True)
class Prompt:
    """One question as a prompt: the user text and the answer tokens it allows, in order."""

    text: str
    labels: tuple[str, ...]


def _labels(n: int) -> tuple[str, ...]:
    if n <= 26:
        return tuple(string.ascii_uppercase[:n])
    return tuple(str(i + 1) for i in range(n))


def build_prompt(state: str, question: Question) -> Prompt:
    """The prompt for one question about ``state`` and the answer labels it allows."""
    head = f"<state>\n{state}\n</state>\n\nQuestion: {question.instructions.strip()}\n"
    if question.type == "noul":
        criteria = question.criteria if isinstance(question.criteria, Mapping) else {}
        lines = [head]
        if criteria.get("true"):
            lines.append(f'Answer "yes" if: {criteria["true"]}\n')
        if criteria.get("false"):
            lines.append(f'Answer "no" if: {criteria["false"]}\n')
        lines.append("Answer with one word: yes or no.")
        return Prompt("".join(lines), ("yes", "no"))
    options = question.options
    labels = (
        _labels(len(options)) if question.type == "choice" else tuple(str(i) for i in range(len(options)))
    )
    if question.type == "choice":
        descriptions = question.criteria if isinstance(question.criteria, Mapping) else {}
        rows = [
            f"{label}. {name}" + (f" - {descriptions.get(name)}" if descriptions.get(name) else "")
            for label, name in zip(labels, options, strict=True)
        ]
        tail = (
            "Answer with the letter of the one best option."
            if labels[0] == "A"
            else ("Answer with the number of the one best option.")
        )
        return Prompt(head + "Options:\n" + "\n".join(rows) + "\n" + tail, labels)
    rows = [f"{label}. {level}" for label, level in zip(labels, options, strict=True)]
    return Prompt(
        head + "Levels, lowest first:\n" + "\n".join(rows) + "\nAnswer with the number of the level.",
        labels,
    )


def _norm(token: str) -> str:
    return token.strip(_STRIP).lower()


def distribution(candidates: Iterable[tuple[str, float]], labels: tuple[str, ...], where: str) -> list[float]:
    """Probabilities of ``labels`` from (token, logprob) pairs, renormalised over the labels.

    Variants of a label (" yes", "Yes", "A.", "(A") add up. A log-probability that is not
    finite or is above 0 (a probability above 1, which no model gives) is skipped, as if the
    token were not there. Raises when no label is left.
    """
    wanted = {_norm(label): i for i, label in enumerate(labels)}
    mass = [0.0] * len(labels)
    seen = []
    for token, logprob in candidates:
        seen.append(token)
        i = wanted.get(_norm(token))
        if i is not None and math.isfinite(logprob) and logprob <= 0.0:
            mass[i] += math.exp(logprob)
    total = sum(mass)
    if total <= 0.0:
        raise backend_error(
            DeciderBadResponse,
            f"llm: {where}: none of the allowed answers {list(labels)} among the model's top tokens "
            f"{seen[:10]}",
            backend_kind="no_answer_token",
        )
    return [m / total for m in mass]


def _index(choice: Any) -> int:
    """A completion's ``index`` for ordering; 0 when it is missing or not an int."""
    index = choice.get("index", 0) if isinstance(choice, Mapping) else 0
    return index if isinstance(index, int) and not isinstance(index, bool) else 0


def _answer(question: Question, probs: list[float]) -> Answer:
    n = len(probs)
    if question.type == "noul":
        return probs[0]  # labels are ("yes", "no")
    best = max(range(n), key=lambda i: probs[i])
    if question.type == "choice":
        options = question.options
        confidence = (n * probs[best] - 1.0) / (n - 1)
        return ChoiceAnswer(
            options[best], dict(zip(options, probs, strict=True)), min(1.0, max(0.0, confidence))
        )
    expected = sum(i * p for i, p in enumerate(probs))
    spread = math.sqrt(sum(((i - expected) ** 2) * p for i, p in enumerate(probs)))
    confidence = 1.0 - spread / ((n - 1) / 2)
    return ScoreAnswer(best, question.options, probs, min(1.0, max(0.0, confidence)))


class LLMDecider(BaseDecider):
    """Typed questions answered by an OpenAI-compatible LLM from token log-probabilities."""

    name = "llm"
    capabilities = Capabilities(local=False)

    def __init__(
        self,
        url: str | None = None,
        *,
        model: str | None = None,
        api_key: str | None = None,
        mode: Literal["chat", "completions"] = "chat",
        concurrency: int = 8,
        top_logprobs: int = 20,
        timeout: float = 30.0,
        connect_timeout: float = 2.0,
        retries: int = 2,
        max_state_chars: int | None = 8_000,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        base = url or os.environ.get("RECALLWISE_LLM_URL")
        if not base:
            raise UsageError("the llm decider needs a URL: --url http://host:port/v1 or RECALLWISE_LLM_URL")
        if not base.startswith(("http://", "https://")):
            raise UsageError(f"llm: URL must start with http:// or https://, got {base!r}")
        if mode not in ("chat", "completions"):
            raise UsageError(f"llm: mode must be 'chat' or 'completions', got {mode!r}")
        if int(concurrency) < 1 or int(top_logprobs) < 2:
            raise UsageError("llm: concurrency must be >= 1 and top_logprobs >= 2")
        self.mode = mode
        self.endpoint = self._endpoint(base.rstrip("/"), mode)
        self.model = model or os.environ.get("RECALLWISE_LLM_MODEL")
        self.api_key = api_key if api_key is not None else os.environ.get("RECALLWISE_LLM_API_KEY")
        self.concurrency = int(concurrency)
        self.top_logprobs = int(top_logprobs)
        self.max_state_chars = max_state_chars
        settings = HttpSettings.for_client(
            "llm",
            timeout=timeout,
            connect_timeout=connect_timeout,
            retries=retries,
            pool_size=self.concurrency,
        )
        self._http = JsonClient(self.name, settings, transport=transport)
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    @staticmethod
    def _endpoint(base: str, mode: str) -> str:
        tail = "/chat/completions" if mode == "chat" else "/completions"
        if base.endswith(tail):
            return base
        if base.endswith("/v1"):
            return base + tail
        return base + "/v1" + tail

    def _headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    # ---- request bodies and answers ------------------------------------------------------
    def _chat_body(self, prompt: Prompt) -> dict[str, Any]:
        body: dict[str, Any] = {
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt.text}],
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
        }
        if self.model:
            body["model"] = self.model
        return body

    def _completions_body(self, prompts: list[Prompt]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "prompt": [f"{SYSTEM}\n\n{p.text}\nAnswer:" for p in prompts],
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": self.top_logprobs,
        }
        if self.model:
            body["model"] = self.model
        return body

    def _chat_candidates(self, body: Any, where: str) -> list[tuple[str, float]]:
        try:
            first = body["choices"][0]["logprobs"]["content"][0]
            tops = first.get("top_logprobs") or [first]
            return [(str(t["token"]), float(t["logprob"])) for t in tops]
        except _SHAPE_ERRORS as exc:
            raise backend_error(
                DeciderBadResponse,
                f"llm: {where}: no token log-probabilities in the answer ({type(exc).__name__}: {exc}); "
                "does the server support logprobs/top_logprobs?",
                backend_kind="no_logprobs",
            ) from None

    def _completion_candidates(self, choice: Any, where: str) -> list[tuple[str, float]]:
        try:
            tops = choice["logprobs"]["top_logprobs"][0]
            if isinstance(tops, Mapping):
                return [(str(k), float(v)) for k, v in tops.items()]
            return [(str(t["token"]), float(t["logprob"])) for t in tops]
        except _SHAPE_ERRORS as exc:
            raise backend_error(
                DeciderBadResponse,
                f"llm: {where}: no token log-probabilities in the answer ({type(exc).__name__}: {exc})",
                backend_kind="no_logprobs",
            ) from None

    def _from_completions(
        self, questions: Mapping[str, Question], prompts: Mapping[str, Prompt], body: Any
    ) -> dict[str, Answer]:
        names = list(prompts)
        choices = body.get("choices") if isinstance(body, Mapping) else None
        if not isinstance(choices, list) or len(choices) != len(names):
            got = len(choices) if isinstance(choices, list) else 0
            raise backend_error(
                DeciderBadResponse,
                f"llm: {len(names)} prompts sent, {got} completions returned "
                "(does the server take a list of prompts? use mode='chat')",
                backend_kind="bad_answer",
            )
        ordered = sorted(choices, key=_index)
        out: dict[str, Answer] = {}
        for name, choice in zip(names, ordered, strict=True):
            where = f"question {name!r}"
            probs = distribution(self._completion_candidates(choice, where), prompts[name].labels, where)
            out[name] = _answer(questions[name], probs)
        return out

    # ---- one call ------------------------------------------------------------------------
    def _ask_one(self, name: str, question: Question, prompt: Prompt) -> tuple[Answer, Any]:
        """One chat request: the answer and the response body (for its usage)."""
        body = self._http.post(self.endpoint, self._chat_body(prompt), self._headers()).body
        where = f"question {name!r}"
        answer = _answer(question, distribution(self._chat_candidates(body, where), prompt.labels, where))
        return answer, body

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="recallwise-llm")
        return self._pool

    def _answer(self, state: str, questions: Mapping[str, Question], hints: DecisionHints) -> Reply:
        prompts = {name: build_prompt(state, q) for name, q in questions.items()}
        if self.mode == "completions":
            body = self._completions_body(list(prompts.values()))
            response = self._http.post(self.endpoint, body, self._headers()).body
            return Reply(self._from_completions(questions, prompts, response), _usage([response]))
        if len(prompts) == 1:
            ((name, prompt),) = prompts.items()
            results = {name: self._ask_one(name, questions[name], prompt)}
        else:
            futures = {
                name: self._executor().submit(self._ask_one, name, questions[name], prompt)
                for name, prompt in prompts.items()
            }
            results = {name: future.result() for name, future in futures.items()}
        answers = {name: answer for name, (answer, _) in results.items()}
        return Reply(answers, _usage([body for _, body in results.values()]))

    def usage(self) -> dict[str, float]:
        """Calls, HTTP requests and tokens so far (as reported by the server)."""
        return {"calls": 0, "requests": 0, "input_tokens": 0, "output_tokens": 0, **super().usage()}

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)
        self._http.close()

    def __repr__(self) -> str:
        return f"LLMDecider({self.endpoint!r}, model={self.model!r}, mode={self.mode!r})"


def _usage(bodies: list[Any]) -> dict[str, float]:
    """Requests and tokens of one call's responses (OpenAI's ``usage`` field names)."""
    input_tokens = output_tokens = 0
    for body in bodies:
        usage = body.get("usage") if isinstance(body, Mapping) else None
        if isinstance(usage, Mapping):
            input_tokens += token_count(usage.get("prompt_tokens"))
            output_tokens += token_count(usage.get("completion_tokens"))
    return {"requests": len(bodies), "input_tokens": input_tokens, "output_tokens": output_tokens}
