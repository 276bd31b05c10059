"""Exercises and exam questions in several languages (issue 34, second round). All negatives: the
exercise carries everything its answer needs, even when its sentence is about "I" or "she".

- tatoeba (Tatoeba sentences, CC BY 2.0 FR, the 1000-sentence test pairs in facebookresearch/LASER
  data/tatoeba/v1): each sentence turned into one exercise a learner would paste: the words split by
  " / " in order (as pasted from a worksheet) or shuffled, a word blanked out ("______"), a grammar
  check, a translation request. Foreign sentences (ko, pl, pt, es, fr, ja, ru, th) with instructions
  in their language (ours); English sentences with English instructions. A sentence pair is one
  group, so a sentence and its translation share a split.
- enem (ENEM 2024, the Brazilian national exam, from piresramon/gpt-4-enem, MIT; the questions are
  the public exam's): questions with their five options; those that need a figure are left out.
  Split by question.
"""

from __future__ import annotations

import random
import re

from .common import Row, Snapshots, row

TATOEBA_DIR = "data/tatoeba/v1"
TATOEBA_LANGS = {
    "kor": "ko",
    "pol": "pl",
    "por": "pt",
    "spa": "es",
    "fra": "fr",
    "jpn": "ja",
    "rus": "ru",
    "tha": "th",
}
FOREIGN_PER_LANG = 130
ENGLISH_PER_PAIR = 45
NO_SPACES = {"ja", "th"}

# our wording of the exercise instructions; {target} is the language to translate into
INSTRUCTIONS: dict[str, dict[str, list[str]]] = {
    "en": {
        "order": [
            "Put the words in the right order:",
            "Unscramble this sentence:",
            "Make a sentence from these words:",
        ],
        "blank": [
            "Fill in the blank:",
            "Complete the sentence with the right word:",
            "What word goes in the gap?",
        ],
        "check": [
            "Is this sentence grammatically correct?",
            "Correct the mistakes in this sentence, if any:",
        ],
        "translate": ["Translate into {target}:", "How do you say this in {target}?", "{target} please:"],
    },
    "ko": {
        "order": ["단어를 올바른 순서로 배열하세요:", "다음 단어로 문장을 만드세요:"],
        "blank": ["빈칸에 알맞은 말을 넣으세요:", "빈칸 채우기"],
        "check": ["이 문장 문법적으로 맞아?", "다음 문장에서 틀린 부분을 고치세요:"],
        "translate": ["이 문장을 영어로 번역해 줘:", "영어로 뭐라고 해?", "Translate into English:"],
    },
    "pl": {
        "order": ["Ułóż wyrazy we właściwej kolejności:", "Ułóż zdanie z podanych słów:"],
        "blank": ["Uzupełnij lukę:", "Wstaw brakujące słowo:"],
        "check": ["Czy to zdanie jest poprawne gramatycznie?", "Popraw błędy w zdaniu, jeśli są:"],
        "translate": ["Przetłumacz na angielski:", "Jak to będzie po angielsku?", "Translate into English:"],
    },
    "pt": {
        "order": ["Coloque as palavras na ordem correta:", "Forme uma frase com as palavras:"],
        "blank": ["Complete a lacuna:", "Preencha o espaço em branco:"],
        "check": ["Esta frase está gramaticalmente correta?", "Corrija a frase, se necessário:"],
        "translate": ["Traduza para o inglês:", "Como se diz isso em inglês?", "Translate into English:"],
    },
    "es": {
        "order": ["Ordena las palabras para formar una frase:", "Pon las palabras en el orden correcto:"],
        "blank": ["Completa el hueco:", "Rellena el espacio en blanco:"],
        "check": ["¿Esta frase es correcta?", "Corrige la frase si hace falta:"],
        "translate": ["Traduce al inglés:", "¿Cómo se dice esto en inglés?", "Translate into English:"],
    },
    "fr": {
        "order": ["Remets les mots dans l'ordre :", "Forme une phrase avec ces mots :"],
        "blank": ["Complète le trou :", "Quel mot manque ?"],
        "check": ["Est-ce que cette phrase est correcte ?", "Corrige cette phrase si besoin :"],
        "translate": ["Traduis en anglais :", "Comment on dit ça en anglais ?", "Translate into English:"],
    },
    "ru": {
        "order": ["Расставь слова в правильном порядке:", "Составь предложение из слов:"],
        "blank": ["Вставь пропущенное слово:", "Заполни пропуск:"],
        "check": ["Это предложение грамматически правильное?", "Исправь ошибки в предложении, если есть:"],
        "translate": ["Переведи на английский:", "Как это будет по-английски?", "Translate into English:"],
    },
    "ja": {
        "check": [
            "この文は文法的に正しいですか？",
            "この文の文法を説明してください：",
            "この文を添削してください：",
        ],
        "translate": ["英語に翻訳してください：", "これを英語で何と言いますか？", "Translate into English:"],
    },
    "th": {
        "check": ["ประโยคนี้ถูกไวยากรณ์ไหม", "อธิบายไวยากรณ์ของประโยคนี้:", "ช่วยตรวจประโยคนี้ให้หน่อย:"],
        "translate": ["แปลเป็นภาษาอังกฤษ:", "ประโยคนี้ภาษาอังกฤษว่าอย่างไร", "Translate into English:"],
    },
}
TARGET_NAMES = {"ko": "Korean", "pl": "Polish", "pt": "Portuguese", "es": "Spanish", "fr": "French",
                "ja": "Japanese", "ru": "Russian", "th": "Thai"}  # fmt: skip
