"""The MCP server with real MCP clients: the SDK's client in memory, over stdio (a subprocess of the
``recallwise`` console script) and over streamable HTTP against a real ``recallwise serve``."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("fastapi")

import anyio
from mcp import Client, StdioServerParameters

from recallwise.demo import persona, seed_persona
from recallwise.serve.auth import add_key
from recallwise.serve.mcp import NOTHING_RELEVANT, build_mcp_server
from recallwise.serve.service import MemoryService
from recallwise.stores import open_store

DRINK = "I'd like a drink, what should I get?"
ACTOR = persona()["actor_id"]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mcp") / "m.db"
    store = open_store(f"sqlite:///{path}")
    seed_persona(store)
    store.close()
    return path


def _copy(db: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy.db"
    shutil.copy(db, target)
    return target


def _text(result: Any) -> str:
    return json.dumps(result.structured_content or {}) + " ".join(
        getattr(b, "text", "") for b in result.content or []
    )


async def _exercise(client: Client) -> None:
    """What every transport must do the same way."""
    tools = (await client.list_tools()).tools
    names = {t.name for t in tools}
    assert names == {"recall", "remember", "search_memories", "forget", "forget_everything", "list_memories"}
    for tool in tools:
        props = tool.input_schema.get("properties", {})
        assert not any("actor" in p or "user" in p for p in props), tool.name
        assert tool.output_schema, f"{tool.name} has no structured output"
        assert tool.description
    hello = await client.call_tool("recall", {"message": "Hello!"})
    assert not hello.is_error
    assert hello.structured_content["records"] == []
    assert hello.structured_content["context"] == NOTHING_RELEVANT
    drink = await client.call_tool("recall", {"message": DRINK})
    body = drink.structured_content
    texts = " ".join(r["text"] for r in body["records"]).lower()
    assert "flat white" in texts and "aisle" not in texts
    assert body["context_tokens"] <= body["token_budget"]
    assert {"id", "text", "namespace", "score"} <= set(body["records"][0])


async def test_in_memory_tools_and_errors(db: Path, tmp_path: Path) -> None:
    service = MemoryService.open(open_store(f"sqlite:///{_copy(db, tmp_path)}"), batch_embeddings=False)
    try:
        async with Client(build_mcp_server(service, actor_id=ACTOR)) as client:
            await _exercise(client)
            before = service.store.count_records()
            for name, args, needle in [
                ("recall", {}, "message"),
                ("recall", {"message": "x" * 20_000}, "limit"),
                ("recall", {"message": "  "}, "non-empty"),
                ("forget", {"record_id": "no-such-record"}, "no record"),
                ("remember", {}, "exactly one"),
                ("search_memories", {"query": "coffee", "limit": 500}, "limit"),
                # whole numbers as the HTTP API takes them: not "2", 2.0 or true (the SDK would coerce)
                ("search_memories", {"query": "coffee", "limit": "2"}, "limit"),
                ("search_memories", {"query": "coffee", "limit": 2.0}, "limit"),
                ("search_memories", {"query": "coffee", "offset": True}, "offset"),
                ("list_memories", {"cursor": "0"}, "cursor"),
            ]:
                result = await client.call_tool(name, args)
                assert result.is_error, (name, args)
                assert needle in _text(result), _text(result)
            assert service.store.count_records() == before
            # the server still serves
            assert not (await client.call_tool("recall", {"message": DRINK})).is_error

            page = (await client.call_tool("list_memories", {})).structured_content
            assert page["total"] == before and page["records"]
            first = await client.call_tool("search_memories", {"query": "coffee", "limit": 2})
            found = first.structured_content
            assert len(found["results"]) == 2 and found["next_offset"] == 2
            second = await client.call_tool("search_memories", {"query": "coffee", "limit": 2, "offset": 2})
            assert {r["id"] for r in second.structured_content["results"]}.isdisjoint(
                r["id"] for r in found["results"]
            )

            rid = found["results"][0]["id"]
            gone = await client.call_tool("forget", {"record_id": rid})
            assert not gone.is_error and gone.structured_content["deleted"] == 1
            assert service.store.count_records() == before - 1
            again = await client.call_tool("forget", {"record_id": rid})
            assert again.is_error

            wrote = await client.call_tool("remember", {"text": "I just adopted a cat called Miso."})
            assert not wrote.is_error, _text(wrote)
            assert service.store.count_records() > before - 1
            prompts = (await client.list_prompts()).prompts
            assert [p.name for p in prompts] == ["recallwise-memory"]
    finally:
        service.close()


async def test_token_budget_is_kept(db: Path, tmp_path: Path) -> None:
    service = MemoryService.open(open_store(f"sqlite:///{_copy(db, tmp_path)}"), batch_embeddings=False)
    try:
        async with Client(build_mcp_server(service, actor_id=ACTOR, token_budget=20)) as client:
            body = (await client.call_tool("recall", {"message": DRINK})).structured_content
            assert body["token_budget"] == 20
            assert body["context_tokens"] <= 20
            assert body["dropped_for_budget"] >= 1
    finally:
        service.close()


async def test_stdio_console_script(db: Path, tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("recallwise")
    params = StdioServerParameters(
        command=str(exe), args=["mcp", "--store", f"sqlite:///{_copy(db, tmp_path)}", "--actor", ACTOR]
    )
    with anyio.fail_after(120):
        async with Client(params) as client:
            await _exercise(client)


def test_mcp_cli_usage_errors(tmp_path: Path) -> None:
    import subprocess

    exe = Path(sys.executable).with_name("recallwise")
    missing = subprocess.run([str(exe), "mcp", "--store", "sqlite:///x.db"], capture_output=True, text=True)
    assert missing.returncode == 2 and "--actor" in missing.stderr
    bad = subprocess.run(
        [str(exe), "mcp", "--store", f"sqlite:///{tmp_path}/x.db", "--actor", "a", "--mcp-token-budget", "0"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--mcp-token-budget" in bad.stderr


async def test_streamable_http_behind_keys(db: Path, tmp_path: Path) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from serve_server import serve

    keys = tmp_path / "keys.yaml"
    key = add_key(keys, tenant="acme", scopes=["recall", "write"], label=ACTOR)
    other = add_key(keys, tenant="globex", scopes=["recall", "write"], label="intruder")
    store_path = tmp_path / "http.db"
    store = open_store(f"sqlite:///{store_path}")
    seed_persona(store, actor_id=f"acme:{ACTOR}")
    store.close()
    with serve(f"sqlite:///{store_path}", "--keys", str(keys), log_dir=tmp_path) as server:
        url = server.url + "/mcp"
        headers = {"authorization": f"Bearer {key}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            await _exercise(client)
        # another tenant's key: its own actor, whose memory is empty (acme's is out of reach)
        async with (
            httpx2.AsyncClient(headers={"authorization": f"Bearer {other}"}, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            body = (await client.call_tool("recall", {"message": DRINK})).structured_content
            assert body["records"] == [] and body["relevant"] is False
            listed = (await client.call_tool("list_memories", {})).structured_content
            assert listed["total"] == 0
        # a wrong key: refused before the MCP layer, the server still serving
        wrong = server.client("not-a-key").post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert wrong.status_code == 401
        assert server.client(key).get("/readyz").status_code == 200


def test_bench_mcp_json() -> None:
    from cli_runner import run_cli

    done = run_cli("bench", "mcp", "--json")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    turns = {r["turn"]: r for r in body["turns"]}
    assert len(turns) == 8
    assert turns["Hello!"]["recall_records"] == 0 and turns["Hello!"]["top10_records"] == 10
    assert any("flat white" in k.lower() for k in turns[DRINK]["kept"])
    assert body["total"]["recall_tokens"] < body["total"]["top10_tokens"]
    assert all(r["recall_context_tokens"] <= body["token_budget"] for r in body["turns"])
    assert run_cli("bench", "mcp", "--mcp-token-budget", "0").returncode == 2


async def test_streamable_http_without_keys_uses_mcp_actor(db: Path, tmp_path: Path) -> None:
    from mcp.client.streamable_http import streamable_http_client

    from serve_server import serve

    store = f"sqlite:///{_copy(db, tmp_path)}"
    with serve(store, "--mcp-actor", ACTOR, log_dir=tmp_path) as server:
        async with Client(streamable_http_client(server.url + "/mcp")) as client:
            await _exercise(client)
