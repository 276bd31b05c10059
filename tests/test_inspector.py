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
REFIT_SCREENSHOT = SCREENSHOT.with_name("inspector-refit.png")


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


def two_tenants_keys(keys: Path) -> dict[str, str]:
    """Write a keys file: tenant a's admin and recall-only keys and tenant b's admin key, by name."""
    return {
        "a-admin": add_key(keys, tenant="a", scopes=["recall", "write", "admin"], label="a-admin"),
        "a-recall": add_key(keys, tenant="a", scopes=["recall"], label="a-recall"),
        "b-admin": add_key(keys, tenant="b", scopes=["recall", "write", "admin"], label="b-admin"),
    }


@pytest.fixture(scope="module")
def tenants(work):
    """A server with keys and a log without content: tenant a's admin and recall-only keys, tenant
    b's admin key; a's demo_user made 3 turns, b's none."""
    keys = work / "keys.yaml"
    made = two_tenants_keys(keys)
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
    # ids are opaque (they do not count the log's turns): distinct, exact in JavaScript, unordered
    ids = [d["id"] for d in listed]
    assert len(set(ids)) == len(ids) and all(0 < i < 2**53 for i in ids)
    assert [d["time"] for d in listed] == sorted((d["time"] for d in listed), reverse=True)
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
        assert c.get("/v1/labels").json() == {"labels": [], "next_cursor": None}
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


@pytest.fixture
def without_a_log(tmp_path):
    """The app in process, over an empty store, served without --log."""
    from fastapi.testclient import TestClient

    from recallwise.serve.app import create_app
    from recallwise.serve.service import MemoryService
    from recallwise.stores import open_store

    store = open_store(f"sqlite:///{tmp_path}/m.db")
    service = MemoryService.open(store, decider=None, batch_embeddings=False)
    # without keys the app serves only a local Host (TestClient's default is "testserver")
    with TestClient(create_app(service), base_url="http://localhost") as c:
        yield c


