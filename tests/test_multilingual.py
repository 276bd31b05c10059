"""The default decider in other languages: the real models, real SQLite stores, the real policy.

Quality on the held-out sets is measured by ``recallwise tune`` (README, "Languages"); these
tests pin the behaviour: which model decides what, that English turns cost no second
embedding, and the bad input of the multilingual work (unsupported scripts, emoji only, right-to-left
controls, mixed scripts).
"""

from __future__ import annotations

import pytest

from recallwise import RecallPolicy
from recallwise.deciders import EmbeddedDecider, ask
from recallwise.embeddings import make_embedder
from recallwise.embeddings.language import guess_language
from recallwise.policy.wording import GATE, gate_question, judge_question
from recallwise.records import MemoryRecord
from recallwise.stores import open_store

NS = ["/facts/{actorId}"]
RECORDS = [
    "The user drinks oat-milk flat whites and no caffeine after 3 pm.",
    "The user always books an aisle seat and flies out of Lisbon.",
    "The user's dog Pixel is a two-year-old border collie.",
    "The user is allergic to shellfish.",
    "The user's sister Maya lives in Toronto.",
]


@pytest.fixture(scope="module")
def decider():
    d = EmbeddedDecider()
    d.warm_up({GATE: gate_question()})
    return d


def _gate(decider, text):
    return ask(decider, text, {GATE: gate_question()})[GATE]


# ---- the language guess ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("What should I drink this afternoon?", "english"),
        ("Book me a table at 寿司屋 tonight", "english"),  # a name in another script
        ("John's son is named Kyle.", "english"),  # "son" is Spanish too: a tie is English
        ("Vancouver", "english"),  # no evidence either way
        ("Was soll ich heute Nachmittag trinken?", "other"),
        ("Resérvame un vuelo a Vancouver", "other"),
        ("Danke schön!", "other"),
        ("我想喝 coffee", "other"),
        ("\u200fماذا أشرب هذا المساء؟\u200f", "other"),
        ("Καλημέρα, τι να φάω;", "unsupported"),
        ("שלום, מה לאכול הערב?", "unsupported"),
        ("😀🎉👍", "none"),
        ("42 !!", "none"),
    ],
)
def test_language_guess(text, kind):
    assert guess_language(text).kind == kind


def test_unsupported_guess_names_the_script():
    assert guess_language("नमस्ते, मुझे क्या खाना चाहिए?").script == "DEVANAGARI"


# ---- the gate -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "opens"),
    [
        ("¿Qué debería beber esta tarde?", True),
        ("Was soll ich heute Nachmittag trinken?", True),
        ("Resérvame un vuelo a Vancouver", True),
        ("今晚我应该吃什么?", True),
        ("Danke schön!", False),
        ("Merci beaucoup, à demain !", False),
        ("Сколько будет семь плюс пять?", False),
    ],
)
def test_the_gate_decides_other_languages(decider, text, opens):
    assert (_gate(decider, text) >= 0.5) is opens


def test_english_is_decided_by_the_english_model_with_no_second_embedding(decider):
    ml = decider.multilingual_decider()
    assert ml is not None
    before = ml.embedder.calls
    english = make_embedder("minilm-l6")
    vector = english.embed(["What should I drink this afternoon?"])[0]
    plain = EmbeddedDecider(embedder=english, multilingual=False)
    p_plain = _gate(plain, "What should I drink this afternoon?")
    p = _gate(decider, "What should I drink this afternoon?")
    assert p == pytest.approx(p_plain, abs=1e-6)
    assert ml.embedder.calls == before
    assert vector.shape == (384,)


def test_a_message_in_an_unsupported_script_opens_and_says_why(decider):
    decision = decider.decide("नमस्ते, मुझे क्या खाना चाहिए?", {GATE: gate_question(), "r0": judge_question("x")})
    assert decision.answers[GATE] == 1.0 and decision.answers["r0"] == 1.0
    assert "Devanagari script" in decision.warnings[0]
    assert "supported: ar, de, en" in decision.warnings[0]
    assert decider.decide("hello there", {GATE: gate_question()}).warnings == []  # per call


