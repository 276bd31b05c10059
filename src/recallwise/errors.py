"""Exceptions raised by recallwise.

Every error a user can cause derives from :class:`RecallwiseError`, so the CLI can turn it
into a one-line message and exit code 2 instead of a traceback.
"""

from __future__ import annotations


class RecallwiseError(Exception):
    """Base class of every error recallwise raises on purpose."""


class UsageError(RecallwiseError, ValueError):
    """The caller asked for something that cannot work (bad URL, bad id, bad file)."""


class InvalidIdError(UsageError):
    """An actor, session or strategy id that could escape its namespace."""


class InvalidValueError(UsageError):
    """A value no store keeps as given: a NUL character, a lone surrogate (half a UTF-16 pair) or
    a NaN / Infinity (not JSON). ``field`` names where it is (``records[0].metadata.n``)."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class StoreError(RecallwiseError):
    """A store could not be reached or refused an operation.

    ``kind`` says which, for counting: ``unavailable`` (no connection), ``timeout`` (the
    database cancelled the statement), or ``error`` (it refused the operation).
    """

    kind = "error"

    def __init__(self, message: str, *, kind: str | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind


class DimensionMismatchError(StoreError, UsageError):
    """The embedder's vectors do not fit the store's existing vectors."""

    kind = "dimension_mismatch"


class DeciderError(RecallwiseError):
    """A decision backend failed. The policy fails open on these and counts them."""

    kind = "error"


class DeciderUnavailable(DeciderError):
    """The backend could not be reached (connection refused, DNS, circuit open)."""

    kind = "unavailable"


class DeciderTimeout(DeciderError):
    """The backend did not answer within its timeout."""

    kind = "timeout"


class DeciderBadResponse(DeciderError):
    """The backend answered, but not with a valid answer to every question asked."""

    kind = "bad_response"

    def __init__(self, message: str, *, backend_kind: str | None = None) -> None:
        super().__init__(message)
        #: The backend's own error type when it sent one (e.g. ``"invalid_request"``).
        self.backend_kind = backend_kind


class QuestionError(UsageError):
    """A question is malformed; raised before any network call, naming the question."""


def error_kind(exc: BaseException) -> str:
    """A short kind for counting a failure: ``timeout``, ``unavailable``, else the error's own
    ``kind`` (or ``code``, or botocore's ``response["Error"]["Code"]``), else its class name."""
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, (ConnectionError, OSError)):
        return "unavailable"
    for attribute in ("kind", "code"):
        value = getattr(exc, attribute, None)
        if isinstance(value, str) and value:
            return value
    # botocore's ClientError: the service's own code ("ThrottlingException")
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = (response.get("Error") or {}).get("Code")
        if isinstance(code, str) and code:
            return code
    return type(exc).__name__
