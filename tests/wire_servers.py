"""Local HTTP servers, in the test process, speaking each decision backend's wire format.

No public decision server is reachable from CI, so the ``openrouter``, ``sagemaker`` and
``llm`` backends (and ``systemone`` error handling) are tested against these. Each server
implements the documented request and answer shapes, checks what a real server would check
(the bearer key, SigV4 headers, the Triton envelope), and can be switched into failure
modes: an error status with the format's own error body, a slow answer, truncated JSON, a
dropped connection, a missing or out-of-range answer.

Answers come from :func:`fake_answers`, one deterministic rule set shared by every format,
so the same questions must decode to the same answers whichever wire they crossed.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# ---- the fake model -------------------------------------------------------------------


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}


def fake_noul(state: str, instructions: str) -> float:
    """0.85 when the state shares a content word with the question, else 0.2."""
    return 0.85 if _words(state) & _words(instructions) else 0.2


def fake_choice(state: str, options: list[str]) -> list[float]:
    """Options named in the state get four times the weight of the others."""
    weights = [4.0 if o.lower() in state.lower() else 1.0 for o in options]
    total = sum(weights)
    return [w / total for w in weights]


def fake_score(state: str, n: int) -> list[float]:
    """A peak at level ``len(state) % n``, falling off with distance."""
    peak = len(state) % n
    weights = [1.0 / (1.0 + abs(i - peak)) for i in range(n)]
    total = sum(weights)
    return [w / total for w in weights]


def fake_answers(state: str, questions: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Systemone answers (score as the expected level, as the real servers send it)."""
    out: dict[str, Any] = {}
    for name, q in questions.items():
        kind = q.get("type", "noul")
        if kind == "noul":
            out[name] = {"type": "noul", "noul": round(fake_noul(state, q.get("instructions", "")), 4)}
        elif kind == "choice":
            options = list(q["criteria"])
            probs = fake_choice(state, options)
            best = max(range(len(options)), key=lambda i: probs[i])
            out[name] = {
                "type": "choice",
                "choice": options[best],
                "probabilities": {o: round(p, 4) for o, p in zip(options, probs, strict=True)},
                "confidence": round((len(probs) * probs[best] - 1) / (len(probs) - 1), 4),
            }
        else:
            levels = list(q["criteria"])
            probs = fake_score(state, len(levels))
            expected = sum(i * p for i, p in enumerate(probs))
            out[name] = {
                "type": "score",
                "score": round(expected, 4),
                "legend": {str(i): level for i, level in enumerate(levels)},
                "probabilities": {str(i): round(p, 4) for i, p in enumerate(probs)},
                "confidence": 0.5,
            }
    return out


# ---- the server -----------------------------------------------------------------------


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Failure:
    """What the server does instead of answering.

    ``kind``: ``status`` (send ``status`` with the format's error body), ``slow`` (wait
    ``seconds`` first), ``truncated_json`` (a 200 whose JSON is cut short), ``cut`` (fewer
    bytes than Content-Length), ``drop`` (close without answering), ``html`` (an HTML error
    page), ``missing_answer``, ``out_of_range``, ``error_200`` (an error object with 200).
    ``times``: how many requests fail before the server answers normally (None: all).
    """

    kind: str
    status: int = 500
    seconds: float = 0.0
    error_kind: str = "server_error"
    message: str = "injected failure"
    times: int | None = None


@dataclass
class WireServer:
    """A running server; set :attr:`failure` to make it misbehave."""

    url: str
    received: list[Received] = field(default_factory=list)
    failure: Failure | None = None
    api_key: str | None = None

    def fail(self, kind: str, **options: Any) -> None:
        self.failure = Failure(kind, **options)

    def heal(self) -> None:
        self.failure = None

    @property
    def count(self) -> int:
        return len(self.received)


Format = Callable[["_Handler", Any, WireServer], tuple[int, dict[str, str], Any]]
#: (status, error kind, message) -> (HTTP status, headers, body) in the format's own error shape
ErrorBody = Callable[[int, str, str], tuple[int, dict[str, str], Any]]


