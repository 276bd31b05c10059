"""Which language family a text is in, as far as choosing an embedding model needs to know.

Not a language identifier: it answers one question cheaply (tens of microseconds, no model),
"is this confidently English?", and names the script of text the multilingual model was not
trained on. The embedded decider decides English text with the English model (its measured
behaviour, unchanged) and everything else with the multilingual one.

- Letters of a script the multilingual model covers (Latin, Cyrillic, Arabic, Thai, Hangul,
  kana, CJK ideographs) are "supported"; letters of any other script (Greek, Hebrew,
  Devanagari, ...) are not. Text whose letters are mostly unsupported is ``unsupported``.
- Latin-script text is English when it holds more English-only function words than words that
  are function words of the other Latin-script languages the model covers (de, es, fr, it, nl,
  pl, pt, tr) or that carry letters English does not use (é, ñ, ß, ł, ş, ...); a tie, and Latin
  text with no evidence either way (a name, "Vancouver flights"), counts as English.
- Text with no letters at all (emoji, digits, punctuation) is ``none``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

__all__ = ["LanguageGuess", "guess_language"]

Kind = Literal["english", "other", "unsupported", "none"]

# Function words, greetings and thanks: the words a short message is most likely to contain.
_ENGLISH_WORDS = """
a about after again all am an and any are as at be been before being but by can could did do
does doing don't for from get give got had has have he her here hers him his how i i'd i'll i'm
i've if in into is it it's its just let me mine my myself need of off on once or our ours out
over please should so some than thank thanks that the their them then there these they this
those to too under until up us very was we were what what's when where which while who whom why
will with would you your yours hello hi hey yes no ok okay sure cool great bye morning evening
tonight today tomorrow yesterday remind book order suggest recommend tell find buy something
anything much many
"""
_OTHERS = {
    "de": """der die das den dem des ein eine einen einem einer und oder aber ich du er sie es wir ihr
        mein meine meinen meinem mir mich dir dich was wer wie wo wann warum welche welcher welches
        soll sollte kann könnte ist sind bin war für mit von zu zum zur auf aus nach bei nicht noch
        heute morgen danke bitte hallo tschüss ja nein gut""",
    "es": """el la los las un una unos unas y o pero yo tú él ella nosotros mi mis me te qué quién
        cómo dónde cuándo cuál por para con sin de del al es son está estoy era debería puedo hoy
        mañana tarde noche gracias hola adiós sí bueno muy también vale perfecto claro vale""",
    "fr": """le la les un une des et ou mais je tu il elle nous vous mon ma mes moi toi que qui quoi
        comment où quand quel quelle pour avec sans du au aux est sont suis était dois peux ce cette
        aujourd'hui demain soir merci bonjour salut oui non bien très aussi parfait d'accord""",
    "it": """il lo la gli le un uno una e o ma io tu lui lei noi voi mio mia miei mie mi ti che chi
        cosa come dove quando quale per con senza di del della al alla è sono sei era dovrei posso
        oggi domani sera grazie ciao buongiorno sì bene molto anche perfetto va""",
    "pt": """o os as um uma uns umas e ou mas eu tu ele ela nós vós meu minha meus minhas me te que
        quem como onde quando qual por para com sem de do da dos das ao é são está estou era devo
        posso hoje amanhã noite obrigado obrigada olá oi sim bem muito também""",
    "nl": """de het een en of maar ik jij je hij zij wij mijn mij me wat wie hoe waar wanneer welke
        voor met zonder van naar bij niet ook nog heb heeft ben zijn moet kan zal vandaag morgen
        avond dank bedankt hallo hoi ja nee goed""",
    "pl": """i w z na do że się nie jest są był była ja ty on ona my wy mój moja moje mi mnie co kto
        jak gdzie kiedy który która dla przez bez od po czy mam masz dziś dzisiaj jutro wieczór
        dzięki dziękuję cześć tak dobrze bardzo""",
    "tr": """ve veya ama ben sen o biz siz benim bana beni ne kim nasıl nerede zaman hangi için ile
        bir bu şu da de mi mı mu mü var yok değil bugün yarın akşam teşekkürler teşekkür merhaba
        evet hayır iyi çok""",
}
_OTHER_WORDS = frozenset(w for words in _OTHERS.values() for w in words.split())
_ENGLISH = frozenset(_ENGLISH_WORDS.split())
_ENGLISH_ONLY = _ENGLISH - _OTHER_WORDS
_OTHER_ONLY = _OTHER_WORDS - _ENGLISH
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")

# Unicode blocks of the scripts the multilingual model covers (besides Latin).
_SUPPORTED_RANGES = (
    (0x0400, 0x052F, "Cyrillic"),
    (0x0600, 0x06FF, "Arabic"),
    (0x0750, 0x077F, "Arabic"),
    (0x08A0, 0x08FF, "Arabic"),
    (0xFB50, 0xFDFF, "Arabic"),
    (0xFE70, 0xFEFF, "Arabic"),
    (0x0E00, 0x0E7F, "Thai"),
    (0x1100, 0x11FF, "Hangul"),
    (0x3130, 0x318F, "Hangul"),
    (0xAC00, 0xD7AF, "Hangul"),
    (0x3040, 0x30FF, "Kana"),
    (0x31F0, 0x31FF, "Kana"),
    (0xFF66, 0xFF9F, "Kana"),
    (0x3400, 0x4DBF, "CJK"),
    (0x4E00, 0x9FFF, "CJK"),
    (0xF900, 0xFAFF, "CJK"),
    (0x20000, 0x2FA1F, "CJK"),
)


@dataclass(frozen=True)
class LanguageGuess:
    """What :func:`guess_language` found: the kind, and the script of unsupported text."""

    kind: Kind
    #: the dominant script's name for unsupported text ("GREEK", "DEVANAGARI", ...), else ""
    script: str = ""

    @property
    def english(self) -> bool:
        return self.kind == "english"


_LETTER = re.compile(r"[^\W\d_]")
_LATIN = re.compile("[A-Za-z\u00c0-\u024f\u1e00-\u1eff\uff21-\uff3a\uff41-\uff5a]")
_SUPPORTED = re.compile("[" + "".join(f"{chr(low)}-{chr(high)}" for low, high, _ in _SUPPORTED_RANGES) + "]")


def _script(char: str) -> str:
    """The Unicode script name a letter's name starts with ("GREEK SMALL LETTER ALPHA")."""
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else "UNKNOWN"


