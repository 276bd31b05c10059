"""API keys: a file of hashed keys, each naming a tenant and its scopes.

The file (YAML or JSON) holds only SHA-256 digests, never a key::

    keys:
      - id: acme-agents            # a label for logs and metrics (not secret)
        sha256: 3f1c...            # hex digest of the key
        tenant: acme
        scopes: [recall, write]    # recall, write, admin

``recallwise keys new --keys FILE --tenant acme --scopes recall,write`` makes a key, adds its
digest to the file and prints the key once. A request sends it as ``Authorization: Bearer KEY``
(or ``X-API-Key: KEY``). Keys are random 256-bit tokens, so a plain digest is enough; every
entry is compared in constant time (``hmac.compare_digest``, all entries, no early exit), and
neither a key nor its digest is ever logged.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import UsageError
from .access import SCOPES, Principal

__all__ = ["KEY_PREFIX", "KeyEntry", "Keyring", "digest", "new_key", "presented_key"]

KEY_PREFIX = "rw_"


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> str:
    """A new random API key (``rw_`` and 43 URL-safe characters: 256 bits)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


@dataclass(frozen=True)
class KeyEntry:
    id: str
    sha256: str
    principal: Principal


class Keyring:
    """The keys a server accepts; :meth:`principal` finds who a presented key belongs to."""

    def __init__(self, entries: Sequence[KeyEntry], path: Path | None = None) -> None:
        self.entries = list(entries)
        self.path = path
        # the digests as bytes once, so each lookup only hashes the presented key
        self._digests = [bytes.fromhex(e.sha256) for e in self.entries]

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Keyring:
        """Read a keys file; every mistake is a :class:`UsageError` naming the file and entry."""
        file = Path(path)
        try:
            raw = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--keys {file}: cannot read: {exc.strerror or exc}") from None
        try:
            document = yaml.safe_load(raw) if raw.strip() else {}
        except yaml.YAMLError as exc:
            raise UsageError(f"--keys {file}: not YAML or JSON: {str(exc).splitlines()[0]}") from None
        if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
            raise UsageError(f"--keys {file}: expected an object with a 'keys' list")
        entries: list[KeyEntry] = []
        seen: set[str] = set()
        for i, item in enumerate(document["keys"]):
            where = f"--keys {file}: keys[{i}]"
            if not isinstance(item, dict):
                raise UsageError(f"{where}: expected an object with id, sha256, tenant, scopes")
            unknown = set(item) - {"id", "sha256", "tenant", "scopes"}
            if unknown:
                raise UsageError(f"{where}: unknown field(s) {sorted(unknown)}")
            sha = str(item.get("sha256", "")).lower()
            if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
                raise UsageError(f"{where}: sha256 must be 64 hex digits (the key's SHA-256, never the key)")
            if sha in seen:
                raise UsageError(f"{where}: the same key is listed twice")
            seen.add(sha)
            scopes = item.get("scopes", ["recall"])
            if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
                raise UsageError(f"{where}: scopes must be a list of {', '.join(SCOPES)}")
            tenant = item.get("tenant")
            if not isinstance(tenant, str):
                raise UsageError(f"{where}: tenant must be a string")
            label = str(item.get("id") or f"key{i}")
            try:
                principal = Principal(tenant, frozenset(scopes), key_id=label)
            except UsageError as exc:
                raise UsageError(f"{where}: {exc}") from None
            entries.append(KeyEntry(label, sha, principal))
        return cls(entries, file)

    def principal(self, key: str | None) -> Principal | None:
        """The principal of ``key``, or None for a missing or unknown key (constant time in the
        number of keys: every entry is compared)."""
        if not key:
            return None
        presented = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
        found: Principal | None = None
        for entry, stored in zip(self.entries, self._digests, strict=True):
            if hmac.compare_digest(presented, stored):
                found = entry.principal
        return found

    def __len__(self) -> int:
        return len(self.entries)


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The API key a request presents: ``Authorization: Bearer KEY``, else ``X-Api-Key``."""
    header = headers.get("authorization", "") or ""
    return header[7:].strip() if header[:7].lower() == "bearer " else headers.get("x-api-key")


def add_key(path: str | os.PathLike[str], *, tenant: str, scopes: Sequence[str], label: str | None) -> str:
    """Make a key, append its digest to the keys file (created when missing); returns the key."""
    file = Path(path)
    document: dict[str, Any] = {"keys": []}
    if file.exists():
        Keyring.load(file)  # refuse to append to a file the server would refuse
        document = yaml.safe_load(file.read_text(encoding="utf-8")) or {"keys": []}
    existing = {str(k.get("id")) for k in document["keys"] if isinstance(k, dict)}
    label = label or f"{tenant}-{len(document['keys']) + 1}"
    if label in existing:
        raise UsageError(f"--keys {file}: a key with id {label!r} exists already")
    key = new_key()
    entry = {"id": label, "sha256": digest(key), "tenant": tenant, "scopes": list(scopes)}
    Principal(tenant, frozenset(scopes), key_id=label)  # validates tenant and scopes
    document["keys"].append(entry)
    scratch = file.with_name(f".{file.name}.tmp")
    text = (
        json.dumps(document, indent=2)
        if file.suffix == ".json"
        else yaml.safe_dump(document, sort_keys=False)
    )
    scratch.write_text(text, encoding="utf-8")
    os.chmod(scratch, 0o600)
    os.replace(scratch, file)
    return key
