"""``recallwise hook``: gated memory for a coding agent's prompt hook (Claude Code, letta-code).

    # .claude/settings.json
    {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
        "command": "recallwise hook --store sqlite:///$HOME/.recallwise.db --actor me"}]}]}}

The agent runs the command once per prompt with the hook's JSON on stdin (``{"prompt": ...,
"session_id": ..., "hook_event_name": "UserPromptSubmit", ...}``; letta-code sends
``conversation_id``) and adds what it prints to the model's context. The command asks the policy
about the prompt: when the gate closes ("thanks!") it prints nothing and exits 0; when it opens it
prints the kept records' context block. ``--json`` prints Claude Code's JSON form instead
(``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": ...}}``).

``--serve URL`` asks a running ``recallwise serve`` instead of opening the store (no models load
in the hook process; the service keeps the conversation for follow-ups).

It fails open, visibly: a decider that fails opens the gate (the stock records are printed, and a
line on stderr says why); a store that fails, or stdin that is not the hook's JSON, prints nothing
on stdout, one line on stderr, and exits 1 (the agents' "non-blocking error": the prompt goes on
without memory, and the user sees the line). Exit 2 is kept for a wrong command line (a missing
store, a bad flag): the agent then blocks the prompt and shows the message, so a misconfigured
hook is seen at once, not silently empty.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import httpx

from ..errors import UsageError
from ..policy import RecallPolicy
from ..records import validate_id
from . import emit_json
from .common import (
    add_decider,
    add_embedder,
    add_json,
    add_store,
    decider_from_args,
    existing_store_from_args,
)

#: the most characters of stdin read (a prompt past this is cut: the hook must answer fast)
MAX_INPUT_CHARS = 1 << 20
#: seconds a ``--serve`` recall may take before the prompt goes on without memory
SERVE_TIMEOUT_S = 10.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """gated memory for a coding agent's UserPromptSubmit hook (Claude Code, letta-code)

    Read the hook's JSON ({"prompt": ..., "session_id": ...}) on stdin and print the memory context the
    prompt needs, or nothing when it needs none. Failures print one line on stderr and exit 1 (the
    prompt goes on without memory).
    """
    add_store(parser)
    parser.set_defaults(store_required=False)  # --serve needs none: run() asks for one of the two
    parser.add_argument(
        "--serve",
        default=os.environ.get("RECALLWISE_SERVE_URL") or None,
        metavar="URL",
        help="ask a running `recallwise serve` at URL instead of opening --store (no models load per "
        "prompt: milliseconds, not seconds); its API key from RECALLWISE_API_KEY (default: "
        "$RECALLWISE_SERVE_URL, else none)",
    )
    parser.add_argument("--actor", required=True, metavar="ID", help="whose memory the prompt is about")
    parser.add_argument(
        "--namespace",
        action="append",
        dest="namespaces",
        metavar="TEMPLATE",
        help="namespace template, repeatable (default: /facts/{actorId} and /preferences/{actorId})",
    )
    add_decider(parser)
    add_embedder(parser)
    add_json(parser)


def read_hook_input(text: str) -> tuple[str, str | None]:
    """The prompt and the session (``session_id``, or letta-code's ``conversation_id``) of a
    hook's JSON; a :class:`ValueError` saying what is wrong otherwise."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"stdin is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ValueError(f"stdin must be a JSON object with a prompt, got {type(data).__name__}")
    prompt = data.get("prompt")
    if not isinstance(prompt, str):
        event = data.get("hook_event_name")
        where = f" (hook_event_name {event!r}: register it under UserPromptSubmit)" if event else ""
        raise ValueError(f"stdin has no string 'prompt'{where}")
    session = data.get("session_id", data.get("conversation_id"))
    if not isinstance(session, str) or not session.strip():
        return prompt, None
    try:
        return prompt, validate_id(session, "session_id")
    except ValueError:
        return prompt, None  # an id recallwise cannot key on only loses follow-ups, not the recall


def _warn(message: str) -> None:
    sys.stderr.write(f"recallwise hook: {message}\n")
    sys.stderr.flush()


def _emit(args: argparse.Namespace, context: str) -> None:
    if args.json:
        emit_json({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}})
    elif context:
        sys.stdout.write(context + "\n")
        sys.stdout.flush()


def _recall_served(args: argparse.Namespace, actor: str, prompt: str, session: str | None) -> str | None:
    """The context ``recallwise serve`` at ``--serve`` gives the prompt; None when it failed (said)."""
    body: dict[str, Any] = {"actor_id": actor, "message": prompt}
    if session is not None:
        body["session_id"] = session
    if args.namespaces:
        body["namespaces"] = args.namespaces
    key = os.environ.get("RECALLWISE_API_KEY")
    headers = {"authorization": f"Bearer {key}"} if key else {}
    url = args.serve.rstrip("/") + "/v1/recall"
    try:
        response = httpx.post(url, json=body, headers=headers, timeout=SERVE_TIMEOUT_S)
    except httpx.HTTPError as exc:
        _warn(
            f"recallwise serve at {args.serve} did not answer ({type(exc).__name__}); "
            "the prompt goes on without memory"
        )
        return None
    if response.status_code != 200:
        _warn(
            f"recallwise serve answered {response.status_code}: {response.text[:200]}; "
            "the prompt goes on without memory"
        )
        return None
    try:
        data = response.json()
    except ValueError:
        data = None
    context = data.get("context") if isinstance(data, dict) else None
    if not isinstance(context, str):
        _warn("recallwise serve's answer has no context; the prompt goes on without memory")
        return None
    errors = data.get("errors") if isinstance(data, dict) else None
    if isinstance(errors, list) and errors:
        _warn(f"failed open: {'; '.join(map(str, errors))}")
    return context


def run(args: argparse.Namespace) -> int:
    try:
        actor = validate_id(args.actor, "--actor")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.serve:
        if not args.serve.startswith(("http://", "https://")):
            raise UsageError(
                f"--serve {args.serve!r}: expected the service's URL, e.g. http://127.0.0.1:8000"
            )
        try:
            prompt, session = read_hook_input(sys.stdin.read(MAX_INPUT_CHARS))
        except (ValueError, UnicodeDecodeError) as exc:
            _warn(f"{exc}; the prompt goes on without memory")
            return 1
        context = _recall_served(args, actor, prompt, session)
        if context is None:
            return 1
        _emit(args, context)
        return 0
    if args.store is None:
        raise UsageError("give --store URL (or --serve URL of a running recallwise serve)")
    decider = decider_from_args(args)
    store = existing_store_from_args(args)  # a mistyped --store is exit 2, never an empty new store
    try:
        try:
            prompt, session = read_hook_input(sys.stdin.read(MAX_INPUT_CHARS))
        except (ValueError, UnicodeDecodeError) as exc:
            _warn(f"{exc}; the prompt goes on without memory")
            return 1
        keywords: dict[str, Any] = {"namespaces": args.namespaces} if args.namespaces else {}
        policy = RecallPolicy(store, decider=decider, **keywords)
        try:
            recall = policy.recall(prompt, actor_id=actor, session_id=session)
        finally:
            policy.close()
        failed = [e for e in recall.trace.errors if e]
        if failed:
            _warn(f"failed open: {'; '.join(failed)}")
        if not recall.context and any(k.startswith("store") for k in recall.trace.error_kinds):
            _warn("the store failed; the prompt goes on without memory")
            return 1
        _emit(args, recall.context)
        return 0
    finally:
        store.close()
