"""Step 2 of the rules: a first-person clause rewritten in the third person.

``"I tend to avoid gore"`` -> ``"The user tends to avoid gore."``; ``"we keep kosher at home"``
-> ``"The user keeps kosher at home."``; ``"My husband is vegan"`` -> ``"The user's husband is
vegan."``; ``"spicy food gives me heartburn"`` -> ``"Spicy food gives the user heartburn."``.

The verb after the subject is conjugated from a table, never by gluing an ``s`` on:

* the auxiliaries and their contractions and negations (``am``/``'m`` -> ``is``, ``have``/``'ve``
  -> ``has``, ``haven't`` -> ``hasn't``, ``do``/``don't`` -> ``does``/``doesn't``, ``'d`` ->
  ``would``, or ``had`` before a past participle, ``'ll`` -> ``will``, ``we're`` -> ``is``);
* modals and past forms stay as they are (``can``, ``won't``, ``used to``, ``went``, ``had``);
* any other verb goes through ``lemminflect``'s English dictionary (``go`` -> ``goes``, ``try``
  -> ``tries``, ``tend`` -> ``tends``); a word that is not a verb there is not guessed at: the
  clause is not rewritten at all.

Every first-person form after the subject becomes its third-person form (``my`` -> ``their``,
``our X`` -> ``their X``, ``me``/``us`` -> ``them``, ``mine``/``ours`` -> ``theirs``,
``myself``/``ourselves`` -> ``themselves``, ``I'm`` -> ``they're``, ``I was`` -> ``they were``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..english import MODALS, english_dictionary
from .clauses import TIME, strip_discourse

__all__ = [
    "Statement",
    "clean",
    "is_base_verb",
    "is_past",
    "lemmas",
    "reason_lead",
    "rewrite",
    "swap_pronouns",
    "third_singular",
]


@dataclass(frozen=True)
class Statement:
    """A clause in the third person: ``subject`` + ``predicate`` (+ a slot it fills, if any)."""

    subject: str  # "The user", "The user's sister", "Spicy food"
    predicate: str  # "is vegetarian", "always books an aisle seat"
    lead: str = ""  # "As a vegan" (said before the subject)
    #: "favourite cuisine" for "my favourite cuisine is X" / "X is my favourite cuisine"
    slot: str | None = None
    value: str | None = None

    @property
    def sentence(self) -> str:
        text = f"{self.subject} {self.predicate}"
        if self.lead:
            text = (
                f"{self.lead}, {text[:1].lower()}{text[1:]}"
                if self.subject.startswith("The ")
                else (f"{self.lead}, {text}")
            )
        return f"{text[:1].upper()}{text[1:]}."

    @property
    def about_user(self) -> bool:
        return self.subject.startswith("The user")


# ---- lexicon ----------------------------------------------------------------------------

#: first-person subject auxiliary -> third-person singular ("I am" -> "is")
_AUXILIARIES = {
    "am": "is",
    "'m": "is",
    "are": "is",
    "'re": "is",
    "aren't": "isn't",
    "ain't": "isn't",
    "was": "was",
    "were": "was",
    "wasn't": "wasn't",
    "weren't": "wasn't",
    "have": "has",
    "'ve": "has",
    "haven't": "hasn't",
    "do": "does",
    "don't": "doesn't",
    "'ll": "will",
}
# and the verbs the third person keeps as they are, as a modal (third_singular): "the user had", "did not"
_MODALS = MODALS | frozenset(["ought", "mightn't", "needn't", "had", "hadn't", "did", "didn't"])
_ADVERBS = frozenset(
    [
        "always",
        "usually",
        "often",
        "never",
        "mostly",
        "sometimes",
        "generally",
        "also",
        "still",
        "just",
        "typically",
        "rarely",
        "normally",
        "definitely",
        "absolutely",
        "seriously",
        "mainly",
        "primarily",
        "occasionally",
        "regularly",
        "only",
        "even",
        "already",
        "especially",
        "hardly",
        "barely",
        "truly",
        "simply",
        "certainly",
        "recently",
        "currently",
        "now",
        "lately",
        "personally",
        "genuinely",
        "rather",
        "sort",
        "kind",
        "pretty",
        "much",
        "almost",
        "mostly",
        "basically",
        "strongly",
        "totally",
        "completely",
        "especially",
        "honestly",
        "actually",
        "really",
        "probably",
        "literally",
    ]
)
#: pronouns after the subject: first person -> third, applied in order; the "I" forms and "us" match
#: only as written ("US" in capitals is the country), the others in any case
_PRONOUNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b{first}\b", 0 if first[0] == "I" or first == "us" else re.I), third)
    for first, third in {
        "I'm": "they're",
        "I am": "they are",
        "I was": "they were",
        "I wasn't": "they weren't",
        "I've": "they've",
        "I'd": "they'd",
        "I'll": "they'll",
        "I": "they",
        "we're": "they're",
        "we've": "they've",
        "we'd": "they'd",
        "we'll": "they'll",
        "we": "they",
        "my": "their",
        "our": "their",
        "mine": "theirs",
        "ours": "theirs",
        "myself": "themselves",
        "ourselves": "themselves",
        "me": "them",
        "us": "them",
    }.items()
]
_HEDGES = re.compile(
    r"\b(?:really|probably|honestly|basically|actually|literally|totally|kinda|kind of|sort of|like,)\s+",
    re.IGNORECASE,
)
_TRAILING = re.compile(
    r"(?:,?\s+(?:please|right now|now|these days|nowadays|at the moment|lol|haha|lmao|though|anyway|anyways|"
    r"honestly|tbh|for sure|I guess|I think|you know|too|as well|also))+$",
    re.IGNORECASE,
)
_YOUR_TURN = re.compile(r",?\s+(?:when|whenever|if|as) you\b[^,]*$", re.IGNORECASE)
_LEAD = re.compile(
    r"^(?P<lead>(?:as an? [\w' -]{1,30}?|being an? [\w' -]{1,30}?|at home|at work|on weekends|"
    r"in the (?:mornings?|evenings?)|these days|lately|recently|most days|every (?:morning|day|week|"
    r"weekend|summer|winter)|for (?:work|fun))),?\s+(?=(?:I|we)\b)",
    re.IGNORECASE,
)
# a time said before the subject goes after the predicate: "Last summer we went to Kyoto" -> "The
# user went to Kyoto last summer"
_TIME_LEAD = re.compile(
    rf"^(?P<time>{TIME}),?\s+(?=(?:I|I'm|I've|I'd|we|we're|we've|my|our)\b)", re.IGNORECASE
)
# "as someone who only buys secondhand clothes": a statement about the user said as a lead
_AS_SOMEONE = re.compile(
    r"^(?:as|being) (?:someone|somebody|a person|one|a guy|a girl|a woman|a man|a mom|a dad|a parent|"
    r"an adult|a family) (?:who|that) (?P<predicate>.+)$|"
    r"^(?:as|being) (?:someone|somebody|a person|one) with (?P<with>.+)$",
    re.IGNORECASE,
)
_POSSESSIVE_SLOT = re.compile(
    r"^my\s+(?P<slot>[\w'-]+(?:\s+[\w'-]+){0,3}?)\s+(?P<verb>is|are|was|were)\s+(?P<value>.+)$", re.I
)
_INVERTED_SLOT = re.compile(
    r"^(?P<value>.+?)\s+(?P<verb>is|are)\s+my\s+(?P<slot>[\w'-]+(?:\s+[\w'-]+){0,3})$", re.I
)
_WITH_OTHERS = re.compile(
    r"^(?:me and (?:my|our) (?P<a>[\w-]+)|(?:my|our) (?P<b>[\w-]+(?:\s[\w-]+)?) and I)\b\s*(?P<rest>.*)$",
    re.I,
)
_OBJECT_FIRST_PERSON = re.compile(r"\b(?:me|my|us|our|mine|ours)\b")
_NOT_A_SUBJECT = frozenset(
    [
        "you",
        "your",
        "it",
        "it's",
        "its",
        "that",
        "that's",
        "this",
        "these",
        "those",
        "there",
        "there's",
        "here",
        "he",
        "she",
        "they",
        "them",
        "what",
        "which",
        "who",
        "how",
        "why",
        "when",
        "where",
        "thanks",
        "thank",
        "please",
        "let",
        "so",
        "if",
        "then",
        "maybe",
        "yes",
        "no",
        "not",
        "sounds",
        "seems",
        "looks",
        "anything",
        "something",
        "everything",
        "nothing",
        "one",
        "to",
        "for",
        "with",
    ]
)
_SELF = frozenset({"myself", "ourselves", "personally", "personally,", "too"})
_CONTRACTION = re.compile(r"^(I|we)('m|'re|'ve|'d|'ll)$", re.IGNORECASE)


@lru_cache(maxsize=8192)
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    return dict(english_dictionary().getAllLemmas(word))


def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """lemminflect's lemmas of ``word`` (lower case) by part of speech ("NOUN", "VERB", ...)."""
    return _lemmas(word)


