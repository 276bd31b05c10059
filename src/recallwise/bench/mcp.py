"""``recallwise bench mcp``: what the MCP ``recall`` tool returns to a client, against a plain top-10.

Over the demo persona's eight turns, through a real MCP client connected in memory to the server
``recallwise mcp`` runs: per turn, the tokens of the tool result a client receives (its structured
content, as JSON) from ``recall`` and from ``search_memories(limit=10)`` (an ungated top-10, what
most memory servers return), and how many records each returned. Tokens are counted with the
policy's tokenizer (the bundled BERT WordPiece vocabulary, ``recallwise.policy.pack.count_tokens``).
"""

from __future__ import annotations

import json
from typing import Any

from ..demo import persona, seed_persona
from ..policy.pack import TOKENIZER_NAME, count_tokens
from ..stores import MemoryStore

__all__ = ["bench_mcp"]


def bench_mcp(store: MemoryStore, *, token_budget: int | None = None, top_k: int = 10) -> dict[str, Any]:
    """Run the demo turns through the MCP tools over ``store`` (seeded with the persona if empty)."""
    import anyio
    from mcp import Client

    from ..serve.mcp import DEFAULT_TOKEN_BUDGET, build_mcp_server
    from ..serve.service import MemoryService

    data = persona()
    actor = data["actor_id"]
    seed_persona(store, actor)
    budget = DEFAULT_TOKEN_BUDGET if token_budget is None else token_budget
    service = MemoryService.open(store, batch_embeddings=False)
    service.policy.warm_up()
    rows: list[dict[str, Any]] = []

    async def run() -> None:
        async with Client(build_mcp_server(service, actor_id=actor, token_budget=budget)) as client:
            for turn in data["demo_turns"]:
                gated = await client.call_tool("recall", {"message": turn})
                plain = await client.call_tool("search_memories", {"query": turn, "limit": top_k})
                if gated.is_error or plain.is_error:
                    raise RuntimeError(f"a tool failed on {turn!r}: {gated.content or plain.content}")
                g, p = gated.structured_content or {}, plain.structured_content or {}
                rows.append(
                    {
                        "turn": turn,
                        "recall_tokens": count_tokens(json.dumps(g)),
                        "recall_records": len(g["records"]),
                        "recall_context_tokens": g["context_tokens"],
                        f"top{top_k}_tokens": count_tokens(json.dumps(p)),
                        f"top{top_k}_records": len(p["results"]),
                        "kept": [r["text"] for r in g["records"]],
                    }
                )

    try:
        anyio.run(run)
    finally:
        service.close()
    total = {
        "recall_tokens": sum(r["recall_tokens"] for r in rows),
        f"top{top_k}_tokens": sum(r[f"top{top_k}_tokens"] for r in rows),
        "recall_records": sum(r["recall_records"] for r in rows),
        f"top{top_k}_records": sum(r[f"top{top_k}_records"] for r in rows),
    }
    return {
        "turns": rows,
        "total": total,
        "token_budget": budget,
        "top_k": top_k,
        "tokenizer": TOKENIZER_NAME,
        "counted": "the tool result's structured content, as JSON",
        "store": getattr(store, "url", type(store).__name__),
    }
