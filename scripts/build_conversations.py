#!/usr/bin/env python3
"""Build data/conversations: labelled whole conversations from openly licensed dialogues.

Each conversation is one user's session: the user's stored records (a persona of 20 facts) and
the user's turns in order, each labelled

- ``needs_memory``: answering it well depends on one of the user's stored records (a request in a
  life domain one of the records bears on, or a continuation of such a request);
- ``follow_up``: it carries on the previous request of the conversation (slot filling, a change,
  "yes", "what about Saturday?"), rather than opening a new request or closing the conversation;
- ``records``: the ids of the persona's records that belong in the prompt for it.

A conversation is made of segments, each a real dialogue (or the user side of one) of one source:
a task dialogue (Schema-Guided Dialogue, Taskmaster-4's coffee orders) or a judge request of
data/decisions (a request with its 20 labelled records), and before or after it general
conversations (hh-rlhf's real people, MT-bench's two-turn questions, Taskmaster-4's off-topic
openings). A segment's first turn is a new request (never a follow-up); the segments are put
together as one session, which is where a new request arrives right after a retrieving turn.

Rebuild (deterministic; reads the snapshots that the search tool's ``fetch`` leaves under
/work/.mirror, at the commits pinned below):

    python scripts/build_conversations.py --mirror /work/.mirror --out data/conversations

The labelling rules are in the functions below and in data/conversations/SOURCES.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from decision_data import judge as spc  # noqa: E402  (the persona facts and their life domains)
from decision_data.common import normalise, row_split, stable_unit  # noqa: E402

SPLITS = ("fit", "calib", "dev", "heldout")

SNAPSHOTS = {
    "google-research-datasets/dstc8-schema-guided-dialogue": "e852981ae34990f4358979625854259302feaa78",
    "google-research-datasets/Taskmaster": "d92cb6af3005f1dc09c39e75e7daf4a04905e00b",
    "anthropics/hh-rlhf": "354e5c3cb8960630860dd5774a6ac2a58313bf4d",
    "lm-sys/FastChat": "0e6d3e4beaab66f4d3f93db72541a4abab8af28d",
    "google-research-datasets/Synthetic-Persona-Chat": "1f367a0f05d388ca96ebbbc9e5752ab19ac76510",
}
SGD = "google-research-datasets/dstc8-schema-guided-dialogue"
TM = "google-research-datasets/Taskmaster"
HH = "anthropics/hh-rlhf"
FASTCHAT = "lm-sys/FastChat"
PERSONA_SIZE = 20

#: conversations per split, by their task segment's source (the general-only ones beside them)
CAPS: dict[str, dict[str, int]] = {
    "sgd": {"fit": 700, "calib": 200, "dev": 120, "heldout": 200},
    "tm4": {"fit": 0, "calib": 0, "dev": 0, "heldout": 200},
    "decisions": {"fit": 300, "calib": 90, "dev": 70, "heldout": 120},
    "general": {"fit": 200, "calib": 60, "dev": 50, "heldout": 100},
}
#: sources whose text is fitted on nowhere: whole in heldout
HELDOUT_SOURCES = frozenset({"tm4"})


class Snapshots:
    """Files of the pinned commits, read from the mirrored git directories."""

    def __init__(self, mirror: Path) -> None:
        self.mirror = mirror

    def _git(self, repo: str, *args: str) -> bytes:
        git_dir = self.mirror / repo.replace("/", "+") / "repo"
        if not git_dir.is_dir():
            raise SystemExit(f"error: no snapshot of {repo} at {git_dir} (fetch github:{repo} first)")
        done = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"error: {repo}: git {' '.join(args)}: {done.stderr.decode().strip()}")
        return done.stdout

    def read(self, repo: str, path: str) -> bytes:
        return self._git(repo, "show", f"{SNAPSHOTS[repo]}:{path}")

    def text(self, repo: str, path: str) -> str:
        return self.read(repo, path).decode("utf-8")

    def listing(self, repo: str, folder: str) -> list[str]:
        out = self._git(repo, "ls-tree", "--name-only", SNAPSHOTS[repo], folder).decode()
        return sorted(out.split())


# ---- turns -------------------------------------------------------------------------------------
def turn(
    text: str, source: str, *, needs_memory: bool, follow_up: bool, domain: str | None = None, kind: str = ""
) -> dict[str, Any]:
    return {
        "text": text.strip(),
        "source": source,
        "needs_memory": needs_memory,
        "follow_up": follow_up,
        "domain": domain,
        "kind": kind,
    }


# ---- Schema-Guided Dialogue ----------------------------------------------------------------------
#: the services whose requests a persona fact clearly bears on, by intent: the life domain of the
#: request (data/decisions' judge rule: food takes food and diet facts, a booking of a named
#: restaurant only diet ones, screen / music / travel their own)
SGD_DOMAIN = {
    "FindRestaurants": "food",
    "ReserveRestaurant": "food-booking",
    "FindMovies": "screen",
    "GetTimesForMovie": "screen",
    "BuyMovieTickets": "screen",
    "PlayMovie": "screen",
    "FindMedia": "screen",
    "RentMovie": "screen",
    "LookupMusic": "music",
    "LookupSong": "music",
    "PlaySong": "music",
    "PlayMedia": "music",
    "FindAttractions": "travel",
}
#: services whose requests are fully described by what the user says (no stored fact bears on them)
SGD_GENERAL_SERVICES = ("Alarm_", "Banks_", "Payment_")
#: a turn made only of these acts closes the request (thanks, goodbye, "no, that's all")
SGD_CLOSING = frozenset({"THANK_YOU", "GOODBYE", "NEGATE", "NEGATE_INTENT"})


def _service_kind(service: str) -> str | None:
    if service.startswith(SGD_GENERAL_SERVICES):
        return "general"
    return None


def sgd_dialogues(snap: Snapshots) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(dialogue id, labelled user turns) of every usable dialogue: every service it touches is one
    whose requests are clearly preference-dependent (by intent) or clearly general."""
    for part in ("train", "dev", "test"):
        for path in snap.listing(SGD, f"{part}/"):
            if not path.rsplit("/", 1)[-1].startswith("dialogues_"):
                continue
            try:
                dialogues = json.loads(snap.text(SGD, path))
            except SystemExit:  # listed, but not in the snapshot (over its size limit)
                continue
            for dialogue in dialogues:
                labelled = _sgd_turns(dialogue)
                if labelled:
                    yield f"{part}/{dialogue['dialogue_id']}", labelled


