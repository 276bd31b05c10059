"""The one HTTP client for JSON services: the decision backends and the LLM extractor.

A :class:`JsonClient` owns a pooled ``httpx.Client`` sized by its :class:`HttpSettings`, or
sends through the ``httpx.BaseTransport`` it was given (``httpx.MockTransport`` in tests,
a proxy's transport in production). It is synchronous: callers that must not block an event
loop run it on a worker thread (recallwise has one concurrency model, a sync core with
thread offload).

Every call has a connect timeout and a total deadline that covers every attempt and every
byte of the answer (a server dripping bytes forever is cut off). Only transport failures
that are safe to repeat are retried -- the connection was never made, or a pooled
keep-alive connection was found closed before any response byte -- a bounded number of
times and never past the deadline. Every failure becomes one of three typed errors, carrying
the service's own error kind in ``backend_kind`` and the HTTP status in ``status``:

- *unavailable*: connection refused, DNS, HTTP 401/403/408/429/5xx (the service is down,
  overloaded or refuses this key);
- *timeout*: no complete answer within the deadline, HTTP 504;
- *bad response*: any other 4xx (the service refused the request, e.g. HTTP 422), a body
  that is not JSON (truncated, HTML from a proxy), or an error object in a 200 body.

Which classes those are is the caller's choice (:class:`ErrorTypes`): the deciders raise
:class:`~recallwise.errors.DeciderUnavailable` / ``DeciderTimeout`` / ``DeciderBadResponse``
(the policy fails open on them), the extractor its own ``ExtractionError``.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from .errors import DeciderBadResponse, DeciderTimeout, DeciderUnavailable, UsageError
from .text import json_failure

__all__ = [
    "DECIDER_ERRORS",
    "ErrorTypes",
    "HttpSettings",
    "JsonClient",
    "JsonResponse",
    "backend_error",
    "error_from_body",
    "finite_number",
    "parse_json",
    "token_count",
]

E = TypeVar("E", bound=Exception)

#: Characters of a failed response body quoted in an error message.
QUOTE = 200


@dataclass(frozen=True)
class HttpSettings:
    """Timeouts, retries and pool size of one HTTP service.

    ``total_timeout`` bounds a whole call (every attempt, every byte of the answer);
    ``connect_timeout`` bounds opening one connection. ``retries`` repeats only transport
    failures that are safe to repeat; ``retry_disconnects`` also repeats a request whose
    pooled connection was closed by the server before it answered, which is only safe for
    a service where a repeated request costs nothing (a billed API sets it False).
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

    @classmethod
    def for_client(
        cls,
        service: str,
        *,
        timeout: float,
        connect_timeout: float,
        retries: int,
        pool_size: int,
        retry_disconnects: bool = True,
    ) -> HttpSettings:
        """The settings a client's keywords ask for (``timeout`` is the total); a value out of
        range is a :class:`UsageError` naming ``service``."""
        try:
            return cls(
                total_timeout=float(timeout),
                connect_timeout=float(connect_timeout),
                retries=int(retries),
                retry_disconnects=retry_disconnects,
                pool_size=int(pool_size),
            )
        except ValueError as exc:
            raise UsageError(f"{service}: {exc}") from exc


@dataclass(frozen=True)
class ErrorTypes:
    """The exception classes a client raises for each kind of failure."""

    unavailable: type[Exception] = DeciderUnavailable
    timeout: type[Exception] = DeciderTimeout
    bad_response: type[Exception] = DeciderBadResponse


#: What the decision backends raise (the policy counts them by kind and fails open).
DECIDER_ERRORS = ErrorTypes()


@dataclass
class JsonResponse:
    """A decoded JSON response: status, body and elapsed milliseconds."""

    status: int
    body: Any
    headers: Mapping[str, str]
    elapsed_ms: float
    attempts: int


def backend_error(
    cls: type[E], message: str, *, backend_kind: str | None = None, status: int | None = None
) -> E:
    """An error of class ``cls`` with the service's own error kind and HTTP status attached."""
    error = cls(message)
    error.backend_kind = backend_kind  # type: ignore[attr-defined]
    error.status = status  # type: ignore[attr-defined]
    return error


def _error_parts(body: Any) -> tuple[str | None, str | None]:
    """(kind, message) from the error bodies the services send.

    Shapes seen: ``{"error": "text"}`` (sparrow-decider), ``{"detail": "text" | [...]}``
    (FastAPI, strands-decider), ``{"error": {"type"|"code", "message"}}`` (TypeSafe,
    OpenRouter, OpenAI, the SageMaker envelope), ``{"message", "__type"}`` (AWS).
    """
    if not isinstance(body, Mapping):
        return None, None
    error = body.get("error")
    if isinstance(error, Mapping):
        kind = error.get("type") or error.get("code")
        message = error.get("message")
        metadata = error.get("metadata")
        if isinstance(metadata, Mapping) and metadata.get("raw"):
            message = f"{message} ({str(metadata['raw'])[:QUOTE]})"
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


