"""Each step of the rules extractor on its own: split, rewrite, keep or drop, preference, topic."""

from __future__ import annotations

import pytest

from recallwise.extraction import RuleExtractor
from recallwise.extraction.clauses import clauses, normalise, sentences, strip_discourse
from recallwise.extraction.keep import is_preference, judge
from recallwise.extraction.person import rewrite, swap_pronouns, third_singular
from recallwise.extraction.topics import topic_of

# ---- step 1: sentences and clauses -----------------------------------------------------------


def test_sentences_keep_abbreviations_and_split_lines():
    assert sentences("Dr. Smith moved to the U.S. in 2019. I live in Oslo!\nI'm 34") == [
        "Dr. Smith moved to the U.S. in 2019.",
        "I live in Oslo!",
        "I'm 34",
    ]
    assert sentences("Ah ok. I prefer Python.") == ["Ah ok.", "I prefer Python."]


def test_chat_spellings_of_first_person_forms_are_normalised():
    assert (
        normalise("i dont eat meat, im vegan and ive got a cat")
        == "I don't eat meat, I'm vegan and I've got a cat"
    )
    assert normalise("i.e. it\u2019s fine \u2014 really") == "i.e. it's fine -- really"


def test_a_preference_after_but_is_a_clause_of_its_own():
    said = (
        "I've been wanting to unwind after work with some TV shows, but I tend to avoid anything with "
        "excessive violence or gore."
    )
    assert [(c.text, c.joined_by) for c in clauses(said)] == [
        ("I've been wanting to unwind after work with some TV shows", ""),
        ("I tend to avoid anything with excessive violence or gore", "but"),
    ]


@pytest.mark.parametrize(
    ("sentence", "parts"),
    [
        (
            "I usually prefer eco-friendly transportation since I have an aversion to motorized vehicles.",
            ["I usually prefer eco-friendly transportation", "I have an aversion to motorized vehicles"],
        ),
        ("My partner and I are saving for a trip.", ["My partner and I are saving for a trip"]),
        ("I'm so happy with it.", ["I'm so happy with it"]),
        ("I'm allergic to peanuts -- that one's serious.", ["I'm allergic to peanuts", "that one's serious"]),
        ("I'm trying to cut down, so decaf is my go-to.", ["I'm trying to cut down", "decaf is my go-to"]),
        ("I'm gluten intolerant, could that be related?", ["I'm gluten intolerant", "could that be related"]),
    ],
)
def test_clauses(sentence, parts):
    assert [c.text for c in clauses(sentence)] == parts


def test_asides_and_questions_are_marked():
    aside, question = clauses("I'm vegetarian -- for years now."), clauses("I like tea, what about you?")
    assert [c.kind for c in aside] == ["main", "aside"]
    assert [c.question for c in question] == [False, True]


def test_discourse_openers_go():
    assert strip_discourse("Oh and by the way, honestly, I'm a nurse") == "I'm a nurse"
    assert strip_discourse("Unrelated, but spicy food gives me heartburn") == "spicy food gives me heartburn"


# ---- step 2: the person rewrite --------------------------------------------------------------


@pytest.mark.parametrize(
    ("verb", "third"),
    [
        ("go", "goes"),
        ("try", "tries"),
        ("fix", "fixes"),
        ("watch", "watches"),
        ("tend", "tends"),
        ("have", "has"),
        ("'ve", "has"),
        ("do", "does"),
        ("don't", "doesn't"),
        ("haven't", "hasn't"),
        ("am", "is"),
        ("'m", "is"),
        ("'re", "is"),
        ("were", "was"),
        ("can", "can"),
        ("won't", "won't"),
        ("hadn't", "hadn't"),
        ("went", "went"),
        ("heard", "heard"),
        ("'ll", "will"),
        ("especially", None),  # not a verb: never "especiallies"
        ("to", None),  # never "toes"
        ("vlogg", None),  # unknown: not guessed at
    ],
)
def test_the_conjugation_table(verb, third):
    assert third_singular(verb) == third


@pytest.mark.parametrize(
    ("clause", "sentence"),
    [
        ("I tend to avoid overly complex interfaces", "The user tends to avoid overly complex interfaces."),
        ("I hadn't thought about a themed tour", "The user hadn't thought about a themed tour."),
        ("I haven't tried sushi yet", "The user hasn't tried sushi yet."),
        ("I'm not a fan of horror movies", "The user is not a fan of horror movies."),
        ("I'd rather not fly", "The user would rather not fly."),
        ("I'd been to Paris twice", "The user had been to Paris twice."),
        ("I'll never eat pork", "The user will never eat pork."),
        ("I do like jazz", "The user likes jazz."),
        ("I've got two cats", "The user has two cats."),
        ("I especially like historical fiction", "The user especially likes historical fiction."),
        ("I work night shifts and love it", "The user works night shifts and loves it."),
        ("I like dogs and cats", "The user likes dogs and cats."),
        ("we keep kosher at home", "The user keeps kosher at home."),
        (
            "we're organizing an event for our police department",
            "The user is organizing an event for their police department.",
        ),
        ("our kids are picky eaters", "The user's kids are picky eaters."),
        ("My husband is vegan", "The user's husband is vegan."),
        ("My partner and I are saving for a trip", "The user and their partner are saving for a trip."),
        ("me and my wife love hiking", "The user and their wife love hiking."),
        ("spicy food gives me heartburn", "Spicy food gives the user heartburn."),
        ("As a vegan I use tons of basil", "As a vegan, the user uses tons of basil."),
        ("I myself prefer tea", "The user prefers tea."),
        ("I love the things I make myself", "The user loves the things they make themselves."),
        ("I was a teacher before I was a nurse", "The user was a teacher before they were a nurse."),
        (
            "I'm happy when I'm with my friends and theirs is mine",
            ("The user is happy when they're with their friends and theirs is theirs."),
        ),
        ("My favourite cuisine is Vietnamese", "The user's favourite cuisine is Vietnamese."),
        ("decaf is my go-to", "The user's go-to is decaf."),
    ],
)
def test_rewrite(clause, sentence):
    statement = rewrite(clause)
    assert statement is not None and statement.sentence == sentence


