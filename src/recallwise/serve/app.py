"""The HTTP API: versioned JSON over :class:`~recallwise.serve.service.MemoryService`.

``create_app(service, keyring)`` returns a FastAPI (ASGI) app; ``recallwise serve`` runs it with
uvicorn. It is assembled from:

- :mod:`.models`: the request and response bodies (the one place their shape is written);
- :mod:`.routes`: the API's routes, plain functions from a request model to a response model;
- :mod:`.inspector`: the decision inspector's routes and page;
- :mod:`.errors`: the one error shape, ``{"error": {"message", "field", "status"}}``, and the
  status each failure maps to;
- :mod:`.middleware`: the body limit and read timeout, the ``Host`` check of a server without
  keys, the refusal of cross-site requests, ``no-store`` / ``nosniff`` on every answer, the timing.

The OpenAPI document is at ``/openapi.json`` (the TypeScript client's types are generated from it).
FastAPI's ``/docs`` and ``/redoc`` pages are off: they load Swagger UI and ReDoc from a CDN, on
the origin the inspector's page and its key live on.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.to_thread
from fastapi import FastAPI

from .. import __version__
from .auth import Keyring
from .errors import ERROR_RESPONSES, EXCEPTION_HANDLERS
from .inspector import inspector_router
from .metrics import Metrics
from .middleware import BodyLimit, CrossSite, HostCheck, NoStore, Timed
from .routes import api, principal
from .service import MemoryService

__all__ = ["create_app"]


def create_app(
    service: MemoryService,
    keyring: Keyring | None = None,
    *,
    metrics: Metrics | None = None,
    threads: int = 64,
    bound_host: str = "127.0.0.1",
) -> FastAPI:
    """The ASGI app over ``service``; ``keyring`` None means no keys (one local principal).

    ``threads`` bounds the worker threads requests run in (each turn blocks one while it embeds,
    searches and judges; the embedding batcher gathers them). Without keys, every route answers
    only requests for ``bound_host`` or a loopback name (:class:`~.middleware.HostCheck`).
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = threads
        yield
        service.close()

    app = FastAPI(
        lifespan=lifespan,
        title="recallwise",
        version=__version__,
        summary="Decide what an AI agent should remember right now: gate, route and judge memory retrieval.",
        responses=ERROR_RESPONSES,
        exception_handlers=EXCEPTION_HANDLERS,
        docs_url=None,  # Swagger UI and ReDoc come from a CDN: not on this origin
        redoc_url=None,
    )
    # a missing or extra slash is a 404, never a redirect to an absolute URL built from the Host
    # header (a keyed server answers any Host)
    app.router.redirect_slashes = False
    metrics = metrics or Metrics(service)
    app.state.service = service
    app.state.keyring = keyring
    app.state.metrics = metrics
    app.add_middleware(Timed, metrics=metrics)
    app.include_router(api)
    app.include_router(inspector_router(service, principal, keys=keyring is not None))
    app.add_middleware(
        BodyLimit, limit=service.limits.max_body_bytes, timeout_s=service.limits.body_timeout_s
    )
    app.add_middleware(CrossSite)
    if keyring is None:
        app.add_middleware(HostCheck, bound_host=bound_host)  # before the body is read
    app.add_middleware(NoStore)  # outermost: the refusals above carry its headers too
    return app
