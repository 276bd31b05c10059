"""The HTTP API: versioned JSON over :class:`~recallwise.serve.service.MemoryService`.

``create_app(service, keyring)`` returns a FastAPI (ASGI) app; ``recallwise serve`` runs it with
uvicorn. It is assembled from:

- :mod:`.models`: the request and response bodies (the one place their shape is written);
- :mod:`.routes`: the API's routes, plain functions from a request model to a response model;
- :mod:`.inspector`: the decision inspector's routes and page;
- :mod:`.errors`: the one error shape, ``{"error": {"message", "field", "status"}}``, and the
  status each failure maps to;
- :mod:`.middleware`: the body limit, the ``Host`` check of a server without keys, the timing.

The OpenAPI document is at ``/openapi.json`` (the TypeScript client's types are generated from it).
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
from .middleware import BodyLimit, HostCheck, Timed
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
    )
    metrics = metrics or Metrics(service)
    app.state.service = service
    app.state.keyring = keyring
    app.state.metrics = metrics
    app.add_middleware(Timed, metrics=metrics)
    app.include_router(api)
    app.include_router(inspector_router(service, principal, keys=keyring is not None))
    app.add_middleware(BodyLimit, limit=service.limits.max_body_bytes)
    if keyring is None:
        app.add_middleware(HostCheck, bound_host=bound_host)  # outermost: before the body is read
    return app