TOKEN_RE = re.compile(r"\w+(?:['’-]\w+)*|[^\w\s]")


def word_order(sentence: str, rng: random.Random, instructions: list[str]) -> str:
    tokens = TOKEN_RE.findall(sentence)
    if rng.random() < 0.4:  # the worksheet line as pasted: in order, no instruction
        return " / ".join(tokens)
    words = [t for t in tokens if re.match(r"\w", t)]
    rng.shuffle(words)
    joiner = rng.choice([" / ", ", ", " "])
    return f"{rng.choice(instructions)}\n{joiner.join(words)}"


def blank_out(
    sentence: str, rng: random.Random, instructions: list[str], other_words: list[str]
) -> str | None:
    tokens = sentence.split(" ")
    candidates = [i for i, t in enumerate(tokens) if len(re.sub(r"\W", "", t)) >= 3]
    if not candidates:
        return None
    i = rng.choice(candidates)
    word = re.sub(r"^\W+|\W+$", "", tokens[i])
    tokens[i] = tokens[i].replace(word, "______")
    gapped = " ".join(tokens)
    draw = rng.random()
    if draw < 0.35:
        return gapped
    if draw < 0.7 and other_words:
        options = [word, rng.choice(other_words)]
        rng.shuffle(options)
        return f"{rng.choice(instructions)}\n{gapped}\n(a) {options[0]}  (b) {options[1]}"
    return f"{rng.choice(instructions)} {gapped}"


def exercise(
    sentence: str, lang: str, rng: random.Random, other_words: list[str], target: str
) -> tuple[str, str]:
    """One exercise on ``sentence``: (text, kind)."""
    instructions = INSTRUCTIONS[lang]
    kinds = list(instructions)
    for _ in range(4):
        kind = rng.choice(kinds)
        if kind == "order":
            return word_order(sentence, rng, instructions["order"]), "exam"
        if kind == "blank":
            text = blank_out(sentence, rng, instructions["blank"], other_words)
            if text:
                return text, "exam"
        if kind == "check":
            return f"{rng.choice(instructions['check'])}\n{sentence}", "exam"
        if kind == "translate":
            ask = rng.choice(instructions["translate"]).format(target=target)
            return (f"{ask} {sentence}" if rng.random() < 0.5 else f"{ask}\n{sentence}"), "translate"
    return f"{rng.choice(instructions['check'])}\n{sentence}", "exam"


def load_tatoeba(snap: Snapshots) -> list[Row]:
    rows: list[Row] = []
    for code, lang in sorted(TATOEBA_LANGS.items()):
        base = f"{TATOEBA_DIR}/tatoeba.{code}-eng"
        foreign = snap.text("facebookresearch/LASER", f"{base}.{code}").splitlines()
        english = snap.text("facebookresearch/LASER", f"{base}.eng").splitlines()
        if len(foreign) != len(english):
            raise SystemExit(f"error: {base}: {len(foreign)} and {len(english)} lines")
        order = list(range(len(foreign)))
        random.Random("tatoeba-" + code).shuffle(order)
        foreign_words = [w for s in foreign[:200] for w in s.split(" ") if len(w) >= 3 and w.isalpha()]
        english_words = [w for s in english[:200] for w in s.split(" ") if len(w) >= 3 and w.isalpha()]
        for rank, line in enumerate(order[: FOREIGN_PER_LANG + ENGLISH_PER_PAIR]):
            rng = random.Random(f"tatoeba-{code}-{line}")
            group = f"{code}-{line}"
            if rank < FOREIGN_PER_LANG:
                sentence = foreign[line].strip()
                if lang in NO_SPACES:
                    sentence = sentence.replace("/", "")
                text, kind = exercise(sentence, lang, rng, foreign_words, "English")
                rows.append(row(text, False, "tatoeba", lang, kind, group))
            else:
                text, kind = exercise(english[line].strip(), "en", rng, english_words, TARGET_NAMES[lang])
                rows.append(row(text, False, "tatoeba", "en", kind, group))
    return rows


ENEM_ASKS = ["", "", "", "Questão do ENEM, me ajuda?\n\n", "Qual é a alternativa correta?\n\n", "Responda:\n"]


def load_enem(snap: Snapshots) -> list[Row]:
    rows: list[Row] = []
    for item in snap.jsonl("piresramon/gpt-4-enem", "data/enem/2024.jsonl"):
        if "[[placeholder]]" in item["question"] or item.get("figures"):
            continue
        rng = random.Random("enem-" + item["id"])
        letters = "ABCDE"[: len(item["alternatives"])]
        options = "\n".join(
            f"{letter}) {alt.strip()}" for letter, alt in zip(letters, item["alternatives"], strict=True)
        )
        text = rng.choice(ENEM_ASKS) + item["question"].strip() + "\n\n" + options
        rows.append(row(text, False, "enem", "pt", "exam", item["id"]))
    return rows