def test_a_server_without_a_log_says_how_to_get_one(without_a_log):
    answer = without_a_log.get("/v1/decisions")
    assert answer.status_code == 404 and "--log FILE" in answer.json()["error"]["message"]
    assert 'data-log="off"' in without_a_log.get("/ui").text


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

    assert (
        main(["bench", "inspector", "--turns", "2000", "--repeats", "2", "--refit-labels", "40", "--json"])
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["refit_labels"] == 40 and set(result["refit"]) == {"gate", "judge"}
    assert result["refit"]["gate"]["turns"] == 40  # the bench labels every turn's gate
    assert 10 <= result["refit"]["judge"]["turns"] < 40 and result["refit"]["judge"]["records"] > 0
    for figures in result["refit"].values():
        assert len(figures["request_s"]) == len(figures["fit_s"]) == 2
        assert all(0 < fit <= wall for fit, wall in zip(figures["fit_s"], figures["request_s"], strict=True))
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
    assert main(["bench", "inspector", "--turns", "1000", "--refit-labels", "12"]) == 2


# ---- the refit preview ----------------------------------------------------------------------------------
# The shipped seed gate set (20 messages, 10 needing memory) and the demo's 8 turns, labelled as their
# files say; each record a turn's search returned labelled by topic: it belongs when it is about what
# the message asks about (a hand-made truth over the demo persona's records).
def _gate_messages() -> list[tuple[str, bool]]:
    import json
    from importlib import resources

    seed = resources.files("recallwise.data.seed").joinpath("gate_labels.jsonl").read_text(encoding="utf-8")
    opened = set(persona()["demo_expect"]["gate_open"])
    return [(row["text"], row["label"]) for row in map(json.loads, seed.splitlines())] + [
        (message, message in opened) for message in TURNS
    ]


REFIT_MESSAGES = _gate_messages()
#: topic -> (words of a message about it, words of a record about it)
TOPICS = {
    "drink": (("drink",), ("caffeine", "flat white", "sparkling", "beverage")),
    "food": (
        ("lunch", "dinner", "restaurant", "menu", "cook"),
        ("vegetarian", "peanut", "vietnamese", "pho", "food"),
    ),
    "travel": (("flight", "holiday"), ("aisle", "climbing over", "vancouver", "yvr", "flight")),
    "code": (("function", "style"), ("python", "four spaces", "backend", "code")),
    "dog": (("dog",), ("biscuit", "dog")),
    "morning": (("morning",), ("gym",)),
}
#: the newest turns, left for the keyboard (the page test labels their gate)
BY_KEYBOARD = 3


def _topics(text: str, which: int) -> set[str]:
    text = text.lower()
    return {topic for topic, words in TOPICS.items() if any(w in text for w in words[which])}


def _belongs(message: str, record: str) -> bool:
    return bool(_topics(message, 0) & _topics(record, 1))


@pytest.fixture(scope="module")
def refit_server(work):
    """A server with keys logging content: tenant a's demo_user made the seed set's and the demo's
    28 turns, all but the newest 3 labelled through the API (gate and records); tenant b has none."""
    keys = work / "refit-keys.yaml"
    made = two_tenants_keys(keys)
    log = work / "refit-log.db"
    extra = ["--log", str(log), "--log-content"]
    with persona_server(work, "refit", actors=["a:demo_user"], keys=keys, extra=extra) as server:
        with server.client(made["a-admin"]) as c:
            for message, _ in REFIT_MESSAGES:
                body = {"actor_id": "demo_user", "session_id": "refit", "message": message}
                assert c.post("/v1/recall", json=body).status_code == 200
            truth = dict(REFIT_MESSAGES)
            turns = c.get("/v1/decisions", params={"limit": 100}).json()["decisions"]
            assert len(turns) == len(REFIT_MESSAGES)
            for turn in turns[BY_KEYBOARD:]:
                records = {x["id"]: _belongs(turn["message"], x["text"]) for x in turn["candidates"]}
                body = {"decision_id": turn["id"], "gate": truth[turn["message"]], "records": records or None}
                assert c.post("/v1/labels", json=body).status_code == 200
        yield server, made, log


def _preview(server: Server, key: str | None, head: str) -> httpx.Response:
    with server.client(key, timeout=300.0) as c:
        return c.post(f"/v1/refit-preview/{head}")


#: the figures the page shows, per head (the judge's keep threshold is keep_rule.absolute)
SHOWN = {
    "gate": ["n", "accuracy", "auc", "ece", "open_rate_true", "closed_rate_false", "threshold"],
    "judge": ["n", "turns", "accuracy", "auc", "mean_auc", "ece", "right_kept", "records_kept_per_request"],
}


def test_the_refit_preview_is_the_cli_fit_on_the_same_labels(refit_server, tmp_path):
    """The preview's figures are what `recallwise tune gate|judge --from-log` prints for the labels
    GET /v1/labels exports, and its commands, run as shown, write a head a policy loads."""
    import json

    from cli_runner import run_cli
    from recallwise.serve.inspector import GateRefitOut, JudgeRefitOut

    server, keys, log = refit_server
    with server.client(keys["a-admin"]) as c:
        exported = c.get("/v1/labels").json()
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps(exported), encoding="utf-8")
    for head, model in (("gate", GateRefitOut), ("judge", JudgeRefitOut)):
        answer = _preview(server, keys["a-admin"], head)
        assert answer.status_code == 200, answer.text
        preview = model.model_validate_json(answer.content).model_dump()
        cli = run_cli(
            "tune", head, "--from-log", str(log), "--labels", str(labels), "--base", "none", "--json"
        )
        assert cli.returncode == 0, cli.stderr
        fitted = json.loads(cli.stdout)
        for side in ("before", "after"):
            for key in SHOWN[head]:
                assert preview[side][key] == pytest.approx(fitted[side][key], abs=1e-6), (head, side, key)
        assert preview["graded_on"] == fitted["graded_on"] == "out of fold"
        assert preview["notes"] == fitted["notes"]
        if head == "judge":
            assert preview["before"]["keep_rule"] == pytest.approx(fitted["before"]["keep_rule"])
            assert preview["after"]["keep_rule"] == pytest.approx(fitted["after"]["keep_rule"])
        # the fit moved something: the comparison above is not of two copies of one default
        assert any(
            preview["before"][k] != preview["after"][k] for k in SHOWN[head] if k not in ("n", "turns")
        )

    gate = _preview(server, keys["a-admin"], "gate").json()
    judge = _preview(server, keys["a-admin"], "judge").json()
    labelled = len(REFIT_MESSAGES) - BY_KEYBOARD
    assert gate["turns"] == labelled and gate["left_out"] == 0
    assert judge["turns"] + judge["left_out"] == labelled and judge["turns"] >= 10
    assert judge["notes"][0].startswith(f"{judge['left_out']} labelled turn(s) without labelled records")
    with server.client(keys["a-admin"]) as c:
        served = c.get("/v1/decisions", params={"limit": 1}).json()["decisions"][0]["gate_threshold"]
    assert gate["before"]["threshold"] == pytest.approx(served)  # graded as the server's gate decides

    # the commands, run where the server runs, as shown
    # the commands, with the log's path (LOG) and the server's address ($RECALLWISE_URL) named, not
    # shown: nothing of the server's paths, nothing from the request's Host header
    commands = gate["commands"]
    assert commands["export"] == (
        'curl -s -H "Authorization: Bearer $RECALLWISE_KEY" "$RECALLWISE_URL/v1/labels?limit=10000" '
        "> labels.json"
    )
    assert commands["fit"] == (
        "recallwise tune gate --from-log LOG --labels labels.json --base none --write-head gate.npz "
        "--write-config recallwise.json"
    )
    assert commands["load"].startswith("RECALLWISE_CONFIG=recallwise.json recallwise serve")
    assert keys["a-admin"] not in json.dumps(gate) and str(log.parent) not in json.dumps(gate)
    with server.client(keys["a-admin"]) as c:  # GET computes nothing: the same commands, the counts
        plan = c.get("/v1/refit-preview/gate").json()
    assert plan["commands"] == commands and plan["turns"] == gate["turns"] and not plan["over_limit"]
    fit = run_cli(*commands["fit"].replace("LOG", str(log)).split()[1:], "--json", cwd=tmp_path)
    assert fit.returncode == 0, fit.stderr
    assert json.loads(fit.stdout)["after"]["accuracy"] == pytest.approx(gate["after"]["accuracy"], abs=1e-6)
    from recallwise import RecallPolicy
    from recallwise.stores import open_store

    with open_store("sqlite:///:memory:") as store:
        policy = RecallPolicy.from_config(tmp_path / "recallwise.json", store)
        assert policy.heads["gate"].startswith(f"gate head: config {tmp_path}")
        assert policy.thresholds["gate"] == pytest.approx(gate["after"]["threshold"])
        policy.close()


