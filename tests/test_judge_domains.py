"""The embedded judge's life domains: each domain's prototypes, a text's affinity to a domain (the
mean of its two closest prototypes), and the per-record cache of what the judge knows of a record
before any message."""

import json
from importlib import resources

import numpy as np
import pytest

from recallwise.deciders.constraints import constraint_kinds
from recallwise.deciders.embedded import EmbeddedDecider, EmbeddedParams, domain_names, domain_prototypes

RECORDS = [
    "The user is allergic to peanuts.",
    "The user always books an aisle seat.",
    "The user's go-to is a decaf oat flat white.",
    "The user writes mostly Python.",
]


@pytest.fixture(scope="module")
def decider() -> EmbeddedDecider:
    return EmbeddedDecider()


def test_each_domain_is_its_description_and_the_things_it_lists() -> None:
    bank = json.loads(resources.files("recallwise.data").joinpath("domains.json").read_text())
    prototypes = domain_prototypes()
    assert [p[0] for p in prototypes] == [d["description"] for d in bank]
    assert len(prototypes) == len(domain_names())
    food = prototypes[domain_names().index("food")]
    # "food allergies and intolerances" is two things; the closing full stop is not part of one
    assert "food allergies" in food and "intolerances" in food and "ingredients they dislike" in food
    for group in prototypes:
        assert len(group) >= 3 and len(set(group)) == len(group) and all(p.strip() == p for p in group)


def test_affinity_is_the_mean_of_the_two_closest_prototypes(decider: EmbeddedDecider) -> None:
    vectors = decider.embedder.embed(RECORDS)
    affinity = decider.domain_affinity(vectors)
    assert affinity.shape == (len(RECORDS), len(domain_names()))
    for d, group in enumerate(domain_prototypes()):
        similarity = np.sort(vectors @ decider.embedder.embed(group).T, axis=1)
        assert np.allclose(affinity[:, d], similarity[:, -2:].mean(axis=1), atol=1e-5)
    names = domain_names()
    best = [names[i] for i in affinity.argmax(axis=1)]
    assert best[1] == "travel" and best[3] == "coding"


def test_the_peanut_allergy_bears_on_dinner_and_the_aisle_seat_does_not(decider: EmbeddedDecider) -> None:
    message, records = (
        decider.embedder.embed(["What should I have for dinner?"]),
        decider.embedder.embed(RECORDS),
    )
    terms = decider._judge_terms(message[0], records)
    assert domain_names()[int(np.argmax(terms.state_domains))] == "food"
    assert terms.domain[0] > terms.domain[1] and terms.domain[0] > terms.domain[3]


#: records of a standing-constraint kind, none of them a prototype text, then two that are not
CONSTRAINTS = [
    "The user doesn't eat meat or fish.",
    "The user has twin daughters aged 9.",
    "The user is paying off a loan and keeps purchases small.",
    "The user lives in Leeds.",
    "The user has a sprained ankle.",
    "The user loves jazz.",
    "The user always books an aisle seat.",
]


def _known_miss(message: str, bearing: int, reason: str) -> object:
    """A case the term does not reach yet: a strict xfail, so the day it holds the suite says so."""
    return pytest.param(message, bearing, marks=pytest.mark.xfail(strict=True, reason=reason))


@pytest.mark.parametrize(
    ("message", "bearing"),
    [
        ("Suggest something I could bake this weekend", 0),
        _known_miss(
            "Help me plan a road trip the whole family will enjoy",
            1,
            "the request's affinity to the household kind's requests is 0.49, just below its floor "
            "(0.50; at 0.45 'What should I drink this afternoon?' lifted the allergy above the flat white)",
        ),
        ("Should I get the 85-inch television?", 2),
        _known_miss(
            "Are there any good bookshops close by?",
            3,
            "'close by' is a word the embedding reads little of: the request's affinity to the "
            "location kind is 0.36 (bookshops lead), below its floor (0.50)",
        ),
        ("Plan a long walk in the hills for Sunday", 4),
    ],
)
def test_a_standing_constraint_bears_on_the_requests_of_its_kind(
    decider: EmbeddedDecider, message: str, bearing: int
) -> None:
    """The term is high for the record of the kind that bears on the request and near 0 for the
    records that are no standing constraint (a preference of the request's own domain is the
    life-domain term's to keep). Another kind may bear too: the ankle on a family road trip."""
    vectors = decider.embedder.embed([message, *CONSTRAINTS])
    bears = decider._judge_terms(vectors[0], vectors[1:]).bears
    assert bears[bearing] > 0.5, bears.round(3)
    assert bears[-2:].max() < 0.1, bears.round(3)


@pytest.mark.parametrize(
    "message", ["What is the tallest mountain in Africa?", "Write a limerick about cats", "Fix this regex"]
)
def test_no_standing_constraint_bears_on_a_general_request(decider: EmbeddedDecider, message: str) -> None:
    vectors = decider.embedder.embed([message, *CONSTRAINTS])
    assert decider._judge_terms(vectors[0], vectors[1:]).bears.max() < 0.1


def test_record_terms_are_cached_by_vector_and_forgotten_on_request() -> None:
    decider = EmbeddedDecider(params=EmbeddedParams(record_cache_size=3))
    vectors = decider.embedder.embed(RECORDS)
    first = decider.record_terms(vectors)
    assert first.shape == (len(RECORDS), 1 + len(domain_names()) + len(constraint_kinds()))
    assert len(decider._record_terms) == 3  # the oldest one was replaced
    assert vectors[0] not in decider._record_terms
    assert all(v in decider._record_terms for v in vectors[1:])
    bank = decider._generic_bank

    def no_bank() -> np.ndarray:  # the cached rows need no product with the banks
        raise AssertionError("a cached record's terms were computed again")

    decider._generic_bank = no_bank  # type: ignore[method-assign]
    again = decider.record_terms(vectors[1:])
    assert np.array_equal(again, first[1:])  # the cached rows, exactly
    decider._generic_bank = bank  # type: ignore[method-assign]
    # a vector that differs in one bit is not the cached one
    nudged = np.array(vectors[1], dtype=np.float32)
    nudged.view(np.uint32)[-1] ^= 1
    assert nudged not in decider._record_terms
    # what is cached is what a fresh decider computes
    fresh = EmbeddedDecider(params=EmbeddedParams(record_cache_size=0))
    assert np.array_equal(fresh.record_terms(vectors), first)
    assert len(fresh._record_terms) == 0
    decider.forget_records()
    assert len(decider._record_terms) == 0
    assert np.array_equal(decider.record_terms(vectors), first)
    assert decider.record_terms(np.zeros((0, vectors.shape[1]), dtype=np.float32)).shape == first[:0].shape


def test_episodic_judging_reads_no_life_domains(decider: EmbeddedDecider) -> None:
    """``judge_domains=False``: the ranking score has no life-domain term (it ranked LoCoMo's
    evidence worse)."""
    message, records = (
        decider.embedder.embed(["What should I have for dinner?"]),
        decider.embedder.embed(RECORDS),
    )
    episodic = decider.without_domain_table()
    cosine, typical = decider._judge_terms(message[0], records)[:2]
    assert episodic.params.domain_weight == 0.0 and episodic.params.constraint_weight == 0.0
    assert np.allclose(episodic.judge_scores(message[0], records), cosine - typical)
    assert not np.allclose(decider.judge_scores(message[0], records), cosine - typical)
