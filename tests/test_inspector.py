"""The decision inspector on a real ``recallwise serve --log``: the APIs over real HTTP, and the
``/ui`` page in a real headless Chromium (``tests/chromium.py``) as a person uses it: the list,
a turn's detail, labelling with the keyboard, a reload, another tenant's key.

``RECALLWISE_WRITE_SCREENSHOT=1 pytest tests/test_inspector.py`` also writes the page's
screenshot to ``docs/inspector.png`` (the docs' page shows it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from chromium import Chromium, inked_share, needs_chromium
from recallwise.demo import persona
from recallwise.serve.auth import add_key
from serve_server import Server, persona_server

pytest.importorskip("fastapi")
pytestmark = pytest.mark.slow

TURNS = list(persona()["demo_turns"])  # 8 turns: the gate opens on 3
HOSTILE = "What should I have for dinner? <script>window.pwned=1</script>"
DRINK = "I'd like a drink, what should I get?"
SCREENSHOT = Path(__file__).resolve().parents[1] / "docs" / "inspector.png"


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("inspector")


@pytest.fixture(scope="module")
def local(work):
    """A server without keys, logging content, after the demo's 8 turns and a hostile message."""
    log = work / "local-log.db"
    with persona_server(work, "local", extra=["--log", str(log), "--log-content"]) as server:
        with server.client() as c:
            for i, message in enumerate([*TURNS, HOSTILE]):
                session = "evening" if i >= 6 else "morning"
                body = {"actor_id": "demo_user", "session_id": session, "message": message}
                assert c.post("/v1/recall", json=body).status_code == 200
        yield server


@pytest.fixture(scope="module")
def tenants(work):
    """A server with keys and a log without content: tenant a's admin and recall-only keys, tenant
    b's admin key; a's demo_user made 3 turns, b's none."""
    keys = work / "keys.yaml"
    made = {
        "a-admin": add_key(keys, tenant="a", scopes=["recall", "write", "admin"], label="a-admin"),
        "a-recall": add_key(keys, tenant="a", scopes=["recall"], label="a-recall"),
        "b-admin": add_key(keys, tenant="b", scopes=["recall", "write", "admin"], label="b-admin"),
    }
    log = work / "tenants-log.db"
    with persona_server(
        work, "tenants", actors=["a:demo_user"], keys=keys, extra=["--log", str(log)]
    ) as server:
        with server.client(made["a-admin"]) as c:
            for message in ("Hello!", DRINK, "What should I have for dinner?"):
                assert (
                    c.post("/v1/recall", json={"actor_id": "demo_user", "message": message}).status_code
                    == 200
                )
        yield server, made


def decisions(server: Server, key: str | None = None, **params: Any) -> httpx.Response:
    with server.client(key) as c:
        return c.get("/v1/decisions", params=params)


# ---- the APIs ---------------------------------------------------------------------------------------
def test_every_turn_is_listed_newest_first_with_its_candidates(local):
    page = decisions(local, limit=50).json()
    assert page["content_logged"] is True and page["next_cursor"] is None
    listed = page["decisions"]
    assert [d["message"] for d in listed] == list(reversed([*TURNS, HOSTILE]))
    assert [d["id"] for d in listed] == sorted((d["id"] for d in listed), reverse=True)
    opened = [d for d in listed if d["gate_open"]]
    assert {d["message"] for d in opened} >= {DRINK, HOSTILE}
    for d in listed:
        assert 0 <= d["gate_p"] <= 1 and d["gate_threshold"] is not None
        assert d["gate_open"] == (len(d["namespaces_searched"]) > 0)
        assert d["errors"] == [] and d["failed_open"] == []
    drink = next(d for d in listed if d["message"] == DRINK)
    kept = [c for c in drink["candidates"] if c["kept"]]
    dropped = [c for c in drink["candidates"] if not c["kept"]]
    assert kept and dropped and len(kept) == drink["kept"] and len(dropped) == drink["dropped"]
    assert any("flat white" in c["text"] for c in kept)
    assert all(c["reason"] and c["judge_p"] is not None and 0 <= c["score"] <= 1 for c in drink["candidates"])
    assert drink["context_tokens"] > 0 and drink["stock_tokens"] > drink["context_tokens"]
    closed = next(d for d in listed if d["message"] == "Hello!")
    assert closed["candidates"] == [] and closed["context_tokens"] == 0 < closed["stock_tokens"]