def error_from_body(
    backend: str, status: int, body: Any, text: str = "", *, errors: ErrorTypes = DECIDER_ERRORS
) -> Exception:
    """The typed error for a non-2xx response (or an error object in a 200 body: ``status`` 0)."""
    kind, message = _error_parts(body)
    detail = message or (text.strip()[:QUOTE] if text else "") or "no error message"
    where = f"{backend}: HTTP {status}" if status else f"{backend}: error"
    backend_kind = kind or (f"http_{status}" if status else "error")
    if status in (401, 403):
        return backend_error(
            errors.unavailable,
            f"{where} (check the API key): {detail}",
            backend_kind=kind or ("unauthorized" if status == 401 else "forbidden"),
            status=status,
        )
    if status == 504:
        return backend_error(errors.timeout, f"{where}: {detail}", backend_kind=backend_kind, status=status)
    if status in (408, 429) or status >= 500:
        label = {408: "request timeout", 429: "rate limited"}.get(status, "server error")
        return backend_error(
            errors.unavailable, f"{where} ({label}): {detail}", backend_kind=backend_kind, status=status
        )
    return backend_error(errors.bad_response, f"{where}: {detail}", backend_kind=backend_kind, status=status)


def parse_json(
    backend: str, text: str, what: str, *, status: int | None = None, errors: ErrorTypes = DECIDER_ERRORS
) -> Any:
    """``json.loads(text)``, or a bad-response error saying why not and quoting the start."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        # JSONDecodeError is a ValueError; json.loads also raises a plain ValueError for an
        # integer past the int-string limit and RecursionError for deep nesting.
        line, problem = json_failure(text, exc)
        at = f" on line {line}" if line is not None and line > 1 else ""
        raise backend_error(
            errors.bad_response,
            f"{backend}: {what} is not valid JSON ({problem}{at}, {len(text)} chars): {text[:QUOTE]!r}",
            backend_kind="invalid_json",
            status=status,
        ) from None


# ---- numbers read from a decoded body ------------------------------------------------------


def token_count(value: Any) -> int:
    """A token count from a usage field: 0 unless it is an int or a finite float (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, int):
        return value
    return int(value) if math.isfinite(value) else 0


def finite_number(value: Any) -> float | None:
    """A reported amount (a cost, a latency): None unless it is a finite number a float can hold."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int past the float range
        return None
    return number if math.isfinite(number) else None


# ---- the client ----------------------------------------------------------------------------


class JsonClient:
    """POSTs JSON and decodes JSON answers, with the timeouts, pooling and retries above.

    ``transport`` replaces the network (``httpx.MockTransport(handler)`` answers in-process);
    the deadline, retry and error mapping are the same either way.
    """

    def __init__(
        self,
        service: str,
        settings: HttpSettings | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        errors: ErrorTypes = DECIDER_ERRORS,
        verify: bool = True,
    ) -> None:
        if transport is not None and not isinstance(transport, httpx.BaseTransport):
            raise UsageError(
                f"{service}: transport must be an httpx.BaseTransport, got {type(transport).__name__}"
            )
        self.service = service
        self.settings = settings or HttpSettings()
        self.errors = errors
        self._transport = transport
        self._verify = verify
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    @property
    def client(self) -> httpx.Client:
        """The pooled ``httpx.Client`` (opened on first use)."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    n = self.settings.pool_size
                    self._client = httpx.Client(
                        limits=httpx.Limits(max_connections=n, max_keepalive_connections=n),
                        timeout=self._timeout(self.settings.total_timeout),
                        verify=self._verify,
                        transport=self._transport,
                    )
        return self._client

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _timeout(self, remaining: float) -> httpx.Timeout:
        return httpx.Timeout(remaining, connect=min(self.settings.connect_timeout, remaining), pool=remaining)

    # ---- retry policy and transport errors -------------------------------------------------
    def _retryable(self, exc: httpx.TransportError) -> bool:
        if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
            return True  # the request never reached the server
        if isinstance(exc, httpx.RemoteProtocolError) and self.settings.retry_disconnects:
            # "Server disconnected without sending a response": a stale keep-alive connection.
            # Not "peer closed connection without sending complete message body": the
            # server answered (part of) that request, so it is not repeated.
            return "without sending a response" in str(exc)
        return False

    def _transport_error(self, exc: Exception, url: str) -> Exception:
        if isinstance(exc, httpx.TimeoutException):
            phase = "connecting" if isinstance(exc, httpx.ConnectTimeout) else "waiting for the answer"
            return backend_error(
                self.errors.timeout,
                f"{self.service}: timed out {phase} ({url}, total timeout {self.settings.total_timeout:g} s)",
                backend_kind=type(exc).__name__,
            )
        if isinstance(exc, httpx.ConnectError):
            reason = str(exc) or type(exc).__name__
            return backend_error(
                self.errors.unavailable,
                f"{self.service}: cannot connect to {url} ({reason})",
                backend_kind="connect_error",
            )
        return backend_error(
            self.errors.unavailable,
            f"{self.service}: transport error talking to {url}: {type(exc).__name__}: {exc}",
            backend_kind=type(exc).__name__,
        )

    def _decode(self, url: str, status: int, content: bytes) -> Any:
        text = content.decode("utf-8", errors="replace")
        if status >= 400:
            try:
                body = json.loads(text) if text.strip() else None
            except (ValueError, RecursionError):
                body = None  # an HTML error page: quoted from the text
            raise error_from_body(self.service, status, body, text, errors=self.errors)
        if not text.strip():
            return None
        return parse_json(self.service, text, f"HTTP {status} from {url}", status=status, errors=self.errors)

    # ---- one call --------------------------------------------------------------------------
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
            body = self._decode(url, response.status_code, content)
            elapsed = (time.perf_counter() - started) * 1000.0
            return JsonResponse(response.status_code, body, dict(response.headers), elapsed, attempt)
