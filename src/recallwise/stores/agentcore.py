"""Amazon Bedrock AgentCore Memory as a recallwise store (``agentcore://MEMORY_ID?region=...``).

Every operation is one or more calls to AgentCore's data plane (boto3 client
``bedrock-agentcore``); each call is billed by AWS. AgentCore embeds and ranks on the
service side, so :meth:`AgentCoreStore.search` needs the query *text*; the local
:attr:`~AgentCoreStore.embedder` only serves deciders that want a query vector.

Errors are never swallowed: a refused or throttled call raises :class:`AgentCoreError`
(a :class:`~recallwise.errors.StoreError`) carrying the service's error code, so the policy
counts it -- unlike ``MemoryClient.retrieve_memories``, which turns every service error into
an empty list.

URL options: ``region`` (else the boto3 default), ``profile`` (a named AWS profile),
``endpoint_url`` (a private endpoint). ``open_store(url, boto_session=...)`` or
``client=...`` hand in a ready session or client instead.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..embeddings import Embedder, default_embedder
from ..errors import StoreError, UsageError
from ..extras import require_extra
from ..records import Event, MemoryRecord, SearchHit, check_event, check_record
from .base import SearchRequest, ThreadedAsyncMethods

__all__ = ["AgentCoreError", "AgentCoreStore", "parse_agentcore_url", "validate_memory_id"]

# The data plane's MemoryId shape (botocore's service model for bedrock-agentcore, 2024-02-28):
# an id, or the memory's ARN. Checked here because botocore checks only the length and the
# service answers a malformed id with a ValidationException after a round trip.
_MEMORY_ID = re.compile(
    r"(arn:(aws|aws-cn|aws-us-gov):bedrock-agentcore:[a-z0-9-]+:[0-9]{12}:memory/)?"
    r"[a-zA-Z][a-zA-Z0-9-_]{0,99}-[a-zA-Z0-9]{10}"
)
_ROLES = {"user": "USER", "assistant": "ASSISTANT", "tool": "TOOL"}
_BATCH = 100  # the data plane's batch limit for record create/delete


class AgentCoreError(StoreError):
    """An AgentCore Memory call failed; ``code`` is the service's error code."""

    def __init__(self, message: str, *, code: str, operation: str = "") -> None:
        super().__init__(message, kind=code)
        self.code = code
        self.operation = operation


def validate_memory_id(memory_id: object, where: str = "memory_id") -> str:
    """``memory_id`` when it has the shape of an AgentCore memory id (or ARN); else one
    :class:`UsageError` line naming it, before any AWS call is made."""
    if not isinstance(memory_id, str) or not _MEMORY_ID.fullmatch(memory_id):
        raise UsageError(
            f"{where} {memory_id!r} is not an AgentCore memory id (like my_memory-a1B2c3D4e5, "
            "the name, a dash and 10 letters or digits; `aws bedrock-agentcore-control list-memories` "
            "lists yours)"
        )
    return memory_id


def parse_agentcore_url(url: str) -> tuple[str, dict[str, str]]:
    """``agentcore://MEMORY_ID?region=us-west-2`` -> ``("MEMORY_ID", {"region": "us-west-2"})``."""
    parts = urlsplit(url)
    if parts.scheme.lower() != "agentcore":
        raise UsageError(f"not an agentcore URL: {url!r} (expected agentcore://MEMORY_ID?region=REGION)")
    memory_id = validate_memory_id((parts.netloc + parts.path).strip("/"), f"agentcore URL {url!r}:")
    options: dict[str, str] = {}
    for key, values in parse_qs(parts.query, keep_blank_values=True).items():
        if key not in ("region", "profile", "endpoint_url"):
            raise UsageError(f"agentcore URL {url!r}: unknown option {key!r} (region, profile, endpoint_url)")
        options[key] = values[-1]
    return memory_id, options


def _error(exc: Exception, operation: str) -> AgentCoreError:
    response = getattr(exc, "response", None) or {}
    error = response.get("Error", {}) if isinstance(response, dict) else {}
    code = str(error.get("Code") or type(exc).__name__)
    message = str(error.get("Message") or exc)
    return AgentCoreError(f"AgentCore {operation} failed: {code}: {message}", code=code, operation=operation)