@pytest.mark.parametrize(
    "clause", ["tell me more", "help me plan it", "that sounds great to me", "my bad", "thanks"]
)
def test_rewrite_refuses_what_is_not_a_statement_about_the_user(clause):
    assert rewrite(clause) is None


def test_every_first_person_form_is_swapped():
    assert swap_pronouns("me, my, mine, myself, we, us, our, ours, ourselves, I'm, I've, I'd, I'll, I") == (
        "them, their, theirs, themselves, they, them, their, theirs, themselves, they're, they've, they'd, "
        "they'll, they"
    )
    assert swap_pronouns("we moved to the US") == "they moved to the US"


# ---- step 3: keep or drop ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "reason"),
    [
        ("I hadn't considered that.", "says nothing alone"),
        ("I have tried some of those.", "says nothing alone"),
        ("I will check those out.", "plan for now"),
        ("I'm going to try it.", "plan for now"),
        ("I'm excited but a bit nervous.", "of the moment"),
        ("I love the idea of string lights!", "to the assistant"),
        ("I love your suggestion.", "to the assistant"),
        ("I'd like a drink.", "request"),
        ("I need help with my code.", "request"),
        ("I think so.", "conversational"),
        ("I heard they have an impressive selection.", "conversational"),
        ("We're trying a new Thai place tonight.", "of the moment"),
        ("Is it worth getting winter tires?", "question"),
        ("That sounds great.", "not about the user"),
    ],
)
def test_dropped_clauses_say_why(said, reason):
    (clause,) = clauses(said.rstrip(".!"))
    verdict = judge(clause, rewrite(clause.text))
    assert not verdict.keep and verdict.reason == reason


@pytest.mark.parametrize(
    "said",
    [
        "I'm afraid of heights",
        "I'm nervous around dogs",
        "I'm vegetarian",
        "I'm 34",
        "I need to avoid gluten",
        "I'll never eat pork",
        "my daughter is allergic to dairy",
        "I could eat pho every week",
    ],
)
def test_lasting_facts_are_kept(said):
    (clause,) = clauses(said)
    assert judge(clause, rewrite(clause.text)).keep


# ---- step 4: preferences and step 5: their topic -------------------------------------------


@pytest.mark.parametrize(
    ("clause", "preference"),
    [
        ("I tend to avoid gore", True),
        ("I only buy second-hand clothes", True),
        ("I get seasick on boats", True),
        ("I don't eat pork", True),
        ("we keep kosher", True),
        ("I'm vegetarian", False),  # a condition: a fact
        ("I'm allergic to peanuts", False),
        ("I'm a nurse", False),
        ("I live in Denver", False),
    ],
)
def test_is_preference(clause, preference):
    statement = rewrite(clause)
    assert statement is not None and is_preference(statement) is preference


def test_the_topic_comes_from_the_clause_not_the_message():
    message = "I switched to a French press for my coffee. I'm always looking to improve my technique."
    memories = RuleExtractor().message(message)
    # "always" makes the second a preference, but nothing in its sentence names a topic: a fact only,
    # never "When ordering coffee: Is always looking to improve their technique"
    assert [(m.kind, m.text) for m in memories] == [
        ("semantic", "The user switched to a French press for their coffee."),
        ("semantic", "The user is always looking to improve their technique."),
    ]
    assert (
        topic_of("I tend to avoid gore", "I watch TV shows, but I tend to avoid gore").name == "entertainment"
    )
    assert topic_of(
        "I hate climbing over people", "I always book an aisle seat, I hate climbing over people"
    ).name == (
        "flights"  # no topic word of its own: its sentence's
    )
    assert topic_of("I'm not into team sports").name == "fitness"  # "team sports", not "team" (work)
    assert topic_of("I prefer blue") is None


def test_a_compound_sentence_gives_its_preference_a_record_of_its_own():
    memories = RuleExtractor().message(
        "I've been wanting to unwind after work with some TV shows, but I tend to avoid anything with "
        "excessive violence or gore."
    )
    assert [(m.kind, m.context, m.text) for m in memories] == [
        ("semantic", None, "The user has been wanting to unwind after work with some TV shows."),
        ("semantic", None, "The user tends to avoid anything with excessive violence or gore."),
        (
            "user_preference",
            "Choosing music, films, shows or books",
            "Tends to avoid anything with excessive violence or gore",
        ),
    ]


def test_explain_shows_every_step():
    trace = RuleExtractor().explain("Thanks! I never eat pork, but I'll check those out.")
    assert [(t.clause, t.verdict.reason, t.preference, t.topic) for t in trace] == [
        ("Thanks", "not about the user", False, None),
        ("I never eat pork", "", True, "diet"),
        ("I'll check those out", "plan for now", False, None),
    ]
