"""Assistant utterances labelled by intent and wording (issue 34, second round).

- slurp (pswietojanski/slurp, text CC BY 4.0; devel and test, the train file is over the snapshot's
  4 MiB limit): English voice-assistant requests. True: recommendation_events / _locations / _movies
  when the wording asks for a choice or a judgement (recommend, suggest, good, best, should I, for
  me, something to do ...): what fits depends on the user's tastes, diet, budget; the same intents
  when they only ask what exists ("what movies are showing today") are left out. play_music with
  nothing named (no artist, song, playlist, genre): what plays is the user's taste -> True; with
  something named -> False; playback of what is already there (next, again, a playlist, an app)
  is left out. calendar_query, lists_query and email_querycontact worded about the user's own
  things (SLURP_OWN_RE: my, do i, someone's) -> True, kind recall (third round). False: factual
  questions, definitions, arithmetic, currency, stock prices, time and date, jokes, device commands
  with every detail given. Everything else (email inboxes and social feeds: app state; weather,
  news, transport: need the user's place or sources; statements of taste such as "i love hip hop":
  the write path) is left out.
- chatbot-ko (songys/Chatbot_data, MIT): Korean chatbot questions. True: requests for a
  recommendation or a choice (what to eat, wear, do, where to go, which gift) matched by
  KO_POSITIVE_RE, less the hand-picked KO_NOT_POSITIVE (statements, rhetorical questions, whether
  to buy or move somewhere: unclear). False: a sample of the everyday-talk questions (label 0) that
  match none of the request words in KO_ASKING_RE.
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
from collections import defaultdict
from typing import Any

from .common import Row, Snapshots, row

SLURP_TASTE_RE = re.compile(
    r"\b(recommend\w*|suggest\w*|good|best|nice|great|fun|cool|interesting|worth|should i|"
    r"for me|i like|i want|i would like|i'd like|favou?rite|something to do|what to do|"
    r"where can i|where should|any ideas?|top rated|popular)\b",
    re.I,
)
SLURP_NAMED = {"artist_name", "song_name", "playlist_name", "music_genre", "music_descriptor", "radio_name"}
SLURP_PLAYBACK_RE = re.compile(
    r"\b(next|again|selected|this song|that song|playlist|play list|album|artist|title|shuffle|queue|"
    r"itunes|spotify|pandora|youtube|file|app|recorder|billboard|grammys|released|band|purchased|"
    r"latest|one more time)\b",
    re.I,
)
SLURP_NEGATIVE = {
    "qa_factoid": "fact",
    "qa_definition": "fact",
    "qa_maths": "exam",
    "qa_currency": "fact",
    "qa_stock": "fact",
    "datetime_query": "fact",
    "datetime_convert": "fact",
    "general_joke": "creative",
    "alarm_set": "utility",
    "audio_volume_up": "utility",
    "audio_volume_down": "utility",
    "audio_volume_mute": "utility",
    "iot_hue_lightchange": "utility",
    "iot_hue_lightoff": "utility",
    "iot_hue_lightdim": "utility",
    "iot_hue_lightup": "utility",
    "iot_cleaning": "utility",
    "iot_wemo_on": "utility",
    "iot_wemo_off": "utility",
}
SLURP_NEGATIVE_CAP = 40
# third round: questions about what the user keeps -- their calendar, lists, contacts ("when is my
# brunch with jennifer", "is jessica's birthday on april twelfth", "what's on my shopping list",
# "check mom's number") -> True, kind recall, when the wording is about the user's own things
SLURP_RECALL = {"calendar_query", "lists_query", "email_querycontact"}
SLURP_OWN_RE = re.compile(
    r"\b(my|am i|do i|did i|have i|i have|i set|i need|i'm|mom|mum|dad)\b|\w's\b", re.I
)


def slurp_label(item: dict[str, Any]) -> tuple[bool, str] | None:
    intent = str(item["intent"])
    text = str(item["sentence"])
    if intent.startswith("recommendation_"):
        return (True, "recommendation") if SLURP_TASTE_RE.search(text) else None
    if intent == "play_music":
        entities = item.get("entities") or []
        named = {str(e["type"]) for e in entities} & SLURP_NAMED
        if named:
            return False, "utility"
        # playback of what is already on (next, again, this song, a playlist, an app): app state
        if SLURP_PLAYBACK_RE.search(text) or len(text.split()) < 2:
            return None
        return True, "recommendation"
    if intent in SLURP_NEGATIVE:
        return False, SLURP_NEGATIVE[intent]
    if intent in SLURP_RECALL:
        return (True, "recall") if SLURP_OWN_RE.search(text) else None
    return None


def load_slurp(snap: Snapshots) -> list[Row]:
    rows: list[Row] = []
    negatives: dict[str, list[Row]] = defaultdict(list)
    seen: set[str] = set()
    for part in ("devel", "test"):
        for item in snap.jsonl("pswietojanski/slurp", f"dataset/slurp/{part}.jsonl"):
            text = item["sentence"].strip()
            if text in seen:
                continue
            seen.add(text)
            decision = slurp_label(item)
            if decision is None:
                continue
            label, kind = decision
            made = row(text, label, "slurp", "en", kind, str(item["slurp_id"]), intent=item["intent"])
            if label:
                rows.append(made)
            else:
                negatives[item["intent"]].append(made)
    for intent in sorted(negatives):
        items = negatives[intent]
        random.Random("slurp-" + intent).shuffle(items)
        rows.extend(items[:SLURP_NEGATIVE_CAP])
    return rows


KO_POSITIVE_RE = re.compile(
    r"추천|뭐 ?먹|뭘 ?먹|뭐 ?입|뭘 ?입|어디 ?가|어디로 ?가|뭐 ?하지|뭐 ?할까|메뉴|"
    r"선물.*(뭐|뭘|무슨|어떤|좋을까|좋아|골라)|(뭐|뭘|무슨|어떤).*선물"
)
KO_NOT_POSITIVE = {
    "돈 벌어서 뭐하지",
    "메뉴얼이 있으면 뭐하나",
    "메뉴얼이 있으면 뭐해",
    "뭐할까?",
    "나중에 뭐할까 고민이야",
    "달리 보이고 싶은데 뭐할까",
    "내기해서 이겼는데 소원 뭐하지",
    "은퇴하고 뭐하지",
    "은퇴후에 뭐하지",
    "일요일에 교회끝나고 어디 가고 싶어.",
    "선물 주세요",
    "명품선물 꼭 해야할까?",
    "썸남 생겼는데 프사 뭐할까?",
    "어떤 사람을 만나는 게 좋을까?",
    "짝녀 선물 어디까지 가능?",
    "기념일에 선물 어느정도로 해줘?",
    "이별 후 1년 그리고 선물",
    "그녀에게 받았던 선물들을 모조리 다 버리려 합니다.",
    "남자친구가 준 생일선물이 너무 맘에 안 들어.",
    "여자친구가 준 생일 선물이 별로야",
    "짝남한테 늦은 생일 선물 주러 가는데 떨려.",
    "점심 메뉴 고르는 거 힘드네",
    "조카 선물 고르기 어렵네",
    "책 선물이 제일 나을 듯",
    "목걸이 선물이 좋겠다.",
    "발렌타인데이 선물 비싸",
    "발렌타인데이 선물 줄 사람이 없어",
    "입맛없는데 뭐 먹지",
}
# a question that asks for something (advice, a choice, a purchase, a plan): not used as a negative
KO_ASKING_RE = re.compile(r"추천|뭐|뭘|무슨|어떤|어디|어떻게|까\s*$|까요|해줘|알려|골라|선물|\?")
KO_NEGATIVE_SAMPLE = 300


def load_chatbot_ko(snap: Snapshots) -> list[Row]:
    rows: list[Row] = []
    negatives: list[tuple[int, str]] = []
    reader = csv.DictReader(io.StringIO(snap.text("songys/Chatbot_data", "ChatbotData.csv")))
    for number, item in enumerate(reader):
        text = item["Q"].strip()
        if KO_POSITIVE_RE.search(text):
            if text not in KO_NOT_POSITIVE and not re.search(
                r"(받았|받고|하려고|해야지|해야겠|한대|된대)", text
            ):
                kind = "plan" if re.search(r"어디|뭐 ?하지|뭐 ?할까", text) else "recommendation"
                rows.append(row(text, True, "chatbot-ko", "ko", kind, str(number)))
        elif item["label"] == "0" and not KO_ASKING_RE.search(text):
            negatives.append((number, text))
    random.Random("chatbot-ko").shuffle(negatives)
    for number, text in negatives[:KO_NEGATIVE_SAMPLE]:
        rows.append(row(text, False, "chatbot-ko", "ko", "chat", str(number)))
    return rows


# ---------------------------------------------------------------- Schema-Guided Dialogue (fourth round)
SGD_REPO = "google-research-datasets/dstc8-schema-guided-dialogue"
#: user turns by their dialogue acts: closing a conversation (thanks, goodbye, "no, that's all") and
#: short answers inside a task (yes, "that sounds great", "look for something else"); all False
SGD_CLOSING_ACTS = frozenset({"THANK_YOU", "GOODBYE", "NEGATE"})
SGD_FOLLOW_ON_ACTS = (frozenset({"AFFIRM"}), frozenset({"SELECT"}), frozenset({"REQUEST_ALTS"}))
SGD_CAPS = {"thanks": 300, "follow-on": 150}


def load_sgd_closings(snap: Snapshots) -> list[Row]:
    """Schema-Guided Dialogue (CC BY-SA 4.0): users' closing turns and short in-task answers, False.

    The gate's short-turn negatives were CLINC150's small-talk intents and a few dozen of ours; a
    conversation's last turn is worded in more ways ("Thanks for your help. That will be it.", "No,
    that's all. Thanks."). Files over the snapshot's size limit are skipped. A turn's text is one
    group (the same wording recurs across dialogues)."""
    found: dict[str, dict[str, None]] = {"thanks": {}, "follow-on": {}}
    for part in ("train", "dev", "test"):
        for path in snap.listing(SGD_REPO, f"{part}/"):
            if not path.rsplit("/", 1)[-1].startswith("dialogues_"):
                continue
            try:
                dialogues = json.loads(snap.text(SGD_REPO, path))
            except SystemExit:  # listed, but its content is not in the snapshot (over the size limit)
                continue
            for dialogue in dialogues:
                for turn in dialogue["turns"]:
                    if turn["speaker"] != "USER":
                        continue
                    acts = frozenset(a["act"] for frame in turn["frames"] for a in frame["actions"])
                    text = turn["utterance"].strip()
                    if acts and acts <= SGD_CLOSING_ACTS:
                        found["thanks"][text] = None
                    elif acts in SGD_FOLLOW_ON_ACTS:
                        found["follow-on"][text] = None
    rng = random.Random("sgd-closings")
    rows: list[Row] = []
    for kind, texts in found.items():
        ordered = sorted(texts)
        rng.shuffle(ordered)
        rows += [row(text, False, "sgd", "en", kind, text.lower()) for text in ordered[: SGD_CAPS[kind]]]
    return rows