class AgentCoreStore(ThreadedAsyncMethods):
    """Events and long-term records in an AgentCore Memory resource (async methods included:
    ``asearch``, ``aadd_records``, ``acreate_event``, ``alist_records``)."""

    local = False

    def __init__(
        self,
        url: str,
        *,
        embedder: Embedder | None = None,
        boto_session: Any = None,
        client: Any = None,
        region: str | None = None,
    ) -> None:
        self.url = url
        self.memory_id, options = parse_agentcore_url(url)
        self._embedder = embedder
        self._embedder_lock = threading.Lock()
        if client is None:
            require_extra("agentcore", "an agentcore:// store", ("boto3",))
            import boto3

            region = region or options.get("region")
            session = boto_session or boto3.Session(profile_name=options.get("profile"), region_name=region)
            region = region or session.region_name
            if not region:
                raise UsageError(f"no AWS region for {url!r}: add ?region=... or set AWS_DEFAULT_REGION")
            client = session.client(
                "bedrock-agentcore", region_name=region, endpoint_url=options.get("endpoint_url")
            )
        self.client = client

    @property
    def embedder(self) -> Embedder:
        """A local embedder for deciders that use a query vector (AgentCore embeds on its side)."""
        if self._embedder is None:
            with self._embedder_lock:
                if self._embedder is None:
                    self._embedder = default_embedder()
        return self._embedder

    @embedder.setter
    def embedder(self, embedder: Embedder) -> None:
        self._embedder = embedder

    # ---- plumbing ----------------------------------------------------------------------------
    def _call(self, operation: str, **params: Any) -> dict[str, Any]:
        from botocore.exceptions import BotoCoreError, ClientError

        method = getattr(self.client, operation)
        try:
            response: dict[str, Any] = method(memoryId=self.memory_id, **params)
        except (ClientError, BotoCoreError) as exc:
            raise _error(exc, operation) from exc
        return response

    def _pages(self, operation: str, key: str, **params: Any) -> Iterator[dict[str, Any]]:
        token: str | None = None
        while True:
            response = self._call(operation, **params, **({"nextToken": token} if token else {}))
            yield from response.get(key, [])
            token = response.get("nextToken")
            if not token:
                return

    def _record(self, summary: dict[str, Any], actor_id: str | None) -> MemoryRecord:
        content = summary.get("content") or {}
        namespaces = summary.get("namespaces") or [""]
        created = summary.get("createdAt")
        metadata = _metadata_from_service(summary.get("metadata") or {})
        return MemoryRecord(
            actor_id=actor_id or _actor_from_namespace(namespaces[0]),
            namespace=namespaces[0],
            text=str(content.get("text", "")),
            id=str(summary.get("memoryRecordId", "")),
            strategy=str(summary.get("memoryStrategyId") or metadata.get("strategy") or "agentcore"),
            created_at=created.timestamp() if isinstance(created, datetime) else 0.0,
            metadata=metadata,
        )

    # ---- events ------------------------------------------------------------------------------
    def create_event(self, event: Event) -> Event:
        check_event(event)
        payload: list[dict[str, Any]] = []
        if event.text.strip():
            role = _ROLES.get(event.role.lower(), "OTHER")
            payload.append({"conversational": {"content": {"text": event.text}, "role": role}})
        if event.metadata or not payload:
            payload.append({"blob": {"recallwise": {"role": event.role, "metadata": event.metadata}}})
        response = self._call(
            "create_event",
            actorId=event.actor_id,
            sessionId=event.session_id,
            eventTimestamp=datetime.fromtimestamp(event.created_at, tz=UTC),
            payload=payload,
        )
        event.id = str(response.get("event", {}).get("eventId", event.id))
        return event

    def list_events(self, actor_id: str, session_id: str | None = None) -> list[Event]:
        sessions = (
            [session_id]
            if session_id is not None
            else [s["sessionId"] for s in self._pages("list_sessions", "sessionSummaries", actorId=actor_id)]
        )
        events: list[Event] = []
        for sid in sessions:
            for raw in self._pages(
                "list_events", "events", actorId=actor_id, sessionId=sid, includePayloads=True
            ):
                events.append(_event_from(raw, actor_id, sid))
        events.sort(key=lambda e: e.created_at)
        return events

    # ---- records -----------------------------------------------------------------------------
    def add_records(self, records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
        """Create records (AgentCore assigns the ids; each record's ``id`` is updated to it)."""
        records = list(records)
        for given in records:
            check_record(given)
        for start in range(0, len(records), _BATCH):
            chunk = records[start : start + _BATCH]
            by_request = {f"r{start + i}": r for i, r in enumerate(chunk)}
            response = self._call(
                "batch_create_memory_records",
                records=[
                    {
                        "requestIdentifier": request_id,
                        "namespaces": [record.namespace],
                        "content": {"text": record.text},
                        "timestamp": datetime.fromtimestamp(record.created_at, tz=UTC),
                        "metadata": _metadata_to_service({"strategy": record.strategy, **record.metadata}),
                    }
                    for request_id, record in by_request.items()
                ],
            )
            failed = response.get("failedRecords") or []
            if failed:
                detail = "; ".join(
                    f"{f.get('requestIdentifier')}: {f.get('errorMessage') or f.get('status')}"
                    for f in failed
                )
                raise AgentCoreError(
                    f"AgentCore refused {len(failed)} of {len(chunk)} records: {detail}",
                    code="PartialFailure",
                    operation="batch_create_memory_records",
                )
            for done in response.get("successfulRecords") or []:
                record = by_request.get(done.get("requestIdentifier", ""))
                if record is not None and done.get("memoryRecordId"):
                    record.id = done["memoryRecordId"]
        return records

    def search(self, request: SearchRequest) -> list[SearchHit]:
        """AgentCore's semantic search in ``namespace``; scores are the service's relevance scores.

        ``mode`` is accepted for the protocol; AgentCore decides its own ranking.
        """
        namespace, query, top_k = request.namespace, request.query, request.top_k
        actor_id, text = request.actor_id, request.text
        query_text = text if text is not None else (query if isinstance(query, str) else None)
        if not query_text or not query_text.strip():
            raise UsageError("AgentCore searches by text: pass text= (a query vector alone cannot be sent)")
        response = self._call(
            "retrieve_memory_records",
            namespace=namespace,
            searchCriteria={"searchQuery": query_text, "topK": top_k},
            maxResults=min(max(top_k, 1), 100),
        )
        hits = [
            SearchHit(self._record(summary, actor_id), float(summary.get("score") or 0.0))
            for summary in response.get("memoryRecordSummaries", [])
        ]
        hits.sort(key=lambda h: -h.score)
        return hits[:top_k]

    def list_records(
        self, namespace: str | None = None, *, actor_id: str | None = None
    ) -> list[MemoryRecord]:
        """Records in ``namespace`` (every namespace when None; ``actor_id`` keeps namespaces naming it)."""
        where = {"namespace": namespace} if namespace is not None else {"namespacePath": "/"}
        records = [
            self._record(s, actor_id)
            for s in self._pages("list_memory_records", "memoryRecordSummaries", **where)
        ]
        if actor_id is not None and namespace is None:
            records = [r for r in records if actor_id in r.namespace.strip("/").split("/")]
        return records

    def get_records(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        out: dict[str, MemoryRecord] = {}
        for record_id in ids:
            try:
                response = self._call("get_memory_record", memoryRecordId=record_id)
            except AgentCoreError as exc:
                if exc.code == "ResourceNotFoundException":
                    continue
                raise
            out[record_id] = self._record(response.get("memoryRecord", {}), None)
        return out

    def delete_records(self, ids: Sequence[str]) -> int:
        deleted = 0
        ids = list(ids)
        for start in range(0, len(ids), _BATCH):
            response = self._call(
                "batch_delete_memory_records",
                records=[{"memoryRecordId": record_id} for record_id in ids[start : start + _BATCH]],
            )
            deleted += len(response.get("successfulRecords") or [])
        return deleted

    def count_records(self) -> int:
        return len(self.list_records())

    def namespaces(self, actor_id: str | None = None) -> list[str]:
        return sorted({r.namespace for r in self.list_records(actor_id=actor_id)})

    def close(self) -> None:
        """Nothing to release: boto3 clients pool their own connections."""

    def __repr__(self) -> str:
        return f"AgentCoreStore({self.url!r})"


_JSON_PREFIX = "json:"


def _metadata_to_service(metadata: dict[str, Any]) -> dict[str, Any]:
    """Record metadata as AgentCore's typed map; structured values travel as JSON strings."""
    out: dict[str, Any] = {}
    for key, value in list(metadata.items())[:20]:  # the service keeps at most 20 keys
        if isinstance(value, str):
            out[key] = {"stringValue": value}
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = {"numberValue": float(value)}
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[key] = {"stringListValue": value}
        elif value is not None:
            out[_JSON_PREFIX + key] = {"stringValue": json.dumps(value)}
    return out


def _metadata_from_service(metadata: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        plain = next(iter(value.values())) if isinstance(value, dict) and value else value
        if key.startswith(_JSON_PREFIX) and isinstance(plain, str):
            try:
                out[key[len(_JSON_PREFIX) :]] = json.loads(plain)
                continue
            except ValueError:
                pass
        out[key] = plain
    return out


def _actor_from_namespace(namespace: str) -> str:
    parts = [p for p in namespace.strip("/").split("/") if p]
    return parts[-1] if parts else ""


def _event_from(raw: dict[str, Any], actor_id: str, session_id: str) -> Event:
    text, role, metadata = "", "other", {}
    for item in raw.get("payload") or []:
        if "conversational" in item:
            conversational = item["conversational"]
            text = str((conversational.get("content") or {}).get("text", ""))
            role = str(conversational.get("role", "OTHER")).lower()
        elif "blob" in item:
            blob = item["blob"]
            if isinstance(blob, str):
                try:
                    blob = json.loads(blob)
                except ValueError:
                    blob = None
            ours = blob.get("recallwise") if isinstance(blob, dict) else None
            if isinstance(ours, dict):
                metadata = dict(ours.get("metadata") or {})
                role = str(ours.get("role") or role)
    stamp = raw.get("eventTimestamp")
    return Event(
        actor_id=actor_id,
        session_id=session_id,
        role=role,
        text=text,
        id=str(raw.get("eventId", "")),
        created_at=stamp.timestamp() if isinstance(stamp, datetime) else 0.0,
        metadata=metadata,
    )