def test_emoji_only_messages_close_the_gate_without_errors(decider):
    for text in ("👍", "🙏🙏", "😂😂😂"):
        decision = decider.decide(text, {GATE: gate_question()})
        assert decision.answers[GATE] < 0.5  # type: ignore[operator]
        assert decision.warnings == []


def test_right_to_left_controls_do_not_change_the_decision(decider):
    plain = _gate(decider, "ماذا يجب أن أطبخ لعائلتي الليلة؟")
    marked = _gate(decider, "\u202bماذا يجب أن أطبخ لعائلتي الليلة؟\u202c\u200f")
    assert plain >= 0.5 and marked == pytest.approx(plain, abs=1e-3)


# ---- the policy, end to end ---------------------------------------------------------------------


def _records(store):
    store.add_records(
        [MemoryRecord(actor_id="u", namespace="/facts/u", text=t, id=f"r{i}") for i, t in enumerate(RECORDS)]
    )


def test_default_store_and_decider_judge_a_spanish_message_against_english_records(tmp_path, decider):
    with open_store(f"sqlite:///{tmp_path}/m.db") as store:
        _records(store)
        policy = RecallPolicy(store, decider=decider, namespaces=NS)
        recall = policy.recall("¿Qué café me pido esta tarde?", actor_id="u")
        assert recall.trace.gate_open
        kept = [k.record.id for k in recall.records]
        assert kept and kept[0] == "r0"
        assert "r1" not in kept and "r4" not in kept
        assert policy.stats.errors_by_kind == {}


def test_multilingual_store_reuses_the_policy_vectors(tmp_path):
    decider = EmbeddedDecider()
    with open_store(f"sqlite:///{tmp_path}/m.db?embedder=multilingual") as store:
        _records(store)
        policy = RecallPolicy(store, decider=decider, namespaces=NS)
        policy.warm_up()
        ml = decider.multilingual_decider()
        assert ml is not None
        calls = (ml.embedder.calls, decider.embedder.calls)
        recall = policy.recall("Wie heißt mein Hund?", actor_id="u")
        assert [k.record.id for k in recall.records][:1] == ["r2"]
        # the query vector the store made was reused; the records carried their vectors
        assert ml.embedder.calls == calls[0] + 1  # the policy's own query embedding, nothing more
        assert decider.embedder.calls == calls[1]


def test_english_records_in_spanish_records_out(tmp_path, decider):
    """The reverse: records stored in Spanish, the message in English."""
    with open_store(f"sqlite:///{tmp_path}/es.db?embedder=multilingual") as store:
        store.add_records(
            [
                MemoryRecord(actor_id="u", namespace="/facts/u", text=t, id=k)
                for k, t in (
                    ("cafe", "Al usuario le encanta el café cortado sin azúcar."),
                    ("madre", "La madre del usuario, Carmen, vive en Sevilla."),
                    ("vuelo", "El usuario siempre pide asiento de pasillo."),
                )
            ]
        )
        recall = RecallPolicy(store, decider=decider, namespaces=NS).recall(
            "What coffee should I order?", actor_id="u"
        )
        assert [k.record.id for k in recall.records][:1] == ["cafe"]
        assert "madre" not in [k.record.id for k in recall.records]


def test_an_unsupported_message_goes_through_as_stock_with_a_note(tmp_path, decider):
    with open_store(f"sqlite:///{tmp_path}/m.db") as store:
        _records(store)
        recall = RecallPolicy(store, decider=decider, namespaces=NS).recall("Τι να πιω απόψε;", actor_id="u")
        assert recall.trace.gate_open and len(recall.records) == len(RECORDS)
        assert any("Greek script" in note for note in recall.trace.notes)
