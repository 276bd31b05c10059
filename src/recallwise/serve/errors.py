"""The service's one error shape, ``{"error": {"message", "field", "status"}}``, and what maps to it.

400 malformed JSON, 401 a missing or unknown key, 403 a scope the key lacks or a request from
another site's page, 404 absent (or another tenant's: the two cannot be told apart), 408 a body
not sent in time, 413 a body or field over its limit, 415 a body sent without ``content-type:
application/json``, 421 a ``Host`` that is not this server (without keys), 422 a wrong type, an
unknown field or a bad id, 429 too many refit previews of one tenant at once, 503 the store is down
(a write then says nothing was written; a recall answers 200 with an empty context and the error,
failing open like the library) or a refit preview ran out of time. A bug is a 500 in the same
shape, its traceback in the server's log only.
"""

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import InvalidValueError, QuestionError, RecallwiseError, StoreError, UsageError
from .access import ServiceError
from .models import ErrorDetail, ErrorOut

__all__ = ["ERROR_RESPONSES", "EXCEPTION_HANDLERS", "error_response"]

logger = logging.getLogger("recallwise.serve")

#: the statuses every route may answer with the error shape (for the OpenAPI document)
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 408, 413, 422, 429, 503)
}


def error_response(
    status: int, message: str, field: str | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    """The error shape as a response (the middlewares answer with it too)."""
    body = ErrorOut(error=ErrorDetail(message=message, field=field, status=status))
    return JSONResponse(body.model_dump(), status_code=status, headers=headers)


async def _service_error(request: Request, exc: ServiceError) -> Response:
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    return error_response(exc.status, str(exc), exc.field, headers)


async def _invalid_request(request: Request, exc: RequestValidationError) -> Response:
    errors = exc.errors()
    first = errors[0] if errors else {}
    if first.get("type") == "json_invalid":
        return error_response(
            400, f"malformed JSON: {first.get('ctx', {}).get('error', 'cannot parse the body')}"
        )
    sent = request.headers.get("content-type")
    if tuple(first.get("loc", ())) == ("body",) and not _is_json(sent):
        # the body was not read as JSON: say which header is wrong, not "Input should be a valid dictionary"
        got = f"got {sent!r}" if sent else "none was sent"
        return error_response(
            415,
            f"content-type: send the JSON body with 'content-type: application/json' ({got})",
            "content-type",
        )
    where = [str(p) for p in first.get("loc", ()) if p != "body"]
    field = ".".join(where) or None
    kind = first.get("type", "")
    message = "unknown field" if kind == "extra_forbidden" else first.get("msg", "invalid")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return error_response(422, f"{field or 'body'}: {message}{more}", field)


def _is_json(content_type: str | None) -> bool:
    """Whether a ``content-type`` header says JSON (``application/json``, ``...+json``, any charset)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


async def _http(request: Request, exc: StarletteHTTPException) -> Response:
    return error_response(exc.status_code, str(exc.detail))


#: the routes that only read, whatever their method (a POST carries a question, not a write)
_READS = frozenset({"/v1/recall", "/v1/search", "/v1/judge", "/v1/systemone"})


async def _store_down(request: Request, exc: StoreError) -> Response:
    # the details (statements, hosts) go to the log only, never to a client
    logger.warning("store error on %s: %s", request.url.path, exc)
    wrote = request.method not in ("GET", "HEAD") and request.url.path not in _READS
    return error_response(
        503, f"the store is unavailable ({exc.kind})" + ("; nothing was written" if wrote else "")
    )


async def _invalid_value(request: Request, exc: InvalidValueError) -> Response:
    return error_response(422, str(exc), exc.field)


async def _usage(request: Request, exc: UsageError) -> Response:
    return error_response(422, str(exc))


async def _question(request: Request, exc: QuestionError) -> Response:
    return error_response(422, str(exc), "questions")


async def _other(request: Request, exc: RecallwiseError) -> Response:
    logger.warning("%s on %s: %s", type(exc).__name__, request.url.path, exc)
    return error_response(500, f"{type(exc).__name__}: {exc}")


async def _bug(request: Request, exc: Exception) -> Response:
    # a bug: the traceback goes to the log, the client gets JSON like every other answer
    logger.error("unexpected %s on %s", type(exc).__name__, request.url.path, exc_info=exc)
    return error_response(500, f"internal error ({type(exc).__name__}); the server's log has the details")


#: each failure's handler (Starlette picks the most specific class of the exception's own)
EXCEPTION_HANDLERS: dict[int | type[Exception], Callable[[Request, Any], Coroutine[Any, Any, Response]]] = {
    ServiceError: _service_error,
    RequestValidationError: _invalid_request,
    StarletteHTTPException: _http,
    StoreError: _store_down,
    InvalidValueError: _invalid_value,
    UsageError: _usage,
    QuestionError: _question,
    RecallwiseError: _other,
    Exception: _bug,
}