def is_base_verb(word: str) -> bool:
    """Whether ``word`` (lower case) is an English verb's base form in lemminflect's dictionary."""
    return word in _lemmas(word).get("VERB", ())


@lru_cache(maxsize=8192)
def _is_past(word: str) -> bool:
    inflect = english_dictionary().getInflection
    verbs = _lemmas(word).get("VERB", ()) + _lemmas(word).get("AUX", ())
    return any(word in inflect(v, "VBD") + inflect(v, "VBN") for v in verbs)


def is_past(word: str) -> bool:
    """Whether ``word`` (lower case) is a verb's past form ("went", "loved", "visited")."""
    return _is_past(word) and not is_base_verb(word)


@lru_cache(maxsize=8192)
def _is_participle(word: str) -> bool:
    inflect = english_dictionary().getInflection
    verbs = _lemmas(word).get("VERB", ()) + _lemmas(word).get("AUX", ())
    return any(word in inflect(v, "VBN") for v in verbs) and not is_base_verb(word)


@lru_cache(maxsize=8192)
def third_singular(verb: str) -> str | None:
    """The third-person singular present of a first-person verb form, or None if it is not one.

    >>> [third_singular(v) for v in ("go", "try", "tend", "have", "don't", "can", "went", "toe-ish")]
    ['goes', 'tries', 'tends', 'has', "doesn't", 'can', 'went', None]
    """
    lower = verb.lower()
    if lower in _AUXILIARIES:
        return _AUXILIARIES[lower]
    if lower in _MODALS or lower == "used":
        return lower
    if is_base_verb(lower):
        forms = english_dictionary().getInflection(lower, "VBZ")
        return forms[0] if forms else None
    if _is_past(lower):
        return lower
    return None


