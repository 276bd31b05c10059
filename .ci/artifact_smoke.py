"""The installed artifacts against each other, the way a user meets them (run by .ci/artifacts.sh).

Run with the python of a fresh venv that holds only the built wheel, from a directory outside the
source tree (and with ``python -I``), so every import and file read comes from the wheel:

    python -I artifact_smoke.py base VERSION WORKDIR              # the wheel alone (no extras)
    python -I artifact_smoke.py extras VERSION WORKDIR NPM_TARBALL  # after its [serve,mcp] extras

``base`` checks that ``import recallwise`` comes from this venv at VERSION, and runs ``recallwise
demo --json`` on a fresh SQLite store in WORKDIR (one JSON object, no decision or store errors; it
seeds the demo persona). ``extras`` then, over that store: ``recallwise serve`` (a real process on a
free loopback port): ``/healthz`` reports VERSION, one ``POST /v1/recall`` returns the persona's
drink, ``/ui`` and its static files load; the npm tarball installed into a fresh Node project, whose
``RecallwiseClient`` recalls the drink from the same server (Node 22 first on PATH: .ci/node.sh);
``recallwise mcp`` over stdio through the official MCP client, one ``recall`` call returning it too.
It stops at the first failure (exit 1, one line naming the step).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

DRINK = "I'd like a drink, what should I get?"
EXPECTED = "flat white"  # the demo persona's drink (src/recallwise/data/persona.json)


def fail(step: str, message: str) -> None:
    print(f"artifact smoke: FAIL {step}: {message}", file=sys.stderr)
    raise SystemExit(1)


def ok(step: str, message: str) -> None:
    print(f"artifact smoke: ok   {step}: {message}", file=sys.stderr)


def console_script() -> str:
    """The venv's own ``recallwise`` (never one elsewhere on PATH)."""
    path = Path(sys.executable).with_name("recallwise")
    if not path.exists():
        fail("console script", f"{path} is missing: the wheel declares no `recallwise` entry point")
    return str(path)


def check_import(version: str) -> None:
    import recallwise

    where = Path(recallwise.__file__).resolve()
    if not where.is_relative_to(Path(sys.prefix).resolve()):
        fail("import", f"recallwise was imported from {where}, not from the venv {sys.prefix}")
    if recallwise.__version__ != version:
        fail("import", f"recallwise.__version__ is {recallwise.__version__}, expected {version}")
    ok("import", f"recallwise {recallwise.__version__} from {where.parent}")


