"""The MCP server: recallwise's gate, route and judge as tools an MCP client's model calls.

Built on the official Python SDK's :class:`mcp.server.mcpserver.MCPServer`. Every tool calls the
same :class:`~recallwise.serve.service.MemoryService` operation the HTTP API does (``recall`` is
POST /v1/recall's code path), so the two transports cannot drift apart.

**The model never chooses whose memory it reads.** The actor is fixed by the server: ``--actor``
on stdio, or the API key's tenant (and the ``X-Recallwise-Actor``-free principal) over HTTP. No
tool takes an actor or user id.

A tool's mistake (a missing or huge message, an unknown record id) raises, which the SDK turns
into an MCP error result naming the problem; nothing is stored and the server keeps serving.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Strict

from ..policy.pack import count_tokens, pack_context
from .access import LOCAL, Principal, ServiceError
from .auth import presented_key
from .models import RecallOut, RecordOut
from .service import MemoryService

#: A tool's whole-number argument, taken as the HTTP API takes it: a JSON integer, not "5", 5.0 or
#: true (the SDK's validation is pydantic's lax mode, which would turn each into 5 or 1).
StrictInt = Annotated[int, Strict()]

__all__ = [
    "DEFAULT_TOKEN_BUDGET",
    "FORGET_EVERYTHING",
    "NOTHING_RELEVANT",
    "SYSTEM_PROMPT",
    "build_mcp_server",
    "mount_mcp",
]

#: what ``forget_everything`` must be called with: the model repeats the user's request, not a flag
FORGET_EVERYTHING = "forget everything about me"
#: The most tokens (the policy's own count of the context block) ``recall`` returns per call.
DEFAULT_TOKEN_BUDGET = 400
_NEED_KEY = "a valid API key is required (Authorization: Bearer KEY)"
NOTHING_RELEVANT = "Nothing in memory is relevant to this message."
SYSTEM_PROMPT = (
    "You have a long-term memory of this user through the recallwise tools. At the start of each "
    "user turn that could depend on who the user is (their preferences, plans, people, history), "
    "call `recall` with the user's message; use what it returns and nothing else from memory. "
    "It answers 'nothing in memory is relevant' for small talk; do not search further then. "
    "When the user tells you something lasting about themselves, call `remember` with it. "
    "Call `forget` with a record id when the user asks you to forget something."
)


def _problem(message: str) -> Exception:
    """A mistake of the caller's: the SDK returns it to the model as an error result, text intact."""
    return ToolError(message)


def _fail(exc: ServiceError) -> Exception:
    return _problem(str(exc))


Result = TypeVar("Result")


