"""The app's ASGI middlewares (plain ASGI callables: Starlette's ``BaseHTTPMiddleware`` costs a task
and a stream per request).

- :class:`BodyLimit`: a body over ``--max-body-bytes`` is a 413 before it is read;
- :class:`HostCheck`: a server without keys answers only its own loopback names (421 / 403);
- :class:`Timed`: every request's latency into the metrics.
"""

import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi.responses import JSONResponse

from .errors import error_response
from .metrics import Metrics

__all__ = ["BodyLimit", "HostCheck", "Timed"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes is refused with 413 naming the limit.

    A body with a ``Content-Length`` over the limit is refused before it is read (the server then
    delivers no more than it declared). A body without one (``Transfer-Encoding: chunked``) is read
    here, up to the limit, and handed on whole; past the limit the rest is read and dropped (up to
    ``drain`` bytes, so the client sees the answer rather than a reset) and 413 is the answer.
    """

    def __init__(self, app: Any, limit: int, drain: int = 16_000_000) -> None:
        self.app, self.limit, self.drain = app, limit, drain

    def _too_large(self, size: str) -> JSONResponse:
        return error_response(413, f"the body is {size}; the limit is {self.limit} bytes (--max-body-bytes)")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None:
            if declared.isdigit() and int(declared) > self.limit:
                await self._too_large(f"{int(declared)} bytes")(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            more = bool(message.get("more_body", False))
            if len(body) > self.limit:
                seen = len(body)
                while more and seen <= self.drain:
                    message = await receive()
                    seen += len(message.get("body", b""))
                    more = message["type"] == "http.request" and bool(message.get("more_body", False))
                await self._too_large(f"over {self.limit} bytes (sent without a length)")(
                    scope, receive, send
                )
                return
            if not more:
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)


class HostCheck:
    """ASGI middleware of a server without keys: a request naming another host (``Host``) or
    coming from another site's page (``Origin``) is refused, 421 / 403. A page on any web site
    can make the user's browser call loopback; with DNS rebinding it even reads the answers, as
    ``Host: evil.example.com``. Every route is guarded (``/mcp`` too: the one check for all).
    """

    LOCAL = ("localhost", "127.0.0.1", "::1")

    def __init__(self, app: Any, bound_host: str) -> None:
        self.app = app
        self.allowed = {h.lower() for h in (*self.LOCAL, bound_host.strip("[]"))}

    def _named_host(self, value: str) -> str:
        """The host name of a ``Host`` value (``[::1]:8080`` -> ``::1``, ``a.b:80`` -> ``a.b``)."""
        value = value.strip().lower()
        if value.startswith("["):
            return value[1 : value.find("]")] if "]" in value else value
        return value.rsplit(":", 1)[0] if value.count(":") == 1 else value

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan; the app has no websocket route
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        host = headers.get(b"host", b"").decode("latin-1")
        origin = headers.get(b"origin", b"").decode("latin-1")
        allowed = ", ".join(sorted(self.allowed))
        if self._named_host(host) not in self.allowed:
            message = f"Host {host!r} is not this server (without --keys it answers only {allowed})"
            await error_response(421, message, "host")(scope, receive, send)
            return
        if origin:
            scheme, _, rest = origin.partition("://")
            if scheme not in ("http", "https") or self._named_host(rest.split("/")[0]) not in self.allowed:
                message = f"Origin {origin!r}: a page of another site cannot call a server without --keys"
                await error_response(403, message, "origin")(scope, receive, send)
                return
        await self.app(scope, receive, send)


class Timed:
    """ASGI middleware: every request's latency into the metrics, by route and status (a plain
    ASGI wrapper: Starlette's ``BaseHTTPMiddleware`` costs a task and a stream per request)."""

    def __init__(self, app: Any, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sent(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sent)
        finally:
            route = getattr(scope.get("route"), "path", "other")
            self.metrics.observe(route, status, time.perf_counter() - started)