def test_filters_and_pages(local):
    assert {d["gate_open"] for d in decisions(local, opened="true").json()["decisions"]} == {True}
    closed = decisions(local, opened="false").json()["decisions"]
    assert closed and {d["gate_open"] for d in closed} == {False}
    assert {d["session_id"] for d in decisions(local, session_id="evening").json()["decisions"]} == {
        "evening"
    }
    assert decisions(local, errors="true").json()["decisions"] == []
    assert decisions(local, actor_id="someone_else").json()["decisions"] == []
    seen, cursor = [], None
    while True:
        page = decisions(local, limit=4, **({"cursor": cursor} if cursor else {})).json()
        seen += [d["id"] for d in page["decisions"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(TURNS) + 1 == len(set(seen))
    one = seen[3]
    with local.client() as c:
        assert c.get(f"/v1/decisions/{one}").json()["id"] == one
        assert c.get("/v1/decisions/999999").status_code == 404
    bad = decisions(local, limit=0)
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "query.limit"


def test_labels_land_whole_and_come_back_in_the_fit_format(local):
    drink = next(d for d in decisions(local).json()["decisions"] if d["message"] == DRINK)
    kept = next(c for c in drink["candidates"] if c["kept"])
    dropped = next(c for c in drink["candidates"] if not c["kept"])
    with local.client() as c:
        bad = c.post(
            "/v1/labels", json={"decision_id": drink["id"], "gate": True, "records": {"no-such": True}}
        )
        assert bad.status_code == 422 and "'no-such' is not one of decision" in bad.json()["error"]["message"]
        assert c.get("/v1/decisions/" + str(drink["id"])).json()["label"] is None  # nothing landed
        assert c.post("/v1/labels", json={"decision_id": drink["id"]}).status_code == 422
        assert c.post("/v1/labels", json={"decision_id": 999999, "gate": True}).status_code == 404
        assert c.post("/v1/labels", json={"decision_id": drink["id"], "gate": "maybe"}).status_code == 422
        body = {"decision_id": drink["id"], "gate": True, "records": {kept["id"]: True, dropped["id"]: False}}
        answer = c.post("/v1/labels", json=body)
        assert answer.status_code == 200, answer.text
        exported = c.get("/v1/labels").json()["labels"]
        shown = c.get("/v1/decisions/" + str(drink["id"])).json()
    mine = next(t for t in exported if t["decision_id"] == drink["id"])
    assert mine == answer.json()
    assert {k: mine[k] for k in ("actor_id", "session_id", "text", "label")} == {
        "actor_id": "demo_user",
        "session_id": drink["session_id"],
        "text": DRINK,
        "label": True,
    }
    assert sorted(mine["records"], key=lambda r: r["id"]) == sorted(
        [
            {"id": kept["id"], "text": kept["text"], "label": True},
            {"id": dropped["id"], "text": dropped["text"], "label": False},
        ],
        key=lambda r: r["id"],
    )
    assert shown["label"] is True
    assert {c["id"]: c["label"] for c in shown["candidates"] if c["label"] is not None} == {
        kept["id"]: True,
        dropped["id"]: False,
    }


def test_tenants_see_only_their_own_turns_and_only_with_the_admin_scope(tenants):
    server, keys = tenants
    mine = decisions(server, keys["a-admin"]).json()
    assert len(mine["decisions"]) == 3 and {d["actor_id"] for d in mine["decisions"]} == {"demo_user"}
    assert mine["content_logged"] is False
    for d in mine["decisions"]:
        assert "message" not in d and all("text" not in c for c in d["candidates"])
        assert all("a:" not in c["namespace"] for c in d["candidates"])
    assert decisions(server, keys["b-admin"]).json()["decisions"] == []
    assert decisions(server, keys["b-admin"], actor_id="demo_user").json()["decisions"] == []
    assert decisions(server, keys["a-recall"]).status_code == 403
    assert decisions(server).status_code == 401
    one = mine["decisions"][0]["id"]
    with server.client(keys["b-admin"]) as c:
        assert c.get(f"/v1/decisions/{one}").status_code == 404
        assert c.post("/v1/labels", json={"decision_id": one, "gate": False}).status_code == 404
        assert c.get("/v1/labels").json() == {"labels": []}
    with server.client(keys["a-admin"]) as c:
        assert c.post("/v1/labels", json={"decision_id": one, "gate": False}).status_code == 200
        (labelled,) = c.get("/v1/labels").json()["labels"]
    assert labelled == {
        "decision_id": one,
        "time": mine["decisions"][0]["time"],
        "actor_id": "demo_user",
        "session_id": None,
        "label": False,
    }
    with server.client(keys["a-recall"]) as c:
        assert c.get("/v1/labels").status_code == 403
        assert c.post("/v1/labels", json={"decision_id": one, "gate": True}).status_code == 403


def test_the_page_is_static_and_strict(local, tenants):
    server, _ = tenants
    for each in (local, server):
        with each.client() as c:
            page = c.get("/ui")
            script = c.get("/ui/inspector.js")
            assert c.get("/ui/other.js").status_code == 404
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        policy = page.headers["content-security-policy"]
        assert (
            "script-src 'self'" in policy and "unsafe-inline" not in policy and "default-src 'none'" in policy
        )
        assert "<script>" not in page.text and " on" not in page.text.split("<body", 1)[1].split(">", 1)[0]
        assert script.headers["content-type"].startswith("text/javascript")
        assert "innerHTML" not in script.text and "eval(" not in script.text
    with server.client() as c:
        assert "demo_user" not in c.get("/ui").text  # the page holds no data: the APIs do, with a key


def test_a_server_without_a_log_says_how_to_get_one(tmp_path):
    from fastapi.testclient import TestClient

    from recallwise.serve.app import create_app
    from recallwise.serve.service import MemoryService
    from recallwise.stores import open_store

    store = open_store(f"sqlite:///{tmp_path}/m.db")
    service = MemoryService.open(store, decider=None, batch_embeddings=False)
    # without keys the app serves only a local Host (TestClient's default is "testserver")
    with TestClient(create_app(service), base_url="http://localhost") as c:
        answer = c.get("/v1/decisions")
        assert answer.status_code == 404 and "--log FILE" in answer.json()["error"]["message"]
        assert 'data-log="off"' in c.get("/ui").text


# ---- the page in Chromium -------------------------------------------------------------------------------
ROWS = "document.querySelectorAll('#turns tbody tr[data-id]').length"


@pytest.fixture
def browser(tmp_path: Path) -> Any:
    chromium = Chromium(tmp_path / "profile")
    yield chromium
    chromium.close()


def open_page(browser: Chromium, server: Server, key: str | None = None, rows: int = 1) -> None:
    browser.load(server.url + "/ui")
    if key is not None:
        browser.evaluate(
            f"document.querySelector('#key').value = {key!r};"
            "document.querySelector('#key-form').requestSubmit()"
        )
    if rows:
        browser.wait_for(f"{ROWS} >= {rows}")
    else:
        browser.wait_for("document.querySelector('#status').textContent.includes('turn(s) shown')")


@needs_chromium
def test_a_person_reads_the_turns_and_labels_one_with_the_keyboard(local, browser):
    total = len(TURNS) + 1
    open_page(browser, local, rows=total)
    assert browser.evaluate(ROWS) == total
    assert browser.evaluate("window.pwned === undefined")
    messages = browser.evaluate(
        "[...document.querySelectorAll('#turns td.message')].map((td) => td.textContent)"
    )
    assert messages[0] == HOSTILE and DRINK in messages  # the hostile message is text, not markup
    charts = browser.evaluate(
        "[...document.querySelectorAll('figure.chart')].map((f) => {"
        " const b = f.querySelector('svg').getBoundingClientRect();"
        " return {id: f.id, points: Number(f.dataset.points), bars: Number(f.dataset.bars || 0),"
        " x: b.x + scrollX, y: b.y + scrollY, width: b.width, height: b.height}; })"
    )
    assert [c["id"] for c in charts] == ["chart-gate", "chart-tokens"]
    assert charts[0]["points"] == total and charts[0]["bars"] >= 2 and charts[1]["points"] == total
    for chart in charts:
        assert chart["width"] > 200 and chart["height"] > 80
        ink = inked_share(browser.screenshot(chart["x"], chart["y"], chart["width"], chart["height"]))
        assert ink > 0.01, (chart, ink)

    # j down to the dinner turn (the other tests label the drink turn): its detail shows kept and
    # dropped records, each with its reason
    index = messages.index(HOSTILE)
    for _ in range(index + 1):
        browser.press("j")
    browser.wait_for("document.querySelector('#detail h2') !== null")
    assert browser.evaluate("document.querySelector('#detail .message').textContent") == HOSTILE
    rows = browser.evaluate(
        "[...document.querySelectorAll('#detail .candidates tbody tr')].map((tr) => ({id: tr.dataset.id,"
        " decision: tr.children[5].textContent, reason: tr.children[6].textContent}))"
    )
    assert {r["decision"] for r in rows} == {"kept", "dropped"} and all(r["reason"] for r in rows)

    # r: the gate was right; b: the first candidate belongs; n d: the second does not
    browser.press("r")
    browser.wait_for("document.querySelector('#status').textContent.startsWith('label saved')")
    browser.press("b")
    browser.wait_for(
        "document.querySelectorAll('#detail .candidates td.label .current:not(:empty)').length === 1"
    )
    browser.press("n")
    browser.press("d")
    browser.wait_for(
        "document.querySelectorAll('#detail .candidates td.label .current:not(:empty)').length === 2"
    )

    dinner = next(d for d in decisions(local).json()["decisions"] if d["message"] == HOSTILE)
    with local.client() as c:
        labelled = next(t for t in c.get("/v1/labels").json()["labels"] if t["decision_id"] == dinner["id"])
    assert labelled["label"] is True  # the gate opened and was right: memory was needed
    assert {r["id"]: r["label"] for r in labelled["records"]} == {rows[0]["id"]: True, rows[1]["id"]: False}

    # a reload shows the labels from the server
    open_page(browser, local, rows=total)
    label_cells = browser.evaluate(
        "[...document.querySelectorAll('#turns td.label')].map((td) => td.textContent)"
    )
    assert label_cells[index] == "gate right, 2 record(s)"
    for _ in range(index + 1):
        browser.press("j")
    browser.wait_for("document.querySelector('#gate-label') !== null")
    assert browser.evaluate("document.querySelector('#gate-label').textContent") == (
        "label: right (memory was needed)"
    )

    assert browser.console_errors() == []
    assert all(u.startswith(local.url) or u.startswith("data:") for u in browser.requested_urls())
    if os.environ.get("RECALLWISE_WRITE_SCREENSHOT") == "1":
        SCREENSHOT.write_bytes(browser.page_screenshot())


@needs_chromium
def test_another_tenants_admin_key_sees_nothing_on_the_page(tenants, browser):
    server, keys = tenants
    browser.load(server.url + "/ui")
    assert browser.evaluate("document.querySelector('#key-form').hidden") is False
    assert browser.evaluate(ROWS) == 0
    open_page(browser, server, keys["b-admin"], rows=0)
    assert browser.evaluate(ROWS) == 0
    assert browser.evaluate("document.querySelector('#turns td.empty').textContent") == "no turns match"
    open_page(browser, server, keys["a-admin"], rows=3)
    assert browser.evaluate(ROWS) == 3
    assert "not logged" in browser.evaluate("document.querySelector('#notice').textContent")
    assert browser.evaluate("document.cookie") == ""
    assert browser.console_errors() == []


def test_bench_inspector_times_every_filter_on_a_served_log(capsys):
    """``recallwise bench inspector`` end to end on a small log: every filter's page answered."""
    import json

    from recallwise.cli import main

    assert main(["bench", "inspector", "--turns", "2000", "--repeats", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["turns"] == 2000 and result["target_ms"] == 300.0
    assert set(result["queries"]) == {
        "newest",
        "actor",
        "session",
        "closed",
        "errors",
        "actor_closed",
        "last_page",
    }
    for name, figures in result["queries"].items():
        assert figures["returned"] > 0, name
        assert 0 < figures["p50_ms"] <= figures["max_ms"]
    assert result["queries"]["newest"]["returned"] == 50
    assert main(["bench", "inspector", "--turns", "10"]) == 2
