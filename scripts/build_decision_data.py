"""Build data/decisions/: labelled gate and judge sets from openly licensed outside data (issue 34).

    python scripts/build_decision_data.py [--mirror /work/.mirror] [--out data/decisions]

Reads the repository snapshots under --mirror (one git directory per repository,
``<owner>+<name>/repo``, as the search tool's ``fetch`` leaves them) at the commits pinned in
``SNAPSHOTS`` and writes JSONL files ``{fit,calib,dev,heldout}/{gate,judge}-<source>.jsonl`` plus
``manifest.json`` (counts). Deterministic: the same snapshots give byte-identical files.

Labelled turn: {"text", "label", "source", "lang", "kind"}; judge items add "records"
[{"id", "text", "label"}]. ``label`` is the gate truth: answering well needs the user's stored
personal memory. How every source is labelled is written next to its loader and in SOURCES.md.

Splits: whole sources (and whole CLINC intents, whole T0 datasets) are held out; the rest is split
by *group* (a template, a task, a question translated into several languages, a persona), so no
group lands in two splits; then near-duplicates across splits (MinHash on shingles, Jaccard >= 0.7)
are dropped from the less protected split, and anything equal to the project's own labelled sets
(src/recallwise/data) is dropped everywhere.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from decision_data import (
    code_sources,
    exercises,
    intents,
    labels,
    pastes,
    personal,
    written_en,
    written_ml,
    written_ml_more,
)
from decision_data import judge as judge_build
from decision_data.common import SNAPSHOTS, Row, Snapshots, normalise, row, row_split, typo

ROOT = Path(__file__).resolve().parent.parent
SPLITS = ("fit", "calib", "dev", "heldout")
# when a near-duplicate pair crosses splits, the row in the less protected split goes
PROTECT = {"heldout": 3, "dev": 2, "calib": 1, "fit": 0}


# ---------------------------------------------------------------- sources


def load_clinc(snap: Snapshots) -> list[Row]:
    """CLINC150 (CC BY 3.0): labelled by intent (labels.CLINC_INTENTS), held out by whole intent."""
    data = json.loads(snap.read("clinc/oos-eval", "data/data_full.json"))
    by_intent: dict[str, list[str]] = defaultdict(list)
    for part in ("train", "val", "test"):
        for text, intent in data[part]:
            by_intent[intent].append(text)
    rows: list[Row] = []
    rng = random.Random(150)
    for intent in sorted(by_intent):
        decision = labels.CLINC_INTENTS.get(intent)
        if decision is None:
            raise SystemExit(f"error: CLINC intent {intent!r} has no labelling decision")
        label, kind = decision
        if label is None:
            continue
        split = labels.CLINC_SPLIT.get(intent) or row_split(f"clinc-intent:{intent}")
        texts = list(dict.fromkeys(by_intent[intent]))
        # the third round's recall intents draw from their own generator, so the shared one gives
        # every earlier intent the same sample as before
        (random.Random(f"clinc-{intent}") if intent in labels.CLINC_RECALL else rng).shuffle(texts)
        cap = labels.CLINC_CAP_POSITIVE if label else labels.CLINC_CAP_NEGATIVE
        if intent in labels.CLINC_RECALL:
            cap = labels.CLINC_CAP_RECALL
        if intent in labels.CLINC_SMALL_TALK:
            cap = labels.CLINC_CAP_SMALL_TALK
        for text in texts[:cap]:
            rows.append(row(text, label, "clinc150", "en", kind, intent, _split=split, intent=intent))
    return rows


def load_selfinstruct(snap: Snapshots) -> list[Row]:
    """self-instruct seed tasks (175) and user-oriented instructions (252), Apache-2.0.

    Hand-labelled by task id (labels.SELFINSTRUCT_*): positives are the tasks whose answer rests on
    the asker's own tastes, diet, health, people or history; ambiguous tasks are left out. The
    user-oriented set is held out whole.
    """
    rows: list[Row] = []
    for source, path, positives, excluded, split in (
        (
            "selfinstruct-seed",
            "data/seed_tasks.jsonl",
            labels.SELFINSTRUCT_SEED_POSITIVE,
            labels.SELFINSTRUCT_SEED_EXCLUDED,
            None,
        ),
        (
            "selfinstruct-user",
            "human_eval/user_oriented_instructions.jsonl",
            labels.SELFINSTRUCT_USER_POSITIVE,
            labels.SELFINSTRUCT_USER_EXCLUDED,
            "heldout",
        ),
    ):
        for task in snap.jsonl("yizhongw/self-instruct", path):
            number = int(task["id"].rsplit("_", 1)[1])
            if number in excluded:
                continue
            label = number in positives
            for index, instance in enumerate(task["instances"][:2]):
                given = (instance.get("input") or "").strip()
                text = task["instruction"].strip() + ("\n\n" + given if given else "")
                if index and not given:
                    continue
                kind = labels.POSITIVE_KIND.get(number, "recommendation") if label else guess_kind(text)
                extra = {"_split": split} if split else {}
                rows.append(row(text, label, source, "en", kind, task["id"], **extra))
    return rows


T0_DATASETS = labels.T0_DATASETS


def load_t0(snap: Snapshots) -> list[Row]:
    """T0 prompts (via self-instruct's data/finetuning/t0_train_50k): long passages with a question,
    summarisation, multiple choice, reviews to classify. All negatives; each underlying dataset is
    one group, and some are held out whole (labels.T0_DATASETS). After a dataset's sample, a second
    pass takes more prompts over labels.LONG_CHARS characters from the lines the first pass left
    (labels.T0_LONG): long pastes, where the gate failed most."""
    listing = snap.listing("yizhongw/self-instruct", "data/finetuning/t0_train_50k/data_per_template/")
    rows: list[Row] = []
    for dataset, (kind, split, per_dataset) in sorted(T0_DATASETS.items()):
        files = sorted(p for p in listing if Path(p).name.startswith(dataset + "_"))
        if not files:
            raise SystemExit(f"error: no T0 templates for {dataset}")
        rng = random.Random(dataset)
        take = max(1, per_dataset // len(files)) if per_dataset else 0
        long_take = -(-labels.T0_LONG.get(dataset, 0) // len(files))
        source = "t0-" + dataset.replace("_", "-").lower()
        for path in files:
            lines = snap.jsonl("yizhongw/self-instruct", path)
            rng.shuffle(lines)
            kept = long_kept = 0
            for item in lines:
                if kept >= take and long_kept >= long_take:
                    break
                text = item["prompt"].strip()
                if len(text) > 4000 or (labels.PERSONAL_RE.search(text) and dataset in labels.T0_SCREEN):
                    continue
                if kept < take:
                    kept += 1
                elif len(text) > labels.LONG_CHARS:
                    long_kept += 1
                else:
                    continue
                rows.append(
                    row(text, False, source, "en", kind, dataset, _split=split, template=Path(path).stem)
                )
    return rows


CODE_ASKS = [
    "",
    "Complete this function.\n\n",
    "Can you explain what this does?\n\n",
    "Write 10 pytest tests for this:\n\n",
    "why does this fail on an empty list?\n\n",
    "Refactor this to be more readable:\n\n",
    "Translate this to JavaScript.\n\n",
    "Add type hints and a docstring example.\n\n",
    "What's the time complexity here?\n\n",
    "Is there a bug in this? It returns the wrong answer for negative numbers.\n\n",
    "Make this faster:\n\n",
    "Rewrite this using a list comprehension.\n\n",
]


def load_humaneval(snap: Snapshots) -> list[Row]:
    """HumanEval (MIT): the 164 prompts pasted as they are, or prompt + canonical solution behind a
    short request (the request wording is ours, the code is HumanEval's). Negatives, kind code-paste."""
    raw = gzip.decompress(snap.read("openai/human-eval", "data/HumanEval.jsonl.gz")).decode()
    rows: list[Row] = []
    for number, line in enumerate(raw.splitlines()):
        task = json.loads(line)
        ask = CODE_ASKS[number % len(CODE_ASKS)]
        code = task["prompt"] if number % 3 == 0 else task["prompt"] + task["canonical_solution"]
        rows.append(row(ask + code, False, "humaneval", "en", "code-paste", task["task_id"]))
    return rows


def load_gsm8k(snap: Snapshots) -> list[Row]:
    """GSM8K train (MIT), a sample: arithmetic word problems. The test part is left out: MGSM is a
    translation of 250 of its problems."""
    items = snap.jsonl("openai/grade-school-math", "grade_school_math/data/train.jsonl")
    rng = random.Random(8)
    rng.shuffle(items)
    rows = []
    for number, item in enumerate(items[: labels.GSM8K_SAMPLE]):
        prefix = ("", "Solve this step by step: ", "help with my homework pls\n", "Q: ")[number % 4]
        rows.append(row(prefix + item["question"], False, "gsm8k", "en", "exam", str(number)))
    return rows


def load_mtbench(snap: Snapshots) -> list[Row]:
    """MT-bench questions (Apache-2.0): turn 1 by category, turn 2 as a follow-on. Negatives."""
    rows = []
    for item in snap.jsonl("lm-sys/FastChat", "fastchat/llm_judge/data/mt_bench/question.jsonl"):
        group = str(item["question_id"])
        kind = labels.MTBENCH_KIND[item["category"]]
        rows.append(row(item["turns"][0], False, "mtbench", "en", kind, group))
        if len(item["turns"]) > 1:
            rows.append(row(item["turns"][1], False, "mtbench", "en", "follow-on", group))
    return rows


MGSM_LANGS = ("de", "en", "es", "fr", "ja", "ru", "th", "zh")


def load_mgsm(snap: Snapshots) -> list[Row]:
    """MGSM (CC BY 4.0): 250 GSM8K test problems translated by people; held out whole."""
    rows = []
    for lang in MGSM_LANGS:
        text = snap.text("google-research/url-nlp", f"mgsm/mgsm_{lang}.tsv")
        for number, line in enumerate(text.splitlines()):
            question = line.split("\t")[0]
            if number % 2 == 0:  # every other problem: half the set, each problem in all languages
                rows.append(row(question, False, "mgsm", lang, "exam", str(number), _split="heldout"))
    return rows


XQUAD_LANGS = ("ar", "de", "en", "es", "ru", "th", "tr", "zh")
XQUAD_ASKS = {
    "en": "Read the passage and answer the question.",
    "de": "Lies den Text und beantworte die Frage.",
    "es": "Lee el texto y responde a la pregunta.",
    "ru": "Прочитай текст и ответь на вопрос.",
    "ar": "اقرأ النص وأجب عن السؤال.",
    "th": "อ่านข้อความแล้วตอบคำถาม",
    "tr": "Metni oku ve soruyu cevapla.",
    "zh": "阅读下面的文章并回答问题。",
}


def load_xquad(snap: Snapshots) -> list[Row]:
    """XQuAD (CC BY-SA 4.0): SQuAD questions translated into 11 languages. Negatives: the question
    alone (kind fact) or pasted with its paragraph (kind exam, a long paste). A question and its
    translations are one group. Per language a different sample of questions."""
    rows = []
    for lang in XQUAD_LANGS:
        data = json.loads(snap.read("google-deepmind/xquad", f"xquad.{lang}.json"))
        pairs = [
            (qa["id"], qa["question"], para["context"])
            for article in data["data"]
            for para in article["paragraphs"]
            for qa in para["qas"]
        ]
        rng = random.Random("xquad" + lang)
        rng.shuffle(pairs)
        for number, (qid, question, context) in enumerate(pairs[: labels.XQUAD_PER_LANG]):
            if number % 3 == 0:
                text, kind = f"{XQUAD_ASKS[lang]}\n\n{context}\n\n{question}", "exam"
            else:
                text, kind = question, "fact"
            rows.append(row(text, False, "xquad", lang, kind, qid))
    return rows


XSID_LANGS = ("ar", "de", "en", "it", "ja", "nl", "tr", "zh")


def load_xsid(snap: Snapshots) -> list[Row]:
    """xSID 0.7 (CC BY-SA 4.0): SNIPS + Facebook assistant utterances translated into 13 languages.
    Labelled by intent and slots (labels.xsid_label); an utterance and its translations are one group."""
    rows = []
    for lang in XSID_LANGS:
        for part in ("valid", "test"):
            text = snap.text("mainlp/xsid", f"data/xSID-0.7/{lang}.{part}.conll")
            for block in text.split("\n\n"):
                meta: dict[str, str] = {}
                slots: set[str] = set()
                for line in block.splitlines():
                    if line.startswith("# ") and " = " in line:
                        key, _, value = line[2:].partition(" = ")
                        meta[key.strip()] = value.strip()
                    elif line and not line.startswith("#"):
                        tag = line.split("\t")[-1]
                        if tag.startswith("B-"):
                            slots.add(tag[2:])
                if "intent" not in meta or "text" not in meta:
                    continue
                decision = labels.xsid_label(meta["intent"], slots)
                if decision is None:
                    continue
                label, kind = decision
                utterance = meta["text"]
                if lang in ("ja", "zh"):  # the conll text is tokenised with spaces
                    utterance = re.sub(r"(?<=[^\x00-\x7f]) (?=[^\x00-\x7f])", "", utterance)
                rows.append(
                    row(
                        utterance,
                        label,
                        "xsid",
                        lang,
                        kind,
                        f"{part}-{meta.get('id')}",
                        intent=meta["intent"],
                    )
                )
    return rows


def load_written_en() -> list[Row]:
    """Our English positives: templates filled with places, people, occasions, in several registers
    (an opener, lower case without punctuation, a typo), and long pastes of options (a menu, hotels,
    flights, events) whose question is the user's own choice (written_en)."""
    rows: list[Row] = []
    slots = {
        "city": written_en.CITIES,
        "country": written_en.COUNTRIES,
        "occasion": written_en.OCCASIONS,
        "person": written_en.PEOPLE,
        "meal": written_en.MEALS,
        "day": written_en.DAYS,
        "season": written_en.SEASONS,
        "media": written_en.MEDIA,
    }
    openers = ["hey, ", "Quick question: ", "Hi! ", "so ", "Okay, ", "Help me out: ", "hmm ", "Morning! "]
    templates = written_en.TEMPLATES + written_en.LONG_TEMPLATES + written_en.MORE_TEMPLATES
    for number, (kind, template) in enumerate(templates):
        rng = random.Random(f"written-en-{number}")
        names = sorted(set(re.findall(r"{(\w+)}", template)))
        fills = 12 if names else 4
        seen: set[str] = set()
        for _ in range(fills * 4):
            if len(seen) >= fills:
                break
            text = template.format(**{n: rng.choice(slots[n]) for n in names})
            if rng.random() < 0.3 and not text.startswith("I "):
                text = rng.choice(openers) + text[0].lower() + text[1:]
            if rng.random() < written_en.LOWER_RATE:
                text = text.lower().rstrip(".?!")
            if rng.random() < written_en.TYPO_RATE:
                text = typo(text, rng)
            if text in seen:
                continue
            seen.add(text)
            rows.append(row(text, True, "rw-written-en", "en", kind, f"t{number}"))
    for list_name, options in sorted(written_en.PASTE_LISTS.items()):
        for number, intro in enumerate(written_en.PASTE_INTROS[list_name]):
            rng = random.Random(f"written-en-paste-{list_name}-{number}")
            for _ in range(6):
                picked = rng.sample(options, k=min(len(options), rng.randint(4, 9)))
                body = "\n".join(f"{i + 1}. {o}" if rng.random() < 0.5 else o for i, o in enumerate(picked))
                text = intro.format(day=rng.choice(written_en.DAYS)) + body
                rows.append(row(text, True, "rw-written-en", "en", "choice", f"paste-{list_name}-{number}"))
    return rows


def load_written_ml_more() -> list[Row]:
    """Our second round of positives for ko, pl, pt, es, fr, ja, ru, th (written_ml_more)."""
    return [
        row(text, True, "rw-written-ml2", lang, kind, f"{lang}{number}")
        for lang, items in written_ml_more.POSITIVES.items()
        for number, (kind, text) in enumerate(items)
    ]


def load_written_ml() -> list[Row]:
    """Our positives in 15 languages and follow-ons / greetings / thanks (written_ml)."""
    rows: list[Row] = []
    for lang, items in written_ml.POSITIVES.items():
        for number, (kind, text) in enumerate(items):
            rows.append(row(text, True, "rw-written-ml", lang, kind, f"{lang}{number}"))
    for lang, items in written_ml.NEGATIVES.items():
        for number, (kind, text) in enumerate(items):
            # the same follow-on in several languages is one group: it is one sentence, translated
            rows.append(row(text, False, "rw-written-followon", lang, kind, f"{kind}{number % 9}"))
    return rows


KIND_RULES: list[tuple[str, str]] = [
    (
        "code",
        r"\b(python|code|program|function|sql|regex|regular expression|html|bash|latex|javascript|"
        r"java|ruby|css|leetcode|excel|formula|script|algorithm)\b",
    ),
    ("translate", r"\btranslat"),
    ("summarise", r"\b(summar|tl;?dr|brief summary)"),
    (
        "rewrite",
        r"\b(rewrite|paraphrase|correct the|grammar|spelling|rephrase|tone|more professional|"
        r"capitalize|convert)\b",
    ),
    (
        "exam",
        r"\b(solve|equation|math|multiple choice|select a, b|prove|verify|calculate|sudoku|"
        r"answer the following)\b",
    ),
    (
        "creative",
        r"\b(story|poem|haiku|joke|lyrics|slogan|tagline|motto|caption|tweet|blog|write a|"
        r"come up with|brainstorm|invent|design|create)\b",
    ),
    ("classify", r"\b(classify|categori[sz]e|identify|detect|decide whether|tell me if|is this)\b"),
]


def guess_kind(text: str) -> str:
    head = text.split("\n", 1)[0].lower()
    for kind, pattern in KIND_RULES:
        if re.search(pattern, head):
            return kind
    return "fact"


# ---------------------------------------------------------------- dedupe and splits


def shingles(text: str) -> set[str]:
    norm = normalise(text)
    if re.search(r"[\u0e00-\u0e7f\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]", norm):
        compact = norm.replace(" ", "")
        return {compact[i : i + 3] for i in range(max(1, len(compact) - 2))}
    words = norm.split()
    if len(words) < 3:
        return {" ".join(words)}
    return {" ".join(words[i : i + 3]) for i in range(len(words) - 2)}


def minhash(shingle_sets: list[set[str]], permutations: int = 64) -> np.ndarray:
    prime = np.uint64((1 << 61) - 1)
    rng = np.random.default_rng(34)
    a = rng.integers(1, 1 << 31, size=permutations, dtype=np.uint64)
    b = rng.integers(0, 1 << 31, size=permutations, dtype=np.uint64)
    out = np.empty((len(shingle_sets), permutations), dtype=np.uint64)
    for i, items in enumerate(shingle_sets):
        hashes = np.array(
            [int.from_bytes(hashlib.blake2b(s.encode(), digest_size=4).digest(), "big") for s in items],
            dtype=np.uint64,
        )
        out[i] = ((np.outer(hashes, a) + b) % prime).min(axis=0)
    return out


def drop_cross_split_near_duplicates(rows: list[Row], threshold: float = 0.7) -> tuple[list[Row], int]:
    sets = [shingles(r["text"]) for r in rows]
    signatures = minhash(sets)
    bands, width = 16, 4
    doomed: set[int] = set()
    for band in range(bands):
        buckets: dict[bytes, list[int]] = defaultdict(list)
        for i, sig in enumerate(signatures[:, band * width : (band + 1) * width]):
            buckets[sig.tobytes()].append(i)
        for members in buckets.values():
            if len(members) < 2 or len(members) > 400:
                continue
            for x in range(len(members)):
                for y in range(x + 1, len(members)):
                    i, j = members[x], members[y]
                    if rows[i]["_split"] == rows[j]["_split"] or i in doomed or j in doomed:
                        continue
                    union = len(sets[i] | sets[j])
                    if union and len(sets[i] & sets[j]) / union >= threshold:
                        weaker = i if PROTECT[rows[i]["_split"]] < PROTECT[rows[j]["_split"]] else j
                        doomed.add(weaker)
    return [r for i, r in enumerate(rows) if i not in doomed], len(doomed)


def project_texts() -> set[str]:
    """Normalised texts of the project's own labelled sets: kept out of everything built here."""
    data = ROOT / "src" / "recallwise" / "data"
    texts: set[str] = set()
    for path in list(data.glob("*.jsonl")) + list(data.glob("*/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.add(normalise(json.loads(line)["text"]))
    for path in list(data.glob("*/*.json")):
        blob = json.loads(path.read_text(encoding="utf-8"))
        for case in blob.get("cases", []) if isinstance(blob, dict) else []:
            if isinstance(case, dict) and isinstance(case.get("query"), str):
                texts.add(normalise(case["query"]))
    return texts


def assign_splits(rows: list[Row]) -> None:
    for r in rows:
        if not r.get("_split"):
            r["_split"] = row_split(r["_group"])


def dedupe_exact(rows: list[Row], banned: set[str]) -> tuple[list[Row], Counter[str]]:
    """One row per normalised text; texts equal to the project's own sets go, and so does a text
    that two sources (or two CLINC intents) label both ways."""
    labels_of: dict[str, set[bool]] = defaultdict(set)
    for r in rows:
        labels_of[normalise(r["text"])].add(r["label"])
    seen: set[str] = set()
    dropped: Counter[str] = Counter()
    kept = []
    for r in rows:
        key = normalise(r["text"])
        if not key or key in banned:
            dropped["project-set"] += 1
        elif len(labels_of[key]) > 1:
            dropped["labelled both ways"] += 1
        elif key in seen:
            dropped["duplicate"] += 1
        else:
            seen.add(key)
            kept.append(r)
    return kept, dropped


def public(r: Row) -> Row:
    out = {k: r[k] for k in ("text", "label", "source", "lang", "kind")}
    if "records" in r:
        out["records"] = r["records"]
    return out


def write(out: Path, rows: list[Row], prefix: str) -> dict[str, Any]:
    grouped: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in rows:
        grouped[(r["_split"], r["source"])].append(r)
    counts: dict[str, Any] = {}
    for (split, source), items in sorted(grouped.items()):
        path = out / split / f"{prefix}-{source}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as handle:
            for r in items:
                handle.write(json.dumps(public(r), ensure_ascii=False) + "\n")
        counts.setdefault(split, {})[source] = {
            "rows": len(items),
            "positive": sum(r["label"] for r in items),
            "negative": sum(not r["label"] for r in items),
            "lang": dict(sorted(Counter(r["lang"] for r in items).items())),
            "kind": dict(sorted(Counter(r["kind"] for r in items).items())),
        }
    return counts


def counts_markdown(manifest: dict[str, Any]) -> str:
    """The counts tables of SOURCES.md, written by the build (rows, positives, negatives, languages)."""
    lines = ["# Counts (written by scripts/build_decision_data.py; do not edit)", ""]
    for task in ("gate", "judge"):
        lines += [
            f"## {task}",
            "",
            "| split | source | rows | label true | label false | languages | kinds |",
            "|---|---|---:|---:|---:|---|---|",
        ]
        totals: Counter[str] = Counter()
        for split in SPLITS:
            for source, c in sorted(manifest[task].get(split, {}).items()):
                langs = " ".join(f"{k}:{v}" for k, v in c["lang"].items())
                kinds = " ".join(f"{k}:{v}" for k, v in c["kind"].items())
                lines.append(
                    f"| {split} | {source} | {c['rows']} | {c['positive']} | {c['negative']} | "
                    f"{langs} | {kinds} |"
                )
                totals[f"{split} true"] += c["positive"]
                totals[f"{split} false"] += c["negative"]
        lines += ["", "| split | label true | label false |", "|---|---:|---:|"]
        lines += [f"| {split} | {totals[split + ' true']} | {totals[split + ' false']} |" for split in SPLITS]
        lines.append("")
    lines += ["## dropped", "", *[f"- {k}: {v}" for k, v in manifest["dropped"].items()], ""]
    return "\n".join(lines)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "decisions")
    args = parser.parse_args(list(argv) if argv is not None else None)
    snap = Snapshots(args.mirror)

    loaders: list[Callable[[], list[Row]]] = [
        lambda: load_clinc(snap),
        lambda: load_selfinstruct(snap),
        lambda: load_t0(snap),
        lambda: load_humaneval(snap),
        lambda: load_gsm8k(snap),
        lambda: load_mtbench(snap),
        lambda: load_mgsm(snap),
        lambda: load_xquad(snap),
        lambda: load_xsid(snap),
        load_written_en,
        load_written_ml,
        # second round: code with code, long pastes, exercises, ko/pl/pt, outside positives
        lambda: code_sources.load_cruxeval(snap),
        lambda: code_sources.load_mbpp(snap),
        lambda: code_sources.load_quixbugs(snap),
        lambda: code_sources.load_codealpaca(snap),
        lambda: exercises.load_tatoeba(snap),
        lambda: exercises.load_enem(snap),
        lambda: intents.load_slurp(snap),
        lambda: intents.load_chatbot_ko(snap),
        load_written_ml_more,
        # third round: the user's own life and people, famous contrasts, short turns in 15 languages
        lambda: personal.load_memorybank(snap),
        personal.load_written_life,
        personal.load_written_small,
        # fourth round: chats pasted with a task (CLINC150's small talk is whole in load_clinc)
        lambda: pastes.load_spc_dialogues(snap),
        lambda: intents.load_sgd_closings(snap),
    ]
    rows: list[Row] = [r for load in loaders for r in load()]
    rows, dropped = dedupe_exact(rows, project_texts())
    assign_splits(rows)
    rows, near = drop_cross_split_near_duplicates(rows)
    dropped["near-duplicate across splits"] = near

    judge_rows = judge_build.build(snap, rows)
    for split in SPLITS:
        for old in (args.out / split).glob("*.jsonl") if (args.out / split).is_dir() else []:
            if not old.name.startswith("gate-conv-"):  # scripts/build_conversations.py's
                old.unlink()
    manifest = {
        "snapshots": SNAPSHOTS,
        "dropped": dict(dropped),
        "gate": write(args.out, rows, "gate"),
        "judge": write(args.out, judge_rows, "judge"),
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    (args.out / "COUNTS.md").write_text(counts_markdown(manifest), encoding="utf-8")
    total = sum(p.stat().st_size for p in args.out.rglob("*.jsonl"))
    print(
        json.dumps(
            {"gate_rows": len(rows), "judge_items": len(judge_rows), "bytes": total, "dropped": dict(dropped)}
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
