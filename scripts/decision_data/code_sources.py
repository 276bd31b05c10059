"""Code requests with pasted code, and code questions without it (issue 34, second round).

All negatives: the code or the task is on the screen; the user's stored memory adds nothing. The
request wording around pasted code is ours (short, in several registers, some with a fenced block,
some without); the code and the task text are the source's.

- cruxeval (facebookresearch/cruxeval, MIT): 800 short Python functions with an input and output;
  asked as "what does it return", "find an input", "explain", "add tests". Split by function.
- mbpp (MBPP, CC BY 4.0, from a copy of mbpp.jsonl in Yogi-20MIS7040/DL; only its first 974
  rows, MBPP's tasks 1-974, not the rows the copy's owner appended): the task alone (a code
  request without code) or task + reference solution behind a review / test / fix request. Split
  by task.
- quixbugs (jkoppel/QuixBugs, MIT): 40 Python and 40 Java programs with one bug each, pasted with
  "there's a bug" requests. Held out whole.
- codealpaca (sahil280114/codealpaca, data CC BY-NC 4.0): instructions with a code or data input
  (new_codealpaca.json) and without (code_alpaca_2k.json). Non-commercial: dev and heldout only,
  never fit or calib.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from .common import Row, Snapshots, eval_only_split, row

FENCE = "```"


def fenced(code: str, lang: str, rng: random.Random) -> str:
    """Pasted code as people paste it: bare, or in a fenced block with or without a language."""
    draw = rng.random()
    if draw < 0.4:
        return code
    return f"{FENCE}{lang if draw < 0.75 else ''}\n{code}\n{FENCE}"


CRUX_OUTPUT_ASKS = [
    "What does f({input}) return?\n\n{code}",
    "{code}\n\nwhat's the output of f({input})",
    "Trace this function for the input {input} and tell me the result step by step.\n\n{code}",
    "I'm studying for an exam. Without running it, what is f({input})?\n{code}",
    "{code}\n\nf({input}) = ?",
    "Can you explain what this function does, and what it gives for {input}?\n\n{code}",
]
CRUX_INPUT_ASKS = [
    "Find an input such that f(??) == {output}\n\n{code}",
    "{code}\n\nwhat input would make this return {output}?",
    "Give me an argument for f so the result is {output}:\n{code}",
]
CRUX_OTHER_ASKS = [
    "Write three pytest tests for this function.\n\n{code}",
    "Add type hints and a docstring to this:\n\n{code}",
    "Rewrite this more idiomatically.\n{code}",
    "{code}\n\nwhat's the time complexity of this?",
    "Translate this to JavaScript please\n\n{code}",
]


def load_cruxeval(snap: Snapshots) -> list[Row]:
    rows: list[Row] = []
    for item in snap.jsonl("facebookresearch/cruxeval", "data/cruxeval.jsonl"):
        rng = random.Random("crux-" + item["id"])
        draw = rng.random()
        asks = CRUX_OUTPUT_ASKS if draw < 0.5 else CRUX_INPUT_ASKS if draw < 0.8 else CRUX_OTHER_ASKS
        code = fenced(item["code"], "python", rng)
        text = rng.choice(asks).format(code=code, input=item["input"], output=item["output"])
        rows.append(row(text, False, "cruxeval", "en", "code-paste", item["id"]))
    return rows


MBPP_ASKS = [
    'Here\'s my solution to "{task}" Can you review it?\n\n{code}',
    "{task}\n\nThis is what I have so far, but one of my tests fails:\n{code}",
    "Write unit tests for this function. It should: {task}\n\n{code}",
    "{code}\n\nexplain this code line by line",
    "Can you make this faster? The task was: {task}\n{code}",
    "Convert this Python to Java:\n\n{code}",
    "{code}\n\nadd comments to this",
    "Is there a cleaner way to write this?\n\n{code}",
]


MBPP_TASKS = 974


def load_mbpp(snap: Snapshots) -> list[Row]:
    rows: list[Row] = []
    # the copy holds MBPP's 974 tasks (ids 1-974, in order) and then rows its owner appended
    items = snap.jsonl("Yogi-20MIS7040/DL", "mbpp.jsonl")[:MBPP_TASKS]
    if [item.get("task_id") for item in items] != list(range(1, MBPP_TASKS + 1)):
        raise SystemExit("error: Yogi-20MIS7040/DL mbpp.jsonl: the first 974 rows are not MBPP tasks 1-974")
    for item in items:
        task_id = str(item["task_id"])
        rng = random.Random("mbpp-" + task_id)
        task = item["text"].strip()
        code = item["code"].replace("\r\n", "\n").replace("\t", "    ").rstrip()
        if rng.random() < 0.3:
            text, kind = task, "code"  # a code request with no code pasted
        else:
            text = rng.choice(MBPP_ASKS).format(task=task, code=fenced(code, "python", rng))
            kind = "code-paste"
        rows.append(row(text, False, "mbpp", "en", kind, task_id))
    return rows


QUIXBUGS_ASKS = [
    "There's a bug in this {lang} code, can you find it?\n\n{code}",
    "{code}\n\nthis gives the wrong answer for some inputs. what's wrong?",
    "Fix this {lang} function:\n{code}",
    "My {lang} implementation fails a test case and I can't see why.\n\n{code}",
    "Please review this code and point out any logic errors.\n\n{code}",
]


def load_quixbugs(snap: Snapshots) -> list[Row]:
    rows: list[Row] = []
    for folder, lang, fence in (("python_programs", "Python", "python"), ("java_programs", "Java", "java")):
        for path in snap.listing("jkoppel/QuixBugs", folder + "/"):
            name = path.rsplit("/", 1)[1]
            stem = name.rsplit(".", 1)[0].lower()
            if (
                not name.endswith((".py", ".java"))
                or name.endswith("_test.py")
                or stem in {"node", "weighted_edge"}
            ):
                continue
            code = snap.text("jkoppel/QuixBugs", path).strip()
            if lang == "Python":  # the task description is a docstring after the code: keep the code
                code = code.split('\n"""', 1)[0].rstrip()
            else:
                code = re.sub(r"/\*\s*\n \* To change this template.*?\*/\s*", "", code, flags=re.S)
                code = re.sub(r"/\*\*\s*\n \*\s*\n \* @author \w+\s*\n \*/\s*", "", code)
            rng = random.Random(f"quixbugs-{folder}-{stem}")
            text = rng.choice(QUIXBUGS_ASKS).format(lang=lang, code=fenced(code, fence, rng))
            rows.append(row(text, False, "quixbugs", "en", "code-paste", f"{lang}-{stem}", _split="heldout"))
    return rows