def build_mcp_server(
    service: MemoryService,
    *,
    actor_id: str | None = None,
    principal: Principal = LOCAL,
    principal_of: Callable[[Any], tuple[Principal, str]] | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
) -> Any:
    """An ``MCPServer`` over ``service``, acting for one actor.

    stdio: give ``actor_id`` (and ``principal``, LOCAL by default). HTTP: give ``principal_of``,
    called inside each tool call with the HTTP request, returning its principal and actor id (from
    its API key).
    """
    if principal_of is None:
        if not actor_id:
            raise ValueError("build_mcp_server needs actor_id (stdio) or principal_of (HTTP)")
        fixed = (principal, service.actor(principal, actor_id).external)

        def principal_of(request: Any) -> tuple[Principal, str]:
            return fixed

    who = principal_of
    _plain_logging()
    server: MCPServer = MCPServer(
        "recallwise",
        instructions=SYSTEM_PROMPT,
    )

    def call(ctx: Context, op: Callable[[Principal, str], Result]) -> Result:
        try:
            request = ctx.request_context.request
        except (AttributeError, ValueError, LookupError):
            request = None
        p, actor = who(request)
        try:
            return op(p, actor)
        except ServiceError as exc:
            raise _fail(exc) from None

    @server.tool(
        description="Recall what long-term memory holds that is relevant to the user's message. Call "
        "it with the user's latest message, verbatim. It decides whether memory is worth reading at "
        "all (small talk is not), which kinds of memory to search, and which records belong in the "
        "answer; it returns only those records and a ready-to-use context block, or says that "
        "nothing in memory is relevant. Always within a token budget (reported in the result)."
    )
    def recall(message: str, ctx: Context) -> dict[str, object]:
        body = call(ctx, lambda p, a: service.recall(p, a, message))
        return _recall_result(body, token_budget)

    @server.tool(
        description="Remember something the user said about themselves (a fact or a preference). "
        "Give `text` (one user message) or `messages` (a list of {role: user|assistant, text}). "
        "Lasting facts and preferences are extracted and stored; an updated fact replaces the old one. "
        "When nothing is stored, `note` (and each message's `reason`) says why."
    )
    def remember(
        ctx: Context, text: str | None = None, messages: list[dict[str, str]] | None = None
    ) -> dict[str, object]:
        if (text is None) == (messages is None):
            raise _problem("remember: give exactly one of `text` or `messages`")
        items = [{"role": "user", "text": text}] if text is not None else list(messages or [])
        body = call(ctx, lambda p, a: service.add_events(p, a, "mcp", items))
        out: dict[str, object] = {
            "added": body.added,
            "updated": body.updated,
            "unchanged": body.unchanged,
            "records": [r.model_dump(exclude_unset=True) for r in body.records],
            "messages": [m.model_dump(exclude_none=True) for m in body.messages],
        }
        if body.note:
            out["note"] = body.note  # nothing stored: say why, so the model does not believe it was
        return out

    @server.tool(
        description="Search long-term memory by similarity, without the relevance gate or judge "
        "(for when the user asks what you remember about something). Returns at most `limit` records "
        "(1-50), best first, and `next_offset` for the next page."
    )
    def search_memories(
        query: str, ctx: Context, limit: StrictInt = 10, offset: StrictInt = 0
    ) -> dict[str, object]:
        if offset < 0:
            raise _problem("offset must be >= 0")
        cap = service.limits.max_search
        if not 1 <= limit <= cap:
            raise _problem(f"limit must be 1-{cap}, not {limit}")
        depth = min(cap, offset + limit)
        if offset >= cap:
            raise _problem(f"offset must be below {cap}")
        body = call(ctx, lambda p, a: service.search(p, a, query, limit=depth))
        page = body.results[offset : offset + limit]
        more = len(body.results) > offset + limit or (len(body.results) == depth and depth < cap)
        return {
            "query": body.query,
            "results": [_record(r) for r in page],
            "next_offset": offset + len(page) if more and page else None,
        }

    @server.tool(description="Forget one memory record, by the `id` a recall, search or list returned.")
    def forget(record_id: str, ctx: Context) -> dict[str, object]:
        # this actor's records only: another actor's id looks absent, as in every other tool
        return call(ctx, lambda p, a: service.delete_record(p, record_id, actor_id=a)).model_dump()

    @server.tool(
        description="Forget everything about this user: every memory record, the conversation "
        "history stored for them and every logged decision about their messages. Irreversible: "
        "call it only when the user has explicitly asked you to forget everything about them, "
        f"with `confirm` set to {FORGET_EVERYTHING!r}. Needs a key with the admin scope."
    )
    def forget_everything(confirm: str, ctx: Context) -> dict[str, object]:
        if confirm != FORGET_EVERYTHING:
            raise _problem(f"forget_everything: set confirm to {FORGET_EVERYTHING!r} (nothing was deleted)")
        body = call(ctx, lambda p, a: service.forget_actor(p, a))
        return body.model_dump(exclude={"actor_id"})

    @server.tool(
        description="List the memory records of this user, oldest first, 50 a page; pass the "
        "returned `next_cursor` to get the next page (null on the last page)."
    )
    def list_memories(ctx: Context, cursor: StrictInt = 0) -> dict[str, object]:
        body = call(ctx, lambda p, a: service.list_records(p, a, cursor=cursor))
        return {
            "total": body.total,
            "records": [_record(r) for r in body.records],
            "next_cursor": body.next_cursor,
        }

    @server.prompt(
        name="recallwise-memory",
        description="A short system-prompt snippet telling the model when to call recall and remember.",
    )
    def memory_prompt() -> str:
        return SYSTEM_PROMPT

    return server


