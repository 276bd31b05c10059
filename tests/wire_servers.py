"""Each decision backend's wire format, faked in the test process: in-process or on a socket.

No public decision server is reachable from CI, so the ``openrouter``, ``sagemaker`` and
``llm`` backends (and ``systemone`` error handling) are tested against these. Each fake
implements the documented request and answer shapes, checks what a real server would check
(the bearer key, SigV4 headers, the Triton envelope), and can be switched into failure
modes: an error status with the format's own error body, truncated JSON, an HTML error page,
a missing or out-of-range answer.

A :class:`WireFake` answers **in-process** -- as an ``httpx.MockTransport`` for the HTTP
backends (:meth:`WireFake.transport`), as a botocore ``before-send`` handler for SageMaker
(:meth:`WireFake.before_send`) -- which is what every test of the wire format and of error
mapping uses. :func:`serve_socket` puts the same fake on a real loopback socket, for what only
a socket shows: a slow answer, a body dripping in, a dropped connection, a body cut short
(the ``slow``, ``drip``, ``drop`` and ``cut`` failures).

Answers come from :func:`fake_answers`, one deterministic rule set shared by every format,
so the same questions must decode to the same answers whichever wire they crossed.
"""

from __future__ import annotations

import io
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
from urllib.parse import urlsplit

import httpx

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


# ---- the fake ---------------------------------------------------------------------------


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Failure:
    """What the fake does instead of answering.

    ``kind``: ``status`` (send ``status`` with the format's error body), ``truncated_json``
    (a 200 whose JSON is cut short), ``html`` (an HTML error page), ``missing_answer``,
    ``out_of_range``, ``error_200`` (an error object with 200); on a socket only: ``slow``
    (wait ``seconds`` first), ``drip`` (send the body a byte every ``seconds``), ``cut``
    (fewer bytes than Content-Length), ``drop`` (close without answering).
    ``times``: how many requests fail before the fake answers normally (None: all).
    """

    kind: str
    status: int = 500
    seconds: float = 0.0
    error_kind: str = "server_error"
    message: str = "injected failure"
    times: int | None = None


#: Failures that only a real socket can show.
SOCKET_ONLY = frozenset({"slow", "drip", "drop", "cut"})

#: (request, fake) -> (HTTP status, headers, JSON payload) for a request that is answered
Format = Callable[[Received, "WireFake"], tuple[int, dict[str, str], Any]]
#: (status, error kind, message) -> (HTTP status, headers, body) in the format's own error shape
ErrorBody = Callable[[int, str, str], tuple[int, dict[str, str], Any]]


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    content: bytes
    #: the failure applied to this request (the socket server acts on the socket-only ones)
    failure: Failure | None


