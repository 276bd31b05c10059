"""systemone and openrouter against their wire formats, in-process: every failure is typed.

The fakes answer through ``httpx.MockTransport`` (the deciders' ``transport`` option), so
these tests see exactly the bytes a server would send without a socket. What needs a real
socket (timeouts, retries, dropped and cut connections) is in ``test_http_sockets.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest

from recallwise.deciders import make_decider
from recallwise.deciders.base import truncate_state
from recallwise.deciders.openrouter import OpenRouterDecider
from recallwise.deciders.systemone import SystemOneDecider
from recallwise.errors import DeciderBadResponse, DeciderTimeout, DeciderUnavailable, UsageError
from recallwise.http import HttpSettings, JsonClient, error_from_body, token_count
from wire_servers import COST_PER_CALL, WireFake, openrouter_fake, systemone_fake

QUESTIONS = {
    "gate": {"type": "noul", "instructions": "Is this about tea?"},
    "topic": {"type": "choice", "instructions": "Topic?", "criteria": {"tea": "", "code": ""}},
}


@pytest.fixture
def s1_fake() -> WireFake:
    return systemone_fake()


@pytest.fixture
def or_fake() -> WireFake:
    return openrouter_fake("sk-or-test")


@pytest.fixture
def s1(s1_fake: WireFake) -> Iterator[SystemOneDecider]:
    decider = SystemOneDecider(s1_fake.url, timeout=2.0, retries=2, transport=s1_fake.transport())
    yield decider
    decider.close()


@pytest.fixture
def orr(or_fake: WireFake) -> Iterator[OpenRouterDecider]:
    decider = OpenRouterDecider(
        or_fake.url + "/api/alpha/decisions", api_key="sk-or-test", timeout=2.0, transport=or_fake.transport()
    )
    yield decider
    decider.close()


# ---- systemone ------------------------------------------------------------------------


def test_request_is_the_systemone_shape_with_the_bearer_key(s1_fake: WireFake) -> None:
    with SystemOneDecider(
        s1_fake.url + "/v1/systemone/", api_key="k1", model="hobson", transport=s1_fake.transport()
    ) as decider:
        decision = decider.decide("Some tea?", QUESTIONS)
    sent = s1_fake.received[-1]
    assert sent.path == "/v1/systemone"
    assert sent.headers["authorization"] == "Bearer k1"
    assert sent.headers["content-type"] == "application/json"
    assert sent.body["state"] == "Some tea?" and sent.body["model"] == "hobson"
    assert sent.body["questions"]["topic"] == {
        "type": "choice",
        "instructions": "Topic?",
        "criteria": {"tea": "", "code": ""},
    }
    # The fake reports one input token per word and one output token per question.
    assert decision.usage == {"input_tokens": 2, "output_tokens": 2}
    assert decider.usage() == {"calls": 1, "input_tokens": 2, "output_tokens": 2}


def test_usage_has_every_key_before_the_first_call() -> None:
    assert SystemOneDecider("http://x").usage() == {"calls": 0, "input_tokens": 0, "output_tokens": 0}


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
    s1: SystemOneDecider, s1_fake: WireFake, status: int, error: type, kind: str
) -> None:
    s1_fake.fail("status", status=status, error_kind=kind, message="boom here")
    with pytest.raises(error, match=f"HTTP {status}") as info:
        s1.ask("tea", QUESTIONS)
    assert info.value.backend_kind == kind
    assert info.value.status == status
    assert "boom here" in str(info.value)
    assert s1_fake.count == 1  # an answered request is never retried
    assert s1.usage()["calls"] == 0  # a failed call is not counted as answered


def test_fastapi_422_detail_is_quoted(s1: SystemOneDecider, s1_fake: WireFake) -> None:
    s1_fake.fail("status", status=422, message="option count over num_slots")
    with pytest.raises(DeciderBadResponse, match="option count over num_slots"):
        s1.ask("tea", QUESTIONS)


def test_an_error_object_in_a_200_body_is_an_error(s1: SystemOneDecider, s1_fake: WireFake) -> None:
    s1_fake.fail("error_200", error_kind="context_window", message="state too long")
    with pytest.raises(DeciderBadResponse, match="state too long") as info:
        s1.ask("tea", QUESTIONS)
    assert info.value.backend_kind == "context_window"


def test_html_error_page_is_quoted(s1: SystemOneDecider, s1_fake: WireFake) -> None:
    s1_fake.fail("html", status=502)
    with pytest.raises(DeciderUnavailable, match="502 Bad Gateway"):
        s1.ask("tea", QUESTIONS)


def test_truncated_json_is_a_bad_response(s1: SystemOneDecider, s1_fake: WireFake) -> None:
    s1_fake.fail("truncated_json")
    with pytest.raises(DeciderBadResponse, match="not valid JSON") as info:
        s1.ask("tea", QUESTIONS)
    assert info.value.backend_kind == "invalid_json"
    assert "chars)" in str(info.value)  # says how much arrived


def test_missing_answer_is_an_error_never_a_default(s1: SystemOneDecider, s1_fake: WireFake) -> None:
    s1_fake.fail("missing_answer")
    with pytest.raises(DeciderBadResponse, match="no answer for question"):
        s1.ask("tea", QUESTIONS)


def test_probability_outside_0_1_is_an_error(s1: SystemOneDecider, s1_fake: WireFake) -> None:
    s1_fake.fail("out_of_range")
    with pytest.raises(DeciderBadResponse, match="outside"):
        s1.ask("tea", QUESTIONS)


def test_a_transport_exception_is_a_typed_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    decider = SystemOneDecider("http://s1.test", retries=0, transport=httpx.MockTransport(refuse))
    with pytest.raises(DeciderUnavailable, match=r"cannot connect to http://s1\.test/v1/systemone") as info:
        decider.ask("tea", QUESTIONS)
    assert info.value.backend_kind == "connect_error"


def test_pool_is_sized_for_the_concurrency() -> None:
    with SystemOneDecider("http://s1.test", pool_size=3) as decider:
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
    with pytest.raises(UsageError, match=r"transport must be an httpx\.BaseTransport"):
        make_decider("systemone", url="http://x", transport="mock")


def test_url_from_the_environment(monkeypatch: pytest.MonkeyPatch, s1_fake: WireFake) -> None:
    monkeypatch.setenv("RECALLWISE_SYSTEMONE_URL", s1_fake.url)
    monkeypatch.setenv("RECALLWISE_SYSTEMONE_KEY", "envkey")
    with make_decider("systemone", transport=s1_fake.transport()) as decider:
        decider.ask("tea", QUESTIONS)
    assert s1_fake.received[-1].headers["authorization"] == "Bearer envkey"


# ---- openrouter -----------------------------------------------------------------------


def test_openrouter_sends_model_and_key_and_adds_up_cost(orr: OpenRouterDecider, or_fake: WireFake) -> None:
    for _ in range(3):
        decision = orr.decide("Some tea?", QUESTIONS)
    sent = or_fake.received[-1]
    assert sent.path == "/api/alpha/decisions"
    assert sent.headers["authorization"] == "Bearer sk-or-test"
    assert sent.headers["x-title"] == "recallwise"
    assert sent.body["model"] == "~typesafe/jev-latest"
    assert decision.usage == {"input_tokens": 40, "output_tokens": 0, "cost_usd": COST_PER_CALL}
    assert orr.cost_usd == pytest.approx(3 * COST_PER_CALL)
    usage = orr.usage()
    assert usage["calls"] == 3 and usage["cost_usd"] == pytest.approx(3 * COST_PER_CALL)
    assert usage["input_tokens"] == 120


def test_openrouter_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    with pytest.raises(UsageError, match="OPENROUTER_API_KEY"):
        make_decider("openrouter")


def test_openrouter_key_from_the_environment(monkeypatch: pytest.MonkeyPatch, or_fake: WireFake) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    monkeypatch.setenv("RECALLWISE_OPENROUTER_URL", or_fake.url + "/api/alpha/decisions")
    decider = make_decider("openrouter", model="typesafe/jev-1.13", transport=or_fake.transport())
    decider.ask("tea", QUESTIONS)
    assert or_fake.received[-1].body["model"] == "typesafe/jev-1.13"
    assert or_fake.received[-1].headers["authorization"] == "Bearer sk-or-test"


def test_openrouter_bad_key_is_unavailable_with_its_message(or_fake: WireFake) -> None:
    decider = OpenRouterDecider(
        or_fake.url + "/api/alpha/decisions", api_key="wrong", transport=or_fake.transport()
    )
    with pytest.raises(DeciderUnavailable, match="No auth credentials found") as info:
        decider.ask("tea", QUESTIONS)
    assert info.value.status == 401


@pytest.mark.parametrize(
    ("status", "error"), [(402, DeciderBadResponse), (429, DeciderUnavailable), (502, DeciderUnavailable)]
)
def test_openrouter_error_codes(orr: OpenRouterDecider, or_fake: WireFake, status: int, error: type) -> None:
    or_fake.fail("status", status=status, message="Insufficient credits" if status == 402 else "upstream")
    with pytest.raises(error) as info:
        orr.ask("tea", QUESTIONS)
    assert info.value.backend_kind == str(status)  # OpenRouter's own error code
    assert orr.cost_usd == 0.0


def test_openrouter_error_in_a_200_body(orr: OpenRouterDecider, or_fake: WireFake) -> None:
    or_fake.fail("error_200", status=502, message="provider returned error")
    with pytest.raises(DeciderBadResponse, match="provider returned error"):
        orr.ask("tea", QUESTIONS)


def test_openrouter_cost_that_is_not_a_finite_number_counts_as_nothing() -> None:
    costs = iter(["NaN", "1" + "0" * 400, '"1.0"', "0.5"])  # as JSON text: NaN, an int past float range

    def answer(request: httpx.Request) -> httpx.Response:
        answers = '{"gate": 0.5, "topic": {"probabilities": {"tea": 1.0, "code": 0.0}}}'
        usage = f'{{"input_tokens": 1, "output_tokens": 1, "cost": {next(costs)}}}'
        return httpx.Response(200, content=f'{{"answers": {answers}, "usage": {usage}}}')

    decider = OpenRouterDecider("http://or.test", api_key="k", transport=httpx.MockTransport(answer))
    for _ in range(4):
        decider.ask("tea", QUESTIONS)
    assert decider.usage()["cost_usd"] == 0.5 and decider.usage()["calls"] == 4


# ---- warnings are data, per call -------------------------------------------------------


def test_a_cut_state_is_a_warning_of_that_call_only(s1_fake: WireFake) -> None:
    decider = SystemOneDecider(s1_fake.url, max_state_chars=10, transport=s1_fake.transport())
    long_one = decider.decide("a long state about tea", QUESTIONS)
    assert len(long_one.warnings) == 1 and "22 to 10" in long_one.warnings[0]
    assert s1_fake.received[-1].body["state"] == "a long sta"
    assert decider.decide("short", QUESTIONS).warnings == []


def test_warnings_belong_to_the_caller_that_caused_them(s1_fake: WireFake) -> None:
    decider = SystemOneDecider(s1_fake.url, max_state_chars=10, transport=s1_fake.transport())
    results: dict[str, list[str]] = {}
    start = threading.Barrier(8)

    def one(state: str) -> None:
        start.wait()
        results[state] = decider.decide(state, QUESTIONS).warnings

    states = [f"a long state about tea number {i}" if i % 2 else f"short {i}" for i in range(8)]
    threads = [threading.Thread(target=one, args=(s,)) for s in states]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    for state in states:
        expected = 1 if len(state) > 10 else 0
        assert len(results[state]) == expected, (state, results[state])
    assert decider.usage()["calls"] == 8


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
    client = JsonClient("x", HttpSettings(pool_size=2))
    assert client.settings.pool_size == 2


def test_token_counts_are_finite_ints_or_nothing() -> None:
    assert [token_count(v) for v in (7, 7.9, True, None, "7", float("inf"), float("nan"))] == [
        7,
        7,
        0,
        0,
        0,
        0,
        0,
    ]
