"""The write path keeps what people tell it: requests to remember, preferences said inside a request,
names, places and times, and records that stand alone; and a write that stores nothing says why
(Python, the REST events route, the MCP ``remember`` tool)."""

from __future__ import annotations

import json

import pytest

from recallwise import Event, open_store
from recallwise.extraction import RuleExtractor, extract_and_store, extract_memories
from recallwise.extraction.base import PREFERENCE, SEMANTIC
from recallwise.extraction.explicit import explicit_request

REQUEST_WORDS = ("remember", "note", "don't forget", "keep in mind", "for future reference", "please")


def said(text: str) -> list[str]:
    """The facts (third-person records) the default write path keeps from one user message."""
    events = [Event(actor_id="a", session_id="s", role="user", text=text)]
    return [m.text for m in extract_memories(events) if m.kind == SEMANTIC]


def preferences(text: str) -> list[tuple[str, str]]:
    return [(m.context or "", m.text) for m in RuleExtractor().message(text) if m.kind == PREFERENCE]


# ---- 1. a request to remember is always kept, without its request words -------------------------
@pytest.mark.parametrize(
    ("text", "record"),
    [
        ("remember I'm vegetarian", "The user is vegetarian."),
        ("Remember that I'm vegetarian.", "The user is vegetarian."),
        ("Please remember: I am vegetarian", "The user is vegetarian."),
        ("please remember that I am vegetarian", "The user is vegetarian."),
        ("Note: I prefer window seats.", "The user prefers window seats."),
        ("note that I take the train to work", "The user takes the train to work."),
        ("Note I'm allergic to shellfish.", "The user is allergic to shellfish."),
        ("don't forget I hate cilantro", "The user hates cilantro."),
        ("Don't forget that I'm allergic to penicillin!", "The user is allergic to penicillin."),
        ("Keep in mind I drive an electric car.", "The user drives an electric car."),
        ("keep in mind that we keep kosher", "The user keeps kosher."),
        ("For future reference, I work from home on Fridays.", "The user works from home on Fridays."),
        ("For future reference: I prefer bullet points.", "The user prefers bullet points."),
        (
            "Can you remember that my daughter Maya is allergic to eggs?",
            "The user's daughter Maya is allergic to eggs.",
        ),
        ("I'd like you to remember that I'm diabetic.", "The user is diabetic."),
        ("Make a note that I prefer hotels with a gym.", "The user prefers hotels with a gym."),
        ("Just so you know, I have a peanut allergy.", "The user has a peanut allergy."),
        ("FYI I don't eat pork, remember that.", "The user doesn't eat pork."),
        ("Oh and don't forget I hate olives.", "The user hates olives."),
        # kept although said in passing it would not be: a plan, a want
        ("Please remember: I want vegan recipes only.", "The user wants vegan recipes only."),
        ("Remember that I'm flying to Lisbon on the 3rd.", "The user is flying to Lisbon on the 3rd."),
    ],
)
def test_a_request_to_remember_is_kept_as_a_third_person_record(text: str, record: str) -> None:
    records = said(text)
    assert record in records, records
    assert not any(r.lower().startswith(REQUEST_WORDS) for r in records), records


def test_a_request_sentence_makes_the_rest_of_its_message_what_to_keep() -> None:
    assert said("Please remember this: I'd like a window seat on every flight.") == [
        "The user would like a window seat on every flight."
    ]
    # said in passing, "I'd like ..." is a request for this conversation, not a lasting fact
    assert said("I'd like a window seat on every flight.") == []


def test_remember_that_is_not_a_request_everywhere() -> None:
    for text in (
        "Remember when we went to Paris?",
        "I need to remember to buy milk.",
        "Note-taking apps are great.",
    ):
        assert explicit_request(text) is None, text
    assert said("Remember when we went to Paris?") == []


def test_what_someone_else_is_remembered_as_said() -> None:
    assert said("Remember that Tom's birthday is May 3.") == ["Tom's birthday is May 3."]


