"""Store URLs: the option every backend shares (``?embedder=NAME``), and the one form in which a
URL is ever printed, logged or returned (:func:`redact_url`)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode

from ..embeddings import Embedder, make_embedder
from ..errors import UsageError

__all__ = ["choose_embedder", "redact_url", "split_embedder_option", "store_kind"]

# user:PASSWORD@ in the authority (the password may hold anything but '/', '?' and '#'; the last
# '@' ends it, as urlsplit reads it), and libpq's password options in the query string
_AUTHORITY_PASSWORD = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^/?#:@]*):[^/?#]*@")
_QUERY_PASSWORD = re.compile(r"([?&](?:password|sslpassword)=)[^&#]*", re.IGNORECASE)
# libpq's keyword/value form (``host=h user=u password=PW``): a value is a word or a quoted string
_DSN_PASSWORD = re.compile(
    r"((?:^|\s)(?:password|sslpassword)\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|\S*)", re.IGNORECASE
)


def redact_url(url: str) -> str:
    """``url`` with its password shown as ``***`` (``user:***@host``, ``password=***``, also in
    libpq's ``key=value`` form): how a store URL appears in every message, log line and reply (the
    start-up line, ``--json``, errors)."""
    url = _AUTHORITY_PASSWORD.sub(r"\1:***@", url, count=1)
    url = _QUERY_PASSWORD.sub(r"\1***", url)
    return _DSN_PASSWORD.sub(r"\1***", url) if "://" not in url else url


def store_kind(store: Any) -> str:
    """What kind of store ``store`` is (its URL's scheme: ``sqlite``, ``postgresql``, ...), for
    replies that must not name hosts, files or users."""
    url = getattr(store, "url", None)
    if isinstance(url, str) and "://" in url:
        return url.split("://", 1)[0].lower()
    return type(store).__name__


def split_embedder_option(url: str) -> tuple[str, str | None]:
    """``url`` without its ``embedder=`` query option, and that option's value (None if absent)."""
    # String surgery, not urlunsplit: it turns sqlite:///x.db into sqlite:/x.db.
    base, mark, query = url.partition("?")
    query, hash_mark, fragment = query.partition("#")
    if not mark or not query:
        return url, None
    pairs = parse_qsl(query, keep_blank_values=True)
    values = [v for k, v in pairs if k == "embedder"]
    if not values:
        return url, None
    if len(values) > 1 or not values[0].strip():
        raise UsageError(f"store URL {redact_url(url)!r}: give embedder= once, with a name")
    rest = urlencode([(k, v) for k, v in pairs if k != "embedder"])
    return base + (f"?{rest}" if rest else "") + hash_mark + fragment, values[0].strip()


def choose_embedder(url: str, given: Embedder | None, named: str | None) -> Embedder | None:
    """The embedder a store opens with: the one passed in, or the one the URL names.

    Both at once must agree; None means neither was given (the store decides: the one it
    recorded, or the default).
    """
    if named is None:
        return given
    if not named.strip():
        raise UsageError(f"store URL {redact_url(url)!r}: embedder= needs a name, e.g. embedder=multilingual")
    chosen = make_embedder(named)
    if given is not None and given.name != chosen.name:
        raise UsageError(
            f"store URL {redact_url(url)!r} names embedder {chosen.name!r} but {given.name!r} "
            "was passed too: give one"
        )
    return given or chosen
