"""systemone and openrouter against local wire-format servers: every failure is typed."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import pytest

from recallgate.deciders import make_decider
from recallgate.deciders.http import HttpSettings, JsonPoster, error_from_body, truncate_state
from recallgate.deciders.openrouter import OpenRouterDecider
from recallgate.deciders.systemone import SystemOneDecider
from recallgate.errors import DeciderBadResponse, DeciderTimeout, DeciderUnavailable, UsageError
from wire_servers import COST_PER_CALL, WireServer, openrouter_server, systemone_server

QUESTIONS = {
    "gate": {"type": "noul", "instructions": "Is this about tea?"},
    "topic": {"type": "choice", "instructions": "Topic?", "criteria": {"tea": "", "code": ""}},
}


@pytest.fixture(scope="module")
def s1_server() -> Iterator[WireServer]:
    with systemone_server() as server:
        yield server


@pytest.fixture(scope="module")
def or_server() -> Iterator[WireServer]:
    with openrouter_server("sk-or-test") as server:
        yield server


@pytest.fixture
def s1(s1_server: WireServer) -> Iterator[SystemOneDecider]:
    s1_server.heal()
    decider = SystemOneDecider(s1_server.url, timeout=2.0, retries=2)
    yield decider
    decider.close()


@pytest.fixture
def orr(or_server: WireServer) -> Iterator[OpenRouterDecider]:
    or_server.heal()
    decider = OpenRouterDecider(or_server.url + "/api/alpha/decisions", api_key="sk-or-test", timeout=2.0)
    yield decider
    decider.close()


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---- systemone ------------------------------------------------------------------------


def test_request_is_the_systemone_shape_with_the_bearer_key(s1_server: WireServer) -> None:
    with SystemOneDecider(s1_server.url + "/v1/systemone/", api_key="k1", model="hobson") as decider:
        decider.ask("Some tea?", QUESTIONS)
    sent = s1_server.received[-1]
    assert sent.path == "/v1/systemone"
    assert sent.headers["authorization"] == "Bearer k1"
    assert sent.body["state"] == "Some tea?" and sent.body["model"] == "hobson"
    assert sent.body["questions"]["topic"] == {
        "type": "choice",
        "instructions": "Topic?",
        "criteria": {"tea": "", "code": ""},
    }
    assert decider.usage()["calls"] == 1


@pytest.mark.parametrize(
    ("status", "error", "kind"),
    [
        (429, DeciderUnavailable, "rate_limited"),
        (503, DeciderUnavailable, "overloaded"),
        (500, DeciderUnavailable, "server_error"),
        (504, DeciderTimeout, "gateway_timeout"),
        (401, DeciderUnavailable, "unauthorized"),
        (400, DeciderBadResponse, "invalid_request"),
    ],
)
def test_error_statuses_map_to_typed_errors_with_the_backend_kind(
    s1: SystemOneDecider, s1_server: WireServer, status: int, error: type, kind: str
) -> None:
    s1_server.fail("status", status=status, error_kind=kind, message="boom here")
    before = s1_server.count
    with pytest.raises(error, match=f"HTTP {status}") as info:
        s1.ask("tea", QUESTIONS)
    assert info.value.backend_kind == kind
    assert info.value.status == status
    assert "boom here" in str(info.value)
    assert s1_server.count - before == 1  # an answered request is never retried


def test_fastapi_422_detail_is_quoted(s1: SystemOneDecider, s1_server: WireServer) -> None:
    s1_server.fail("status", status=422, message="option count over num_slots")
    with pytest.raises(DeciderBadResponse, match="option count over num_slots"):
        s1.ask("tea", QUESTIONS)


def test_an_error_object_in_a_200_body_is_an_error(s1: SystemOneDecider, s1_server: WireServer) -> None:
    s1_server.fail("error_200", error_kind="context_window", message="state too long")
    with pytest.raises(DeciderBadResponse, match="state too long") as info:
        s1.ask("tea", QUESTIONS)
    assert info.value.backend_kind == "context_window"


def test_html_error_page_is_quoted(s1: SystemOneDecider, s1_server: WireServer) -> None:
    s1_server.fail("html", status=502)
    with pytest.raises(DeciderUnavailable, match="502 Bad Gateway"):
        s1.ask("tea", QUESTIONS)


def test_truncated_json_is_a_bad_response(s1: SystemOneDecider, s1_server: WireServer) -> None:
    s1_server.fail("truncated_json")
    with pytest.raises(DeciderBadResponse, match="not valid JSON") as info:
        s1.ask("tea", QUESTIONS)
    assert info.value.backend_kind == "invalid_json"


def test_a_body_cut_short_is_a_transport_error_not_retried(
    s1: SystemOneDecider, s1_server: WireServer
) -> None:
    s1_server.fail("cut")
    before = s1_server.count
    with pytest.raises(DeciderUnavailable, match="transport error"):
        s1.ask("tea", QUESTIONS)
    assert s1_server.count - before == 1


def test_missing_answer_is_an_error_never_a_default(s1: SystemOneDecider, s1_server: WireServer) -> None:
    s1_server.fail("missing_answer")
    with pytest.raises(DeciderBadResponse, match="no answer for question"):
        s1.ask("tea", QUESTIONS)


def test_probability_outside_0_1_is_an_error(s1: SystemOneDecider, s1_server: WireServer) -> None:
    s1_server.fail("out_of_range")
    with pytest.raises(DeciderBadResponse, match="outside"):
        s1.ask("tea", QUESTIONS)


def test_slow_server_times_out_within_the_total_timeout(s1_server: WireServer) -> None:
    s1_server.fail("slow", seconds=1.5)
    with (
        SystemOneDecider(s1_server.url, timeout=0.3) as decider,
        pytest.raises(DeciderTimeout, match="timed out"),
    ):
        decider.ask("tea", QUESTIONS)
    s1_server.heal()


def test_slow_server_times_out_async(s1_server: WireServer) -> None:
    s1_server.fail("slow", seconds=1.5)
    decider = SystemOneDecider(s1_server.url, timeout=0.3)

    async def run() -> None:
        try:
            await decider.aask("tea", QUESTIONS)
        finally:
            await decider.aclose()

    with pytest.raises(DeciderTimeout):
        asyncio.run(run())
    s1_server.heal()


def test_dropped_connection_is_retried_once_for_a_free_backend(
    s1: SystemOneDecider, s1_server: WireServer
) -> None:
    s1_server.fail("drop", times=1)
    before = s1_server.count
    answers = s1.ask("tea", QUESTIONS)
    assert set(answers) == set(QUESTIONS)
    assert s1_server.count - before == 2


def test_retries_are_bounded(s1_server: WireServer) -> None:
    s1_server.fail("drop")
    before = s1_server.count
    with SystemOneDecider(s1_server.url, retries=2) as decider, pytest.raises(DeciderUnavailable):
        decider.ask("tea", QUESTIONS)
    assert s1_server.count - before == 3  # one try and two retries
    s1_server.heal()


def test_connection_refused_is_unavailable() -> None:
    decider = SystemOneDecider(f"http://127.0.0.1:{_dead_port()}", retries=1)
    with pytest.raises(DeciderUnavailable, match="cannot connect") as info:
        decider.ask("tea", QUESTIONS)
    assert info.value.backend_kind == "connect_error"


def test_pool_is_sized_for_the_concurrency(s1_server: WireServer) -> None:
    with SystemOneDecider(s1_server.url, pool_size=3) as decider:
        pool = decider._http.client._transport._pool  # httpx's connection pool
        assert pool._max_connections == 3


def test_url_and_options_are_checked() -> None:
    with pytest.raises(UsageError, match="needs a URL"):
        SystemOneDecider()
    with pytest.raises(UsageError, match="http"):
        SystemOneDecider("localhost:8000")
    with pytest.raises(UsageError, match="timeouts must be positive"):
        SystemOneDecider("http://x", timeout=0)
    with pytest.raises(UsageError, match="does not take colour"):
        make_decider("systemone", url="http://x", colour="red")


def test_url_from_the_environment(monkeypatch: pytest.MonkeyPatch, s1_server: WireServer) -> None:
    monkeypatch.setenv("RECALLGATE_SYSTEMONE_URL", s1_server.url)
    monkeypatch.setenv("RECALLGATE_SYSTEMONE_KEY", "envkey")
    with make_decider("systemone") as decider:  # type: ignore[attr-defined]
        decider.ask("tea", QUESTIONS)
    assert s1_server.received[-1].headers["authorization"] == "Bearer envkey"


# ---- openrouter -----------------------------------------------------------------------


def test_openrouter_sends_model_and_key_and_adds_up_cost(
    orr: OpenRouterDecider, or_server: WireServer
) -> None:
    for _ in range(3):
        orr.ask("Some tea?", QUESTIONS)
    sent = or_server.received[-1]
    assert sent.path == "/api/alpha/decisions"
    assert sent.headers["authorization"] == "Bearer sk-or-test"
    assert sent.body["model"] == "~typesafe/jev-latest"
    assert orr.cost_usd == pytest.approx(3 * COST_PER_CALL)
    assert orr.usage()["calls"] == 3 and orr.usage()["cost_usd"] == pytest.approx(3 * COST_PER_CALL)


def test_openrouter_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    with pytest.raises(UsageError, match="OPENROUTER_API_KEY"):
        make_decider("openrouter")


def test_openrouter_key_from_the_environment(monkeypatch: pytest.MonkeyPatch, or_server: WireServer) -> None:
    or_server.heal()
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    monkeypatch.setenv("RECALLGATE_OPENROUTER_URL", or_server.url + "/api/alpha/decisions")
    decider = make_decider("openrouter", model="typesafe/jev-1.13")
    decider.ask("tea", QUESTIONS)
    assert or_server.received[-1].body["model"] == "typesafe/jev-1.13"


def test_openrouter_bad_key_is_unavailable_with_its_message(or_server: WireServer) -> None:
    or_server.heal()
    decider = OpenRouterDecider(or_server.url + "/api/alpha/decisions", api_key="wrong")
    with pytest.raises(DeciderUnavailable, match="No auth credentials found") as info:
        decider.ask("tea", QUESTIONS)
    assert info.value.status == 401


@pytest.mark.parametrize(
    ("status", "error"), [(402, DeciderBadResponse), (429, DeciderUnavailable), (502, DeciderUnavailable)]
)
def test_openrouter_error_codes(
    orr: OpenRouterDecider, or_server: WireServer, status: int, error: type
) -> None:
    or_server.fail("status", status=status, message="Insufficient credits" if status == 402 else "upstream")
    with pytest.raises(error) as info:
        orr.ask("tea", QUESTIONS)
    assert info.value.backend_kind == str(status)  # OpenRouter's own error code
    assert orr.cost_usd == 0.0


def test_openrouter_does_not_resend_a_request_the_server_may_have_billed(
    orr: OpenRouterDecider, or_server: WireServer
) -> None:
    or_server.fail("drop", times=1)
    before = or_server.count
    with pytest.raises(DeciderUnavailable):
        orr.ask("tea", QUESTIONS)
    assert or_server.count - before == 1


def test_openrouter_error_in_a_200_body(orr: OpenRouterDecider, or_server: WireServer) -> None:
    or_server.fail("error_200", status=502, message="provider returned error")
    with pytest.raises(DeciderBadResponse, match="provider returned error"):
        orr.ask("tea", QUESTIONS)


# ---- helpers --------------------------------------------------------------------------


def test_truncate_state_keeps_the_start_and_says_so() -> None:
    assert truncate_state("abc", 5) == ("abc", None)
    cut, warning = truncate_state("abcdefgh", 3)
    assert cut == "abc" and warning is not None and "8 to 3" in warning


def test_error_from_body_reads_every_known_shape() -> None:
    assert "x" in str(error_from_body("b", 422, {"error": "x"}))
    e = error_from_body(
        "b", 422, {"detail": [{"loc": ["body", "questions"], "msg": "field required", "type": "missing"}]}
    )
    assert "body.questions: field required" in str(e) and e.backend_kind == "missing"  # type: ignore[attr-defined]
    e = error_from_body("b", 400, {"__type": "ValidationError", "message": "bad"})
    assert e.backend_kind == "ValidationError"  # type: ignore[attr-defined]


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError):
        HttpSettings(retries=-1)
    poster = JsonPoster("x", HttpSettings(pool_size=2))
    assert poster.settings.pool_size == 2


def test_warnings_belong_to_the_caller_that_caused_them(s1_server: WireServer) -> None:
    s1_server.heal()
    decider = SystemOneDecider(s1_server.url, max_state_chars=10)

    async def one(state: str) -> list[str]:
        await decider.aask(state, QUESTIONS)
        return decider.last_warnings

    async def run() -> list[list[str]]:
        try:
            return list(await asyncio.gather(one("a long state about tea"), one("short")))
        finally:
            await decider.aclose()

    long_warnings, short_warnings = asyncio.run(run())
    assert len(long_warnings) == 1 and "22 to 10" in long_warnings[0]
    assert short_warnings == []