# ---- 2. preferences, constraints and facts said inside a question or request -------------------
@pytest.mark.parametrize(
    ("text", "record"),
    [
        (
            "Since I can't eat gluten, could you suggest a bakery for my birthday cake?",
            "The user can't eat gluten.",
        ),
        (
            "As someone who only buys secondhand clothes, where can I find a suit for an interview?",
            "The user only buys secondhand clothes.",
        ),
        ("I guess that's why I never watch horror films.", "The user never watches horror films."),
        ("Any ideas that don't involve swimming?", "The user wants options that don't involve swimming."),
        ("I'm allergic to wool, can you suggest a warm hat?", "The user is allergic to wool."),
        ("I'm lactose intolerant, what cheese can I eat?", "The user is lactose intolerant."),
        ("I'm vegetarian, so what should I order at a steakhouse?", "The user is vegetarian."),
        (
            "I usually shop at farmers markets, what's in season in October?",
            "The user usually shops at farmers markets.",
        ),
        ("I always avoid spicy food. What Indian dishes are mild?", "The user always avoids spicy food."),
        ("I never eat fast food, so what can I pack for a long drive?", "The user never eats fast food."),
        (
            "Because I get seasick, I avoid boat tours. What else is there to do in Split?",
            "The user avoids boat tours because they get seasick.",
        ),
        (
            "I usually prefer eco-friendly transportation since I have an aversion to motorized vehicles.",
            "The user usually prefers eco-friendly transportation since they have an aversion to motorized"
            " vehicles.",
        ),
        (
            "As a teacher, I have summers off. Where could I go for six weeks?",
            "As a teacher, the user has summers off.",
        ),
    ],
)
def test_what_is_said_inside_a_request_is_kept(text: str, record: str) -> None:
    assert record in said(text), said(text)


def test_the_reason_is_in_the_same_record_as_the_preference() -> None:
    records = said("Because I work nights, I sleep during the day. Which blackout curtains work best?")
    assert records == ["The user sleeps during the day because they work nights."]
    assert preferences("I love hiking because it's relaxing.") == [
        ("Exercising", "Loves hiking because it's relaxing")
    ]


# ---- 3. names, places and times survive ----------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "record"),
    [
        ("My son Leo is 4.", "The user's son Leo is 4."),
        (
            "Last summer we went to Kyoto and I loved the temples.",
            "The user went to Kyoto last summer and loved the temples.",
        ),
        ("Last spring, we went to Lisbon.", "The user went to Lisbon last spring."),
        (
            "In 2019 I visited Peru and hiked the Inca Trail.",
            "The user visited Peru and hiked the Inca Trail in 2019.",
        ),
        ("I moved to Denver in 2022.", "The user moved to Denver in 2022."),
        (
            "My partner Sam is a nurse who works night shifts.",
            "The user's partner Sam is a nurse who works night shifts.",
        ),
        (
            "Me and my sister Priya go hiking every spring.",
            "The user and their sister Priya go hiking every spring.",
        ),
    ],
)
def test_names_places_and_times_survive(text: str, record: str) -> None:
    assert record in said(text), said(text)


# ---- 4. every record stands alone -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "records"),
    [
        (
            "I own a few pairs of heels, but I find them uncomfortable.",
            ["The user owns a few pairs of heels but finds them uncomfortable."],
        ),
        (
            "I like sci-fi novels but I tend to avoid fantasy-themed ones.",
            ["The user likes sci-fi novels but tends to avoid fantasy-themed ones."],
        ),
        (
            "I get invited to a lot of parties and I tend to decline.",
            ["The user gets invited to a lot of parties and tends to decline."],
        ),
        ("I have two cats. I love them.", ["The user has two cats and loves them."]),
        ("I have a sister. She's a pole dancer.", ["The user has a sister and she's a pole dancer."]),
        (
            "My mother lives in Porto, and I visit her every December.",
            ["The user's mother lives in Porto and the user visits her every December."],
        ),
        (
            "I avoid caffeine because it makes me anxious.",
            ["The user avoids caffeine because it makes them anxious."],
        ),
        ("I love pizza. I call her every day.", ["The user loves pizza."]),
        (
            "I like to shop and I like to go to the movies.",
            ["The user likes to shop.", "The user likes to go to the movies."],
        ),
        (
            "I tried wool sweaters, but they make me itch.",
            ["The user tried wool sweaters but they make the user itch."],
        ),
        # what the pointer points at is not in the message: nothing is written
        ("I find them uncomfortable.", []),
        ("I tend to avoid fantasy-themed ones.", []),
        ("Honestly I tend to decline.", []),
    ],
)
def test_every_record_stands_alone(text: str, records: list[str]) -> None:
    assert said(text) == records