def run_demo(cli: str, store: str) -> None:
    done = subprocess.run([cli, "demo", "--json", "--store", store], capture_output=True, text=True)
    if done.returncode != 0:
        fail("demo", f"exit {done.returncode}: {done.stderr.strip()[-300:]}")
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError as error:
        fail("demo", f"stdout is not one JSON object ({error}): {done.stdout[:200]!r}")
    gated = result["arms"]["gated"]
    errors = gated["decider_errors"] + gated["store_errors"]
    if errors:
        fail("demo", f"{errors} decision/store errors in the gated arm")
    stock = result["arms"]["stock"]
    ok("demo", f"gated arm injected {gated['records_injected']} records, stock {stock['records_injected']}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(cli: str, store: str, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    log = (workdir / "serve.log").open("wb")
    process = subprocess.Popen(
        [cli, "serve", "--store", store, "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            fail("serve", f"exited {process.returncode}: {(workdir / 'serve.log').read_text()[-300:]}")
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    process.terminate()
    fail("serve", f"not ready within 90 s: {(workdir / 'serve.log').read_text()[-300:]}")
    raise AssertionError  # unreachable


def check_server(url: str, version: str, actor: str) -> None:
    health = httpx.get(url + "/healthz", timeout=5).json()
    if health.get("version") != version:
        fail("healthz", f"/healthz says {health}, expected version {version}")
    ok("healthz", json.dumps(health))
    reply = httpx.post(url + "/v1/recall", json={"actor_id": actor, "message": DRINK}, timeout=30)
    if reply.status_code != 200:
        fail("recall", f"POST /v1/recall answered {reply.status_code}: {reply.text[:200]}")
    texts = [record["text"] for record in reply.json()["records"]]
    if not any(EXPECTED in text.lower() for text in texts):
        fail("recall", f"POST /v1/recall returned {texts}, none naming the {EXPECTED}")
    ok("recall", f"POST /v1/recall kept {len(texts)} records, the {EXPECTED} among them")
    page = httpx.get(url + "/ui", timeout=5)
    if page.status_code != 200 or "<html" not in page.text.lower():
        fail("inspector", f"GET /ui answered {page.status_code}")
    for name in ("inspector.css", "inspector.js"):
        if httpx.get(f"{url}/ui/{name}", timeout=5).status_code != 200:
            fail("inspector", f"GET /ui/{name} did not answer 200: the wheel lacks the inspector's files")
    ok("inspector", "GET /ui and its CSS and JS")


async def mcp_recall(cli: str, store: str, actor: str) -> str:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=cli, args=["mcp", "--store", store, "--actor", actor])
    async with Client(params) as client:
        result = await client.call_tool("recall", {"message": DRINK})
        structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
        return json.dumps(structured or {}) + " ".join(getattr(b, "text", "") for b in result.content or [])


def check_mcp(cli: str, store: str, actor: str) -> None:
    try:
        text = asyncio.run(mcp_recall(cli, store, actor))
    except Exception as error:  # the server did not start, or broke the protocol
        fail("mcp", f"{type(error).__name__}: {str(error)[:200]}")
    if EXPECTED not in text.lower():
        fail("mcp", f"the recall tool's answer does not name the {EXPECTED}: {text[:200]}")
    ok("mcp", f"`recallwise mcp` answered one recall call with the {EXPECTED}")


NODE_RECALL = """
import { RecallwiseClient } from "recallwise";
const client = new RecallwiseClient({ baseUrl: process.env.RECALLWISE_URL, timeoutMs: 30000 });
const result = await client.recall(process.env.RECALLWISE_ACTOR, process.env.RECALLWISE_MESSAGE);
console.log(JSON.stringify({ failed: result.failed, texts: result.records.map((r) => r.text) }));
"""


def check_npm(tarball: Path, workdir: Path, url: str, actor: str) -> None:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        fail("npm", "node and npm are not on PATH (.ci/node.sh provides Node 22)")
    app = workdir / "node-app"
    app.mkdir()
    quiet = ["--no-audit", "--no-fund", "--silent"]
    for command in ([npm, "init", "-y"], [npm, "install", *quiet, str(tarball)]):
        done = subprocess.run(command, cwd=app, capture_output=True, text=True)
        if done.returncode != 0:
            fail("npm", f"{' '.join(command[1:3])} failed: {done.stderr.strip()[-300:]}")
    (app / "recall.mjs").write_text(NODE_RECALL, encoding="utf-8")
    env = {**os.environ, "RECALLWISE_URL": url, "RECALLWISE_ACTOR": actor, "RECALLWISE_MESSAGE": DRINK}
    done = subprocess.run([node, "recall.mjs"], cwd=app, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        fail("npm", f"node recall.mjs exited {done.returncode}: {done.stderr.strip()[-300:]}")
    result = json.loads(done.stdout)
    if result["failed"] or not any(EXPECTED in text.lower() for text in result["texts"]):
        fail("npm", f"the TypeScript client's recall returned {result}")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    ok("npm", f"{tarball.name} in a fresh project on node {version} recalled the {EXPECTED}")


def main() -> int:
    stage, version, workdir = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    if Path.cwd().resolve().is_relative_to(Path(__file__).resolve().parents[1]):
        fail("setup", "run from outside the source tree")
    cli = console_script()
    check_import(version)
    store = f"sqlite:///{workdir / 'memory.db'}"
    if stage == "base":
        run_demo(cli, store)  # seeds the demo persona into the store the extras' stage reads
        return 0
    from recallwise.demo import persona

    actor = str(persona()["actor_id"])
    server, url = start_server(cli, store, workdir)
    try:
        check_server(url, version, actor)
        check_npm(Path(sys.argv[4]), workdir, url, actor)
    finally:
        server.terminate()
        server.wait(timeout=30)
    check_mcp(cli, store, actor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
