"""Step 3 of the rules: keep a clause, or drop it and say why.

Kept: lasting facts and preferences about the user and their people ("I'm vegetarian", "my
daughter is allergic to dairy", "I tend to avoid gore", "spicy food gives me heartburn").

Dropped, each with a reason:

* ``question`` -- the clause asks ("could that be related?");
* ``not about the user`` -- no first-person subject or object;
* ``to the assistant`` -- it speaks to or about the assistant or its suggestions ("your
  suggestion", "I love that idea", "thanks");
* ``request`` -- what the user wants from this conversation ("I'd like ...", "I need help ...",
  "I'm looking for ...");
* ``plan for now`` -- what the user will do next ("I'll check those out", "I'm going to try it");
* ``of the moment`` -- a mood or a passing state ("I'm excited", "I'm not sure", "... tonight");
* ``says nothing alone`` -- its words point back into the conversation ("I hadn't considered
  that", "I've tried some of those") or carry no content;
* ``conversational`` -- thinking aloud ("I think", "I guess", "I agree", "I mean").

:func:`is_preference` marks the kept clauses that state a preference; those also become a
preference record (see :mod:`recallwise.extraction.rules`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..english import FUNCTION_WORDS, MOODS
from .clauses import Clause
from .person import Statement, clean, lemmas

__all__ = ["PERSON", "Verdict", "is_preference", "judge", "points_back"]


@dataclass(frozen=True)
class Verdict:
    """Whether a clause is kept, and why it is not."""

    keep: bool
    reason: str = ""


KEEP = Verdict(True)

_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|you're|you've|you'd|you'll|yourself|thanks|thank)\b", re.I)
_TO_ASSISTANT = re.compile(
    r"\b(?:(?:that|this|the|those|these|your|a|an|such a)\s+(?:great |good |nice |cool |fun |smart |lovely )?"
    r"(?:idea|ideas|suggestion|suggestions|recommendation|recommendations|tip|tips|advice|list|"
    r"option|options|answer|explanation|point)|sounds? (?:good|great|nice|fun|perfect|right|like))\b",
    re.I,
)
_REQUEST = re.compile(
    r"^(?:I'd like|I would like|I'd love (?:to|some|a|an|it|that|if)|I would love|I'm looking for|"
    r"I am looking for|I was wondering|I'm wondering|I wonder|I want (?:to know|you|some|a |an |help|ideas|"
    r"advice|suggestions|recommendations)|I need (?:help|you|some|a |an |ideas|advice|to know|"
    r"suggestions|recommendations|to figure)|I'm trying to (?:figure|decide|find|work out|choose|pick)|"
    r"I have a question|I've got a question|let me|let's|I'm asking|I'm just asking|I'm curious)\b",
    re.I,
)
_PLAN = re.compile(
    r"^(?:I'll(?!\s+(?:never|always)\b)|I will(?!\s+(?:never|always)\b)|I shall|"
    r"I'm going to (?!be\b)\w+|I'm gonna|I am going to (?!be\b)\w+|we'll|we will|"
    r"we're going to (?!be\b)\w+|we're gonna|I'm about to|I plan to|I'm planning to try|I want to try|"
    r"I'd better|I'll have to)\b",
    re.I,
)
# "I need to", "I have to", "I might": a plan unless it is a standing rule ("I have to avoid gluten")
_OBLIGATION = re.compile(
    r"^(?:I might|I may|I should|I need to|I have to|I've got to|I gotta|we need to|we have to|we should)\b",
    re.I,
)
_CONVERSATIONAL = re.compile(
    r"^(?:I|we)\s+(?:(?:do|don't|also|just|really|totally|completely|kind of|sort of)\s+)?"
    r"(?:think|thought|guess|guessed|mean|meant|know|knew|agree|agreed|suppose|understand|"
    r"bet|hope|hoped|assume|believe|wonder|wondered|forgot|remember|get it|figured|imagine|reckon|"
    r"heard|read (?:that|about|somewhere|online|it)|noticed|want|wanted|need(?! to)|needed(?! to)|wish|"
    r"ask|asked|appreciate|hadn't thought|haven't thought|see(?=\s*$| what| how| why| that| it| your)|"
    r"didn't know|didn't realize|had no idea|feel like|doubt|promise|can't believe|couldn't believe|"
    r"can't wait|can imagine|can see|can tell|could tell|must say|have to say|gotta say)\b",
    re.I,
)
_OF_THE_MOMENT = re.compile(
    r"^(?:I'm|I am|we're|we are)\s+(?:(?:so|very|really|just|a bit|a little|pretty|super|also|still|"
    r"not|too)\s+)*(?:not sure|sure|fine|good|ok|okay|great|sorry|glad|happy|excited|nervous|thrilled|"
    r"here|back|done|ready|curious|wondering|confused|lost|thinking|asking|kidding|joking|"
    r"afraid so|(?:down|in|game|all set|set)$|impressed|relieved|grateful|thankful|stoked|pumped|"
    r"worried|stressed|overwhelmed|tired|bored|busy|interested|intrigued|convinced|surprised|"
    r"amazed|on it|with you|drowning|struggling|trying to decide|jealous|envious|hoping)\b",
    re.I,
)
# a mood becomes a lasting fact only with what it is about: "afraid of heights", "nervous around dogs"
_STATE_WITH_OBJECT = re.compile(
    r"\b(?:of|about|around|when|by|with)\s+(?!(?:that|it|this|those|these|them)\b)\w", re.I
)
_NOW = re.compile(
    r"\b(?:today|tonight|right now|at the moment|this morning|this afternoon|this evening|yesterday|"
    r"last night|this weekend|later today|in a bit|in a minute|in a sec)\b",
    re.I,
)
# "hopes so", "has so many", "loves it too much": an answer to what was said before
_ANSWER_BACK = re.compile(r"(?:\b(?:so|not)|\bso (?:many|much)|\bthe same)$", re.I)
_POINTING = frozenset(
    ["that", "those", "these", "this", "it", "them", "one", "ones", "some", "there", "either"]
)
_FUNCTION = FUNCTION_WORDS | frozenset(
    [
        "anymore",
        "now",
        "too",
        "lot",
        "bit",
        "well",
        "having",
        "doing",
        "shall",
        "not",
        "no",
        "never",
        "even",
        "much",
        "more",
        "most",
        "quite",
        "always",
        "usually",
        "often",
        "sometimes",
        "before",
        "again",
        "yet",
        "already",
        "ever",
        "out",
        "up",
        "down",
        "off",
        "over",
        "back",
        "got",
        "get",
        "gotten",
    ]
)


def _content(statement: Statement) -> list[str]:
    words = re.findall(r"[A-Za-z0-9][\w'-]*", statement.predicate.lower())
    if statement.slot:
        words += statement.slot.split()
    return [w for w in words if w not in _FUNCTION and w not in _POINTING and not w.endswith("n't")]


def judge(clause: Clause, statement: Statement | None, *, explicit: bool = False) -> Verdict:
    """Keep ``clause`` (rewritten as ``statement``) or drop it, with the reason.

    ``explicit``: the user asked for it to be remembered ("remember that I ..."): kept unless it
    asks something, speaks to the assistant or says nothing alone (a plan, a mood, "I'd like ..."
    are kept: the user said to keep them)."""
    if clause.question:
        return Verdict(False, "question")
    if statement is None:
        return Verdict(False, "not about the user")
    text = clean(clause.text)
    if _SECOND_PERSON.search(text) or _TO_ASSISTANT.search(text):
        return Verdict(False, "to the assistant")
    if explicit:
        return KEEP if _content(statement) else Verdict(False, "says nothing alone")
    if _REQUEST.match(text):
        return Verdict(False, "request")
    if _PLAN.match(text) or (_OBLIGATION.match(text) and not is_preference(statement)):
        return Verdict(False, "plan for now")
    if _CONVERSATIONAL.match(text):
        return Verdict(False, "conversational")
    if _OF_THE_MOMENT.match(text) and not _STATE_WITH_OBJECT.search(text):
        return Verdict(False, "of the moment")
    if _NOW.search(text):
        return Verdict(False, "of the moment")
    content = _content(statement)
    if _ANSWER_BACK.search(statement.predicate):
        return Verdict(False, "says nothing alone")
    pointing = any(w.strip(".,") in _POINTING for w in statement.predicate.lower().split())
    # "loves it here", "hasn't done it in a while": a verb and a pointer into the conversation
    if not content or (pointing and len(content) < 2 and statement.subject == "The user"):
        return Verdict(False, "says nothing alone")
    if all(w in MOODS for w in content) and not _STATE_WITH_OBJECT.search(text):
        return Verdict(False, "of the moment")
    if not any(len(w) >= 3 or any(c.isdigit() for c in w) for w in content):
        return Verdict(False, "says nothing alone")
    return KEEP


_POINTERS = frozenset(["it", "them", "they", "those", "these"])
_PERSON_POINTERS = frozenset(["he", "him", "his", "she", "her", "hers", "he's", "she's"])
#: a person the user names: "my mother", "a sister", "our son Leo"
PERSON = re.compile(
    r"\b(?:my|our|a|an|one)\s+(?:[\w-]+\s+)?(?:sister|brother|son|daughter|mom|mum|mother|dad|father|wife|"
    r"husband|partner|friend|boyfriend|girlfriend|boss|grandma|grandmother|grandpa|grandfather|aunt|uncle|"
    r"cousin|niece|nephew|neighbou?r|roommate|kid|child|baby|fianc[eé]e?|coworker|colleague|teacher)\b",
    re.I,
)
_ONES = frozenset(["one", "ones"])
_BEFORE_NOUN = frozenset(
    ["a", "an", "the", "my", "our", "their", "his", "her", "its", "some", "any", "many", "few", "several",
     "of", "two", "three", "four", "five", "all", "both", "other", "each", "every", "no", "new", "old"]
)  # fmt: skip
_QUANTIFIERS = frozenset(
    [
        "any",
        "all",
        "some",
        "none",
        "many",
        "much",
        "few",
        "each",
        "both",
        "either",
        "neither",
        "several",
        "lot",
    ]
)
_FIRST_PERSON_WORDS = frozenset(["i", "i'm", "i've", "i'd", "i'll", "me", "my", "we", "we're", "us", "our"])
_NOT_POINTING_ONE = frozenset(
    [
        "no",
        "every",
        "any",
        "each",
        "only",
        "same",
        "last",
        "first",
        "next",
        "another",
        "which",
        "that",
        "this",
    ]
)
# "tends to decline", "likes to": an infinitive whose object is in the conversation, not the clause
_BARE_INFINITIVE = re.compile(
    r"^(?:\w+ly\s+|always\s+|never\s+|often\s+)*(?:tends?|likes?|loves?|hates?|prefers?|tries|try|wants?|"
    r"used|needs?|refuses?|chooses?|plans?|decided|agreed|forgot|has|had|gets?|got)\s+to\s+"
    # only verbs whose object is what was said before ("likes to shop" says something alone)
    r"(?:decline|accept|refuse|agree|join|avoid|skip|pass|attend|say|do|try|answer|respond|reply|comply|"
    r"participate|forget|remember|bother|mind|go along|follow|stick to it|keep it|use it|have it)$",
    re.I,
)


def _noun_at(words: list[str], index: int) -> bool:
    word = words[index]
    lower = word.lower()
    if lower in _FUNCTION or lower in _POINTING or lower in _FIRST_PERSON_WORDS or lower in _QUANTIFIERS:
        return False
    if word[:1].isupper() and index > 0:
        return True  # a name: "Kyoto", "Leo"
    found = lemmas(lower)
    if not found:
        return word.isalpha() and len(word) > 2  # a word the dictionary lacks: "caffeine", "kombucha"
    if "NOUN" not in found:
        return False
    return "VERB" not in found or (index > 0 and words[index - 1].lower() in _BEFORE_NOUN)


def points_back(statement: Statement, said: str) -> bool:
    """Whether ``statement`` (rewritten from the user's words ``said``) leans on words outside it: a
    pronoun the user said with no noun before it ("I find them uncomfortable", "I tend to avoid
    fantasy-themed ones") or an infinitive with nothing after it ("I tend to decline").

    Read in the user's own words, where "they" and "them" are never the user (the rewrite makes
    "I" "they")."""
    if _BARE_INFINITIVE.match(statement.predicate):
        return True
    words = re.findall(r"[A-Za-z0-9][\w'-]*", clean(said))
    for index, word in enumerate(words):
        lower = word.lower()
        if lower in _POINTERS:
            if index + 1 < len(words) and lower == "it" and words[index + 1].lower() in ("is", "was", "'s"):
                continue  # a dummy subject: "it is worth it"
            if not any(_noun_at(words, j) for j in range(index)):
                return True
        elif lower in _PERSON_POINTERS and not PERSON.search(" ".join(words[:index])):
            return True  # "I visit her every December": who she is was said before
        elif (
            lower in _ONES
            and index > 0
            and not (index + 1 < len(words) and "NOUN" in lemmas(words[index + 1].lower()))
            and words[index - 1].lower() not in _BEFORE_NOUN | _NOT_POINTING_ONE
            and not any(_noun_at(words, j) for j in range(max(0, index - 2)))
        ):
            return True
    return False


_PREFERENCE = re.compile(
    r"\b(?:prefers?|preferred|preference|tends? to|always|never|usually|go-to|favou?rite|can't stand|"
    r"cannot stand|can't handle|can't eat|can't have|can't drink|hates?|dislikes?|doesn't like|don't like|"
    r"doesn't eat|don't eat|doesn't drink|don't drink|loves?|likes?|enjoys?|adores?|only (?:eats?|drinks?|"
    r"buys?|wears?|uses?|reads?|watches?|travels?|flies|books?|shops?)|would rather|'d rather|rather than|"
    r"avoids?|sensitive to|aversion|afraid of|terrified of|scared of|not a fan|"
    r"a big fan|a huge fan|fan of|not into|is into|are into|keeps? kosher|only eats? halal|"
    r"gives? (?:the user|them) \w+|makes? (?:the user|them) \w+|gets? (?:seasick|carsick|motion sick|"
    r"airsick)|stays? away from|steers? clear of|cut(?:ting)? down on|can't do)\b",
    re.IGNORECASE,
)


def is_preference(statement: Statement) -> bool:
    """Whether a kept statement states a preference: a like, a dislike, a habit, an aversion, a
    practice ("keeps kosher", "doesn't eat pork").

    A condition is a fact, not a preference ("is vegetarian", "is allergic to peanuts"), as in
    AgentCore's own split (the demo persona's example records keep both in the facts).
    """
    return bool(_PREFERENCE.search(statement.sentence))
