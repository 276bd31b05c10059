"""``systemone``: any server speaking ``POST {url}/v1/systemone``.

strands-decider's ``serve``, ``sparrow-decider serve``, opendecider and TypeSafe's own API
all take ``{state, model, questions}`` and answer ``{model, answers, usage, latency_ms?}``.
One call carries every question about one state.

Options (``make_decider("systemone", ...)``, CLI flags, or environment variables):

- ``url`` (``--url``, ``RECALLGATE_SYSTEMONE_URL``): the server's base URL, with or without
  the ``/v1/systemone`` path;
- ``api_key`` (``RECALLGATE_SYSTEMONE_KEY``): sent as ``Authorization: Bearer ...`` when set;
- ``model`` (``RECALLGATE_SYSTEMONE_MODEL``): the request's ``model`` field (strands-decider
  and TypeSafe require one; sparrow-decider ignores it), default ``"default"``;
- ``timeout`` / ``connect_timeout`` (seconds, default 10 / 2), ``retries`` (2), ``pool_size`` (8);
- ``max_state_chars`` (default 16000, about strands-decider's 4,096-token window): a longer
  state is cut to its start, with a warning in ``last_warnings`` and the log.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Mapping
from typing import Any

from ..errors import UsageError
from .http import HttpSettings, JsonPoster, JsonResponse, StateLimiter
from .questions import Answer, Question, validate_request
from .wire import answers_from_body, systemone_request

__all__ = ["SystemOneDecider"]

DEFAULT_MAX_STATE_CHARS = 16_000


class SystemOneDecider:
    """A decider on a remote systemone server (see module docs for the options)."""

    name = "systemone"
    path = "/v1/systemone"
    url_env = "RECALLGATE_SYSTEMONE_URL"
    key_env = "RECALLGATE_SYSTEMONE_KEY"
    model_env = "RECALLGATE_SYSTEMONE_MODEL"
    default_model: str | None = "default"
    default_url: str | None = None
    #: A repeated request costs nothing here, so a request on a dropped keep-alive
    #: connection may be sent again.
    retry_disconnects = True

    def __init__(
        self,
        url: str | None = None,
        *,
        api_key: str | None = None,
        model: str | None = None,
        timeout: float = 10.0,
        connect_timeout: float = 2.0,
        retries: int = 2,
        pool_size: int = 8,
        max_state_chars: int | None = DEFAULT_MAX_STATE_CHARS,
    ) -> None:
        base = url or os.environ.get(self.url_env) or self.default_url
        if not base:
            raise UsageError(f"the {self.name} decider needs a URL: pass --url URL or set {self.url_env}")
        if not base.startswith(("http://", "https://")):
            raise UsageError(f"{self.name}: URL must start with http:// or https://, got {base!r}")
        self.endpoint = self._endpoint(base)
        self.api_key = api_key if api_key is not None else os.environ.get(self.key_env)
        self.model = model or os.environ.get(self.model_env) or self.default_model
        self.max_state_chars = max_state_chars
        try:
            settings = HttpSettings(
                total_timeout=float(timeout),
                connect_timeout=float(connect_timeout),
                retries=int(retries),
                retry_disconnects=self.retry_disconnects,
                pool_size=int(pool_size),
            )
        except ValueError as exc:
            raise UsageError(f"{self.name}: {exc}") from exc
        self._http = JsonPoster(self.name, settings)
        self._limiter = StateLimiter()
        self._usage_lock = threading.Lock()
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        #: Server-reported latency of the last call (``latency_ms`` in the body), if any.
        self.last_server_latency_ms: float | None = None

    # ---- configuration ------------------------------------------------------------------
    def _endpoint(self, base: str) -> str:
        base = base.rstrip("/")
        return base if base.endswith(self.path) else base + self.path

    def _headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    @property
    def settings(self) -> HttpSettings:
        return self._http.settings

    @property
    def last_warnings(self) -> list[str]:
        """Warnings of this thread's last call (e.g. a truncated state)."""
        return self._limiter.last_warnings

    # ---- one call ------------------------------------------------------------------------
    def _prepare(
        self, state: str, questions: Mapping[str, Any]
    ) -> tuple[dict[str, Question], dict[str, Any]]:
        parsed = validate_request(state, questions)  # before any network call
        self._limiter.reset()
        state = self._limiter.limit(self.name, state, self.max_state_chars)
        return parsed, systemone_request(state, parsed, model=self.model)

    def _finish(self, parsed: Mapping[str, Question], response: JsonResponse) -> dict[str, Answer]:
        answers = answers_from_body(self.name, parsed, response.body)
        self._account(response.body)
        return answers

    def _account(self, body: Any) -> None:
        usage = body.get("usage") if isinstance(body, Mapping) else None
        latency = body.get("latency_ms") if isinstance(body, Mapping) else None
        with self._usage_lock:
            self.calls += 1
            if isinstance(usage, Mapping):
                self.input_tokens += _int(usage.get("input_tokens"))
                self.output_tokens += _int(usage.get("output_tokens"))
            self.last_server_latency_ms = _milliseconds(latency)

    def ask(self, state: str, questions: Mapping[str, Any]) -> dict[str, Answer]:
        """Answer every question about ``state`` in one POST."""
        parsed, payload = self._prepare(state, questions)
        response = self._http.post(self.endpoint, payload, self._headers())
        return self._finish(parsed, response)

    async def aask(self, state: str, questions: Mapping[str, Any]) -> dict[str, Answer]:
        """The async twin of :meth:`ask` (httpx.AsyncClient)."""
        parsed, payload = self._prepare(state, questions)
        response = await self._http.apost(self.endpoint, payload, self._headers())
        return self._finish(parsed, response)

    def usage(self) -> dict[str, Any]:
        """Calls and tokens so far (as reported by the server)."""
        with self._usage_lock:
            return {
                "calls": self.calls,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
            }

    def close(self) -> None:
        self._http.close()

    async def aclose(self) -> None:
        await self._http.aclose()

    def __enter__(self) -> SystemOneDecider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.endpoint!r}, model={self.model!r})"


def _int(value: Any) -> int:
    """A token count from a usage field: 0 unless it is a finite number (not a bool, NaN or inf)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, int):
        return value
    return int(value) if math.isfinite(value) else 0


def _milliseconds(value: Any) -> float | None:
    """A server-reported latency: None unless it is a finite number a float can hold."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        ms = float(value)
    except OverflowError:  # an int past the float range
        return None
    return ms if math.isfinite(ms) else None