def test_tune_from_the_log_fits_each_head_on_the_turns_labelled_for_it(refit_server, tmp_path):
    """A log's labels hold both heads': a turn labelled for the judge only is left out of the gate's
    fit (said), and labels with none for the head are refused, naming what to give."""
    import json

    from cli_runner import run_cli

    server, keys, log = refit_server
    with server.client(keys["a-admin"]) as c:
        exported = c.get("/v1/labels").json()["labels"]
    records_only = [{k: v for k, v in t.items() if k != "label"} for t in exported if "records" in t]
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps({"labels": exported[:-3] + records_only[:3]}), encoding="utf-8")
    done = run_cli("tune", "gate", "--from-log", str(log), "--labels", str(mixed), "--base", "none", "--json")
    assert done.returncode == 0, done.stderr
    fitted = json.loads(done.stdout)
    assert fitted["before"]["n"] == len(exported) - 3
    assert (
        fitted["notes"][0] == "3 labelled turn(s) without a gate label left out (labelled for the judge only)"
    )
    assert fitted["data"][-1]["left_out"] == 3
    judge_only = tmp_path / "judge-only.json"
    judge_only.write_text(json.dumps({"labels": records_only}), encoding="utf-8")
    done = run_cli("tune", "gate", "--from-log", str(log), "--labels", str(judge_only))
    assert done.returncode == 2 and done.stderr.strip() == (
        f"recallwise: error: {judge_only}: no turn has a gate label (r / w on /ui, or 'gate' in POST "
        "/v1/labels); the gate head is fitted on the turns labelled for it"
    )