def _sgd_turns(dialogue: dict[str, Any]) -> list[dict[str, Any]] | None:
    out: list[dict[str, Any]] = []
    current: tuple[str, str | None] | None = None  # (service, domain) of the open request
    for t in dialogue["turns"]:
        if t["speaker"] != "USER":
            continue
        text = t["utterance"].strip()
        acts = {a["act"] for f in t["frames"] for a in f["actions"]}
        new_intents = [
            (
                f["service"],
                a["canonical_values"][0] if a.get("canonical_values") else f["state"]["active_intent"],
            )
            for f in t["frames"]
            for a in f["actions"]
            if a["act"] == "INFORM_INTENT"
        ]
        # a frame of another service with an intent of its own is a new request even when the user
        # names no intent ("I'm sending 1150 dollars to Pranav." inside a music dialogue)
        new_intents += [
            (f["service"], f["state"]["active_intent"])
            for f in t["frames"]
            if current is not None and f["service"] != current[0] and f["state"]["active_intent"] != "NONE"
        ]
        if current is not None and ((acts and acts <= SGD_CLOSING) or CLOSING_RE.match(text)):
            out.append(turn(text, "sgd", needs_memory=False, follow_up=False, kind="closing"))
            continue
        switch = [(svc, i) for svc, i in new_intents if current is None or svc != current[0]]
        if switch:
            service, intent = switch[0]
            domain = SGD_DOMAIN.get(intent)
            if domain is None and _service_kind(service) != "general":
                return None  # a request whose need of memory is not clear: the dialogue is not used
            current = (service, domain)
            kind = "request" if domain else "general-request"
            out.append(
                turn(text, "sgd", needs_memory=domain is not None, follow_up=False, domain=domain, kind=kind)
            )
            continue
        if current is None:
            return None  # the dialogue does not open with a request we can label
        # a booking after a search in the same service (FindRestaurants -> ReserveRestaurant) carries
        # on the request, in the booking's domain (a booking takes only diet facts)
        intents = {f["service"]: f["state"]["active_intent"] for f in t["frames"]}
        domain = current[1]
        if domain is not None and intents.get(current[0]) in SGD_DOMAIN:
            domain = SGD_DOMAIN[intents[current[0]]]
        out.append(
            turn(
                text,
                "sgd",
                needs_memory=domain is not None,
                follow_up=True,
                domain=domain,
                kind="continuation",
            )
        )
    return out if any(x["needs_memory"] for x in out) or len(out) >= 2 else None


