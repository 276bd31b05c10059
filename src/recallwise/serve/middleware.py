"""The app's ASGI middlewares (plain ASGI callables: Starlette's ``BaseHTTPMiddleware`` costs a task
and a stream per request).

- :class:`BodyLimit`: a body over ``--max-body-bytes`` is a 413 before it is read, and a body
  not sent within ``--body-timeout-s`` a 408 (a client trickling bytes holds no connection open);
- :class:`HostCheck`: a server without keys answers only its own loopback names (421 / 403);
- :class:`CrossSite`: another site's page cannot make a browser compute or write here (403);
- :class:`NoStore`: every answer carries ``Cache-Control: no-store`` and ``nosniff``;
- :class:`Timed`: every request's latency into the metrics.
"""

import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
from fastapi.responses import JSONResponse

from .errors import error_response
from .metrics import Metrics

__all__ = ["BodyLimit", "CrossSite", "HostCheck", "NoStore", "Timed"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes is refused with 413 naming the limit, and a body
    not received whole within ``timeout_s`` seconds with 408.

    A body with a ``Content-Length`` over the limit is refused before it is read. Every other body
    is read here, up to the limit, and handed on whole; past the limit the rest is read and dropped
    (up to ``drain`` bytes, so the client sees the answer rather than a reset) and 413 is the answer.
    The whole body must arrive within ``timeout_s`` of the request's start: a client that sends its
    headers and then trickles bytes (a thousand of them hold a thousand connections and their
    buffers) is answered 408 and its connection closed.
    """

    def __init__(self, app: Any, limit: int, timeout_s: float = 10.0, drain: int = 16_000_000) -> None:
        self.app, self.limit, self.timeout_s, self.drain = app, limit, timeout_s, drain

    def _too_large(self, size: str) -> JSONResponse:
        return error_response(413, f"the body is {size}; the limit is {self.limit} bytes (--max-body-bytes)")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._too_large(f"{int(declared)} bytes")(scope, receive, send)
            return
        if scope.get("method") in ("GET", "HEAD", "OPTIONS") and declared in (None, b"0"):
            await self.app(scope, receive, send)  # no body (an SSE stream's GET waits on receive)
            return
        body = bytearray()
        over = False
        with anyio.move_on_after(self.timeout_s) as deadline:
            while True:
                message = await receive()
                if message["type"] != "http.request":  # the client went away
                    return
                body += message.get("body", b"")
                more = bool(message.get("more_body", False))
                if len(body) > self.limit:
                    over = True
                    seen = len(body)
                    while more and seen <= self.drain:
                        message = await receive()
                        seen += len(message.get("body", b""))
                        more = message["type"] == "http.request" and bool(message.get("more_body", False))
                    break
                if not more:
                    break
        if deadline.cancelled_caught:
            late = f"the body was not received within {self.timeout_s:g} s (--body-timeout-s)"
            await error_response(408, late, headers={"Connection": "close"})(scope, receive, send)
            return
        if over:
            await self._too_large(f"over {self.limit} bytes")(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)


def _host_name(value: str) -> str:
    """The host name of a ``Host`` value (``[::1]:8080`` -> ``::1``, ``a.b:80`` -> ``a.b``)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan; the app has no websocket route
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        host = headers.get(b"host", b"").decode("latin-1")
        origin = headers.get(b"origin", b"").decode("latin-1")
        allowed = ", ".join(sorted(self.allowed))
        if _host_name(host) not in self.allowed:
            message = f"Host {host!r} is not this server (without --keys it answers only {allowed})"
            await error_response(421, message, "host")(scope, receive, send)
            return
        if origin:
            scheme, _, rest = origin.partition("://")
            if scheme not in ("http", "https") or _host_name(rest.split("/")[0]) not in self.allowed:
                message = f"Origin {origin!r}: a page of another site cannot call a server without --keys"
                await error_response(403, message, "origin")(scope, receive, send)
                return
        await self.app(scope, receive, send)


class CrossSite:
    """ASGI middleware (every server, with keys or without): a request another site's page made
    the browser send is refused with 403 on every route that computes or writes, and on every
    API route.

    A browser says where a request comes from in ``Sec-Fetch-Site``: ``cross-site`` (an
    ``<img src>``, a form or a ``fetch`` from another site) is refused; ``same-origin``,
    ``same-site`` (another port of the same host: an MCP inspector on localhost) and ``none`` (typed
    by the user) are not. A browser that sends no ``Sec-Fetch-Site`` is judged by its ``Origin``:
    refused unless its host is the ``Host`` asked for (or the ``X-Forwarded-Host`` a proxy in front
    set; a page cannot set that header on another site's request without CORS, which this server
    never grants). The loopback names count as one host.

    A top-level navigation to the page (``GET /ui`` from a link) and the health probes stay
    open; clients that are not browsers send neither header. Without keys, :class:`HostCheck`
    decides which hosts may call at all.
    """

    SAFE = ("GET", "HEAD", "OPTIONS")
    OPEN_PATHS = ("/healthz", "/readyz", "/ui")

    def __init__(self, app: Any) -> None:
        self.app = app

    def _guarded(self, scope: Scope) -> bool:
        path = str(scope.get("path", ""))
        if scope.get("method") not in self.SAFE:
            return True
        return not any(path == p or path.startswith(p + "/") for p in self.OPEN_PATHS)

    def _refusal(self, headers: dict[bytes, bytes]) -> str | None:
        site = headers.get(b"sec-fetch-site", b"").decode("latin-1").strip().lower()
        if site == "cross-site":
            return "a request from another site's page (Sec-Fetch-Site: cross-site) is refused here"
        origin = headers.get(b"origin", b"").decode("latin-1").strip()
        if site or not origin:  # the browser said it is this site's; or not a browser's request
            return None
        scheme, _, rest = origin.partition("://")
        named = _host_name(rest.split("/")[0])
        hosts = {_host_name(headers.get(b"host", b"").decode("latin-1"))}
        forwarded = headers.get(b"x-forwarded-host", b"").decode("latin-1").split(",")[0]
        if forwarded.strip():
            hosts.add(_host_name(forwarded))
        loopback = named in HostCheck.LOCAL and bool(hosts & set(HostCheck.LOCAL))
        if scheme in ("http", "https") and (named in hosts or loopback):
            return None
        return f"Origin {origin!r} is another site: its pages cannot call this server"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self._guarded(scope):
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(dict(scope.get("headers") or ()))
        if refusal is not None:
            await error_response(403, refusal, "origin")(scope, receive, send)
            return
        await self.app(scope, receive, send)


class NoStore:
    """ASGI middleware: every answer carries ``Cache-Control: no-store`` (they hold users' messages
    and memories: no browser or proxy cache keeps them) and ``X-Content-Type-Options: nosniff`` (a
    JSON body is never read as HTML or script), unless the route set its own."""

    ADDED = ((b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"))

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sent(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                present = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in self.ADDED if k not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, sent)


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