def swap_pronouns(text: str) -> str:
    """Every first-person form in ``text`` in the third person ("our office" -> "their office")."""
    for pattern, replacement in _PRONOUNS:
        text = pattern.sub(replacement, text)
    return text


# after "and" / "or" in a present-tense predicate, a bare verb takes the subject's -s too:
# "works nights and loves it"; a noun that is also a verb ("and cats") does not.
_COORDINATED = re.compile(r"\b(and|or|but|then)\s+([a-z]+)(\s+\S+)?")
_OBJECT_START = frozenset(
    [
        "it",
        "them",
        "to",
        "the",
        "a",
        "an",
        "their",
        "this",
        "that",
        "those",
        "these",
        "his",
        "her",
        "him",
        "going",
        "being",
        "every",
        "all",
        "some",
        "most",
        "any",
    ]
)


def _coordinate(predicate: str) -> str:
    def fix(match: re.Match[str]) -> str:
        word, after = match.group(2), match.group(3) or ""
        if not is_base_verb(word) or word in ("do", "be"):
            return match.group(0)
        nounish = bool(_lemmas(word).get("NOUN")) or bool(_lemmas(word).get("ADJ"))
        if nounish and after.strip().lower() not in _OBJECT_START:
            return match.group(0)
        conjugated = third_singular(word)
        return f"{match.group(1)} {conjugated}{after}" if conjugated else match.group(0)

    return _COORDINATED.sub(fix, predicate)


