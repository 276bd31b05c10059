"""The TypeScript client's OpenAPI snapshot is the app's own document, so the two cannot drift.

``clients/typescript/openapi.json`` is what the TypeScript types are generated from (``npm run
types``; its ``npm test`` fails when they are not); this test compares it to
``create_app(...).openapi()``, which FastAPI builds from the service's response models
(``recallwise.serve.models``). After changing the API, rewrite it with
``RECALLWISE_WRITE_OPENAPI=1 pytest tests/test_typescript_openapi.py``, then run ``npm run types``
in ``clients/typescript``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from recallwise.serve.app import create_app
from recallwise.serve.service import MemoryService
from recallwise.stores import open_store

SNAPSHOT = Path(__file__).resolve().parents[1] / "clients" / "typescript" / "openapi.json"


def live_document() -> dict[str, Any]:
    """The app's OpenAPI document without its release number (a release alone changes no type)."""
    store = open_store("sqlite:///:memory:")
    try:
        document = create_app(MemoryService.open(store, decider=None, batch_embeddings=False)).openapi()
    finally:
        store.close()
    document = json.loads(json.dumps(document))
    document["info"].pop("version", None)
    return document


def test_the_snapshot_is_the_live_document():
    live = live_document()
    if os.environ.get("RECALLWISE_WRITE_OPENAPI") == "1":
        SNAPSHOT.write_text(json.dumps(live, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert SNAPSHOT.exists(), f"{SNAPSHOT} is missing: write it with RECALLWISE_WRITE_OPENAPI=1"
    committed = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert committed == live, (
        "clients/typescript/openapi.json differs from the app's /openapi.json: rewrite it with "
        "RECALLWISE_WRITE_OPENAPI=1 pytest tests/test_typescript_openapi.py, then `npm run types` in "
        "clients/typescript"
    )


def test_the_snapshot_has_what_the_client_calls():
    paths = json.loads(SNAPSHOT.read_text(encoding="utf-8"))["paths"]
    for path, method in [
        ("/v1/recall", "post"),
        ("/v1/judge", "post"),
        ("/v1/events", "post"),
        ("/v1/records", "post"),
        ("/v1/records", "get"),
        ("/v1/records/{record_id}", "delete"),
        ("/v1/actors/{actor_id}", "delete"),
    ]:
        assert method in paths[path], (path, method)
