"""Shared HTTP plumbing for the decision backends that talk over the network.

One :class:`JsonPoster` per backend instance owns a pooled ``httpx.Client`` and (lazily) an
``httpx.AsyncClient``, both sized for the concurrency the backend uses. Every call has a
connect timeout and a total deadline; only transport failures that are safe to repeat are
retried (the connection was never made, or a pooled keep-alive connection was found closed
before any response byte), a bounded number of times and never past the deadline. Every
failure becomes one of the typed decider errors, carrying the backend's own error kind in
``backend_kind`` so the policy can fail open and count them:

- :class:`~recallgate.errors.DeciderUnavailable`: connection refused, DNS, HTTP 401/403/408/
  429/5xx (the backend is down, overloaded or refuses this key);
- :class:`~recallgate.errors.DeciderTimeout`: no complete answer within the deadline, HTTP 504;
- :class:`~recallgate.errors.DeciderBadResponse`: any other 4xx (the backend refused the
  request, e.g. HTTP 422), a body that is not JSON (truncated, HTML from a proxy), or an
  error object in a 200 body.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import DeciderBadResponse, DeciderError, DeciderTimeout, DeciderUnavailable

__all__ = [
    "HttpSettings",
    "JsonPoster",
    "JsonResponse",
    "StateLimiter",
    "backend_error",
    "error_from_body",
    "json_problem",
    "truncate_state",
]

log = logging.getLogger("recallgate.deciders")

#: Bytes of a failed response body quoted in an error message.
_QUOTE = 200


@dataclass(frozen=True)
class HttpSettings:
    """Timeouts, retries and pool size of one HTTP backend.

    ``total_timeout`` bounds a whole call (every attempt, every byte of the answer);
    ``connect_timeout`` bounds opening one connection. ``retries`` repeats only transport
    failures that are safe to repeat; ``retry_disconnects`` also repeats a request whose
    pooled connection was closed by the server before it answered, which is only safe for
    a backend where a repeated request costs nothing (a billed API sets it False).
    """

    total_timeout: float = 10.0
    connect_timeout: float = 2.0
    retries: int = 2
    retry_backoff: float = 0.05
    retry_disconnects: bool = True
    pool_size: int = 8

    def __post_init__(self) -> None:
        if self.total_timeout <= 0 or self.connect_timeout <= 0:
            raise ValueError("timeouts must be positive")
        if self.retries < 0 or self.pool_size < 1:
            raise ValueError("retries must be >= 0 and pool_size >= 1")


@dataclass
class JsonResponse:
    """A decoded JSON response: status, body and elapsed milliseconds."""

    status: int
    body: Any
    headers: Mapping[str, str]
    elapsed_ms: float
    attempts: int


def backend_error(
    cls: type[DeciderError], message: str, *, backend_kind: str | None = None, status: int | None = None
) -> DeciderError:
    """A typed decider error with the backend's own error kind and HTTP status attached."""
    if cls is DeciderBadResponse:
        error: DeciderError = DeciderBadResponse(message, backend_kind=backend_kind)
    else:
        error = cls(message)
        error.backend_kind = backend_kind  # type: ignore[attr-defined]
    error.status = status  # type: ignore[attr-defined]
    return error


def _error_parts(body: Any) -> tuple[str | None, str | None]:
    """(kind, message) from the error bodies the backends send.

    Shapes seen: ``{"error": "text"}`` (sparrow-decider), ``{"detail": "text" | [...]}``
    (FastAPI, strands-decider), ``{"error": {"type"|"code", "message"}}`` (TypeSafe,
    OpenRouter, the SageMaker envelope), ``{"message", "__type"}`` (AWS).
    """
    if not isinstance(body, Mapping):
        return None, None
    error = body.get("error")
    if isinstance(error, Mapping):
        kind = error.get("type") or error.get("code")
        message = error.get("message")
        metadata = error.get("metadata")
        if isinstance(metadata, Mapping) and metadata.get("raw"):
            message = f"{message} ({str(metadata['raw'])[:_QUOTE]})"
        return (str(kind) if kind is not None else None), (str(message) if message is not None else None)
    if isinstance(error, str):
        return None, error
    detail = body.get("detail")
    if isinstance(detail, str):
        return None, detail
    if isinstance(detail, list) and detail:
        first = detail[0]
        if isinstance(first, Mapping):
            loc = first.get("loc")
            where = ".".join(str(p) for p in loc) if isinstance(loc, list) else ""
            return str(first.get("type", "validation_error")), f"{where}: {first.get('msg', '')}".strip(": ")
        return None, str(first)
    if "message" in body or "__type" in body:
        kind = body.get("__type") or body.get("code")
        return (str(kind) if kind else None), str(body.get("message", ""))
    return None, None


