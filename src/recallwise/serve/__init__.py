"""``recallwise serve``: the gate as an HTTP service any agent, in any language, can call.

- :mod:`.service`: the tenant-scoped operations (recall, write, list, forget, search) over one
  store and one policy; the HTTP app and the MCP server both call it.
- :mod:`.auth`: API keys (hashed, in a file) -> tenant and scopes.
- :mod:`.app`: the FastAPI app (versioned JSON, OpenAPI at ``/openapi.json``).
- :mod:`.metrics`: ``/metrics`` in Prometheus text.
- :mod:`.runner`: building the service from settings and running uvicorn (one process or many).

Needs ``pip install 'recallwise[serve]'``. The service keeps no state that matters in a process
but follow-up memory ("go on" after a request), which is per process: run replicas with session
affinity for follow-ups across turns, or accept that a follow-up landing on another replica is
decided on its own (see the README's "Service" section).
"""

from .service import DEFAULT_NAMESPACES, SCOPES, Limits, MemoryService, Principal, ServiceError

__all__ = ["DEFAULT_NAMESPACES", "SCOPES", "Limits", "MemoryService", "Principal", "ServiceError"]