# ---- Taskmaster-4 ------------------------------------------------------------------------------
#: scenarios whose opening asks about the menu or something else: a general question
TM_GENERAL_SCENARIOS = re.compile(r"template (13|14a|14b|15|16|17|25) ")
TM_OFF_TOPIC = re.compile(r"template 13 ")
#: an off-topic opening that asks for a recommendation or a choice for the user is not general
#: (the project labels those as needing memory): such openings are not used
ASKS_FOR_CHOICE = re.compile(
    r"\b(recommend\w*|suggest\w*|should i|what should|which \w+ (should|would)|for me|my)\b", re.I
)
#: the user's facts that bear on a drink order (diet, allergies, caffeine, sugar, milk)
DRINK_FACT = re.compile(
    r"\b(lactose|dairy|vegan|diabet\w*|caffeine|decaf|sugar|allerg\w*|gluten|milk|coffee|tea)\b", re.I
)
CLOSING_RE = re.compile(
    r"^\W*(ok(ay)?|great|perfect|cool|awesome|alright|all right)?[\s,.!]*(thanks?( you)?( so much| very much)?|"
    r"thank u|thx|ty|bye|goodbye|see you|that'?s all|that is all|no,? that'?s (it|all)|nope,? that'?s it)\b[^?]*$",
    re.I,
)


def tm4_dialogues(snap: Snapshots) -> Iterator[tuple[str, list[dict[str, Any]], bool]]:
    """(conversation id, labelled user turns, whether it is an off-topic opening)."""
    for path in snap.listing(TM, "TM-4-2024/data/"):
        dialogues = json.loads(snap.text(TM, path))
        for d in dialogues:
            texts = [
                u["text"].strip() for u in d["utterances"] if u["speaker"] == "user" and u["text"].strip()
            ]
            if not texts:
                continue
            scenario = d.get("scenario") or ""
            general = bool(TM_GENERAL_SCENARIOS.search(scenario))
            labelled = [
                turn(
                    texts[0],
                    "tm4",
                    needs_memory=not general,
                    follow_up=False,
                    domain=None if general else "drink",
                    kind="general-request" if general else "request",
                )
            ]
            for text in texts[1:]:
                if CLOSING_RE.match(text):
                    labelled.append(turn(text, "tm4", needs_memory=False, follow_up=False, kind="closing"))
                else:
                    labelled.append(
                        turn(
                            text,
                            "tm4",
                            needs_memory=not general,
                            follow_up=True,
                            domain=None if general else "drink",
                            kind="continuation",
                        )
                    )
            off_topic = bool(TM_OFF_TOPIC.search(scenario))
            if off_topic and ASKS_FOR_CHOICE.search(texts[0]):
                continue
            yield d["conversation_id"], labelled, off_topic


# ---- general conversations -----------------------------------------------------------------------
def hh_conversations(snap: Snapshots) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """hh-rlhf harmless-base test (MIT): the human side of each conversation ("chosen"); no turn
    needs the user's memory; a later turn's follow-up label is unknown (None) unless it only thanks
    or says goodbye (False)."""
    blob = gzip.decompress(snap.read(HH, "harmless-base/test.jsonl.gz")).decode("utf-8")
    for number, line in enumerate(blob.splitlines()):
        if not line.strip():
            continue
        chosen = json.loads(line)["chosen"]
        humans = [part.split("\n\nAssistant:", 1)[0].strip() for part in chosen.split("\n\nHuman:")[1:]]
        humans = [h for h in humans if h]
        if not humans or any(len(h) > 1500 for h in humans):
            continue
        labelled = [turn(humans[0], "hh-rlhf", needs_memory=False, follow_up=False, kind="general-request")]
        for text in humans[1:]:
            closing = bool(CLOSING_RE.match(text))
            # the same conversation, but whether a later turn carries on its request or asks
            # something new inside it no rule here can tell: unknown (None), unless it only thanks
            labelled.append(
                turn(
                    text,
                    "hh-rlhf",
                    needs_memory=False,
                    follow_up=False if closing else None,
                    kind="closing" if closing else "later",
                )
            )
        yield f"hh-{number}", labelled


