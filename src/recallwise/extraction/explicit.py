"""Step 0 of the rules: a request to remember ("remember that I'm vegetarian", "Note: ...").

The most direct thing a user says to a memory is to ask it to keep something. The request words
("remember that", "note:", "don't forget", "keep in mind", "for future reference", ...) are taken
off and what is to be remembered goes through the other steps, marked *explicit*: it is kept even
where a statement said in passing would not be (a plan, a mood, "I'd like ..."), unless it asks
something or says nothing alone. The request words are never stored.

``"Please remember: I am vegetarian"`` -> ``"I am vegetarian"`` (explicit) -> ``"The user is
vegetarian."``; ``"FYI I don't eat pork, remember that."`` -> ``"FYI I don't eat pork"`` (explicit;
"FYI" and "just so you know" only say that a statement follows: they are discourse, not a request).

A sentence that is only the request ("Please remember this:", "Note for the future.") makes the
rest of its message explicit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Request", "explicit_request", "foreign_request", "only_request"]

# "oh and", "also", "hey", "ok so": openers before the request
_OPENER = r"(?:(?:oh|and|also|hey|ok|okay|so|btw|by the way|one more thing|actually|just)[,!]?\s+)*"
# who is asked: "can you", "please", "I'd like you to", "make sure to"
_ASKED = (
    r"(?:(?:can|could|would|will) you (?:please )?|please |pls |plz |i'd like you to |i would like you to |"
    r"i want you to |i need you to |you should |make sure (?:to |you )|be sure to |try to )?"
    r"(?:please )?"
)
# the request itself; "remember" and "note" only before "that", a colon or comma, or a first-person
# word ("Remember when ...?", "remember to buy milk", "Note-taking apps" are not requests to keep)
_FIRST_PERSON = r"(?=(?:I|I'm|I've|I'd|I'll|my|we|we're|our|me|mine)\b)"
_REQUEST = re.compile(
    rf"^{_OPENER}{_ASKED}"
    r"(?:"
    r"(?:remember|memori[sz]e|note|make a note|take a note|note down|write down|jot down)"
    r"(?:\s+(?:of\s+)?(?:this|it))?(?:\s+(?:down|for (?:later|the future|next time)))?"
    rf"(?:\s+(?:that|the fact that)\b|\s*[:,]+|\s+--|\s+{_FIRST_PERSON})"
    r"|(?:don't|do not|never) forget(?:\s+(?:that|this|the fact that)\b)?[:,]*"
    r"|(?:keep|bear) (?:this |it )?in mind(?:\s+(?:that|the fact that)\b)?[:,]*"
    r"|(?:save|store|log|add) (?:this|that)(?: to (?:your |my )?memory)?\s*(?:[:,]+|--)"
    r"|for (?:future reference|the future|next time|the record|your records?|your memory)[:,]*"
    r"|just so you remember[:,]*"
    r")\s*",
    re.IGNORECASE,
)
# "..., remember that." / "... - please don't forget" / "..., keep that in mind": the request after
_TRAILING = re.compile(
    r"[\s,;:\-]+(?:so\s+)?(?:please\s+|pls\s+)?"
    r"(?:remember (?:that|this|it)|don't forget (?:that|this|it)|don't forget|do not forget|"
    r"keep (?:that|this|it) in mind|note (?:that|this|it)|make a note of (?:that|this|it)|"
    r"for future reference|for next time)(?:\s*,?\s*(?:please|ok|okay|thanks|thank you))?\s*[.!]*$",
    re.IGNORECASE,
)
# a sentence that is only the request: it makes the rest of its message explicit
_ONLY_REQUEST = re.compile(
    rf"^{_OPENER}{_ASKED}(?:remember|note|keep in mind|don't forget|do not forget|save|store|memori[sz]e)"
    r"(?:\s+(?:this|these|the following|that|something)(?:\s+(?:for (?:later|the future|next time)|down))?)?"
    r"(?:\s+(?:about me|for me))?\s*[:.!]*\s*$|"
    r"^(?:a )?(?:note|something|some things|a few things) (?:for (?:the future|later|next time)|"
    r"to remember|about me)\s*[:.!]*\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Request:
    """One sentence with the request words taken off: ``content`` is what is to be remembered."""

    content: str
    #: the request words, as said (empty when the request was in an earlier sentence)
    words: str


def explicit_request(sentence: str) -> Request | None:
    """The content of ``sentence`` if it asks to remember something, else None.

    >>> explicit_request("Remember that I'm vegetarian.")
    Request(content="I'm vegetarian.", words='Remember that')
    >>> explicit_request("FYI I don't eat pork, remember that.")
    Request(content="FYI I don't eat pork.", words='remember that.')
    >>> explicit_request("Remember when we went to Paris?") is None
    True
    """
    text = sentence.strip()
    lead = _REQUEST.match(text)
    trail = _TRAILING.search(text)
    if lead is None and trail is None:
        return None
    start = lead.end() if lead else 0
    end = trail.start() if trail and trail.start() >= start else len(text)
    content = text[start:end].strip(" ,;:-")
    if trail is not None and end < len(text):
        content += "."
    elif text.endswith("?") and lead is not None:
        content = content.rstrip("?") + "."  # "Can you remember that I'm vegan?": the ? is the request's
    if not re.search(r"\w", content):
        return None
    if content[:1].islower() and not re.match(r"i\b|i'", content):
        content = content[:1].upper() + content[1:]
    said = [
        part
        for part in (
            (lead.group(0).strip() if lead else ""),
            (trail.group(0).strip(" ,;:-") if trail and end < len(text) else ""),
        )
        if part
    ]
    return Request(content, " ... ".join(said))


def only_request(sentence: str) -> bool:
    """Whether ``sentence`` is a request to remember and nothing else ("Please remember this:")."""
    return bool(_ONLY_REQUEST.match(sentence.strip()))


# A request to remember in another language the gate speaks: the rules rewrite English only, so it is
# not stored, but the caller is told so (never silence).
_FOREIGN = {
    "French": r"(?:souviens-toi|souvenez-vous|rappelle-toi|rappelez-vous|n'oublie pas|n'oubliez pas|"
    r"note(?:z)? que|retiens|retenez|garde(?:z)? en (?:tête|mémoire)|pour mémoire)",
    "Spanish": r"(?:recuerda|recuerde|acuérdate|no olvides|no olvide|ten en cuenta|tenga en cuenta|anota|"
    r"apunta)",
    "German": r"(?:merk dir|merke dir|merken sie sich|vergiss nicht|vergessen sie nicht|denk daran|"
    r"denken sie daran|notier(?:e)?|bitte merken)",
    "Italian": r"(?:ricorda|ricordati|ricordi|non dimenticare|tieni (?:a mente|presente)|prendi nota|annota)",
    "Portuguese": r"(?:lembre-se|lembra-te|lembra|não esqueça|não se esqueça|não te esqueças|anote|"
    r"tenha em mente)",
    "Dutch": r"(?:onthoud|vergeet niet|denk eraan|noteer|houd er rekening mee)",
}
_PLEASE = r"(?:(?:s'il te plaît|s'il vous plaît|por favor|bitte|per favore|alsjeblieft),?\s+)?"
_FOREIGN_REQUEST = {
    language: re.compile(rf"^{_OPENER}{_PLEASE}{words}\b", re.IGNORECASE)
    for language, words in _FOREIGN.items()
}


def foreign_request(text: str) -> str | None:
    """The language of a request to remember said in French, Spanish, German, Italian, Portuguese or
    Dutch ("Souviens-toi que je suis végétarien"), else None."""
    said = text.strip()
    return next((language for language, pattern in _FOREIGN_REQUEST.items() if pattern.match(said)), None)