# ---- 5. a topic only where the words decide it ----------------------------------------------------
def test_topics_are_right_or_none() -> None:
    assert preferences("I don't like water sports, so what else is there to do in Maui?") == [
        ("Exercising", "Doesn't like water sports")
    ]
    assert preferences("I avoid anything made of wool because I'm allergic to it.") == [
        ("Health and accessibility", "Avoids anything made of wool because they're allergic to it")
    ]
    assert preferences("I prefer sparkling water with dinner.")[0][0] != "Exercising"
    # a tie between two topics files the preference under neither: it stays a fact
    assert preferences("I love jazz and yoga.") == []
    assert said("I love jazz and yoga.") == ["The user loves jazz and yoga."]


# ---- a write that stores nothing says why ----------------------------------------------------------
def test_extract_and_store_says_why_each_message_stored_nothing(tmp_path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'm.db'}")

    def event(text: str, role: str = "user") -> Event:
        return Event(actor_id="a", session_id="s", role=role, text=text)

    result = extract_and_store(
        store,
        "a",
        [event("What should I cook tonight?"), event("Pasta!", "assistant"), event("remember I'm vegan")],
        store_events=True,
    )
    outcomes = result.as_dict()["messages"]
    assert [m["stored"] for m in outcomes] == [0, 0, 1]
    assert "asks something" in outcomes[0]["reason"]
    assert "only the user's own messages" in outcomes[1]["reason"]
    assert "reason" not in outcomes[2] and result.why_nothing is None
    again = extract_and_store(store, "a", [event("Remember: I'm vegan.")], store_events=True)
    assert again.added == 0 and again.why_nothing is not None
    assert "already remembered" in again.why_nothing
    store.close()


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Souviens-toi que je suis végétarien.", "French"),
        ("Recuerda que soy vegetariano.", "Spanish"),
        ("Bitte merk dir, dass ich Vegetarier bin.", "German"),
        ("Ricorda che sono vegetariano.", "Italian"),
    ],
)
def test_a_request_in_another_language_is_told_it_was_not_stored(tmp_path, text: str, language: str) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'm.db'}")
    result = extract_and_store(store, "a", [Event(actor_id="a", session_id="s", role="user", text=text)])
    assert result.added == 0
    assert result.why_nothing == (
        f"nothing stored: message 0: a request to remember in {language}: the offline rules read English "
        "only (an LLM extractor reads any language)"
    )
    store.close()


@pytest.mark.slow
def test_the_events_route_says_why_it_stored_nothing(local) -> None:
    with local.client() as client:
        body = client.post(
            "/v1/events",
            json={
                "actor_id": "newcomer",
                "messages": [{"role": "user", "text": "What should I cook tonight?"}],
            },
        ).json()
        assert body["added"] == 0 and "asks something" in body["note"]
        assert body["messages"][0]["reason"].startswith("nothing lasting about the user")
        stored = client.post(
            "/v1/events",
            json={
                "actor_id": "newcomer",
                "messages": [{"role": "user", "text": "Please remember: I am vegetarian"}],
            },
        ).json()
        assert stored["added"] == 1 and "note" not in stored
        assert [r["text"] for r in stored["records"]] == ["The user is vegetarian."]


async def test_the_mcp_remember_tool_says_why_it_stored_nothing(tmp_path) -> None:
    pytest.importorskip("mcp")
    pytest.importorskip("fastapi")
    from mcp import Client

    from recallwise.serve.mcp import build_mcp_server
    from recallwise.serve.service import MemoryService

    service = MemoryService.open(open_store(f"sqlite:///{tmp_path / 'm.db'}"), batch_embeddings=False)
    try:
        async with Client(build_mcp_server(service, actor_id="u1")) as client:
            nothing = await client.call_tool("remember", {"text": "Hello there!"})
            body = nothing.structured_content
            assert not nothing.is_error and body["added"] == 0
            assert body["note"].startswith("nothing stored: message 0:"), json.dumps(body)
            kept = await client.call_tool("remember", {"text": "don't forget I hate cilantro"})
            body = kept.structured_content
            assert body["added"] == 1 and "note" not in body
            assert [r["text"] for r in body["records"] if r["strategy"] == "semantic"] == [
                "The user hates cilantro."
            ]
    finally:
        service.close()