def _tokens(text: str) -> list[str]:
    """Words, with the subject's contraction split off ("I'm" -> "I", "'m"); later ones stay whole."""
    words = text.split()
    match = _CONTRACTION.match(words[0]) if words else None
    return [match.group(1), match.group(2).lower(), *words[1:]] if match else words


_STATEMENT_AHEAD = r"(?=(?:I|I'm|I've|I'd|I'll|my|we|we're|we've|our)\b)"
# thinking aloud before a statement: "I guess that's why I never ...", "I think I prefer ..."
_THINKING = re.compile(
    r"^(?:(?:(?:I|we) (?:(?:do|really|just|kind of|sort of) )?(?:guess|think|suppose|believe|reckon|figure|"
    r"feel like|mean|know|realised|realized|admit)(?: that)?,?|(?:that's|that is|this is|which is|and that's|"
    r"it's|guess that's|maybe that's|probably) (?:why|how|because|the reason))\s+)+" + _STATEMENT_AHEAD,
    re.IGNORECASE,
)
# the reason word before a statement: "since I can't eat gluten", "because I get seasick"
_REASON_LEAD = re.compile(
    r"^(?P<word>because|since|as|'cause|cause|cos|given that|seeing as|now that)\s+" + _STATEMENT_AHEAD,
    re.IGNORECASE,
)


def reason_lead(clause: str) -> tuple[str, str]:
    """(the reason word, the rest) of a clause that opens with one ("Since I can't eat gluten" ->
    ("since", "I can't eat gluten")), else ("", the clause)."""
    text = strip_discourse(clause)
    match = _REASON_LEAD.match(text)
    return (match.group("word").lower(), text[match.end() :]) if match else ("", clause)


def clean(clause: str) -> str:
    """A clause without discourse openers, thinking aloud ("I guess that's why ..."), a reason word
    before its subject ("since I ..."), hedges, trailing filler ("..., please") and a trailing
    condition on the assistant ("... when you explain things")."""
    clause = strip_discourse(clause)
    clause = _THINKING.sub("", clause)
    clause = _REASON_LEAD.sub("", clause)
    clause = _HEDGES.sub("", clause)
    clause = _YOUR_TURN.sub("", clause)
    previous = None
    while previous != clause:
        previous = clause
        clause = _TRAILING.sub("", clause).strip(" ,.!")
    return clause


def _verb_group(words: list[str]) -> tuple[list[str], str, list[str], bool] | None:
    """(adverbs, verb in the third person, rest, present tense) after a first-person subject."""
    index = 0
    adverbs: list[str] = []
    while index < len(words) and words[index].lower().strip(",") in _SELF:
        index += 1  # "I myself prefer tea", "I, personally, ..."
    while index < len(words) and words[index].lower() in _ADVERBS:
        adverbs.append(words[index])
        index += 1
    if index >= len(words):
        return None
    verb, rest = words[index].lower(), words[index + 1 :]
    if verb == "'d":
        following = next((w.lower() for w in rest if w.lower() not in _ADVERBS), "")
        return adverbs, ("had" if _is_participle(following) else "would"), rest, False
    if verb in ("have", "'ve") and rest and rest[0].lower() == "got":
        rest = rest[1:]
    if verb in ("am", "'m") and rest and rest[0].lower() == "not":
        return adverbs, "is", rest, True
    if verb == "ain't":
        got = bool(rest) and rest[0].lower() in ("got", "gotten")
        return adverbs, ("hasn't" if got else "isn't"), rest, True
    if verb == "do" and rest and is_base_verb(rest[0].lower()):
        verb, rest = rest[0].lower(), rest[1:]  # "I do like jazz": the emphatic do goes
    out = third_singular(verb)
    if out is None:
        return None
    present = out not in _MODALS and out not in ("was", "wasn't", "will", "used") and not _is_past(out)
    return adverbs, out, rest, present and out not in ("doesn't", "does")


