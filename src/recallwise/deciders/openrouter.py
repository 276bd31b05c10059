"""``openrouter``: Jev (TypeSafe's System One model) through OpenRouter's decisions endpoint.

``POST https://openrouter.ai/api/alpha/decisions`` with ``{model, state, questions}`` answers
``{id, model, provider, answers, usage: {input_tokens, output_tokens, cost}}``: the systemone
shape plus a billed cost, which this backend adds up in ``usage()["cost_usd"]``. Errors arrive as
``{"error": {"code", "message", "metadata"?}}`` with the HTTP status (401 bad key, 402 no
credit, 429 rate limit, 502/503 provider down).

Options: ``api_key`` (default ``OPENROUTER_API_KEY``), ``model`` (``RECALLWISE_OPENROUTER_MODEL``,
default ``~typesafe/jev-latest``), ``url`` (``--url``, ``RECALLWISE_OPENROUTER_URL``: the full
endpoint, for a proxy or a test server), ``timeout`` (default 15 s), ``connect_timeout``,
``retries``, ``pool_size``, ``max_state_chars`` (default 32000), ``transport``. Because every
request is billed, only requests that never reached the server are retried.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

from ..errors import UsageError
from ..http import finite_number
from .systemone import SystemOneDecider, SystemOneKeywords

__all__ = ["OpenRouterDecider"]

DEFAULT_URL = "https://openrouter.ai/api/alpha/decisions"
DEFAULT_MODEL = "~typesafe/jev-latest"
#: the keywords' defaults where they are not a systemone server's: a billed service farther away is
#: waited for longer, and its model reads a larger state
DEFAULTS = SystemOneKeywords(timeout=15.0, connect_timeout=3.0, max_state_chars=32_000)


class OpenRouterDecider(SystemOneDecider):
    """Jev via OpenRouter; adds up ``usage.cost`` in ``usage()["cost_usd"]``."""

    name = "openrouter"
    path = "/api/alpha/decisions"
    url_env = "RECALLWISE_OPENROUTER_URL"
    key_env = "OPENROUTER_API_KEY"
    model_env = "RECALLWISE_OPENROUTER_MODEL"
    default_model = DEFAULT_MODEL
    default_url = DEFAULT_URL
    retry_disconnects = False  # a request the server may have answered has been billed

    def __init__(self, url: str | None = None, **options: Unpack[SystemOneKeywords]) -> None:
        super().__init__(url, **(DEFAULTS | options))
        if not self.api_key:
            raise UsageError("the openrouter decider needs an API key: set OPENROUTER_API_KEY")

    def _endpoint(self, base: str) -> str:
        return base.rstrip("/")  # the full endpoint: OpenRouter's path is not /v1/systemone

    def _headers(self) -> dict[str, str]:
        return {**super()._headers(), "x-title": "recallwise"}

    def _reported_usage(self, reported: Any) -> dict[str, float]:
        usage = super()._reported_usage(reported)
        cost = reported.get("cost") if isinstance(reported, Mapping) else None
        usage["cost_usd"] = finite_number(cost) or 0.0
        return usage

    def usage(self) -> dict[str, float]:
        out = super().usage()
        out["cost_usd"] = float(out.get("cost_usd", 0.0))  # dollars, even when nothing was billed
        return out

    @property
    def cost_usd(self) -> float:
        """What the calls so far cost, as billed by OpenRouter."""
        return float(self.usage()["cost_usd"])

    def __repr__(self) -> str:
        return f"OpenRouterDecider({self.endpoint!r}, model={self.model!r})"
