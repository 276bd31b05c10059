"""The store URL option every backend shares: ``?embedder=NAME``."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..embeddings import Embedder, make_embedder
from ..errors import UsageError

__all__ = ["choose_embedder", "split_embedder_option"]


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
        raise UsageError(f"store URL {_hide_password(url)!r}: give embedder= once, with a name")
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
        raise UsageError(
            f"store URL {_hide_password(url)!r}: embedder= needs a name, e.g. embedder=multilingual"
        )
    chosen = make_embedder(named)
    if given is not None and given.name != chosen.name:
        raise UsageError(
            f"store URL {_hide_password(url)!r} names embedder {chosen.name!r} but {given.name!r} "
            "was passed too: give one"
        )
    return given or chosen


def _hide_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