def mtbench_conversations(snap: Snapshots) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    for line in snap.text(FASTCHAT, "fastchat/llm_judge/data/mt_bench/question.jsonl").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        turns = [
            turn(item["turns"][0], "mtbench", needs_memory=False, follow_up=False, kind="general-request")
        ]
        turns += [
            turn(t, "mtbench", needs_memory=False, follow_up=True, kind="continuation")
            for t in item["turns"][1:]
        ]
        yield str(item["question_id"]), turns


def mtbench_splits() -> dict[str, str]:
    """The split data/decisions put each MT-bench first turn in (by its text), kept here."""
    out: dict[str, str] = {}
    for split in SPLITS:
        path = ROOT / "data" / "decisions" / split / "gate-mtbench.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else ():
            out[json.loads(line)["text"]] = split
    return out


def judge_items(split: str) -> list[dict[str, Any]]:
    """data/decisions' judge requests of ``split`` (a request and its 20 labelled records)."""
    items = []
    for path in sorted((ROOT / "data" / "decisions" / split).glob("judge-spc-*.jsonl")):
        source = path.stem.removeprefix("judge-")
        if source == "spc-general":
            continue
        if source == "spc-rw-written-en" and split in ("dev", "heldout"):
            continue  # our own writing: never graded on
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            if item["label"]:
                items.append({**item, "source": "decisions-" + source.removeprefix("spc-")})
    return items


# ---- personas ------------------------------------------------------------------------------------
class Facts:
    """Synthetic-Persona-Chat facts (CC BY 4.0) in the third person, by split pool and life domain."""

    def __init__(self, snap: Snapshots) -> None:
        self.by_pool: dict[str, list[tuple[str, set[str]]]] = defaultdict(list)
        for fact in spc.persona_facts(snap):
            found = spc.domains(fact)
            if found:
                self.by_pool[spc.pool_of(fact)].append((spc.third_person(fact), found))

    def relevant(self, split: str, domain: str) -> list[str]:
        pool = self.by_pool[split]
        if domain == "drink":
            return [
                t
                for t, d in pool
                if DRINK_FACT.search(t) and ("diet" in d or "food" in d) and not spc.RELATIVE_RE.match(t)
            ]
        wanted, unclear = spc.RELEVANT[domain], spc.AMBIGUOUS[domain]
        return [t for t, d in pool if d & wanted and not d & unclear and not spc.RELATIVE_RE.match(t)]

    def unrelated(self, split: str, domains: set[str]) -> list[str]:
        avoid: set[str] = set()
        for domain in domains:
            if domain == "drink":
                avoid |= {"food", "diet", "cooking"}
            else:
                avoid |= spc.RELEVANT[domain] | spc.AMBIGUOUS[domain]
        return [t for t, d in self.by_pool[split] if not d & avoid and not DRINK_FACT.search(t)]


def persona_for(
    turns: list[dict[str, Any]], facts: Facts, split: str, rng: random.Random
) -> list[dict[str, Any]] | None:
    """20 records for the user of these turns: one belonging fact per life domain the turns' requests
    are in, the others from facts disjoint from every one of those domains; each turn then names the
    records that belong to it."""
    wanted = sorted({t["domain"] for t in turns if t.get("domain")})
    chosen: dict[str, str] = {}
    for domain in wanted:
        # a booking narrows a food request: the diet fact belongs to both
        options = facts.relevant(split, domain)
        if domain == "food":
            diet = facts.relevant(split, "food-booking")
            if any(t.get("domain") == "food-booking" for t in turns):
                options = diet
        options = [o for o in options if o not in chosen.values()]
        if not options:
            return None
        chosen[domain] = rng.choice(options)
    if "food" in chosen and "food-booking" in wanted:
        chosen["food-booking"] = chosen["food"]
    others = facts.unrelated(split, set(wanted))
    count = PERSONA_SIZE - len(set(chosen.values()))
    if len(others) < count:
        return None
    texts = list(dict.fromkeys(chosen.values())) + rng.sample(others, count)
    rng.shuffle(texts)
    ids = {text: f"m{i + 1}" for i, text in enumerate(texts)}
    for t in turns:
        t["records"] = [ids[chosen[t["domain"]]]] if t.get("domain") in chosen and t["needs_memory"] else []
    return [{"id": ids[text], "text": text} for text in texts]


