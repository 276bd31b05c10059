"""``recallwise serve``: the gate as an HTTP service any agent, in any language, can call.

- :mod:`.service`: the tenant-scoped operations (recall, write, list, forget, search) over one
  store and one policy; the HTTP app and the MCP server both call it;
- :mod:`.models`: the request and response bodies, written once (the service returns them);
- :mod:`.access`: who is asking (a tenant and scopes) and the refusals; :mod:`.auth`: API keys
  (hashed, in a file) -> tenant and scopes;
- :mod:`.app`: the FastAPI app (versioned JSON, OpenAPI at ``/openapi.json``), assembled from
  :mod:`.routes`, :mod:`.errors`, :mod:`.middleware` and :mod:`.inspector`;
- :mod:`.mcp`: the MCP server (stdio, and mounted at ``/mcp``);
- :mod:`.metrics`: ``/metrics`` in Prometheus text;
- :mod:`.runner`: building the service from settings and running uvicorn (one process or many).

Needs ``pip install 'recallwise[serve]'``. The service keeps no state that matters in a process
but follow-up memory ("go on" after a request), which is per process: run replicas with session
affinity for follow-ups across turns, or accept that a follow-up landing on another replica is
decided on its own (see the README's "Service" section). This package imports nothing itself, so
``recallwise keys new`` (:mod:`.auth`) runs without the extra.
"""