class _Handler(BaseHTTPRequestHandler):
    server_state: WireServer
    answer: Format
    error_body: ErrorBody
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(
        self, status: int, headers: Mapping[str, str], payload: bytes, length: int | None = None
    ) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(payload) if length is None else length))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def do_GET(self) -> None:
        self._send(200, {"content-type": "application/json"}, b'{"status": "ok"}')

    def do_POST(self) -> None:
        state = self.server_state
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        try:
            body: Any = json.loads(raw)
        except json.JSONDecodeError:
            body = raw.decode("utf-8", errors="replace")
        state.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        failure = state.failure
        if failure is not None and failure.times is not None:
            failure.times -= 1
            if failure.times < 0:
                state.failure = failure = None
        if failure is not None:
            if failure.kind == "slow":
                time.sleep(failure.seconds)
            elif failure.kind == "drop":
                self.close_connection = True
                return
            elif failure.kind == "status":
                code, headers, error = type(self).error_body(
                    failure.status, failure.error_kind, failure.message
                )
                self._send(code, {"content-type": "application/json", **headers}, json.dumps(error).encode())
                return
            elif failure.kind == "html":
                page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
                self._send(failure.status, {"content-type": "text/html"}, page)
                return
        status, headers, payload = type(self).answer(self, body, state)
        text = json.dumps(payload).encode()
        if failure is not None and failure.kind == "truncated_json":
            text = text[: len(text) // 2]
        if failure is not None and failure.kind == "cut":
            self._send(
                status, {"content-type": "application/json", **headers}, text[: len(text) // 2], len(text)
            )
            self.close_connection = True
            return
        self._send(status, {"content-type": "application/json", **headers}, text)


def _mutate(answers: dict[str, Any], failure: Failure | None) -> dict[str, Any]:
    """Apply the answer-level failure modes to systemone answers."""
    if failure is None or not answers:
        return answers
    if failure.kind == "missing_answer":
        answers.pop(next(iter(answers)))
    elif failure.kind == "out_of_range":
        name = next(iter(answers))
        answers[name] = {"type": "noul", "noul": 1.5}
    return answers


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (a timeout test) leaves a broken pipe behind: expected here.
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def serve(answer: Format, error_body: ErrorBody, api_key: str | None = None) -> Iterator[WireServer]:
    """Run a server with the given format on a free 127.0.0.1 port for the ``with`` block."""
    handler = type(
        "Handler", (_Handler,), {"answer": staticmethod(answer), "error_body": staticmethod(error_body)}
    )
    httpd = _QuietServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    state = WireServer(f"http://127.0.0.1:{httpd.server_address[1]}", api_key=api_key)
    handler.server_state = state  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, name="wire-server", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def _auth_ok(handler: _Handler, state: WireServer) -> bool:
    return state.api_key is None or handler.headers.get("authorization") == f"Bearer {state.api_key}"


# ---- systemone (strands-decider / sparrow-decider serve / opendecider) ------------------


def _systemone_error(status: int, kind: str, message: str) -> tuple[int, dict[str, str], Any]:
    # strands-decider (FastAPI) reports {"detail": ...}; sparrow-decider {"error": "..."}.
    if status == 422:
        return status, {}, {"detail": message}
    return status, {}, {"error": {"type": kind, "message": message}}


def _systemone_answer(handler: _Handler, body: Any, state: WireServer) -> tuple[int, dict[str, str], Any]:
    if not _auth_ok(handler, state):
        return 401, {}, {"error": {"type": "unauthorized", "message": "bad bearer key"}}
    if handler.path.rstrip("/") != "/v1/systemone":
        return 404, {}, {"error": "not found"}
    if state.failure is not None and state.failure.kind == "error_200":
        return 200, {}, {"error": {"type": state.failure.error_kind, "message": state.failure.message}}
    answers = _mutate(fake_answers(body["state"], body["questions"]), state.failure)
    return (
        200,
        {},
        {
            "model": body.get("model", "fake"),
            "answers": answers,
            "usage": {"input_tokens": len(body["state"].split()), "output_tokens": len(body["questions"])},
            "latency_ms": 1.0,
        },
    )


@contextmanager
def systemone_server(api_key: str | None = None) -> Iterator[WireServer]:
    with serve(_systemone_answer, _systemone_error, api_key) as server:
        yield server


# ---- OpenRouter decisions (Jev) ---------------------------------------------------------

OPENROUTER_PATH = "/api/alpha/decisions"
COST_PER_CALL = 0.000125


def _openrouter_error(status: int, kind: str, message: str) -> tuple[int, dict[str, str], Any]:
    return (
        status,
        {},
        {"error": {"code": status, "message": message, "metadata": {"provider_name": "TypeSafe"}}},
    )


def _openrouter_answer(handler: _Handler, body: Any, state: WireServer) -> tuple[int, dict[str, str], Any]:
    if not _auth_ok(handler, state):
        return 401, {}, {"error": {"code": 401, "message": "No auth credentials found"}}
    if handler.path != OPENROUTER_PATH:
        return 404, {}, {"error": {"code": 404, "message": "not found"}}
    if not isinstance(body, dict) or not body.get("model"):
        return 400, {}, {"error": {"code": 400, "message": "model is required"}}
    if state.failure is not None and state.failure.kind == "error_200":
        return 200, {}, {"error": {"code": state.failure.status, "message": state.failure.message}}
    answers = _mutate(fake_answers(body["state"], body["questions"]), state.failure)
    return (
        200,
        {},
        {
            "id": f"dec-{len(state.received)}",
            "model": "typesafe/jev-1.13-20260917",
            "provider": "TypeSafe",
            "answers": answers,
            "usage": {"input_tokens": 40, "output_tokens": 0, "cost": COST_PER_CALL},
        },
    )


@contextmanager
def openrouter_server(api_key: str = "sk-or-test") -> Iterator[WireServer]:
    with serve(_openrouter_answer, _openrouter_error, api_key) as server:
        yield server


# ---- SageMaker real-time endpoint, Triton envelope ----------------------------------------


def _sagemaker_error(status: int, kind: str, message: str) -> tuple[int, dict[str, str], Any]:
    # SageMaker's own errors: the code in x-amzn-ErrorType. A container failure is
    # ModelError (HTTP 424) with the container's status (``status`` here) in OriginalStatusCode.
    if kind == "ModelError":
        return (
            424,
            {"x-amzn-ErrorType": "ModelError:"},
            {
                "message": f'Received server error ({status}) from primary with message "{message}".',
                "OriginalStatusCode": status,
                "OriginalMessage": message,
                "LogStreamArn": "arn:aws:logs:us-east-1:123456789012:log-group:/aws/sagemaker/Endpoints/test",
            },
        )
    return status, {"x-amzn-ErrorType": f"{kind}:"}, {"message": message}


def _triton(payload: Any) -> dict[str, Any]:
    return {
        "model_name": "decider",
        "model_version": "1",
        "outputs": [
            {"name": "RESPONSE_JSON", "datatype": "BYTES", "shape": [1, 1], "data": [json.dumps(payload)]}
        ],
    }


def _sagemaker_answer(handler: _Handler, body: Any, state: WireServer) -> tuple[int, dict[str, str], Any]:
    auth = handler.headers.get("authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 Credential=") or "x-amz-date" not in {
        k.lower() for k in handler.headers
    }:
        return 403, {"x-amzn-ErrorType": "MissingAuthenticationTokenException:"}, {"message": "not signed"}
    match = re.fullmatch(r"/endpoints/([^/]+)/invocations", handler.path)
    if not match:
        return 404, {"x-amzn-ErrorType": "UnknownOperationException:"}, {"message": "unknown operation"}
    if match.group(1) != "decider-endpoint":
        return (
            400,
            {"x-amzn-ErrorType": "ValidationError:"},
            {"message": f"Endpoint {match.group(1)} of account 123456789012 not found."},
        )
    try:
        (tensor,) = body["inputs"]
        assert (
            tensor["name"] == "REQUEST_JSON" and tensor["datatype"] == "BYTES" and tensor["shape"] == [1, 1]
        )
        request = json.loads(tensor["data"][0])
    except (KeyError, ValueError, TypeError, AssertionError):
        # Triton's own refusal of a malformed envelope, relayed by SageMaker as a ModelError.
        return _sagemaker_error(400, "ModelError", "bad Triton envelope")
    failure = state.failure
    if failure is not None and failure.kind == "error_200":
        return 200, {}, _triton({"error": {"type": failure.error_kind, "message": failure.message}})
    answers = _mutate(fake_answers(request["state"], request["questions"]), failure)
    return (
        200,
        {},
        _triton({"model": "decider", "answers": answers, "usage": {"input_tokens": 1, "output_tokens": 1}}),
    )


@contextmanager
def sagemaker_server() -> Iterator[WireServer]:
    with serve(_sagemaker_answer, _sagemaker_error) as server:
        yield server


# ---- OpenAI-compatible chat / completions with logprobs ---------------------------------

_OPTION = re.compile(r"^([A-Z]|\d+)\. (.+?)(?: - .*)?$")


def _parse_prompt(text: str) -> tuple[str, dict[str, Any], list[str]]:
    """(state, systemone question, answer labels) back out of a prompt the llm backend built."""
    state = text.split("<state>\n", 1)[1].split("\n</state>", 1)[0]
    instructions = re.search(r"^Question: (.*)$", text, re.M)
    question_text = instructions.group(1) if instructions else ""
    if "yes or no" in text:
        return state, {"type": "noul", "instructions": question_text}, ["yes", "no"]
    rows = [m for line in text.splitlines() if (m := _OPTION.match(line))]
    labels = [m.group(1) for m in rows]
    names = [m.group(2) for m in rows]
    if "Levels, lowest first" in text:
        return state, {"type": "score", "instructions": question_text, "criteria": names}, labels
    return (
        state,
        {"type": "choice", "instructions": question_text, "criteria": dict.fromkeys(names, "")},
        labels,
    )


def _top_logprobs(text: str) -> list[tuple[str, float]]:
    """The fake model's next-token distribution: 98% on the answer labels, 2% on chatter."""
    state, question, labels = _parse_prompt(text)
    answer = fake_answers(state, {"q": question})["q"]
    if question["type"] == "noul":
        probs = [answer["noul"], 1.0 - answer["noul"]]
    elif question["type"] == "choice":
        probs = [answer["probabilities"][name] for name in question["criteria"]]
    else:
        probs = [answer["probabilities"][str(i)] for i in range(len(labels))]
    # Real tokenizers emit variants: " yes" and "Yes" both mean yes.
    tokens = []
    for label, p in zip(labels, probs, strict=True):
        if p > 0:
            tokens.append((f" {label}" if label in ("yes", "no") else label, math.log(p * 0.9)))
            tokens.append((label.capitalize() if label in ("yes", "no") else f"{label}.", math.log(p * 0.08)))
    tokens.append(("Sure", math.log(0.02)))
    return sorted(tokens, key=lambda t: -t[1])


def _llm_error(status: int, kind: str, message: str) -> tuple[int, dict[str, str], Any]:
    return status, {}, {"error": {"message": message, "type": kind, "code": status}}


def _llm_answer(handler: _Handler, body: Any, state: WireServer) -> tuple[int, dict[str, str], Any]:
    if not _auth_ok(handler, state):
        return 401, {}, {"error": {"message": "invalid api key", "type": "invalid_request_error"}}
    failure = state.failure
    if handler.path == "/v1/chat/completions":
        if not body.get("logprobs") or not body.get("top_logprobs"):
            return (
                400,
                {},
                {"error": {"message": "logprobs required by this test server", "type": "invalid_request"}},
            )
        text = body["messages"][-1]["content"]
        tops = _top_logprobs(text)[: body["top_logprobs"]]
        if failure is not None and failure.kind == "missing_answer":
            tops = [("Sure", -0.01)]
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": tops[0][0]},
            "logprobs": {
                "content": [
                    {
                        "token": tops[0][0],
                        "logprob": tops[0][1],
                        "top_logprobs": [{"token": t, "logprob": lp} for t, lp in tops],
                    }
                ]
            },
            "finish_reason": "length",
        }
        return (
            200,
            {},
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": body.get("model", "fake"),
                "choices": [choice],
                "usage": {"prompt_tokens": len(text.split()), "completion_tokens": 1},
            },
        )
    if handler.path == "/v1/completions":
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        choices = []
        for i, prompt in enumerate(prompts):
            tops = _top_logprobs(prompt)[: body["logprobs"]]
            choices.append(
                {
                    "index": i,
                    "text": tops[0][0],
                    "finish_reason": "length",
                    "logprobs": {
                        "tokens": [tops[0][0]],
                        "token_logprobs": [tops[0][1]],
                        "top_logprobs": [dict(tops)],
                    },
                }
            )
        if failure is not None and failure.kind == "missing_answer":
            choices.pop()
        return (
            200,
            {},
            {
                "id": "cmpl-1",
                "object": "text_completion",
                "choices": choices,
                "usage": {"prompt_tokens": 10 * len(prompts), "completion_tokens": len(prompts)},
            },
        )
    return 404, {}, {"error": {"message": "not found", "type": "invalid_request_error"}}


@contextmanager
def llm_server(api_key: str | None = None) -> Iterator[WireServer]:
    with serve(_llm_answer, _llm_error, api_key) as server:
        yield server


# ---- a real sparrow-decider server ------------------------------------------------------


@contextmanager
def sparrow_serve() -> Iterator[str]:
    """Start a real ``sparrow-decider serve`` on a free loopback port; yields its base URL."""
    import socket
    import subprocess
    import sys
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "sparrow_decider.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{url}/health", timeout=1).read()
                break
            except OSError:
                if process.poll() is not None:
                    err = process.stderr.read().decode() if process.stderr else ""
                    raise RuntimeError(f"sparrow-decider serve exited: {err[-500:]}") from None
                if time.monotonic() > deadline:
                    raise RuntimeError("sparrow-decider serve did not answer /health within 30 s") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
