"""Property tests of the rules extractor over generated first-person sentences.

Whatever the user says, a stored record never keeps a first-person word, and never holds a word
the rewrite made up ("toes", "hadn'ts", "heards"): every word of a record is a word the user
said, a word of the third-person rewrite ("The user", "they", "their", "is", "has", "does",
...), or an inflection the dictionary knows of a word the user said ("tend" -> "tends").
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from lemminflect import getAllLemmas

from recallwise.bench.extract import REWRITE_WORDS, broken_english, first_person
from recallwise.extraction import PREFERENCE, RuleExtractor
from recallwise.records import render_text

# (subjects, what may follow them): every combination is grammatical English, so a broken record
# can only come from the rewrite
PLAIN = [
    "I",
    "we",
    "i",
    "My husband and I",
    "Me and my wife",
    "Honestly, I",
    "By the way, I",
    "As a nurse, I",
]
BASE = [
    "avoid",
    "go",
    "have",
    "do",
    "try",
    "watch",
    "fix",
    "hear",
    "love",
    "hate",
    "prefer",
    "enjoy",
    "read",
    "put",
    "study",
    "fly",
    "buy",
    "eat",
    "drink",
    "run",
    "bike",
    "hike",
    "cook",
    "own",
    "teach",
    "catch",
    "wash",
    "miss",
    "carry",
    "get",
    "think",
    "know",
    "vlog",
    "workout",
    "tend to avoid",
    "like to play",
]
PAST = ["heard", "tried", "went", "loved", "ate", "bought", "flew", "taught", "caught", "got", "did", "had"]
ADVERBS = ["always", "usually", "never", "really", "especially", "only", "also", "still", "just", "often"]
BEFORE_BASE = ["don't", "do not", "can't", "won't", "used to", "tend to", "would", "might", "could", "do"]
PARTICIPLES = ["been to", "seen", "gone to", "tried", "heard of", "eaten", "always hated", "never liked"]
BE = ["I'm", "We're", "im", "I am", "I was", "we were"]
BE_WHAT = [
    "allergic to",
    "not a fan of",
    "trying to cut down on",
    "going to the gym with",
    "from Lisbon near",
    "into",
    "afraid of",
    "a nurse at",
    "vegetarian because of",
    "always looking for",
]
HAVE = ["I've", "We've", "ive", "I have", "I haven't", "we hadn't"]
THIRD = ["My sister", "Our kids", "My mom", "Spicy food"]
THIRD_VERBS = ["lives near", "loves", "hates", "is allergic to", "gives me", "makes us", "drives"]
OBJECTS = [
    "anything with violence or gore",
    "my dog",
    "our office",
    "me",
    "us",
    "mine",
    "myself",
    "horror movies with my friends",
    "the gym before work",
    "coffee in the morning",
    "that",
    "those",
    "it",
    "our police department",
    "the kids I teach",
    "what I like",
    "my mom's cooking",
    "long flights",
    "spicy food",
    "tea",
    "a lot",
    "it when I'm tired",
]


@st.composite
def clause(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["plain", "be", "have", "third"]))
    thing = draw(st.sampled_from(OBJECTS))
    if kind == "be":
        return f"{draw(st.sampled_from(BE))} {draw(st.sampled_from(BE_WHAT))} {thing}"
    if kind == "have":
        return f"{draw(st.sampled_from(HAVE))} {draw(st.sampled_from(PARTICIPLES))} {thing}"
    if kind == "third":
        return f"{draw(st.sampled_from(THIRD))} {draw(st.sampled_from(THIRD_VERBS))} {thing}"
    verb = draw(
        st.one_of(
            st.sampled_from(BASE + PAST),
            st.builds("{} {}".format, st.sampled_from(ADVERBS), st.sampled_from(BASE + PAST)),
            st.builds("{} {}".format, st.sampled_from(BEFORE_BASE), st.sampled_from(BASE)),
        )
    )
    return f"{draw(st.sampled_from(PLAIN))} {verb} {thing}"


JOINERS = [". ", ", but ", ", and ", " since ", " because ", " -- ", "; ", ", so ", "? ", "! "]


@st.composite
def message(draw: st.DrawFn) -> str:
    parts = draw(st.lists(clause(), min_size=1, max_size=3))
    joiners = draw(st.lists(st.sampled_from(JOINERS), min_size=len(parts) - 1, max_size=len(parts) - 1))
    text = parts[0]
    for joiner, part in zip(joiners, parts[1:], strict=True):
        text += joiner + part
    return text + draw(st.sampled_from([".", "!", "", "?", " lol"]))


def lemmas(word: str) -> set[str]:
    found = {word}
    for forms in getAllLemmas(word).values():
        found.update(f.lower() for f in forms)
    return found


def made_up(record: str, said: str) -> list[str]:
    said_words = {w.lower() for w in re.findall(r"[A-Za-z]+(?:'[A-Za-z]+)?", said)}
    said_lemmas = set().union(*(lemmas(w) for w in said_words)) if said_words else set()
    out = []
    for word in re.findall(r"[A-Za-z]+(?:'[A-Za-z]+)?", record):
        lower = word.lower()
        if lower in said_words or lower in REWRITE_WORDS:
            continue
        if lower.endswith("'s") and lower[:-2] in said_words | REWRITE_WORDS:
            continue
        if not lemmas(lower) & said_lemmas or not getAllLemmas(lower):
            out.append(word)
    return out


def stored_texts(said: str) -> list[str]:
    texts = []
    for memory in RuleExtractor().message(said):
        texts.append(memory.text if memory.kind != PREFERENCE else render_text(memory.text))
    return texts


@settings(max_examples=600, deadline=None)
@given(message())
def test_no_record_keeps_a_first_person_word_or_a_made_up_one(said):
    for text in stored_texts(said):
        assert not first_person(text), (said, text)
        assert not made_up(text, said), (said, text, made_up(text, said))
        assert not broken_english(text, said), (said, text, broken_english(text, said))  # "The user tend"


@settings(max_examples=200, deadline=None)
@given(message())
def test_every_fact_is_a_sentence_about_someone(said):
    for memory in RuleExtractor().message(said):
        if memory.kind == PREFERENCE:
            assert memory.context and memory.text[:1].isupper()
            continue
        assert memory.text.endswith(".") and memory.text[:1].isupper(), (said, memory.text)
        assert "  " not in memory.text and " ." not in memory.text, (said, memory.text)


def test_the_reported_rewrites_are_gone():
    said = (
        "I tend to avoid overly complex interfaces. I hadn't thought about a themed tour, but it makes "
        "perfect sense. I haven't tried those yet. I heard they have an impressive selection. "
        "We're organizing a community outreach event for our police department."
    )
    texts = stored_texts(said)
    assert "The user tends to avoid overly complex interfaces." in texts
    assert "The user is organizing a community outreach event for their police department." in texts
    for text in texts:
        assert not re.search(r"\b(?:toes|hadn'ts|haven'ts|heards)\b", text), text