def _record(r: RecordOut) -> dict[str, Any]:
    """A record as a tool returns it: its id, text and namespace (and score, from a search)."""
    return r.model_dump(include={"id", "text", "namespace", "score"}, exclude_unset=True)


def _recall_result(body: RecallOut, token_budget: int) -> dict[str, object]:
    """POST /v1/recall's body, trimmed to what a model needs and to the token budget (the
    lowest-ranked records go first; tokens counted by the policy's tokenizer)."""
    records = body.records
    context = body.context
    tokens = body.context_tokens
    trimmed = 0
    while records and tokens > token_budget:
        records = records[:-1]
        trimmed += 1
        big = 1 << 30
        context, _ = pack_context([r.text for r in records], max_record_chars=big, max_context_chars=big)
        tokens = count_tokens(context)
    kept = [r.model_dump(include={"id", "text", "namespace", "score", "judge_p"}) for r in records]
    result: dict[str, object] = {
        "relevant": bool(kept),
        "records": kept,
        "context": context if kept else NOTHING_RELEVANT,
        "context_tokens": tokens if kept else 0,
        "token_budget": token_budget,
        "gate_open": body.gate_open,
        "dropped_for_budget": trimmed,
    }
    if body.errors:
        result["errors"] = body.errors
    return result


def mount_mcp(
    app: Any,
    service: MemoryService,
    keyring: Any = None,
    *,
    actor_id: str | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    path: str = "/mcp",
) -> None:
    """Mount the MCP server (streamable HTTP, stateless, JSON responses) at ``path`` on ``app``.

    Behind the same API keys as the rest of the service: a missing or wrong key is a 401 before the
    MCP layer sees the request. The actor is the key's label, inside the key's tenant; without keys,
    ``actor_id`` (default ``local``) for the one local user.
    """
    from contextlib import asynccontextmanager

    from starlette.routing import Route

    from .errors import error_response

    def principal_of(request: Any) -> tuple[Principal, str]:
        if keyring is None:
            return LOCAL, actor_id or "local"
        found = keyring.principal(presented_key(request.headers if request is not None else {}))
        if found is None:  # the mount refused it already; a request without one never gets here
            raise _problem(_NEED_KEY)
        return found, found.key_id

    server = build_mcp_server(service, principal_of=principal_of, token_budget=token_budget)
    server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=True,
        json_response=True,
        # the app's own HostCheck guards every route of a server without keys, /mcp included
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

    inner = StreamableHTTPASGIApp(server.session_manager)

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if keyring is not None:
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
            if keyring.principal(presented_key(headers)) is None:
                response = error_response(401, _NEED_KEY, headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await inner(scope, receive, send)

    app.router.routes.append(Route(path, endpoint=_ASGI(guarded), methods=["GET", "POST", "DELETE"]))
    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a: Any) -> Any:
        async with server.session_manager.run(), outer(a) as state:
            yield state

    app.router.lifespan_context = lifespan


class _ASGI:
    """An ASGI callable Starlette's ``Route`` passes scope, receive and send to (a plain function
    would be called with a Request)."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def _plain_logging() -> None:
    """Give the process plain ``%(message)s`` lines on stderr before MCPServer configures logging.

    MCPServer's constructor calls ``logging.basicConfig`` with rich's handler whenever ``rich`` is
    importable (another package may bring it), which wraps the service's lines at 80 columns and adds
    source locations: what the server prints would depend on what else is installed. basicConfig does
    nothing once the root logger has a handler, so one plain handler here keeps the lines as they are
    without rich.
    """
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)