def rewrite(clause: str) -> Statement | None:
    """``clause`` (first person) in the third person, or None when it is not a statement the table covers."""
    text = clean(clause)
    if not text:
        return None
    someone = _AS_SOMEONE.match(text)
    if someone:  # "as someone who only buys secondhand clothes": the predicate is already third person
        if someone.group("with"):
            return Statement("The user", f"has {swap_pronouns(someone.group('with'))}")
        predicate = swap_pronouns(someone.group("predicate"))
        return (
            Statement("The user", predicate) if predicate.split()[0].lower() not in ("you", "your") else None
        )
    lead = ""
    lead_match = _LEAD.match(text)
    if lead_match:
        lead = swap_pronouns(lead_match.group("lead"))
        lead = lead[:1].upper() + lead[1:]
        text = text[lead_match.end() :]
    time = ""
    time_match = _TIME_LEAD.match(text)
    if time_match:
        time = swap_pronouns(time_match.group("time"))
        time = time[:1].lower() + time[1:]
        text = text[time_match.end() :]
    statement = _rewrite(text, lead)
    if statement is None or not time:
        return statement
    return Statement(statement.subject, f"{statement.predicate} {time}", statement.lead)


def _rewrite(text: str, lead: str) -> Statement | None:
    others = _WITH_OTHERS.match(text)
    if others:
        person = others.group("a") or others.group("b")
        rest = swap_pronouns(others.group("rest"))
        return Statement(f"The user and their {person}", rest, lead) if rest else None
    slot = _POSSESSIVE_SLOT.match(text) or _INVERTED_SLOT.match(text)
    if slot and not re.search(r"\b(?:I|me|my|we|us|our)\b", slot.group("slot"), re.I):
        name = slot.group("slot").strip()  # as said: "my son Leo" keeps the name's capital
        value = swap_pronouns(slot.group("value").strip())
        verb = slot.group("verb").lower()
        if not value or value.lower() in ("that", "this", "it", "those", "these"):
            return None
        return Statement(f"The user's {name}", f"{verb} {value}", lead, slot=name, value=value)
    words = _tokens(text)
    head = words[0].lower()
    if head in ("my", "our"):
        if len(words) < 3 or not any(_is_verbal(w) for w in words[2:]):
            return None  # "my bad", "my pleasure": no statement
        return Statement("The user's", swap_pronouns(" ".join(words[1:])), lead)
    if head in ("i", "we"):
        group = _verb_group(words[1:])
        if group is None:
            return None
        adverbs, verb, tail, present = group
        predicate = " ".join([*adverbs, verb, swap_pronouns(" ".join(tail))]).strip()
        if present:
            predicate = _coordinate(predicate)
        return Statement("The user", predicate, lead)
    return _object_first_person(text, lead)


def _is_verbal(word: str) -> bool:
    lower = word.lower().strip(",.")
    lemmas = _lemmas(lower)
    return bool(lemmas.get("VERB") or lemmas.get("AUX")) or lower in _MODALS or lower.endswith("n't")


def _object_first_person(text: str, lead: str) -> Statement | None:
    """``"spicy food gives me heartburn"`` -> subject "Spicy food", predicate "gives the user heartburn"."""
    match = _OBJECT_FIRST_PERSON.search(text)
    if match is None:
        return None
    words = text.split()
    first = words[0].lower().strip(",")
    if first in _NOT_A_SUBJECT or is_base_verb(first) or len(words) < 3:
        return None  # "you made my day", "tell me more", "help me plan": not a statement about the user
    before, after = text[: match.start()], text[match.end() :]
    if not any(_is_verbal(w) for w in before.split()[1:]):
        return None
    user = {"my": "the user's", "our": "the user's", "mine": "the user's", "ours": "the user's"}.get(
        match.group(0).lower(), "the user"
    )
    sentence = f"{before}{user}{swap_pronouns(after)}"
    subject, _, predicate = sentence.partition(" ")
    return Statement(subject[:1].upper() + subject[1:], predicate, lead)
