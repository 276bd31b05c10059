"""``recallwise bench extract``: what the write path keeps from conversations with labelled facts.

The data is a directory of JSONL files, one conversation a line::

    {"id": "dev-01", "source": "written",
     "messages": [{"role": "user", "text": "..."}, {"role": "assistant", "text": "..."}],
     "facts": ["I have a german shepherd named barnaby."],      # lasting facts the user states
     "preference": "avoid anything with excessive violence or gore",   # optional
     "question": "Can you suggest a series I could start this weekend?",  # optional
     "topic": "entertainment"}   # optional: the category a preference record carrying it is filed under

Each conversation is extracted into a fresh store (the default embedder, so the records are
embedded as in real use) and the records are graded:

- **fact recall**: share of labelled facts (``facts`` and ``preference``) that a stored record
  *carries* (:func:`carries`: at least two thirds of the fact's content words, compared by lemma,
  appear in one record);
- **preference stored**: share of conversations with a ``preference`` where a record carries it;
  **gated recall carries it**: share where the embedded policy's recall of ``question`` (gate,
  route, search, judge) keeps a record that carries it, and the records it keeps a question;
- **wrong topic**: of the conversations with a ``topic`` whose preference a *preference* record
  carries, those where such a record is filed under another topic (its ``categories`` lack the
  label; ``"none"``: no topic fits, so any preference record carrying it is wrong). A preference
  kept as a fact only, with no topic, is not wrong ("a topic right, or none");
- **records per conversation**, and of all records the counts of **broken English**
  (:func:`broken_english`), **first-person leftovers** (:func:`first_person`), **fragments**
  (:func:`fragment`) and **request words** kept (:func:`request_words`: "Remember: ..."), each
  with examples;
- **speed**: the first 10 messages of each conversation that has 10, extracted and stored
  (records embedded) into a fresh in-memory store: p50 and p95 milliseconds, and the p50 of the
  extractor's share alone (``extract_p50_ms``); and **ingest**: 200 conversations of 5-10
  messages (the first 10 of each, the data cycled if it has fewer) written one session at a time,
  events and records, into one fresh SQLite file, as ``recallwise ingest`` writes them: seconds.

The graders are deliberately independent of the extractor's own rules (they share no code with
:mod:`recallwise.extraction`, only the plain word lists of :mod:`recallwise.english`), so a rule
cannot grade itself.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..english import FUNCTION_WORDS, MODALS, MOODS
from ..errors import UsageError
from ..records import Event

__all__ = [
    "REWRITE_WORDS",
    "SPEED_MESSAGES",
    "BenchConversation",
    "ExtractBenchResult",
    "broken_english",
    "carries",
    "filed_under",
    "first_person",
    "fragment",
    "load_conversations",
    "request_words",
    "run_extract_bench",
    "unresolved_pronoun",
]

#: The conversation length the speed figure is taken on.
SPEED_MESSAGES = 10
#: Examples of each kind of bad record kept in the report.
EXAMPLES = 12
_ACTOR = "bench_user"
_NAMESPACES = ["/facts/{actorId}", "/preferences/{actorId}"]


@dataclass
class BenchConversation:
    """One labelled conversation of the benchmark."""

    id: str
    source: str
    messages: list[tuple[str, str]]  # (role, text)
    facts: list[str] = field(default_factory=list)
    preference: str | None = None
    question: str | None = None
    topic: str | None = None

    def events(self, limit: int | None = None, session_id: str = "s1") -> list[Event]:
        turns = self.messages[:limit] if limit else self.messages
        return [Event(actor_id=_ACTOR, session_id=session_id, role=role, text=text) for role, text in turns]

    @property
    def user_text(self) -> str:
        return "\n".join(text for role, text in self.messages if role == "user")


def _string(value: Any, where: str, name: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{where}: {name!r} must be a non-empty string")
    return value.strip()


def _conversation(data: Any, where: str) -> BenchConversation:
    if not isinstance(data, dict):
        raise UsageError(f"{where}: a conversation must be a JSON object")
    conv_id = _string(data.get("id"), where, "id")
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise UsageError(f"{where}: 'messages' must be a non-empty list")
    turns: list[tuple[str, str]] = []
    for index, message in enumerate(messages):
        spot = f"{where}: messages[{index}]"
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise UsageError(f"{spot} needs a role 'user' or 'assistant'")
        turns.append((message["role"], _string(message.get("text"), spot, "text") or ""))
    facts = data.get("facts") or []
    if not isinstance(facts, list):
        raise UsageError(f"{where}: 'facts' must be a list of strings")
    return BenchConversation(
        id=conv_id or "",
        source=str(data.get("source") or "unknown"),
        messages=turns,
        facts=[_string(f, where, "facts[]") or "" for f in facts],
        preference=_string(data.get("preference"), where, "preference", optional=True),
        question=_string(data.get("question"), where, "question", optional=True),
        topic=_string(data.get("topic"), where, "topic", optional=True),
    )


def load_conversations(directory: str | Path) -> list[BenchConversation]:
    """Every conversation in the ``*.jsonl`` files of ``directory`` (sorted by file name).

    A missing directory, a directory without JSONL files or a malformed line is a
    :class:`UsageError` naming the file and line.
    """
    root = Path(directory)
    if not root.is_dir():
        raise UsageError(f"--data {directory}: no such directory")
    files = sorted(root.glob("*.jsonl"))
    if not files:
        raise UsageError(f"--data {directory}: no *.jsonl files in it")
    out: list[BenchConversation] = []
    seen: set[str] = set()
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                data = json.loads(line)
            except ValueError as exc:
                raise UsageError(f"{where}: not JSON ({exc})") from exc
            conversation = _conversation(data, where)
            if conversation.id in seen:
                raise UsageError(f"{where}: duplicate conversation id {conversation.id!r}")
            seen.add(conversation.id)
            out.append(conversation)
    return out


# ---- graders ------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9]+(?:['\u2019][A-Za-z]+)*")
# the words that are no content of a fact or record: the function words but "still", and more pronouns,
# quantifiers and particles
_STOP = (FUNCTION_WORDS - {"still"}) | frozenset(
    [
        "if",
        "by",
        "than",
        "then",
        "that",
        "this",
        "these",
        "those",
        "there",
        "it",
        "its",
        "it's",
        "am",
        "'m",
        "having",
        "doing",
        "done",
        "shall",
        "quite",
        "i",
        "me",
        "my",
        "mine",
        "myself",
        "we",
        "us",
        "our",
        "ours",
        "ourselves",
        "you",
        "your",
        "yours",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "some",
        "any",
        "all",
        "one",
        "ones",
        "much",
        "many",
        "more",
        "most",
        "lot",
        "lots",
        "bit",
        "get",
        "got",
        "when",
        "what",
        "which",
        "who",
        "whom",
        "how",
        "where",
        "why",
        "out",
        "up",
        "off",
        "over",
        "back",
        "down",
        "around",
    ]
)
_NEGATIONS = {"not", "no", "never", "n't", "nothing", "none", "without"}


@lru_cache(maxsize=65536)
def _lemmas(word: str) -> frozenset[str]:
    """Every dictionary lemma of ``word`` (and the word itself), lower case."""
    from lemminflect import getAllLemmas

    lemmas = {word}
    for forms in getAllLemmas(word).values():
        lemmas.update(f.lower() for f in forms)
    return frozenset(lemmas)


def _tokens(text: str) -> list[str]:
    out = []
    for token in _WORD.findall(text.replace("\u2019", "'")):
        lower = token.lower()
        if lower.endswith("n't"):
            out.extend([lower[:-3] if lower not in ("can't", "won't") else lower[:2], "not"])
        elif "'" in lower:
            out.append(lower.split("'", 1)[0])
        else:
            out.append(lower)
    return out


def _content(text: str) -> list[frozenset[str]]:
    return [_lemmas(t) for t in _tokens(text) if t not in _STOP or t in _NEGATIONS]


def carries(record: str, fact: str) -> bool:
    """Whether ``record`` carries ``fact``: two thirds of the fact's content words, by lemma (and
    a negation, if the fact has one).

    >>> carries("The user tends to avoid anything with excessive violence or gore.",
    ...         "avoid anything with excessive violence or gore")
    True
    """
    wanted = _content(fact)
    if not wanted:
        return False
    have: set[str] = set().union(*_content(record)) if record else set()
    if any(lemmas & _NEGATIONS for lemmas in wanted) and not have & _NEGATIONS:
        return False  # "doesn't eat pork" is not carried by "eats pork"
    hits = sum(1 for lemmas in wanted if lemmas & have)
    return hits >= math.ceil(len(wanted) * 2 / 3)


_FIRST_PERSON = re.compile(
    r"(?i:\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|we'll|our|ours|ourselves)\b)|\bus\b"
)


def first_person(record: str) -> list[str]:
    """The first-person words left in a stored record ("US" in capitals is the country)."""
    return _FIRST_PERSON.findall(record.replace("\u2019", "'"))


#: Words a third-person rewrite legitimately brings in that the user never said (the grader's list,
#: written apart from the extractor's rules).
REWRITE_WORDS = frozenset(
    [
        "the",
        "user",
        "user's",
        "they",
        "them",
        "their",
        "theirs",
        "themselves",
        "they're",
        "they've",
        "they'd",
        "they'll",
        "is",
        "isn't",
        "are",
        "aren't",
        "was",
        "wasn't",
        "were",
        "weren't",
        "has",
        "hasn't",
        "had",
        "hadn't",
        "does",
        "doesn't",
        "did",
        "didn't",
        "would",
        "will",
        "won't",
        "when",
        "in",
        "general",
        # clauses kept together ("... and loves them", "... because they get seasick") and a
        # constraint said in a request ("wants options that don't involve swimming")
        "and",
        "because",
        "wants",
        "options",
        "that",
    ]
)
_CONTEXT = re.compile(r"^When [^:]*:\s*")
_SUBJECT_VERB = re.compile(
    r"\b(?:The user|They)\s+(?:(?:always|usually|often|never|also|still|just|really|sometimes|"
    r"mostly|generally|rarely|typically|normally|not)\s+)*([A-Za-z']+)"
)
_MODALS = MODALS | frozenset(["cannot", "used"])


@lru_cache(maxsize=65536)
def _is_word(token: str) -> bool:
    from lemminflect import getAllLemmas

    return bool(getAllLemmas(token))


@lru_cache(maxsize=16384)
def _bad_agreement(subject: str, verb: str) -> bool:
    """``The user tend`` / ``They has``: a verb form that does not agree with its subject."""
    from lemminflect import getAllInflections, getAllLemmas

    lower = verb.lower()
    if lower in _MODALS:
        return False
    if subject == "They":
        return lower in {"is", "has", "does", "was", "isn't", "hasn't", "doesn't", "wasn't"}
    if lower in {"are", "am", "were", "have", "do", "aren't", "haven't", "don't", "weren't"}:
        return True
    lemmas = getAllLemmas(lower).get("VERB")
    if not lemmas or lower not in lemmas:
        return False  # not a verb's base form (a past form, an adjective, a noun)
    forms = getAllInflections(lemmas[0], upos="VERB")
    past = set(forms.get("VBD", ())) | set(forms.get("VBN", ()))
    return lower not in past and "VBZ" in forms  # "read", "put": past forms read the same


def broken_english(record: str, said: str) -> list[str]:
    """Why ``record`` (written from what the user ``said``) is broken English; empty if it is not.

    A token that is neither in what the user said nor an English word ("hadn'ts", "heards"), a
    verb that does not agree with its subject ("The user tend", "They has"), or a third-person
    form after "to" ("to avoids").
    """
    reasons: list[str] = []
    source = {t.lower() for t in _WORD.findall(said.replace("\u2019", "'"))}
    text = record.replace("\u2019", "'")
    # a preference's context ("When booking flights: ...") is the extractor's own wording
    for token in _WORD.findall(_CONTEXT.sub("", text)):
        lower = token.lower()
        if lower in source or lower in REWRITE_WORDS or any(c.isdigit() for c in lower):
            continue
        if not _is_word(lower) and not (lower.endswith("'s") and lower[:-2] in source):
            reasons.append(f"made-up word {token!r}")
    for match in _SUBJECT_VERB.finditer(text):
        subject = "They" if match.group(0).startswith("They") else "The user"
        if _bad_agreement(subject, match.group(1)):
            reasons.append(f"{subject} + {match.group(1)!r}")
    for match in re.finditer(r"\bto\s+([a-z]+s)\b", text):
        word = match.group(1)
        if _third_person_form(word):
            reasons.append(f"to + {word!r}")
    return reasons


@lru_cache(maxsize=16384)
def _third_person_form(word: str) -> bool:
    from lemminflect import getAllInflections, getAllLemmas

    verbs = getAllLemmas(word).get("VERB")
    if not verbs or getAllLemmas(word).get("NOUN"):
        return False  # "to crosswords", "to bus stops": a noun after "to" is fine
    return word in getAllInflections(verbs[0], upos="VERB").get("VBZ", ())


_MOODS = MOODS | frozenset(["ok", "afraid", "scared"])
_ANAPHORA = frozenset(
    ["that", "those", "these", "this", "it", "them", "one", "ones", "some", "there", "so", "too"]
)
_REACTION = re.compile(
    r"\b(?:you|your|the idea|(?:that|this|those|these|the|a) (?:idea|suggestion|suggestions|recommendation|"
    r"recommendations|tip|tips|advice|option|options|list|plan))\b",
    re.I,
)


def fragment(record: str) -> bool:
    """Whether ``record`` says nothing on its own.

    A mood of the moment ("The user is excited but a bit nervous."), a reaction to the assistant
    ("The user loves the idea of string lights.", "... your suggestion"), words that only the
    conversation gives a meaning ("The user hadn't considered that.", "... will check those out."),
    or a pronoun with nothing in the record it can stand for ("The user finds them uncomfortable.",
    "The user tends to avoid fantasy-themed ones.": :func:`unresolved_pronoun`).
    """
    text = _CONTEXT.sub("", record.replace("\u2019", "'"))
    if _REACTION.search(text):
        return True
    tokens = _tokens(text)
    content = [
        t for t in tokens if t not in _STOP and t not in _ANAPHORA and t not in ("not", "bit", "little")
    ]
    if content and all(t in _MOODS for t in content):
        return True
    pointing = any(t in _ANAPHORA for t in tokens)
    return (pointing and len(content) < 2) or unresolved_pronoun(text) is not None


#: pronouns that stand for a noun said before them; "one"/"ones" for a noun with its modifier
_PLURAL_POINTERS = frozenset(["them", "they", "those", "these"])
_ONES = frozenset(["ones", "one"])
#: "her", "him": a person the record must name ("The user visits her every December." names nobody)
_PERSON_POINTERS = frozenset(["he", "him", "his", "she", "her", "hers", "he's", "she's"])
# words before a noun that make the word after them a noun even if it is also a verb ("the temples")
_DETERMINERS = frozenset(
    ["a", "an", "the", "their", "his", "her", "its", "some", "any", "many", "few", "several", "of", "two",
     "three", "four", "five", "all", "both", "these", "those", "other", "no", "each", "every"]
)  # fmt: skip


@lru_cache(maxsize=65536)
def _pos(word: str) -> frozenset[str]:
    from lemminflect import getAllLemmas

    return frozenset(getAllLemmas(word))


# "no one", "the only one", "this one", "which one": "one" that points at nothing said before
_NOT_A_POINTER_BEFORE_ONE = frozenset(
    ["no", "every", "any", "each", "only", "same", "last", "first", "next", "another", "which", "that",
     "this", "such", "anyone", "someone"]
)  # fmt: skip


def _nominal(tokens: Sequence[str], index: int, verb: int) -> bool:
    """Whether ``tokens[index]`` reads as a noun: a noun only, or a noun that is not the subject's
    verb (``tokens[verb]``: "the user *finds* them") or comes after a determiner."""
    word = tokens[index]
    if word in _STOP or word in _ANAPHORA or word in _NEGATIONS or word in ("user", "user's"):
        return False
    pos = _pos(word)
    if "NOUN" not in pos and "PROPN" not in pos:
        return not pos and word.isalpha() and len(word) > 2  # a name or a word the dictionary lacks
    if "VERB" not in pos or index != verb:
        return True
    return index > 0 and (tokens[index - 1] in _DETERMINERS or _pos(tokens[index - 1]) == frozenset({"ADJ"}))


def unresolved_pronoun(record: str) -> str | None:
    """The first pronoun of ``record`` that nothing in it can stand for, or None.

    "them", "they", "those", "these", "it", "he", "she", "him" and "her" need a noun somewhere
    before them (not the subject "the user"; but "they" after "the user" and "them" after "the
    user's" may be the user); "ones" and "one" need one before their own modifier ("avoids
    fantasy-themed ones" has none).

    >>> unresolved_pronoun("The user owns a few pairs of heels but finds them uncomfortable.")
    >>> unresolved_pronoun("The user finds them uncomfortable.")
    'them'
    """
    tokens = [t.lower() for t in _WORD.findall(_CONTEXT.sub("", record.replace("\u2019", "'")))]
    # the subject's verb: the first word after "the user" (or the record's first content word)
    after = next((i + 1 for i, t in enumerate(tokens) if t in ("user", "user's")), 0)
    verb = next((i for i in range(after, len(tokens)) if tokens[i] not in _STOP), -1)
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if token in ("those", "these", "one") and following and "NOUN" in _pos(following):
            continue  # "those bands", "one brother": a determiner or a number, not a pronoun
        if token in _PLURAL_POINTERS or token == "it" or token in _PERSON_POINTERS:
            if index + 1 < len(tokens) and token == "it" and tokens[index + 1] in ("is", "was"):
                continue  # "it is", "it was": most often a dummy subject ("it was worth it")
            if token == "they" and "user" in tokens[:index]:
                continue  # "... because they get seasick": the user, said in the third person
            if token == "them" and ("user's" in tokens[:index] or "their" in tokens[:index]):
                continue  # "The user's sister visits them": the user, who is not the clause's subject
            if not any(_nominal(tokens, j, verb) for j in range(index)):
                return token
        elif (
            token in _ONES
            and index > 0
            and tokens[index - 1] not in _DETERMINERS | _NOT_A_POINTER_BEFORE_ONE
            and not any(_nominal(tokens, j, verb) for j in range(max(0, index - 3)))
        ):
            return token  # "no one", "the only one": other words; "fantasy themed ones": a pointer
    return None


_REQUEST_WORDS = re.compile(
    r"^(?:(?:the user (?:asks|asked|wants|would like) (?:the assistant |you )?to )?"
    r"(?:please )?(?:remember|note|don't forget|do not forget|keep in mind|bear in mind|"
    r"for future reference|make a note|take a note|just so you (?:know|remember)))\b|"
    r"\b(?:remember (?:that|this)|note that)[.!]?$",
    re.I,
)


def request_words(record: str) -> bool:
    """Whether ``record`` keeps the words of a request to remember ("Remember: I am vegetarian")
    instead of only what was to be remembered."""
    return bool(_REQUEST_WORDS.search(_CONTEXT.sub("", record.replace("\u2019", "'")).strip()))


def filed_under(raw: str) -> list[str] | None:
    """The ``categories`` of a stored preference record (AgentCore's JSON shape), or None for a fact."""
    try:
        blob = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(blob, dict) or not isinstance(blob.get("context"), str):
        return None
    return [str(c) for c in blob.get("categories") or []]


# ---- the run --------------------------------------------------------------------------------


@dataclass
class _Tally:
    conversations: int = 0
    records: int = 0
    facts: int = 0
    facts_carried: int = 0
    with_preference: int = 0
    preference_stored: int = 0
    with_question: int = 0
    question_gate_open: int = 0
    question_carries: int = 0
    question_records: int = 0
    broken: int = 0
    first_person: int = 0
    fragments: int = 0
    request_words: int = 0
    topic_graded: int = 0
    topic_wrong: int = 0

    def as_dict(self) -> dict[str, Any]:
        def rate(part: int, whole: int) -> float | None:
            return round(part / whole, 4) if whole else None

        return {
            "conversations": self.conversations,
            "records": self.records,
            "records_per_conversation": rate(self.records, self.conversations),
            "facts_labelled": self.facts,
            "fact_recall": rate(self.facts_carried, self.facts),
            "preference_conversations": self.with_preference,
            "preference_stored": rate(self.preference_stored, self.with_preference),
            "question_conversations": self.with_question,
            "question_gate_open": rate(self.question_gate_open, self.with_question),
            "gated_recall_carries_preference": rate(self.question_carries, self.with_question),
            # records the gated recall kept for a question, on average (0 when the gate closed)
            "gated_records_per_question": rate(self.question_records, self.with_question),
            "broken_english": self.broken,
            "broken_english_rate": rate(self.broken, self.records),
            "first_person": self.first_person,
            "first_person_rate": rate(self.first_person, self.records),
            "fragments": self.fragments,
            "fragment_rate": rate(self.fragments, self.records),
            "request_words": self.request_words,
            "topic_graded": self.topic_graded,
            "topic_wrong": self.topic_wrong,
            "topic_wrong_rate": rate(self.topic_wrong, self.topic_graded),
        }


@dataclass
class ExtractBenchResult:
    """The figures of one ``bench extract`` run (``as_dict`` is the ``--json`` object)."""

    data: str
    extractor: str
    embedder: str
    total: dict[str, Any]
    by_source: dict[str, dict[str, Any]]
    speed: dict[str, Any]
    examples: dict[str, list[dict[str, str]]]
    errors: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "data": self.data,
            "extractor": self.extractor,
            "embedder": self.embedder,
            **self.total,
            "by_source": self.by_source,
            "speed": self.speed,
            "examples": self.examples,
            "errors": self.errors,
        }


class _TimedExtractor:
    """An extractor that adds up the time its wrapped extractor spends."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.ms = inner, inner.name, 0.0

    def extract(self, events: Sequence[Event]) -> list[Any]:
        started = time.perf_counter()
        try:
            return list(self.inner.extract(events))
        finally:
            self.ms += (time.perf_counter() - started) * 1000.0


def _percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))], 3)


def run_extract_bench(
    data: str | Path,
    *,
    extractor: Any = None,
    embedder: Any = None,
    decider: Any = None,
    limit: int | None = None,
    ingest_conversations: int = 200,
    progress: Callable[[int, int], None] | None = None,
) -> ExtractBenchResult:
    """Extract every conversation under ``data`` into a fresh store and grade the records.

    ``extractor`` defaults to the offline rules, ``embedder`` to the default embedder and
    ``decider`` (for the gated recall of each conversation's question) to the embedded one.
    ``ingest_conversations``: how many conversations the ingest figure writes (0: no ingest figure).
    An extractor error is counted and named in ``errors``; the run goes on.
    """
    from ..deciders import default_decider
    from ..embeddings import default_embedder
    from ..extraction import ExtractionError, RuleExtractor, extract_and_store
    from ..policy import RecallPolicy
    from ..stores.sqlite import SQLiteStore

    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, got {limit}")
    if ingest_conversations < 0:
        raise UsageError(f"--ingest must be 0 or more, got {ingest_conversations}")
    conversations = load_conversations(data)
    if limit is not None:
        conversations = conversations[:limit]
    extractor = extractor or RuleExtractor()
    embedder = embedder or default_embedder()
    decider = decider or default_decider()
    total = _Tally()
    by_source: dict[str, _Tally] = {}
    examples: dict[str, list[dict[str, str]]] = {
        "broken_english": [],
        "first_person": [],
        "fragments": [],
        "request_words": [],
        "topic_wrong": [],
        "facts_missed": [],
        "preference_missed": [],
    }
    errors: list[str] = []
    speed_ms: list[float] = []
    extract_ms: list[float] = []

    def note(kind: str, **entry: str) -> None:
        if len(examples[kind]) < EXAMPLES:
            examples[kind].append(entry)

    steps = len(conversations) * 2
    done = 0
    for conversation in conversations:
        tallies = (total, by_source.setdefault(conversation.source, _Tally()))
        for tally in tallies:
            tally.conversations += 1
        with SQLiteStore("sqlite://:memory:", embedder=embedder) as store:
            try:
                extract_and_store(store, _ACTOR, conversation.events(), extractor=extractor)
            except ExtractionError as exc:
                errors.append(f"{conversation.id}: {exc}")
            stored_records = store.list_records(actor_id=_ACTOR)
            rendered = [r.rendered for r in stored_records]
            said = conversation.user_text
            for text in rendered:
                problems = broken_english(text, said)
                leftovers = first_person(text)
                is_fragment = fragment(text)
                asked = request_words(text)
                for tally in tallies:
                    tally.records += 1
                    tally.broken += bool(problems)
                    tally.first_person += bool(leftovers)
                    tally.fragments += is_fragment
                    tally.request_words += asked
                if asked:
                    note("request_words", id=conversation.id, record=text)
                if problems:
                    note("broken_english", id=conversation.id, record=text, why="; ".join(problems))
                if leftovers:
                    note("first_person", id=conversation.id, record=text, why=", ".join(leftovers))
                if is_fragment:
                    note("fragments", id=conversation.id, record=text)
            labelled = [*conversation.facts, *([conversation.preference] if conversation.preference else [])]
            for fact in labelled:
                hit = any(carries(text, fact) for text in rendered)
                for tally in tallies:
                    tally.facts += 1
                    tally.facts_carried += hit
                if not hit:
                    note("facts_missed", id=conversation.id, fact=fact)
            if conversation.preference:
                stored = any(carries(text, conversation.preference) for text in rendered)
                for tally in tallies:
                    tally.with_preference += 1
                    tally.preference_stored += stored
                if not stored:
                    note("preference_missed", id=conversation.id, fact=conversation.preference)
                filed = [
                    (text, categories)
                    for record, text in zip(stored_records, rendered, strict=True)
                    if (categories := filed_under(record.text)) is not None
                    and carries(text, conversation.preference)
                ]
                if conversation.topic and filed:
                    wrong = [
                        text for text, categories in filed
                        if conversation.topic == "none" or conversation.topic not in categories
                    ]  # fmt: skip
                    for tally in tallies:
                        tally.topic_graded += 1
                        tally.topic_wrong += bool(wrong)
                    if wrong:
                        note("topic_wrong", id=conversation.id, record=wrong[0], topic=conversation.topic)
            if conversation.question:
                policy = RecallPolicy(store, decider=decider, namespaces=list(_NAMESPACES))
                recall = policy.recall(conversation.question, actor_id=_ACTOR, session_id="question")
                kept = [k.text for k in recall.records]
                wanted = conversation.preference or ""
                for tally in tallies:
                    tally.with_question += 1
                    tally.question_gate_open += bool(recall.retrieved)
                    tally.question_carries += bool(wanted) and any(carries(t, wanted) for t in kept)
                    tally.question_records += len(kept)
        done += 1
        if progress:
            progress(done, steps)
        if len(conversation.messages) >= SPEED_MESSAGES:
            events = conversation.events(SPEED_MESSAGES)
            timed = _TimedExtractor(extractor)
            with SQLiteStore("sqlite://:memory:", embedder=embedder) as store:
                started = time.perf_counter()
                with contextlib.suppress(ExtractionError):  # counted in the quality pass
                    extract_and_store(store, _ACTOR, events, extractor=timed)
                speed_ms.append((time.perf_counter() - started) * 1000.0)
                extract_ms.append(timed.ms)
        done += 1
        if progress:
            progress(done, steps)
    ingest = _ingest_speed(conversations, extractor, embedder, ingest_conversations)
    speed = {
        "messages": SPEED_MESSAGES,
        "conversations_timed": len(speed_ms),
        "p50_ms": _percentile(speed_ms, 0.5),
        "p95_ms": _percentile(speed_ms, 0.95),
        "mean_ms": round(statistics.fmean(speed_ms), 3) if speed_ms else None,
        # the extractor alone; the rest of p50_ms is consolidation, mostly embedding the records
        "extract_p50_ms": _percentile(extract_ms, 0.5),
        "ingest": ingest,
    }
    return ExtractBenchResult(
        data=str(data),
        extractor=getattr(extractor, "name", type(extractor).__name__),
        embedder=getattr(embedder, "name", type(embedder).__name__),
        total=total.as_dict(),
        by_source={name: tally.as_dict() for name, tally in sorted(by_source.items())},
        speed=speed,
        examples=examples,
        errors=errors,
    )


#: The ingest figure's conversations: INGEST_MESSAGES[0] to [1] messages each.
INGEST_MESSAGES = (5, SPEED_MESSAGES)


def _ingest_speed(
    conversations: Sequence[BenchConversation], extractor: Any, embedder: Any, count: int
) -> dict[str, Any]:
    """Seconds to write ``count`` conversations of 5-10 messages, events and records, into one
    fresh SQLite file, one session at a time (as ``recallwise ingest`` does)."""
    import tempfile

    from ..extraction import ExtractionError, extract_and_store
    from ..stores.sqlite import SQLiteStore

    usable = [c for c in conversations if len(c.messages) >= INGEST_MESSAGES[0]]
    if not usable or not count:
        return {"conversations": 0, "messages": 0, "seconds": None, "cpu_seconds": None}
    chosen = [usable[i % len(usable)] for i in range(count)]
    messages = 0
    with (
        tempfile.TemporaryDirectory() as folder,
        SQLiteStore(f"sqlite:///{folder}/ingest.db", embedder=embedder) as store,
    ):
        started, cpu = time.perf_counter(), time.process_time()
        for index, conversation in enumerate(chosen):
            events = conversation.events(INGEST_MESSAGES[1], session_id=f"s{index}")
            messages += len(events)
            with contextlib.suppress(ExtractionError):  # counted in the quality pass
                extract_and_store(store, _ACTOR, events, extractor=extractor, store_events=True)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    # CPU seconds (all of the process's threads) next to the wall clock: on a shared machine the
    # wall clock also counts the time other work held the cores
    return {
        "conversations": len(chosen),
        "messages": messages,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
    }
