"""``systemone``: any server speaking ``POST {url}/v1/systemone``.

strands-decider's ``serve``, ``sparrow-decider serve``, opendecider and TypeSafe's own API
all take ``{state, model, questions}`` and answer ``{model, answers, usage, latency_ms?}``.
One call carries every question about one state.

Options (``make_decider("systemone", ...)``, CLI flags, or environment variables):

- ``url`` (``--url``, ``RECALLWISE_SYSTEMONE_URL``): the server's base URL, with or without
  the ``/v1/systemone`` path;
- ``api_key`` (``RECALLWISE_SYSTEMONE_KEY``): sent as ``Authorization: Bearer ...`` when set;
- ``model`` (``RECALLWISE_SYSTEMONE_MODEL``): the request's ``model`` field (strands-decider
  and TypeSafe require one; sparrow-decider ignores it), default ``"default"``;
- ``timeout`` / ``connect_timeout`` (seconds, default 10 / 2), ``retries`` (2), ``pool_size`` (8);
- ``max_state_chars`` (default 16000, about strands-decider's 4,096-token window): a longer
  state is cut to its start, with a warning in the call's ``Decision.warnings``;
- ``transport``: an ``httpx.BaseTransport`` to send through instead of the network.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, TypedDict

import httpx

from ..errors import UsageError
from ..http import HttpSettings, JsonClient, token_count
from .base import BaseDecider, Capabilities, DecisionHints, Reply
from .questions import Question
from .wire import answers_from_body, systemone_request

__all__ = ["SystemOneDecider", "SystemOneKeywords"]

DEFAULT_MAX_STATE_CHARS = 16_000


class SystemOneKeywords(TypedDict, total=False):
    """The keywords of :class:`SystemOneDecider` after ``url``: the ``**options`` of a decider on
    another service of the same shape (:class:`~recallwise.deciders.openrouter.OpenRouterDecider`),
    which sets its own defaults."""

    api_key: str | None
    model: str | None
    timeout: float
    connect_timeout: float
    retries: int
    pool_size: int
    max_state_chars: int | None
    transport: httpx.BaseTransport | None


class SystemOneDecider(BaseDecider):
    """A decider on a remote systemone server (see module docs for the options)."""

    name = "systemone"
    capabilities = Capabilities(local=False)
    path = "/v1/systemone"
    url_env = "RECALLWISE_SYSTEMONE_URL"
    key_env = "RECALLWISE_SYSTEMONE_KEY"
    model_env = "RECALLWISE_SYSTEMONE_MODEL"
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
        transport: httpx.BaseTransport | None = None,
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
        settings = HttpSettings.for_client(
            self.name,
            timeout=timeout,
            connect_timeout=connect_timeout,
            retries=retries,
            pool_size=pool_size,
            retry_disconnects=self.retry_disconnects,
        )
        self._http = JsonClient(self.name, settings, transport=transport)

    def _endpoint(self, base: str) -> str:
        base = base.rstrip("/")
        return base if base.endswith(self.path) else base + self.path

    def _headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    @property
    def settings(self) -> HttpSettings:
        return self._http.settings

    def _answer(self, state: str, questions: Mapping[str, Question], hints: DecisionHints) -> Reply:
        """Every question about ``state`` in one POST."""
        payload = systemone_request(state, questions, model=self.model)
        body = self._http.post(self.endpoint, payload, self._headers()).body
        answers = answers_from_body(self.name, questions, body)
        return Reply(answers, self._reported_usage(body.get("usage")))

    def _reported_usage(self, reported: Any) -> dict[str, float]:
        """Tokens as reported by the server (0 when it reports none or nonsense)."""
        usage = reported if isinstance(reported, Mapping) else {}
        return {
            "input_tokens": token_count(usage.get("input_tokens")),
            "output_tokens": token_count(usage.get("output_tokens")),
        }

    def usage(self) -> dict[str, float]:
        """Calls and tokens so far (as reported by the server)."""
        return {"calls": 0, "input_tokens": 0, "output_tokens": 0, **super().usage()}

    def close(self) -> None:
        self._http.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.endpoint!r}, model={self.model!r})"