def test_the_refit_preview_writes_nothing_and_shows_a_tenant_only_its_own_labels(refit_server, work):
    server, keys, _ = refit_server
    with server.client(keys["a-admin"]) as c:
        labels_before = c.get("/v1/labels").json()
        decisions_before = c.get("/v1/decisions", params={"limit": 100}).json()
    files_before = sorted(p.name for p in work.iterdir())
    assert _preview(server, keys["a-admin"], "gate").status_code == 200
    # another tenant's admin key: none of a's labels, so nothing to fit, and nothing of a's said
    for head in ("gate", "judge"):
        other = _preview(server, keys["b-admin"], head)
        assert other.status_code == 422, other.text
        assert other.json()["error"]["message"] == (
            "no labelled turns yet: label turns on /ui (or POST /v1/labels), then preview a refit"
        )
    assert _preview(server, keys["a-recall"], "gate").status_code == 403
    assert _preview(server, None, "gate").status_code == 401
    with server.client(keys["a-admin"]) as c:
        assert c.get("/v1/labels").json() == labels_before
        assert c.get("/v1/decisions", params={"limit": 100}).json() == decisions_before
        assert c.get("/v1/refit-preview/other").status_code == 404
    assert sorted(p.name for p in work.iterdir()) == files_before


def test_the_refit_preview_says_why_it_cannot_fit(local, tenants):
    """Too few labels, one head's labels only, or a log without text: a 422 naming the reason."""
    listed = decisions(local).json()["decisions"]
    drink = next(d for d in listed if d["message"] == DRINK)
    hello = next(d for d in listed if d["message"] == "Hello!")
    with local.client() as c:
        for turn in listed:  # one class only
            assert c.post("/v1/labels", json={"decision_id": turn["id"], "gate": True}).status_code == 200
        gate = _preview(local, None, "gate")
        assert gate.status_code == 422
        assert gate.json()["error"]["message"] == (
            f"cannot preview a gate refit: fit data: every label is true ({len(listed)} turns); a head "
            "needs both classes"
        )
        assert c.post("/v1/labels", json={"decision_id": hello["id"], "gate": False}).status_code == 200
        gate = _preview(local, None, "gate")  # too few
        assert gate.status_code == 422 and gate.json()["error"]["message"].startswith(
            f"cannot preview a gate refit: fit data: {len(listed)} labelled turns ({len(listed) - 1} true, "
            "1 false); a gate head needs at least 20, with 5 of each class"
        )
        assert c.post("/v1/labels", json={"decision_id": drink["id"], "gate": True}).status_code == 200
    server, keys = tenants
    with server.client(keys["a-admin"]) as c:
        one = c.get("/v1/decisions").json()["decisions"][0]["id"]
        assert c.post("/v1/labels", json={"decision_id": one, "gate": True}).status_code == 200
    judge = _preview(server, keys["a-admin"], "judge")
    assert judge.status_code == 422 and "no turn has labelled records" in judge.json()["error"]["message"]
    gate = _preview(server, keys["a-admin"], "gate")
    assert gate.status_code == 422 and "--log-content" in gate.json()["error"]["message"]


def test_a_server_without_a_log_has_no_refit_preview(without_a_log):
    answer = without_a_log.post("/v1/refit-preview/gate")
    assert answer.status_code == 404 and "--log FILE" in answer.json()["error"]["message"]