# ---- putting conversations together --------------------------------------------------------------
#: how often a segment that something follows loses its closing turns ("thanks, that's all"), and
#: how often a task is left part-way: people often start a new request without closing the last one,
#: which is when a new request right after a retrieving turn is taken for a follow-up of it
DROP_CLOSING = 0.7
LEAVE_TASK = 0.5


def cut(segment: list[dict[str, Any]], rng: random.Random, *, task: bool = False) -> list[dict[str, Any]]:
    """``segment`` as it is when the user moves on to something else: its closing turns dropped
    (``DROP_CLOSING``) and, for a task, sometimes left after a random turn (``LEAVE_TASK``)."""
    out = list(segment)
    if rng.random() < DROP_CLOSING:
        while len(out) > 1 and out[-1]["kind"] == "closing":
            out.pop()
    if task and len(out) > 2 and rng.random() < LEAVE_TASK:
        out = out[: rng.randrange(1, len(out))]
    return out


def split_of(source: str, key: str) -> str:
    if source in HELDOUT_SOURCES:
        return "heldout"
    return row_split(f"conversations:{source}:{key}")


def general_pools(snap: Snapshots) -> dict[str, list[list[dict[str, Any]]]]:
    pools: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)
    for key, turns in hh_conversations(snap):
        pools[split_of("hh-rlhf", key)].append(turns)
    splits = mtbench_splits()
    for key, turns in mtbench_conversations(snap):
        split = splits.get(turns[0]["text"]) or split_of("mtbench", key)
        pools[split].append(turns)
    return pools


