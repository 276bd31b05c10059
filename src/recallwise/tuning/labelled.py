"""Labelled turns: the one data shape the gate and judge heads are fitted and measured on.

A *labelled turn* is one JSON object::

    {"text": "What should I cook tonight?",          # the user's message
     "label": true,                                   # gate truth: answering needs stored memory
     "records": [{"id": "r1", "text": "The user is vegetarian.", "label": true}, ...],
                                                      # judge truth, per stored record
     "decision_id": "...",                            # the decision log's turn, when it came from one
     "source": "...", "lang": "en", "kind": "...", "actor_id": "...", "session_id": "...", "time": "..."}

``label`` and ``records`` are each optional (a gate set has labels, a judge set records; a turn
may have both). A file is JSONL of those, or one JSON object ``{"labels": [...]}`` (what
``GET /v1/labels`` and ``recallwise log LOG --labels --json`` print). A turn labelled in the
decision inspector may carry no text (the service logs message text only with
``--log-content``); :func:`labelled_turns_from_log` fills texts in from the decision log.

Every problem is a :class:`~recallwise.errors.UsageError` naming the file and line (or the
``labels[i]`` entry), found before anything is embedded or fitted.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..records import render_text
from ..stores.urls import redact_url
from ..text import decode_user_text, json_failure, read_user_bytes
from .data import CaseSet, load_cases, load_labels

__all__ = [
    "LabelledRecord",
    "LabelledTurn",
    "labelled_turns_from_log",
    "parse_labelled_turns",
    "read_labelled_dir",
    "read_labelled_sources",
    "read_labelled_turns",
    "turns_from_cases",
]

#: optional string fields of a labelled turn, kept as they are
_TAGS = ("decision_id", "source", "lang", "kind", "actor_id", "session_id", "time")


@dataclass(frozen=True)
class LabelledRecord:
    """One stored record of a labelled turn: does it belong in the prompt for this message?"""

    id: str
    text: str | None
    label: bool


@dataclass(frozen=True)
class LabelledTurn:
    """One user message with its gate label and / or its records' judge labels.

    ``where`` says where it was read (``file line N``), for errors found later (a fit that
    needs a text this turn does not have names it).
    """

    text: str | None
    label: bool | None = None
    records: tuple[LabelledRecord, ...] = ()
    decision_id: str | None = None
    source: str | None = None
    lang: str | None = None
    kind: str | None = None
    actor_id: str | None = None
    session_id: str | None = None
    time: str | None = None
    where: str = ""

    @property
    def has_records(self) -> bool:
        return bool(self.records)

    @property
    def relevant(self) -> int:
        """How many of its records belong (judge truth)."""
        return sum(r.label for r in self.records)

    def as_dict(self) -> dict[str, Any]:
        """The turn in the file format (``where`` left out)."""
        out: dict[str, Any] = {"text": self.text}
        if self.label is not None:
            out["label"] = self.label
        if self.records:
            out["records"] = [{"id": r.id, "text": r.text, "label": r.label} for r in self.records]
        for tag in _TAGS:
            value = getattr(self, tag)
            if value is not None:
                out[tag] = value
        return out


def read_labelled_turns(path: str | os.PathLike[str]) -> list[LabelledTurn]:
    """Read a labelled-turn file (JSONL, or one ``{"labels": [...]}`` object); errors name the
    file and the line."""
    where = str(path)
    data = read_user_bytes(path, "a labelled-turn file (.jsonl)")
    return parse_labelled_turns(decode_user_text(data, where), where)


def read_labelled_dir(
    directory: str | os.PathLike[str], pattern: str = "*.jsonl"
) -> dict[str, list[LabelledTurn]]:
    """Every ``pattern`` file of ``directory`` (sorted by name), read: ``{file name: turns}``."""
    folder = Path(directory)
    if not folder.is_dir():
        raise UsageError(f"{directory}: not a directory")
    files = sorted(p for p in folder.glob(pattern) if p.is_file())
    if not files:
        raise UsageError(f"{directory}: no {pattern} files")
    return {p.name: read_labelled_turns(p) for p in files}


def parse_labelled_turns(text: str, source: str = "<labels>") -> list[LabelledTurn]:
    """Parse labelled turns from ``text`` (JSONL or ``{"labels": [...]}``); ``source`` names it
    in errors."""
    stripped = text.lstrip()
    if stripped.startswith("{") and _one_object(stripped):
        try:
            document = json.loads(text)
        except (ValueError, RecursionError) as exc:
            line, problem = json_failure(text, exc)
            raise UsageError(f"{source} line {line}: not valid JSON ({problem})") from None
        if isinstance(document, Mapping) and "labels" in document:
            entries = document["labels"]
            if not isinstance(entries, list):
                raise UsageError(f"{source}: 'labels' must be a list of labelled turns")
            turns = [_turn(entry, f"{source} labels[{i}]") for i, entry in enumerate(entries)]
            return _checked(turns, source)
        if not (isinstance(document, Mapping) and ("text" in document or "decision_id" in document)):
            raise UsageError(
                f"{source}: one JSON document without 'labels': expected labelled turns, one JSON object "
                'per line, or {"labels": [...]}'
            )
    turns = []
    # lines end at "\n" only: str.splitlines() would also split inside a JSON string at U+2028,
    # U+0085 and the like, which JSON allows unescaped (pasted web text carries them)
    for number, raw in enumerate(text.split("\n"), start=1):
        raw = raw.removesuffix("\r")
        if not raw.strip():
            continue
        where = f"{source} line {number}"
        try:
            row = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise UsageError(f"{where}: not a JSON object ({json_failure(raw, exc)[1]})") from None
        turns.append(_turn(row, where))
    return _checked(turns, source)


def _one_object(text: str) -> bool:
    """Whether ``text`` is a single JSON value (a ``{"labels": ...}`` document) rather than JSONL."""
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _checked(turns: list[LabelledTurn], source: str) -> list[LabelledTurn]:
    if not turns:
        raise UsageError(f"{source}: no labelled turns")
    return turns


def _string(row: Mapping[str, Any], key: str, where: str) -> str | None:
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise UsageError(f"{where}: {key!r} must be a string, got {value!r}")
    return str(value)


def _turn(row: Any, where: str) -> LabelledTurn:
    if not isinstance(row, Mapping):
        raise UsageError(f'{where}: expected a JSON object {{"text": ..., "label": ...}}')
    tags = {tag: _string(row, tag, where) for tag in _TAGS}
    text = row.get("text")
    if text is not None and (not isinstance(text, str) or not text.strip()):
        raise UsageError(f"{where}: 'text' must be a non-empty string, got {text!r}")
    if text is None and tags["decision_id"] is None:
        raise UsageError(
            f"{where}: missing 'text' (only a turn with a 'decision_id' may leave it to the log)"
        )
    label = row.get("label")
    if label is not None and not isinstance(label, bool):
        raise UsageError(f"{where}: 'label' must be true or false, got {label!r}")
    raw_records = row.get("records")
    records: list[LabelledRecord] = []
    if raw_records is not None:
        if not isinstance(raw_records, list):
            raise UsageError(f"{where}: 'records' must be a list of {{id, text, label}} objects")
        seen: set[str] = set()
        for i, raw in enumerate(raw_records):
            at = f"{where} records[{i}]"
            if not isinstance(raw, Mapping):
                raise UsageError(f"{at}: expected an object {{id, text, label}}")
            rid = _string(raw, "id", at)
            if not rid:
                raise UsageError(f"{at}: missing 'id'")
            if rid in seen:
                raise UsageError(f"{at}: record id {rid!r} listed twice")
            seen.add(rid)
            rtext = raw.get("text")
            if isinstance(rtext, (dict, list)):  # a JSON preference blob, as stores hold them
                rtext = json.dumps(rtext, ensure_ascii=False)
            if rtext is not None and (not isinstance(rtext, str) or not rtext.strip()):
                raise UsageError(f"{at}: 'text' must be a non-empty string, got {rtext!r}")
            if rtext is None and tags["decision_id"] is None:
                raise UsageError(f"{at}: missing 'text' (only a logged turn may leave it to the log)")
            rlabel = raw.get("label")
            if not isinstance(rlabel, bool):
                raise UsageError(f"{at}: 'label' must be true or false, got {rlabel!r}")
            records.append(LabelledRecord(rid, render_text(rtext) if rtext else None, rlabel))
    if label is None and not records:
        raise UsageError(f"{where}: unlabelled: give 'label' (the gate) or 'records' (the judge), or both")
    return LabelledTurn(text=text, label=label, records=tuple(records), where=where, **tags)


# ---- texts from the decision log -------------------------------------------------------


def labelled_turns_from_log(
    log_path: str | os.PathLike[str],
    labels_path_or_list: str | os.PathLike[str] | Sequence[LabelledTurn | Mapping[str, Any]],
) -> list[LabelledTurn]:
    """Labelled turns whose message (and records') texts come from the decision log.

    ``labels_path_or_list``: a labelled-turn file, or a list of turns (or their dicts), each with
    a ``decision_id`` naming a logged turn. A label without one, an id the log does not hold, or a
    turn whose message was not logged is an error naming it (messages are logged only by
    ``recallwise serve --log-content`` / ``RecallPolicy(log=...)``).
    """
    if isinstance(labels_path_or_list, (str, os.PathLike)):
        labels = read_labelled_turns(labels_path_or_list)
        source = str(labels_path_or_list)
    else:
        source = "labels"
        labels = [
            item if isinstance(item, LabelledTurn) else _turn(item, f"labels[{i}]")
            for i, item in enumerate(labels_path_or_list)
        ]
        if not labels:
            raise UsageError("labels: no labelled turns")
    logged = _logged_turns(log_path, [t.decision_id for t in labels if t.decision_id is not None])
    out = []
    for turn in labels:
        where = turn.where or source
        if turn.decision_id is None:
            raise UsageError(f"{where}: no 'decision_id': cannot take its text from the log")
        entry = logged.get(turn.decision_id)
        if entry is None:
            raise UsageError(
                f"{where}: decision {turn.decision_id!r} is not in the log {redact_url(str(log_path))}"
            )
        if not entry.message:
            raise UsageError(
                f"{where}: decision {turn.decision_id!r} was logged without its message; run "
                "`recallwise serve --log-content` (or log from a policy) to keep message text"
            )
        records = []
        for record in turn.records:
            text = record.text or entry.records.get(record.id)
            if not text:
                raise UsageError(
                    f"{where}: record {record.id!r} of decision {turn.decision_id!r} has no text in the "
                    "log (not one of its candidates, or logged without content)"
                )
            records.append(replace(record, text=text))
        out.append(
            replace(
                turn,
                text=turn.text or entry.message,
                records=tuple(records),
                actor_id=turn.actor_id or entry.actor_id,
                session_id=turn.session_id or entry.session_id,
                time=turn.time or entry.at,
            )
        )
    return out


@dataclass(frozen=True)
class _Logged:
    message: str
    actor_id: str | None
    session_id: str | None
    at: str | None
    #: record id -> the text the turn judged
    records: dict[str, str]


def _logged_turns(log_path: str | os.PathLike[str], ids: Iterable[str]) -> dict[str, _Logged]:
    """The logged turns ``ids`` names, by decision id.

    A decision's id is the log row's ``id`` column where the log has one, else its ``seq``.
    The log is opened read-only: reading it never changes it.
    """
    from ..policy.log import is_log_url

    if is_log_url(log_path):
        return _logged_turns_shared(str(log_path), ids)
    path = Path(log_path)
    if not path.is_file():
        raise UsageError(f"{log_path}: no such decision log")
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise UsageError(f"{log_path}: cannot open the decision log: {exc}") from None
    try:
        try:
            columns = {row[1] for row in conn.execute("PRAGMA table_info(turns)")}
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"{log_path}: not a recallwise decision log: {exc}") from None
        if not {"seq", "message", "trace"} <= columns:
            raise UsageError(f"{log_path}: not a recallwise decision log (no turns table)")
        key = "id" if "id" in columns else "seq"
        wanted = list(dict.fromkeys(ids))
        out: dict[str, _Logged] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT CAST({key} AS TEXT), message, trace, actor_id, session_id, at FROM turns "
                f"WHERE CAST({key} AS TEXT) IN ({marks})",
                chunk,
            ).fetchall()
            for decision_id, message, trace, actor_id, session_id, at in rows:
                try:
                    candidates = json.loads(trace).get("candidates") or []
                except (ValueError, AttributeError):
                    candidates = []
                texts = {
                    str(c.get("id")): str(c.get("text"))
                    for c in candidates
                    if isinstance(c, Mapping) and c.get("text")
                }
                out[str(decision_id)] = _Logged(message or "", actor_id, session_id, at, texts)
        return out
    finally:
        conn.close()


def _logged_turns_shared(url: str, ids: Iterable[str]) -> dict[str, _Logged]:
    """:func:`_logged_turns` from a decision log in PostgreSQL (``recallwise serve --log URL``)."""
    from ..policy.log import DecisionLog

    out: dict[str, _Logged] = {}
    with DecisionLog(url) as log:
        for decision_id in dict.fromkeys(ids):
            try:
                turn = log.turn(int(decision_id))
            except ValueError:
                turn = None
            if turn is None:
                continue
            texts = {str(c.get("id")): str(c.get("text")) for c in turn.candidates if c.get("text")}
            out[str(decision_id)] = _Logged(
                turn.message or "", turn.actor_id, turn.session_id, turn.at, texts
            )
    return out


def turns_from_cases(cases: CaseSet) -> list[LabelledTurn]:
    """A validator case file's queries as labelled turns: each query with its listed records,
    the relevant ones labelled true (the gate label is left out: the file does not give it)."""
    out = []
    for i, case in enumerate(cases.cases):
        relevant = set(case.relevant)
        records = tuple(LabelledRecord(key, cases.records[key], key in relevant) for key in case.keys)
        where = f"{cases.source} cases[{i}]" + (f" (line {case.line})" if case.line else "")
        out.append(LabelledTurn(case.query, None, records, source=cases.source, lang=case.lang, where=where))
    return out


def _builtin(spec: str, role: str) -> tuple[list[LabelledTurn], dict[str, Any]]:
    """A shipped set (``builtin:seed``, ``builtin:dev``) as labelled turns: its gate labels for the
    gate, its validator cases for the judge."""
    if spec == "builtin:heldout":
        raise UsageError(
            "builtin:heldout: the held-out sets are for reporting; a head fitted on them has nothing "
            "left to be checked on"
        )
    if role == "gate":
        labels = load_labels(spec)
        turns = [
            LabelledTurn(item.text, item.label, lang=item.lang, source=spec, where=f"{spec} line {item.line}")
            for item in labels.items
        ]
        return turns, {"path": spec, "sha256": labels.sha256, "turns": len(turns)}
    cases = load_cases(spec)
    turns = turns_from_cases(cases)
    return turns, {"path": spec, "sha256": cases.sha256, "turns": len(turns)}


def _is_case_file(path: Path) -> bool:
    """Whether ``path`` is a validator case file (``{"records": ..., "cases": ...}``)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(document, Mapping) and "cases" in document and "records" in document


def read_labelled_sources(
    specs: Sequence[str | os.PathLike[str]], pattern: str, role: str = "gate"
) -> tuple[list[LabelledTurn], list[dict[str, Any]]]:
    """Every turn of ``specs`` (files, folders whose ``pattern`` files are read, by name, or a
    shipped ``builtin:NAME`` set), and what each was: ``{"path", "sha256", "turns"}``."""
    turns: list[LabelledTurn] = []
    sources: list[dict[str, Any]] = []
    for spec in specs:
        if str(spec).startswith("builtin:"):
            read, source = _builtin(str(spec), role)
            turns.extend(read)
            sources.append(source)
            continue
        path = Path(spec)
        if path.is_dir():
            files = sorted(p for p in path.glob(pattern) if p.is_file())
            if not files:
                raise UsageError(f"{spec}: no {pattern} files in this folder")
        else:
            files = [path]
        for file in files:
            if file.suffix == ".json" and _is_case_file(file):
                cases = load_cases(str(file))
                read = turns_from_cases(cases)
                sources.append({"path": str(file), "sha256": cases.sha256, "turns": len(read)})
                turns.extend(read)
                continue
            read = read_labelled_turns(file)
            turns.extend(read)
            sources.append(
                {
                    "path": str(file),
                    "sha256": hashlib.sha256(file.read_bytes()).hexdigest(),
                    "turns": len(read),
                }
            )
    return turns, sources
