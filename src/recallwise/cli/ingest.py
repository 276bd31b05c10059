"""``recallwise ingest FILE.jsonl --actor ID``: conversations in, long-term records out.

One JSON object per line, either one message::

    {"session_id": "trip", "role": "user", "text": "I always book an aisle seat."}

or one whole conversation::

    {"session_id": "trip", "messages": [{"role": "user", "text": "..."}, {"role": "assistant", ...}]}

``text`` may also be ``content`` (a string or a Strands/Bedrock content-block list; only text
blocks are read). ``session_id`` defaults to the file's name; ``actor_id``, when a line has
one, must be the ``--actor``; ``timestamp`` (epoch seconds) is optional. Blank lines are
ignored. A malformed line is reported with its line number and skipped, the rest is still
loaded, and the exit code is 1; when no line can be loaded the store is not opened (nothing
is created) and the summary says nothing was loaded. Lines already in the store (same session, role and text)
are not loaded twice, and every event of the file is extracted again (consolidation keeps
the records it already has, "unchanged"), so re-running the same file is harmless and
completes a run that was stopped between loading its events and extracting them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from ..errors import InvalidIdError, UsageError
from ..extraction.pipeline import ExtractionResult, extract_and_store
from ..policy.policy import message_text
from ..records import Event, validate_id
from ..stores.urls import redact_url
from . import emit_json, progress_bar
from .common import (
    add_embedder,
    add_extractor,
    add_json,
    add_store,
    extractor_from_args,
    missing_sqlite_file,
    store_from_args,
)

ROLES = ("user", "assistant", "tool", "system", "other")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """load conversations (JSONL) and extract long-term records from them

    Load conversation messages from a JSONL file as events for one actor, then turn what the user said
    into long-term records (facts and preferences), consolidated with the records already in the store.
    """
    parser.add_argument("file", metavar="FILE.jsonl", help="one message or one conversation per line")
    parser.add_argument(
        "--actor", required=True, metavar="ID", help="the actor whose conversations these are"
    )
    add_store(parser)
    add_embedder(parser)
    add_extractor(parser)
    add_json(parser)


def _session_default(path: Path) -> str:
    stem = re.sub(r"[^A-Za-z0-9_\-.:@+=]", "-", path.stem).strip("-.") or "ingest"
    return stem[:128]


def _message_events(item: Any, where: str = "") -> tuple[str, str, float | None]:
    """(role, text, created_at) of one message object, or raise ValueError saying what is wrong."""
    label = f"{where}: " if where else ""
    if not isinstance(item, dict):
        raise ValueError(f"{label}expected a JSON object, got {type(item).__name__}")
    role = item.get("role")
    if not isinstance(role, str) or role.lower() not in ROLES:
        raise ValueError(f"{label}'role' must be one of {', '.join(ROLES)}, got {role!r}")
    if "text" in item:
        text = item["text"]
        if not isinstance(text, str):
            raise ValueError(f"{label}'text' must be a string")
    elif "content" in item:
        text = message_text(item["content"])
    else:
        raise ValueError(f"{label}no 'text' (or 'content')")
    if "\x00" in text:
        raise ValueError(
            f"{label}'text' holds a NUL character at position {text.index(chr(0))} (no store keeps one)"
        )
    stamp = item.get("timestamp")
    if stamp is not None and (isinstance(stamp, bool) or not isinstance(stamp, (int, float))):
        raise ValueError(f"{label}'timestamp' must be epoch seconds, got {stamp!r}")
    return role.lower(), text, float(stamp) if stamp is not None else None


def parse_lines(path: Path, actor: str) -> tuple[list[Event], list[dict[str, Any]], int]:
    """Events from a JSONL file, the errors (``{"line", "error"}``) and how many lines had content."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"no such file: {str(path)!r}") from None
    except IsADirectoryError:
        raise UsageError(f"{str(path)!r} is a directory, not a JSONL file") from None
    default_session = _session_default(path)
    events: list[Event] = []
    errors: list[dict[str, Any]] = []
    lines = 0
    # Decoded line by line: one line with bytes that are not UTF-8 (a paste from a Latin-1
    # editor) is reported with its number and skipped; the rest of the file still loads.
    for number, raw_line in enumerate(raw.removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
        try:
            line = raw_line.rstrip(b"\r").decode("utf-8")
        except UnicodeDecodeError as exc:
            lines += 1
            errors.append(
                {
                    "line": number,
                    "error": f"not UTF-8 text (byte 0x{raw_line[exc.start]:02x} at column {exc.start + 1})",
                }
            )
            continue
        if not line.strip():
            continue
        lines += 1
        try:
            obj = json.loads(line)
        except ValueError as exc:
            errors.append({"line": number, "error": f"not JSON: {exc}"})
            continue
        try:
            if not isinstance(obj, dict):
                raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
            if not ("messages" in obj or "text" in obj or "content" in obj):
                raise ValueError("no 'text', 'content' or 'messages'")
            line_actor = obj.get("actor_id", actor)
            if line_actor != actor:
                raise ValueError(f"actor_id {line_actor!r} is not --actor {actor!r}")
            session_id = obj.get("session_id", default_session)
            if not isinstance(session_id, str):
                raise ValueError(f"session_id must be a string, got {session_id!r}")
            validate_id(session_id, "session_id")
            if "messages" in obj:
                messages = obj["messages"]
                if not isinstance(messages, list):
                    raise ValueError("'messages' must be a list")
                parsed = [_message_events(m, f"messages[{i}]") for i, m in enumerate(messages)]
            else:
                parsed = [_message_events(obj)]
        except (ValueError, InvalidIdError) as exc:
            errors.append({"line": number, "error": str(exc)})
            continue
        for role, text, stamp in parsed:
            event = Event(actor_id=actor, session_id=session_id, role=role, text=text)
            if stamp is not None:
                event.created_at = stamp
            event.metadata["source"] = f"{path.name}:{number}"
            events.append(event)
    return events, errors, lines


def run(args: argparse.Namespace) -> int:
    actor = validate_id(args.actor, "--actor")
    path = Path(args.file)
    extractor = extractor_from_args(args)  # a bad extractor fails before anything is read
    events, errors, lines = parse_lines(path, actor)
    for error in errors if not args.json else []:
        sys.stderr.write(f"{path}:{error['line']}: {error['error']}\n")
    notes: list[str] = []
    if lines == 0:
        notes.append(f"{path} is empty: nothing to ingest")
    if not events:
        # Nothing to load: the store is not opened, so a file of bad lines leaves nothing behind.
        return _nothing_loaded(args, path, actor, extractor.name, lines, errors, notes)
    created = missing_sqlite_file(args.store)
    store = store_from_args(args)
    if created is not None:  # ingest makes stores; it says when it made one
        notes.append(f"created a new store at {created!r}")
    # Skip messages already loaded: re-running a file must not duplicate events or records.
    existing: dict[tuple[str, str, str], list[Event]] = {}
    for stored in store.list_events(actor) if events else []:
        existing.setdefault((stored.session_id, stored.role, stored.text), []).append(stored)
    seen: Counter[tuple[str, str, str]] = Counter()
    new_events = []
    file_events = []  # every event of the file, as it is in the store once the new ones are loaded
    for event in events:
        key = (event.session_id, event.role, event.text)
        seen[key] += 1
        stored_events = existing.get(key, [])
        if seen[key] > len(stored_events):
            new_events.append(event)
            file_events.append(event)
        else:
            file_events.append(stored_events[seen[key] - 1])
    for event in new_events:
        store.create_event(event)
    skipped = len(events) - len(new_events)
    if skipped:
        notes.append(f"{skipped} message(s) were already in the store and were not loaded again")
    # Extract from every event of the file, not only the new ones: a run killed after loading
    # its events but before extracting them is completed by running it again, and records
    # already extracted come back "unchanged" from consolidation.
    results = _extract(store, actor, file_events, extractor, args)
    added = sum(r.added for r in results)
    updated = sum(r.updated for r in results)
    unchanged = sum(r.consolidation.unchanged for r in results)
    memories = sum(len(r.memories) for r in results)
    sessions = sorted({e.session_id for e in new_events})
    if args.json:
        emit_json(
            {
                "file": str(path),
                "actor_id": actor,
                "store": store.url,
                "extractor": extractor.name,
                "lines": lines,
                "events_loaded": len(new_events),
                "events_already_loaded": skipped,
                "sessions": sessions,
                "memories_extracted": memories,
                "records_added": added,
                "records_updated": updated,
                "records_unchanged": unchanged,
                "records": [rec for r in results for rec in r.consolidation.as_dict()["records"]],
                "errors": errors,
                "notes": notes,
            }
        )
    else:
        for note in notes:
            print(note)
        if new_events:
            print(
                f"loaded {len(new_events)} events ({len(sessions)} session(s)) "
                f"for actor {actor!r} into {store.url}"
            )
        if file_events:
            print(
                f"extracted {memories} memories with {extractor.name}: {added} records added, "
                f"{updated} updated, {unchanged} already known"
            )
        if errors:
            rest = "the rest was loaded" if new_events else "the other lines were already in the store"
            print(f"{len(errors)} malformed line(s) skipped (see above); {rest}")
    store.close()
    return 1 if errors else 0


def _nothing_loaded(
    args: argparse.Namespace,
    path: Path,
    actor: str,
    extractor: str,
    lines: int,
    errors: list[dict[str, Any]],
    notes: list[str],
) -> int:
    """The summary when no line of the file could be loaded (empty, or every line malformed)."""
    if errors:
        notes.append(f"no line of {path} could be loaded ({len(errors)} malformed): nothing was loaded")
    if args.json:
        emit_json(
            {
                "file": str(path),
                "actor_id": actor,
                "store": redact_url(args.store),
                "extractor": extractor,
                "lines": lines,
                "events_loaded": 0,
                "events_already_loaded": 0,
                "sessions": [],
                "memories_extracted": 0,
                "records_added": 0,
                "records_updated": 0,
                "records_unchanged": 0,
                "records": [],
                "errors": errors,
                "notes": notes,
            }
        )
    else:
        for note in notes:
            print(note)
    return 1 if errors else 0


def _extract(
    store: Any, actor: str, events: list[Event], extractor: Any, args: argparse.Namespace
) -> list[ExtractionResult]:
    by_session: dict[str, list[Event]] = {}
    for event in events:
        by_session.setdefault(event.session_id, []).append(event)
    results = []
    with progress_bar(args, len(by_session), desc="extracting", unit="session") as bar:
        for session in by_session.values():
            results.append(extract_and_store(store, actor, session, extractor=extractor))
            bar.update()
    return results