def build(snap: Snapshots) -> dict[str, list[dict[str, Any]]]:
    facts = Facts(snap)
    general = general_pools(snap)
    for split in SPLITS:
        random.Random(f"general-{split}").shuffle(general[split])
    tm4_off_topic: list[list[dict[str, Any]]] = []
    tasks: dict[str, dict[str, list[tuple[str, list[dict[str, Any]]]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for key, turns in sgd_dialogues(snap):
        if any(t["needs_memory"] for t in turns):
            tasks["sgd"][split_of("sgd", key)].append((key, turns))
    for key, turns, off_topic in tm4_dialogues(snap):
        if off_topic:
            tm4_off_topic.append(turns)
        elif any(t["needs_memory"] for t in turns) or stable_unit("tm4-general:" + key) < 0.1:
            tasks["tm4"]["heldout"].append((key, turns))
    for split in SPLITS:
        tasks["decisions"][split] = [
            (f"{item['source']}:{n}", [item]) for n, item in enumerate(judge_items(split))
        ]
    out: dict[str, list[dict[str, Any]]] = {split: [] for split in SPLITS}
    for split in SPLITS:
        rng = random.Random(f"conversations-{split}")
        pool = general[split]
        extra_general = tm4_off_topic if split == "heldout" else []

        def general_segment(
            rng: random.Random = rng, pool: list[Any] = pool, extra_general: list[Any] = extra_general
        ) -> list[dict[str, Any]]:
            if extra_general and rng.random() < 0.3:
                return [dict(t) for t in extra_general.pop(rng.randrange(len(extra_general)))]
            if not pool:
                return []
            return [dict(t) for t in pool.pop(rng.randrange(len(pool)))]

        for source in ("sgd", "tm4", "decisions"):
            found = sorted(tasks[source][split], key=lambda kv: kv[0])
            rng.shuffle(found)
            made = 0
            for _key, task in found:
                if made >= CAPS[source][split]:
                    break
                if source == "decisions":
                    item = task[0]
                    task_turns = [
                        turn(item["text"], item["source"], needs_memory=True, follow_up=False, kind="request")
                    ]
                    task_turns[0]["records"] = [r["id"] for r in item["records"] if r["label"]]
                    persona = [{"id": r["id"], "text": r["text"]} for r in item["records"]]
                else:
                    task_turns = cut([dict(t) for t in task], rng, task=True)
                    persona = persona_for(task_turns, facts, split, rng)
                    if persona is None:
                        continue
                before = cut(general_segment(), rng) if rng.random() < 0.4 else []
                after: list[dict[str, Any]] = []
                for n in range(rng.choice((1, 1, 2))):
                    segment = general_segment()
                    after += cut(segment, rng) if n == 0 and segment else segment
                turns = before + task_turns + after
                for t in turns:
                    t.setdefault("records", [])
                    t.pop("domain", None)
                out[split].append(
                    {
                        "id": f"{split}-{source}-{made:04d}",
                        "task_source": source,
                        "persona": persona,
                        "turns": turns,
                    }
                )
                made += 1
        if split == "fit":
            requests = [c for c in out[split] if c["turns"][0]["needs_memory"]]
            for n, c in enumerate(project_follow_ups(requests, random.Random("project-follow-ups"))):
                out[split].append({"id": f"fit-rw-follow-up-{n:04d}", **c})
        for n in range(CAPS["general"][split]):
            first = general_segment()
            turns = (cut(first, rng) if first else []) + general_segment()
            if not turns:
                break
            for t in turns:
                t.setdefault("records", [])
            persona_rng = random.Random(f"general-persona-{split}-{n}")
            others = facts.unrelated(split, set())
            texts = persona_rng.sample(others, PERSONA_SIZE)
            persona = [{"id": f"m{i + 1}", "text": text} for i, text in enumerate(texts)]
            out[split].append(
                {
                    "id": f"{split}-general-{n:04d}",
                    "task_source": "general",
                    "persona": persona,
                    "turns": turns,
                }
            )
    return out


#: the project's own follow-up messages (written for recallwise, Apache-2.0): after a fit request
PROJECT_FOLLOW_UPS = (
    "src/recallwise/data/follow_up_examples.jsonl",
    "src/recallwise/data/dev/follow_up_labels.jsonl",
)
#: how many fit requests each of them follows
PROJECT_REPEATS = 3


def project_follow_ups(requests: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """Fit conversations of a real request (an outside first turn with its persona) and then one of
    the project's labelled follow-up messages ("go on": true; "thanks!", "What is 17 times 23?":
    false). Outside dialogues have few general-chat continuations ("continue", "why?") and few new
    requests right after one; these are both, in our writing: fit only, never graded on."""
    out = []
    messages = [
        json.loads(line)
        for path in PROJECT_FOLLOW_UPS
        for line in (ROOT / path).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    for m in messages:
        for base in rng.sample(requests, PROJECT_REPEATS):
            first = dict(base["turns"][0])
            follow = turn(
                m["text"],
                "rw-follow-up",
                needs_memory=bool(m["label"]) and first["needs_memory"],
                follow_up=bool(m["label"]),
                kind="continuation" if m["label"] else "other",
            )
            follow["records"] = list(first["records"]) if follow["needs_memory"] else []
            out.append({"task_source": "rw-follow-up", "persona": base["persona"], "turns": [first, follow]})
    return out


def counts_table(built: dict[str, list[dict[str, Any]]]) -> str:
    lines = [
        "# Counts (written by scripts/build_conversations.py; do not edit)",
        "",
        "| split | conversations | turns |",
        "|---|---:|---:|",
    ]
    for split, conversations in built.items():
        lines.append(f"| {split} | {len(conversations)} | {sum(len(c['turns']) for c in conversations)} |")
    lines += [
        "",
        "| split | turn source | turns | need memory | follow-ups | follow-up unknown | follow-ups needing memory "
        "| with records |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for split, conversations in built.items():
        stats: dict[str, Counter[str]] = defaultdict(Counter)
        for c in conversations:
            for t in c["turns"]:
                s = stats[t["source"]]
                s["turns"] += 1
                s["need"] += t["needs_memory"]
                s["follow"] += bool(t["follow_up"])
                s["unknown"] += t["follow_up"] is None
                s["follow_need"] += bool(t["follow_up"]) and t["needs_memory"]
                s["records"] += bool(t["records"])
        for source, s in sorted(stats.items()):
            lines.append(
                f"| {split} | {source} | {s['turns']} | {s['need']} | {s['follow']} | {s['unknown']} | "
                f"{s['follow_need']} | {s['records']} |"
            )
    return "\n".join(lines) + "\n"


def write(out: Path, built: dict[str, list[dict[str, Any]]]) -> None:
    for split, conversations in built.items():
        folder = out / split
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.jsonl"):
            old.unlink()
        by_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for c in conversations:
            by_file[c["task_source"]].append(c)
        for name, items in sorted(by_file.items()):
            with (folder / f"conversations-{name}.jsonl").open("w", encoding="utf-8") as handle:
                for c in items:
                    handle.write(json.dumps(c, ensure_ascii=False, sort_keys=True) + "\n")
    (out / "COUNTS.md").write_text(counts_table(built), encoding="utf-8")


#: the gate sets written beside data/decisions' own (its builder leaves these files alone): a
#: conversation's split is theirs, so nothing of a held-out conversation is fitted or calibrated on
GATE_SETS = ("fit", "calib", "dev")
GATE_SET_PREFIX = "gate-conv-"


def gate_rows(conversations: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Per-message gate labels from the conversations' turns, by file name: every hh-rlhf turn (real
    people's requests and their later turns, none needing the user's memory: ``false``) and
    Schema-Guided Dialogue's first turns of a request (in a life domain the persona bears on:
    ``true``). The message-alone gate opened on a fifth of hh-rlhf's turns and closed on a fifth of
    SGD's requests in conversation; data/decisions held neither kind."""
    rows: dict[str, list[dict[str, Any]]] = {"hh-rlhf": [], "sgd-requests": []}
    for c in conversations:
        for t in c["turns"]:
            if t["source"] == "hh-rlhf":
                name = "hh-rlhf"
            elif t["source"] == "sgd" and t["kind"] == "request":
                name = "sgd-requests"
            else:
                continue
            rows[name].append(
                {
                    "text": t["text"],
                    "label": bool(t["needs_memory"]),
                    "source": t["source"],
                    "lang": "en",
                    "kind": t["kind"],
                }
            )
    return rows


def write_gate_sets(decisions: Path, built: dict[str, list[dict[str, Any]]]) -> None:
    """data/decisions/{fit,calib,dev}/gate-conv-*.jsonl (see :func:`gate_rows`). A text is written
    only where it is in one split alone: in no other split's conversations (held-out ones
    included) and no other split's gate sets of data/decisions ("thank you", a red-team question
    that two people asked)."""
    splits_of: dict[str, set[str]] = defaultdict(set)
    for split, conversations in built.items():
        for c in conversations:
            for t in c["turns"]:
                splits_of[normalise(t["text"])].add(split)
    for split in SPLITS:
        for path in (decisions / split).glob("gate-*.jsonl"):
            if not path.name.startswith(GATE_SET_PREFIX):
                for line in path.read_text(encoding="utf-8").splitlines():
                    if line.strip():
                        splits_of[normalise(json.loads(line)["text"])].add(split)
    for split in GATE_SETS:
        for name, rows in gate_rows(built[split]).items():
            with (decisions / split / f"{GATE_SET_PREFIX}{name}.jsonl").open("w", encoding="utf-8") as handle:
                for row in rows:
                    if splits_of[normalise(row["text"])] == {split}:
                        handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "conversations")
    parser.add_argument(
        "--decisions",
        type=Path,
        default=ROOT / "data" / "decisions",
        help="where the gate sets of the conversations' turns go (its fit/, calib/, dev/gate-conv-*.jsonl)",
    )
    parser.add_argument(
        "--gate-sets-only",
        action="store_true",
        help="write only the gate sets, from the conversations already in --out (no snapshots read)",
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.gate_sets_only:
        built = {
            split: [
                json.loads(line)
                for path in sorted((args.out / split).glob("*.jsonl"))
                for line in path.read_text(encoding="utf-8").splitlines()
            ]
            for split in SPLITS
        }
        write_gate_sets(args.decisions, built)
        return 0
    built = build(Snapshots(args.mirror))
    write(args.out, built)
    write_gate_sets(args.decisions, built)
    for split, conversations in built.items():
        turns = sum(len(c["turns"]) for c in conversations)
        print(f"{split}: {len(conversations)} conversations, {turns} turns", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