CODEALPACA_INPUT_SAMPLE = 500
CODEALPACA_PLAIN_SAMPLE = 150
CODE_LIKE = re.compile(r"[{}();=<>\[\]]|\bdef\b|\bclass\b|\bSELECT\b|\bfunction\b", re.I)


def load_codealpaca(snap: Snapshots) -> list[Row]:
    rows: list[Row] = []
    with_input: list[dict[str, Any]] = json.loads(
        snap.read("sahil280114/codealpaca", "data/new_codealpaca.json")
    )
    pasted = [x for x in with_input if (x.get("input") or "").strip() and CODE_LIKE.search(x["input"])]
    rng = random.Random("codealpaca")
    rng.shuffle(pasted)
    for number, item in enumerate(pasted[:CODEALPACA_INPUT_SAMPLE]):
        instruction, given = item["instruction"].strip(), item["input"].strip()
        text = f"{instruction}\n\n{given}" if number % 3 else f"{given}\n\n{instruction}"
        group = f"new-{number}"
        rows.append(row(text, False, "codealpaca", "en", "code-paste", group, _split=eval_only_split(group)))
    plain: list[dict[str, Any]] = json.loads(snap.read("sahil280114/codealpaca", "data/code_alpaca_2k.json"))
    plain = [x for x in plain if not (x.get("input") or "").strip()]
    rng.shuffle(plain)
    for number, item in enumerate(plain[:CODEALPACA_PLAIN_SAMPLE]):
        group = f"plain-{number}"
        rows.append(
            row(item["instruction"], False, "codealpaca", "en", "code", group, _split=eval_only_split(group))
        )
    return rows
