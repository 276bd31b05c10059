"""Questions about the user's own life and the people in it (issue 34, third round).

- memorybank (zhongwanjun/MemoryBank-SiliconFriend, MIT): the probing questions its authors asked
  each of 15 simulated users after days of conversation ("What kind of cuisine do I like?", "On
  May 2nd, which movie did I watch?"), in English and in Chinese (the same questions). All True,
  kind recall: only the user's memory answers them. One user's questions in both languages are one
  group.
- rw-written-life (ours, ``written_life``): questions about named friends and relatives and the
  user's own past (True), and the same shapes about famous people, places and events (False).
- rw-written-small / rw-written-life-ml (ours, ``written_small``): greetings, thanks, small talk,
  arithmetic, general knowledge and follow-ons (False) and questions about the user's own life
  (True) in 15 languages; a concept with its translations is one group.
"""

from __future__ import annotations

import json
import random
import re

from . import written_life, written_small
from .common import Row, Snapshots, row, typo

MEMORYBANK_REPO = "zhongwanjun/MemoryBank-SiliconFriend"


def load_memorybank(snap: Snapshots) -> list[Row]:
    rows: list[Row] = []
    for lang, path in (("en", "eval_data/en/probing_questions_en.jsonl"), ("zh", "eval_data/cn/probing_questions_cn.jsonl")):
        for number, line in enumerate(snap.text(MEMORYBANK_REPO, path).splitlines()):
            if not line.strip():
                continue
            for questions in json.loads(line).values():
                for question in questions:
                    text = question.strip().strip('"').strip()
                    if text:
                        rows.append(row(text, True, "memorybank", lang, "recall", f"user{number}"))
    return rows


LIFE_SLOTS = {
    "name": written_life.NAMES,
    "name2": written_life.NAMES,
    "relative": written_life.RELATIVES,
    "event": written_life.EVENTS,
    "activity": written_life.ACTIVITIES,
    "thing": written_life.THINGS,
    "topic": written_life.TOPICS,
    "city": written_life.CITIES,
    "month": written_life.MONTHS,
    "attribute": written_life.ATTRIBUTES,
    "famous": written_life.FAMOUS_PEOPLE,
    "famous2": written_life.FAMOUS_PEOPLE,
    "famous_city": written_life.FAMOUS_CITIES,
    "place": written_life.PLACES,
    "historic": written_life.HISTORIC_EVENTS,
    "fiction": written_life.FICTION,
}
LIFE_OPENERS = ["hey, ", "Quick one: ", "Do you remember: ", "so ", "Remind me, ", "hmm ", "btw "]
LIFE_FILLS = 10
LIFE_LOWER_RATE = 0.25
LIFE_TYPO_RATE = 0.12


def load_written_life() -> list[Row]:
    """Each template filled ``LIFE_FILLS`` times (two names always differ), in several registers:
    an opener, lower case without the question mark, a typo."""
    rows: list[Row] = []
    for label, prefix, templates in (
        (True, "people", written_life.PEOPLE_TEMPLATES),
        (True, "own", written_life.OWN_TEMPLATES),
        (False, "famous", written_life.FAMOUS_TEMPLATES),
    ):
        for number, (kind, template) in enumerate(templates):
            rng = random.Random(f"written-life-{prefix}-{number}")
            names = sorted(set(re.findall(r"{(\w+)}", template)))
            fills = LIFE_FILLS if names else 1
            seen: set[str] = set()
            for _ in range(fills * 6):
                if len(seen) >= fills:
                    break
                chosen = {n: rng.choice(LIFE_SLOTS[n]) for n in names}
                if chosen.get("name") is not None and chosen.get("name") == chosen.get("name2"):
                    continue
                if chosen.get("famous") is not None and chosen.get("famous") == chosen.get("famous2"):
                    continue
                text = template.format(**chosen)
                if rng.random() < 0.25 and text[0].isupper():
                    text = rng.choice(LIFE_OPENERS) + text[0].lower() + text[1:]
                if rng.random() < LIFE_LOWER_RATE:
                    text = text.lower().rstrip(".?!")
                if rng.random() < LIFE_TYPO_RATE:
                    text = typo(text, rng)
                if text in seen:
                    continue
                seen.add(text)
                rows.append(row(text, label, "rw-written-life", "en", kind, f"{prefix}{number}"))
    return rows


def load_written_small() -> list[Row]:
    rows: list[Row] = []
    for label, source, concepts in (
        (False, "rw-written-small", written_small.NEGATIVES),
        (True, "rw-written-life-ml", written_small.POSITIVES),
    ):
        for concept, (kind, by_lang) in concepts.items():
            missing = set(written_small.LANGS) - set(by_lang)
            if missing:
                raise SystemExit(f"error: written_small concept {concept!r} lacks {sorted(missing)}")
            for lang in written_small.LANGS:
                for text in by_lang[lang]:
                    rows.append(row(text, label, source, lang, kind, concept))
    (a_low, a_high), (b_low, b_high) = written_small.NUMBERS
    for concept, by_lang in written_small.ARITHMETIC.items():
        for lang in written_small.LANGS:
            rng = random.Random(f"written-small-{concept}-{lang}")
            for _ in range(2):
                a, b = rng.randint(a_low, a_high), rng.randint(b_low, b_high)
                if concept == "divide":
                    a = a * b
                text = by_lang[lang].format(a=a, b=b)
                rows.append(row(text, False, "rw-written-small", lang, "exam", f"arith-{concept}-{lang}"))
    return rows