@needs_chromium
def test_a_person_labels_with_the_keyboard_then_previews_a_refit(refit_server, browser):
    server, keys, _log = refit_server
    open_page(browser, server, keys["a-admin"], rows=len(REFIT_MESSAGES))
    assert browser.evaluate("document.querySelector('#refit-gate').children.length") == 0
    truth = dict(REFIT_MESSAGES)
    shown = browser.evaluate(
        "[...document.querySelectorAll('#turns tbody tr[data-id]')].map((tr) => ({"
        " message: tr.querySelector('td.message').textContent, opened: tr.children[5].textContent}))"
    )
    # the newest turns have no label yet: j to each, r (the gate was right) or w (wrong)
    for index in range(BY_KEYBOARD):
        browser.press("j")
        browser.wait_for(
            f"document.querySelectorAll('#turns tbody tr')[{index}].classList.contains('selected')"
        )
        right = truth[shown[index]["message"]] == shown[index]["opened"].startswith("opened")
        browser.press("r" if right else "w")
        browser.wait_for(
            f"document.querySelectorAll('#turns td.label')[{index}].textContent.startsWith('gate')"
        )
    browser.press("Escape")
    browser.press("f")
    browser.wait_for(
        "document.querySelectorAll('.refit-head[data-state=shown]').length === 2"
        " || document.querySelector('.refit-head[data-state=refused]') !== null",
        timeout=300.0,
    )
    panels = browser.evaluate(
        "[...document.querySelectorAll('.refit-head')].map((p) => ({"
        " head: p.dataset.head, state: p.dataset.state,"
        " rows: Object.fromEntries([...p.querySelectorAll('tbody tr')].map((tr) => [tr.dataset.key,"
        " [tr.querySelector('td.before').dataset.value, tr.querySelector('td.after').dataset.value]])),"
        " commands: p.querySelector('pre.commands')?.textContent,"
        " counted: p.querySelector('.counted')?.textContent}))"
    )
    assert [p["state"] for p in panels] == ["shown", "shown"], panels
    with server.client(keys["a-admin"]) as c:
        exported = c.get("/v1/labels").json()["labels"]
    assert len(exported) == len(REFIT_MESSAGES)  # the keyboard's labels landed
    for panel in panels:
        head = panel["head"]
        preview = _preview(server, keys["a-admin"], head).json()
        for key, (before, after) in panel["rows"].items():
            field = "keep_rule" if key == "keep_threshold" else key
            want = [preview[side][field] for side in ("before", "after")]
            if key == "keep_threshold":
                want = [w["absolute"] for w in want]
            got = [None if v == "" else float(v) for v in (before, after)]
            assert got == pytest.approx(want, abs=1e-6), (head, key)
        assert panel["commands"].splitlines() == [
            preview["commands"]["export"],
            preview["commands"]["fit"],
            preview["commands"]["load"],
        ]
        assert f"recallwise tune {head} --from-log LOG --labels labels.json" in panel["commands"]
        assert keys["a-admin"] not in panel["commands"]
    assert panels[0]["counted"].startswith(f"{len(REFIT_MESSAGES)} labelled turn(s)")
    assert "nothing was written" in browser.evaluate("document.querySelector('#status').textContent")
    assert browser.console_errors() == []
    assert all(u.startswith(server.url) or u.startswith("data:") for u in browser.requested_urls())
    if os.environ.get("RECALLWISE_WRITE_SCREENSHOT") == "1":
        REFIT_SCREENSHOT.write_bytes(browser.element_screenshot("#refit"))

    # another tenant's admin key: the same page previews nothing of a's
    open_page(browser, server, keys["b-admin"], rows=0)
    browser.press("f")
    browser.wait_for(
        "document.querySelectorAll('.refit-head[data-state=refused]').length === 2", timeout=60.0
    )
    refused = browser.evaluate(
        "[...document.querySelectorAll('.refit-head p.refused')].map((p) => p.textContent)"
    )
    assert all(r.startswith("no labelled turns yet") for r in refused)
    assert browser.evaluate("document.querySelectorAll('.refit-head td').length") == 0
    # the two 422s the page showed as its reason are the only errors (Chromium logs each one)
    refusal = "Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)"
    assert browser.failed_loads() == [
        (f"{server.url}/v1/refit-preview/gate", refusal),
        (f"{server.url}/v1/refit-preview/judge", refusal),
    ]
    assert browser.console_errors() == [refusal, refusal]