@dataclass
class WireFake:
    """One wire format's fake; set :attr:`failure` (or call :meth:`fail`) to make it misbehave."""

    answer: Format
    error_body: ErrorBody
    url: str
    api_key: str | None = None
    received: list[Received] = field(default_factory=list)
    failure: Failure | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def fail(self, kind: str, **options: Any) -> None:
        self.failure = Failure(kind, **options)

    def heal(self) -> None:
        self.failure = None

    @property
    def count(self) -> int:
        return len(self.received)

    def _next_failure(self) -> Failure | None:
        with self._lock:
            failure = self.failure
            if failure is not None and failure.times is not None:
                failure.times -= 1
                if failure.times < 0:
                    self.failure = failure = None
            return failure

    def respond(self, path: str, headers: Mapping[str, str], raw: bytes) -> Response:
        """Record one request and build the answer (or the failure) the format gives."""
        try:
            body: Any = json.loads(raw)
        except json.JSONDecodeError:
            body = raw.decode("utf-8", errors="replace")
        request = Received(path, {k.lower(): v for k, v in headers.items()}, body)
        self.received.append(request)
        failure = self._next_failure()
        kind = failure.kind if failure is not None else None
        if failure is not None and kind == "status":
            code, extra, error = self.error_body(failure.status, failure.error_kind, failure.message)
            return Response(
                code, {"content-type": "application/json", **extra}, json.dumps(error).encode(), failure
            )
        if failure is not None and kind == "html":
            page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
            return Response(failure.status, {"content-type": "text/html"}, page, failure)
        status, extra, payload = self.answer(request, self)
        text = json.dumps(payload).encode()
        if kind == "truncated_json":
            text = text[: len(text) // 2]
        return Response(status, {"content-type": "application/json", **extra}, text, failure)

    def _in_process(self, path: str, headers: Mapping[str, str], raw: bytes) -> Response:
        response = self.respond(path, headers, raw)
        if response.failure is not None and response.failure.kind in SOCKET_ONLY:
            raise AssertionError(f"the {response.failure.kind!r} failure needs a real socket: serve_socket()")
        return response

    def transport(self) -> httpx.MockTransport:
        """This fake as an httpx transport: requests never leave the process."""

        def handle(request: httpx.Request) -> httpx.Response:
            response = self._in_process(request.url.path, request.headers, request.read())
            return httpx.Response(response.status, headers=response.headers, content=response.content)

        return httpx.MockTransport(handle)

    def before_send(self) -> Callable[..., Any]:
        """This fake as a botocore ``before-send`` handler: the signed request is answered here."""
        from botocore.awsrequest import AWSResponse

        def handle(request: Any, **_: Any) -> Any:
            headers = {k: v.decode() if isinstance(v, bytes) else str(v) for k, v in request.headers.items()}
            body = request.body if isinstance(request.body, bytes) else (request.body or b"")
            response = self._in_process(urlsplit(request.url).path, headers, body)
            return AWSResponse(request.url, response.status, response.headers, _RawBody(response.content))

        return handle


class _RawBody(io.BytesIO):
    """A response body as botocore reads one (``read`` for streams, ``stream`` for the rest)."""

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.read()


# ---- the same fake on a real socket ----------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    fake: WireFake
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, response: Response, payload: bytes, length: int | None = None) -> None:
        self.send_response(response.status)
        for key, value in response.headers.items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(payload) if length is None else length))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def do_GET(self) -> None:
        self._send(Response(200, {"content-type": "application/json"}, b"", None), b'{"status": "ok"}')

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        response = self.fake.respond(self.path, dict(self.headers.items()), raw)
        kind = response.failure.kind if response.failure is not None else None
        content = response.content
        if kind == "slow":
            time.sleep(response.failure.seconds)  # type: ignore[union-attr]
        elif kind == "drop":
            self.close_connection = True
            return
        elif kind == "cut":
            self._send(response, content[: len(content) // 2], len(content))
            self.close_connection = True
            return
        elif kind == "drip":
            self._send(response, b"", len(content))
            for i in range(len(content)):
                time.sleep(response.failure.seconds)  # type: ignore[union-attr]
                self.wfile.write(content[i : i + 1])
                self.wfile.flush()
            return
        self._send(response, content)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (a timeout test) leaves a broken pipe behind: expected here.
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def serve_socket(fake: WireFake) -> Iterator[WireFake]:
    """Serve ``fake`` on a free 127.0.0.1 port for the ``with`` block (``fake.url`` points there)."""
    handler = type("Handler", (_Handler,), {"fake": fake})
    httpd = _QuietServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    in_process_url, fake.url = fake.url, f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, name="wire-server", daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        fake.url = in_process_url


def _auth_ok(request: Received, fake: WireFake) -> bool:
    return fake.api_key is None or request.headers.get("authorization") == f"Bearer {fake.api_key}"


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


# ---- systemone (strands-decider / sparrow-decider serve / opendecider) ------------------


def _systemone_error(status: int, kind: str, message: str) -> tuple[int, dict[str, str], Any]:
    # strands-decider (FastAPI) reports {"detail": ...}; sparrow-decider {"error": "..."}.
    if status == 422:
        return status, {}, {"detail": message}
    return status, {}, {"error": {"type": kind, "message": message}}


def _systemone_answer(request: Received, fake: WireFake) -> tuple[int, dict[str, str], Any]:
    body = request.body
    if not _auth_ok(request, fake):
        return 401, {}, {"error": {"type": "unauthorized", "message": "bad bearer key"}}
    if request.path.rstrip("/") != "/v1/systemone":
        return 404, {}, {"error": "not found"}
    if fake.failure is not None and fake.failure.kind == "error_200":
        return 200, {}, {"error": {"type": fake.failure.error_kind, "message": fake.failure.message}}
    answers = _mutate(fake_answers(body["state"], body["questions"]), fake.failure)
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


def systemone_fake(api_key: str | None = None) -> WireFake:
    return WireFake(_systemone_answer, _systemone_error, "http://systemone.test", api_key)


# ---- OpenRouter decisions (Jev) ---------------------------------------------------------

OPENROUTER_PATH = "/api/alpha/decisions"
COST_PER_CALL = 0.000125


def _openrouter_error(status: int, kind: str, message: str) -> tuple[int, dict[str, str], Any]:
    return (
        status,
        {},
        {"error": {"code": status, "message": message, "metadata": {"provider_name": "TypeSafe"}}},
    )


def _openrouter_answer(request: Received, fake: WireFake) -> tuple[int, dict[str, str], Any]:
    body = request.body
    if not _auth_ok(request, fake):
        return 401, {}, {"error": {"code": 401, "message": "No auth credentials found"}}
    if request.path != OPENROUTER_PATH:
        return 404, {}, {"error": {"code": 404, "message": "not found"}}
    if not isinstance(body, dict) or not body.get("model"):
        return 400, {}, {"error": {"code": 400, "message": "model is required"}}
    if fake.failure is not None and fake.failure.kind == "error_200":
        return 200, {}, {"error": {"code": fake.failure.status, "message": fake.failure.message}}
    answers = _mutate(fake_answers(body["state"], body["questions"]), fake.failure)
    return (
        200,
        {},
        {
            "id": f"dec-{len(fake.received)}",
            "model": "typesafe/jev-1.13-20260917",
            "provider": "TypeSafe",
            "answers": answers,
            "usage": {"input_tokens": 40, "output_tokens": 0, "cost": COST_PER_CALL},
        },
    )


def openrouter_fake(api_key: str = "sk-or-test") -> WireFake:
    return WireFake(_openrouter_answer, _openrouter_error, "http://openrouter.test", api_key)


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


def _sagemaker_answer(request: Received, fake: WireFake) -> tuple[int, dict[str, str], Any]:
    body = request.body
    auth = request.headers.get("authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 Credential=") or "x-amz-date" not in {
        k.lower() for k in request.headers
    }:
        return 403, {"x-amzn-ErrorType": "MissingAuthenticationTokenException:"}, {"message": "not signed"}
    match = re.fullmatch(r"/endpoints/([^/]+)/invocations", request.path)
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
        inner = json.loads(tensor["data"][0])
    except (KeyError, ValueError, TypeError, AssertionError):
        # Triton's own refusal of a malformed envelope, relayed by SageMaker as a ModelError.
        return _sagemaker_error(400, "ModelError", "bad Triton envelope")
    failure = fake.failure
    if failure is not None and failure.kind == "error_200":
        return 200, {}, _triton({"error": {"type": failure.error_kind, "message": failure.message}})
    answers = _mutate(fake_answers(inner["state"], inner["questions"]), failure)
    return (
        200,
        {},
        _triton({"model": "decider", "answers": answers, "usage": {"input_tokens": 1, "output_tokens": 1}}),
    )


def sagemaker_fake() -> WireFake:
    """The endpoint ``decider-endpoint``; botocore builds the URL (``endpoint_url`` on a socket)."""
    return WireFake(_sagemaker_answer, _sagemaker_error, "https://runtime.sagemaker.us-east-1.amazonaws.com")


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


def _llm_answer(request: Received, fake: WireFake) -> tuple[int, dict[str, str], Any]:
    body = request.body
    if not _auth_ok(request, fake):
        return 401, {}, {"error": {"message": "invalid api key", "type": "invalid_request_error"}}
    failure = fake.failure
    if request.path == "/v1/chat/completions":
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
    if request.path == "/v1/completions":
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


def llm_fake(api_key: str | None = None) -> WireFake:
    return WireFake(_llm_answer, _llm_error, "http://llm.test", api_key)


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
