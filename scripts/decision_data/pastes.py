"""Chats pasted with a task (issue 34, fourth round): someone else's first-person talk, not a request.

- spc-dialogue (google-research-datasets/Synthetic-Persona-Chat, CC BY 4.0): the opening of a
  conversation between two personas ("I love to bake cookies and knit. ... So, what do you do for a
  living?") pasted before or after a task of ours that the text alone answers: summarise it,
  extract what it says, rewrite, translate, classify or continue it. All False: the pasted people's
  tastes are in the message, and nothing stored about the user bears on the answer.

Why: after the third round the gate closed on 96-100% of pasted code, exams and articles in the
held-out sources, but a paste full of first-person tastes read like a request that needs them
(evaluation-only sets of pasted restaurant reviews and dialogues, which no fit may use, closed on
39% and 63%). One conversation is one group; the valid and test CSVs only (the train CSV is over
the snapshot's size limit), the same files the judge's persona records come from.
"""

from __future__ import annotations

import csv
import io
import random

from .common import Row, Snapshots, row

SPC_REPO = "google-research-datasets/Synthetic-Persona-Chat"
#: conversations taken (of about 2,000)
CONVERSATIONS = 420

TASKS: tuple[tuple[str, str], ...] = (
    ("Summarize this conversation in two sentences.", "summarise"),
    ("Give me a one-line summary of the chat below.", "summarise"),
    ("What does User 2 do for a living, according to this chat?", "extract"),
    ("Extract every hobby mentioned in this dialogue as a JSON list.", "extract"),
    ("List the facts we learn about each speaker.", "extract"),
    ("Who mentions a pet here, and what kind of pet is it?", "extract"),
    ("Rewrite this dialogue as a short story in the third person.", "rewrite"),
    ("Make this conversation sound more formal.", "rewrite"),
    ("Fix the spelling and grammar in this chat log.", "rewrite"),
    ("Turn this into a screenplay scene.", "creative"),
    ("Write the next two lines of this conversation.", "creative"),
    ("Translate the following conversation into Spanish.", "translate"),
    ("Classify the tone of this conversation: friendly, neutral or hostile.", "classify"),
    ("Is this dialogue realistic? Rate it from 1 to 5 and say why.", "classify"),
    ("Label each turn below as a question, an answer or a statement.", "classify"),
    (
        "here's a chat from our dataset, does it contain any personal information we should redact?",
        "classify",
    ),
)
#: how the two speakers are named in the paste
SPEAKERS: tuple[tuple[str, str], ...] = (
    ("User 1", "User 2"),
    ("A", "B"),
    ("Person 1", "Person 2"),
    ("Sam", "Alex"),
)


def _excerpt(conversation: str, rng: random.Random) -> str:
    """The conversation's first lines, 300 to 1,400 characters of them."""
    lines = [line.strip() for line in conversation.splitlines() if line.strip()]
    target = rng.randint(300, 1400)
    out: list[str] = []
    for line in lines:
        if out and sum(len(x) + 1 for x in out) + len(line) > target:
            break
        out.append(line)
    return "\n".join(out)


def load_spc_dialogues(snap: Snapshots) -> list[Row]:
    """Synthetic-Persona-Chat conversations pasted with a task of ours, labelled False."""
    conversations: list[tuple[str, str]] = []
    for part in ("valid", "test"):
        reader = csv.reader(io.StringIO(snap.text(SPC_REPO, f"data/Synthetic-Persona-Chat_{part}.csv")))
        next(reader)
        conversations += [(f"{part}{i}", record[2]) for i, record in enumerate(reader) if len(record) > 2]
    rng = random.Random("spc-dialogue")
    rows: list[Row] = []
    for group, conversation in rng.sample(conversations, CONVERSATIONS):
        paste = _excerpt(conversation, rng)
        first, second = rng.choice(SPEAKERS)
        paste = paste.replace("User 1:", f"{first}:").replace("User 2:", f"{second}:")
        task, kind = rng.choice(TASKS)
        task = task.replace("User 2", second)
        text = f"{task}\n\n{paste}" if rng.random() < 0.6 else f"{paste}\n\n{task}"
        rows.append(row(text, False, "spc-dialogue", "en", kind, group))
    return rows
