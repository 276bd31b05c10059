"""Who is asking, and what the service refuses them.

A :class:`Principal` is a tenant and its scopes (from an API key, or the one local user of a
server without keys); :class:`ServiceError` is the refusal every operation raises, with the HTTP
status the transport maps it to. Kept free of HTTP and pydantic: ``recallwise keys new``, which
checks a key's tenant and scopes, runs on the base install.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import RecallwiseError, UsageError

__all__ = ["LOCAL", "SCOPES", "Principal", "ServiceError"]

#: recall and write act for the key's tenant; admin forgets its users; operator reads /metrics,
#: which counts every tenant's traffic (so a tenant's admin key does not see other tenants')
SCOPES = ("recall", "write", "admin", "operator")
_TENANT_RE = re.compile(r"[A-Za-z0-9_-]{1,32}")


class ServiceError(RecallwiseError):
    """A request the service refuses: ``status`` is the HTTP status it maps to, ``field`` the
    request field at fault (when one is)."""

    def __init__(self, status: int, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.field = field


@dataclass(frozen=True)
class Principal:
    """Who is asking: ``tenant`` None is a server without keys (ids used as they are)."""

    tenant: str | None
    scopes: frozenset[str] = frozenset(SCOPES)
    #: a short, non-secret label of the key (for logs and metrics), never the key
    key_id: str = "local"

    def __post_init__(self) -> None:
        if self.tenant is not None and not _TENANT_RE.fullmatch(self.tenant):
            raise UsageError(f"invalid tenant {self.tenant!r}: use 1-32 letters, digits, '_' or '-'")
        unknown = set(self.scopes) - set(SCOPES)
        if unknown:
            raise UsageError(f"unknown scope(s) {sorted(unknown)}; known: {', '.join(SCOPES)}")

    def require(self, scope: str) -> None:
        if scope not in self.scopes:
            raise ServiceError(403, f"this key lacks the {scope!r} scope")


LOCAL = Principal(None)