def json_problem(exc: ValueError | RecursionError, text: str) -> str:
    """Why ``json.loads(text)`` failed, with the position when the decoder gives one."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at char {exc.pos} of {len(text)}"
    if isinstance(exc, RecursionError):
        return f"nested too deeply, {len(text)} chars"
    return f"{str(exc).split(';')[0]}, {len(text)} chars"


def error_from_body(backend: str, status: int, body: Any, text: str = "") -> DeciderError:
    """The typed error for a non-2xx response (or an error object in a 200 body)."""
    kind, message = _error_parts(body)
    detail = message or (text.strip()[:_QUOTE] if text else "") or "no error message"
    where = f"{backend}: HTTP {status}" if status else f"{backend}: error"
    backend_kind = kind or (f"http_{status}" if status else "error")
    if status in (401, 403):
        return backend_error(
            DeciderUnavailable,
            f"{where} (check the API key): {detail}",
            backend_kind=kind or ("unauthorized" if status == 401 else "forbidden"),
            status=status,
        )
    if status == 504:
        return backend_error(DeciderTimeout, f"{where}: {detail}", backend_kind=backend_kind, status=status)
    if status in (408, 429) or status >= 500:
        label = {408: "request timeout", 429: "rate limited"}.get(status, "server error")
        return backend_error(
            DeciderUnavailable, f"{where} ({label}): {detail}", backend_kind=backend_kind, status=status
        )
    return backend_error(DeciderBadResponse, f"{where}: {detail}", backend_kind=backend_kind, status=status)


def truncate_state(state: str, limit: int | None) -> tuple[str, str | None]:
    """The state cut to ``limit`` characters (its start), and a warning when it was cut."""
    if limit is None or len(state) <= limit:
        return state, None
    return state[:limit], f"state truncated from {len(state)} to {limit} characters for this backend"


class StateLimiter:
    """The warnings of the last call (a truncated state, ...), per thread and per asyncio task.

    The policy and the CLI read ``decider.last_warnings`` right after a call. A context
    variable keeps concurrent callers (threads, or tasks on one event loop) from seeing or
    clearing each other's warnings.
    """

    def __init__(self) -> None:
        self._warnings: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
            f"recallgate_decider_warnings_{id(self)}", default=()
        )

    @property
    def last_warnings(self) -> list[str]:
        return list(self._warnings.get())

    def reset(self) -> None:
        self._warnings.set(())

    def warn(self, backend: str, message: str) -> None:
        log.warning("%s: %s", backend, message)
        self._warnings.set((*self._warnings.get(), message))

    def limit(self, backend: str, state: str, max_chars: int | None) -> str:
        state, warning = truncate_state(state, max_chars)
        if warning:
            self.warn(backend, warning)
        return state


class JsonPoster:
    """POSTs JSON and decodes JSON answers, with the timeouts, pooling and retries above."""

    def __init__(self, backend: str, settings: HttpSettings | None = None, *, verify: bool = True) -> None:
        self.backend = backend
        self.settings = settings or HttpSettings()
        self._verify = verify
        self._client: httpx.Client | None = None
        self._aclient: httpx.AsyncClient | None = None
        self._aloop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    # ---- clients ------------------------------------------------------------------------
    def _limits(self) -> httpx.Limits:
        n = self.settings.pool_size
        return httpx.Limits(max_connections=n, max_keepalive_connections=n)

    def _timeout(self, remaining: float) -> httpx.Timeout:
        s = self.settings
        return httpx.Timeout(remaining, connect=min(s.connect_timeout, remaining), pool=remaining)

    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = httpx.Client(
                        limits=self._limits(),
                        timeout=self._timeout(self.settings.total_timeout),
                        verify=self._verify,
                    )
        return self._client

    @property
    def aclient(self) -> httpx.AsyncClient:
        # An AsyncClient's connections belong to the event loop that opened them: a call
        # from another loop (a second asyncio.run) gets a client of its own.
        loop = asyncio.get_running_loop()
        if self._aclient is None or self._aloop is not loop:
            self._aclient = httpx.AsyncClient(
                limits=self._limits(), timeout=self._timeout(self.settings.total_timeout), verify=self._verify
            )
            self._aloop = loop
        return self._aclient

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        if self._aclient is not None:
            await self._aclient.aclose()
            self._aclient = None
            self._aloop = None
        self.close()

    # ---- retry policy --------------------------------------------------------------------
    def _retryable(self, exc: httpx.TransportError) -> bool:
        if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
            return True  # the request never reached the server
        if isinstance(exc, httpx.RemoteProtocolError) and self.settings.retry_disconnects:
            # "Server disconnected without sending a response": a stale keep-alive connection.
            # Not "peer closed connection without sending complete message body": the
            # server answered (part of) that request, so it is not repeated.
            return "without sending a response" in str(exc)
        return False

    def _transport_error(self, exc: Exception, url: str) -> DeciderError:
        if isinstance(exc, httpx.TimeoutException):
            phase = "connecting" if isinstance(exc, httpx.ConnectTimeout) else "waiting for the answer"
            return backend_error(
                DeciderTimeout,
                f"{self.backend}: timed out {phase} ({url}, total timeout {self.settings.total_timeout:g} s)",
                backend_kind=type(exc).__name__,
            )
        if isinstance(exc, httpx.ConnectError):
            reason = str(exc) or type(exc).__name__
            return backend_error(
                DeciderUnavailable,
                f"{self.backend}: cannot connect to {url} ({reason})",
                backend_kind="connect_error",
            )
        return backend_error(
            DeciderUnavailable,
            f"{self.backend}: transport error talking to {url}: {type(exc).__name__}: {exc}",
            backend_kind=type(exc).__name__,
        )

    def _decode(
        self, url: str, status: int, content: bytes, headers: httpx.Headers, started: float, attempts: int
    ) -> JsonResponse:
        text = content.decode("utf-8", errors="replace")
        try:
            body = json.loads(text) if text.strip() else None
        except (ValueError, RecursionError) as exc:
            # JSONDecodeError is a ValueError; json.loads also raises a plain ValueError for an
            # integer past the int-string limit and RecursionError for deep nesting.
            if status >= 400:
                raise error_from_body(self.backend, status, None, text) from None
            raise backend_error(
                DeciderBadResponse,
                f"{self.backend}: HTTP {status} from {url} is not valid JSON ({json_problem(exc, text)}): "
                f"{text[:_QUOTE]!r}",
                backend_kind="invalid_json",
                status=status,
            ) from None
        if status >= 400:
            raise error_from_body(self.backend, status, body, text)
        elapsed = (time.perf_counter() - started) * 1000.0
        return JsonResponse(status, body, dict(headers), elapsed, attempts)

    # ---- sync ----------------------------------------------------------------------------
    def post(self, url: str, payload: Any, headers: Mapping[str, str] | None = None) -> JsonResponse:
        """POST ``payload`` as JSON; return the decoded JSON answer or raise a typed error."""
        started = time.perf_counter()
        deadline = started + self.settings.total_timeout
        data = json.dumps(payload).encode("utf-8")
        all_headers = {"content-type": "application/json", "accept": "application/json", **(headers or {})}
        attempt = 0
        while True:
            attempt += 1
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise self._transport_error(httpx.ReadTimeout("deadline"), url)
            try:
                request = self.client.build_request(
                    "POST", url, content=data, headers=all_headers, timeout=self._timeout(remaining)
                )
                response = self.client.send(request, stream=True)
                try:
                    chunks = []
                    for chunk in response.iter_bytes():
                        chunks.append(chunk)
                        if time.perf_counter() > deadline:  # a server dripping bytes forever
                            raise httpx.ReadTimeout("total deadline passed while reading the answer")
                    content = b"".join(chunks)
                finally:
                    response.close()
            except httpx.TransportError as exc:
                if attempt <= self.settings.retries and self._retryable(exc):
                    pause = min(
                        self.settings.retry_backoff * attempt, max(0.0, deadline - time.perf_counter())
                    )
                    time.sleep(pause)
                    continue
                raise self._transport_error(exc, url) from exc
            return self._decode(url, response.status_code, content, response.headers, started, attempt)

    # ---- async ---------------------------------------------------------------------------
    async def apost(self, url: str, payload: Any, headers: Mapping[str, str] | None = None) -> JsonResponse:
        """The async twin of :meth:`post` (httpx.AsyncClient, an exact total deadline)."""
        started = time.perf_counter()
        deadline = started + self.settings.total_timeout
        data = json.dumps(payload).encode("utf-8")
        all_headers = {"content-type": "application/json", "accept": "application/json", **(headers or {})}
        attempt = 0
        while True:
            attempt += 1
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise self._transport_error(httpx.ReadTimeout("deadline"), url)
            try:
                async with asyncio.timeout(remaining):
                    response = await self.aclient.post(
                        url, content=data, headers=all_headers, timeout=self._timeout(remaining)
                    )
                    content = response.content
            except TimeoutError as exc:
                raise self._transport_error(httpx.ReadTimeout(str(exc) or "deadline"), url) from exc
            except httpx.TransportError as exc:
                if attempt <= self.settings.retries and self._retryable(exc):
                    pause = min(
                        self.settings.retry_backoff * attempt, max(0.0, deadline - time.perf_counter())
                    )
                    await asyncio.sleep(pause)
                    continue
                raise self._transport_error(exc, url) from exc
            return self._decode(url, response.status_code, content, response.headers, started, attempt)