@lru_cache(maxsize=4096)
def guess_language(text: str) -> LanguageGuess:
    """Whether ``text`` is English, another supported language, unsupported, or has no letters."""
    if text.isascii():
        if not any(c.isalpha() for c in text):
            return LanguageGuess("none")
    else:
        letters = len(_LETTER.findall(text))
        if not letters:
            return LanguageGuess("none")
        latin = len(_LATIN.findall(text))
        supported = len(_SUPPORTED.findall(text))
        foreign = max(letters - latin - supported, 0)
        if foreign * 2 > letters:
            counts: dict[str, int] = {}
            for char in _LETTER.findall(text):
                if not _LATIN.match(char) and not _SUPPORTED.match(char):
                    script = _script(char)
                    counts[script] = counts.get(script, 0) + 1
            return LanguageGuess("unsupported", max(counts, key=lambda k: counts[k]))
        if supported + foreign > latin * 0.25:  # a few Latin letters (a brand, "OK") in CJK text
            return LanguageGuess("other")
    english = other = 0
    for word in _WORD.findall(text.lower().replace("’", "'")):
        if len(word) < 2:  # "a", "o", "e", "y", "i": too many languages share them, and big-O
            continue
        if word in _ENGLISH_ONLY:
            english += 1
        elif word in _OTHER_ONLY or not word.isascii():
            other += 1
    # A tie with some English evidence is English ("John's son is named Kyle": "son" is Spanish
    # too): the English model is the measured default, and both models are fine on a near-tie.
    if english >= other:
        return LanguageGuess("english")
    return LanguageGuess("other")
