"""The write path: rule extraction, consolidation, the LLM extractor, and `recallwise ingest`."""

from __future__ import annotations

import json

import httpx
import numpy as np
import pytest

from recallwise.cli import main
from recallwise.demo import persona, persona_events, persona_records, run_demo
from recallwise.errors import UsageError
from recallwise.extraction import (
    DUPLICATE_COSINE,
    PREFERENCE,
    SEMANTIC,
    ExtractedMemory,
    ExtractionError,
    LLMExtractor,
    OpenAIChat,
    RuleExtractor,
    consolidate,
    extract_and_store,
    make_extractor,
    parse_extraction,
    third_person,
)
from recallwise.records import Event, render_text
from recallwise.stores import SQLiteStore


def user(text: str, session: str = "s1", actor: str = "u1") -> Event:
    return Event(actor_id=actor, session_id=session, role="user", text=text)


# ---- rules --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "facts"),
    [
        ("I'm vegetarian.", ["The user is vegetarian."]),
        ("I am allergic to shellfish", ["The user is allergic to shellfish."]),
        ("I always book an aisle seat.", ["The user always books an aisle seat."]),
        ("I usually fly out of YVR.", ["The user usually flies out of YVR."]),
        ("I watch a lot of anime.", ["The user watches a lot of anime."]),
        ("I have two cats.", ["The user has two cats."]),
        ("I've got a sister in Lisbon.", ["The user has a sister in Lisbon."]),
        ("I could eat pho every week.", ["The user could eat pho every week."]),
        ("I don't eat pork.", ["The user doesn't eat pork."]),
        ("My favourite band is Radiohead.", ["The user's favourite band is Radiohead."]),
        ("Oat milk is my go-to now.", ["The user's go-to is Oat milk."]),
        (
            "My sister lives in Oslo and I visit her every summer.",
            # "her" is the sister: one record, not "The user visits her every summer." alone
            ["The user's sister lives in Oslo and the user visits her every summer."],
        ),
        (
            "I live in Vancouver, so I usually fly out of YVR.",
            ["The user lives in Vancouver.", "The user usually flies out of YVR."],
        ),
        (
            "I'm vegetarian, and I'm allergic to peanuts -- that one's serious.",
            ["The user is vegetarian.", "The user is allergic to peanuts (that one's serious)."],
        ),
        ("I really can't stand sparkling water.", ["The user can't stand sparkling water."]),
        ("I love my job, it keeps me busy.", ["The user loves their job, it keeps them busy."]),
        ("I moved to Lisbon in 2019.", ["The user moved to Lisbon in 2019."]),
        ("I'm 34.", ["The user is 34."]),
        # nothing to keep: questions, requests for this turn, filler, small talk
        ("I'd like a drink, what should I get?", []),
        ("What should I have for dinner?", []),
        ("I'd like the salmon please.", []),
        ("I think so.", []),
        ("I'm not sure.", []),
        ("I need help with my code.", []),
        ("Thanks!", []),
        ("ok cool", []),
        ("", []),
    ],
)
def test_rules_turn_first_person_statements_into_third_person_facts(said, facts):
    assert third_person(said) == facts


def test_rules_read_only_the_users_text():
    events = [
        Event("u1", "s1", "assistant", "I'm an AI assistant and I love helping."),
        Event("u1", "s1", "user", "I'm a nurse."),
        Event("u1", "s1", "tool", "I am a tool output."),
    ]
    memories = RuleExtractor().extract(events)
    assert [m.text for m in memories] == ["The user is a nurse."]
    assert memories[0].source_event_ids == [events[1].id]
    assert memories[0].session_id == "s1"


def test_rules_make_agentcore_shaped_preferences_under_the_right_topic():
    memories = RuleExtractor().extract(
        [user("I always book an aisle seat, I hate climbing over people."), user("Still water only, please.")]
    )
    prefs = [m for m in memories if m.kind == PREFERENCE]
    assert [(m.context, m.text) for m in prefs] == [
        ("Booking flights", "Always books an aisle seat"),
        ("Booking flights", "Hates climbing over people"),
        ("Ordering a drink or beverage", "Still water only"),
    ]
    assert prefs[0].categories == ["travel", "flights"]
    # a preference about no known topic stays a fact only
    assert [m.kind for m in RuleExtractor().extract([user("I prefer blue.")])] == [SEMANTIC]


# ---- the persona round trip ---------------------------------------------------------------

PERSONA_RECORDS = [
    "The user is trying to cut down on caffeine.",
    "The user's go-to is decaf oat flat white.",
    "The user can't stand sparkling water.",
    "The user is vegetarian.",
    "The user is allergic to peanuts (that one's serious).",
    "The user's favourite cuisine is Vietnamese.",
    "The user could eat pho every week.",
    "The user always books an aisle seat.",
    "The user hates climbing over people.",
    "The user lives in Vancouver.",
    "The user usually flies out of YVR.",
    "The user writes mostly Python.",
    "The user strongly prefers tabs-free code (four spaces).",
    "The user is a backend engineer, mostly working on distributed systems.",
    "The user has a dog called Biscuit, a very opinionated cocker spaniel.",
    "The user is trying to get to the gym three mornings a week before work.",
    # preferences: a cut-down and a habit count as preferences too, so coffee and
    # flights each carry one statement more than before; still one record per context
    "When ordering coffee: Is trying to cut down on caffeine; go-to is decaf oat flat white",
    "When ordering a drink or beverage: Can't stand sparkling water; still water only",
    "When choosing food or a meal: Favourite cuisine is Vietnamese",
    "When booking flights: Always books an aisle seat; hates climbing over people; usually flies out of YVR",
    "When writing code: Strongly prefers tabs-free code (four spaces)",
]


def test_persona_conversations_yield_the_expected_records():
    records = persona_records()
    assert [r.rendered for r in records] == PERSONA_RECORDS
    for record in records:
        if record.strategy == SEMANTIC:
            assert record.namespace == "/facts/demo_user" and record.text.startswith("The user")
        else:
            assert record.namespace == "/preferences/demo_user"
            assert list(json.loads(record.text)) == ["context", "preference", "categories"]


def test_persona_extraction_covers_every_example_record(minilm):
    """Each record persona.json shows as an example is matched by an extracted one."""
    examples = persona()["example_extracted_records"]
    wanted = examples["facts (SEMANTIC, prose)"] + [
        render_text(json.dumps(b)) for b in examples["preferences (USER_PREFERENCE, JSON)"]
    ]
    got = [r.rendered for r in persona_records()]
    similarity = minilm.embed(wanted) @ minilm.embed(got).T
    best = similarity.max(axis=1)
    assert best.min() >= 0.75, [w for w, b in zip(wanted, best, strict=True) if b < 0.75]
    assert best.mean() >= 0.88


def test_seeded_demo_store_comes_from_the_events_it_holds(store):
    from recallwise.demo import seed_persona

    added = seed_persona(store)
    assert added == len(PERSONA_RECORDS)
    assert len(store.list_events("demo_user")) == sum(len(t) for t in persona()["sessions"].values())
    assert sorted(r.rendered for r in store.list_records(actor_id="demo_user")) == sorted(PERSONA_RECORDS)
    assert seed_persona(store) == 0


# ---- consolidation ------------------------------------------------------------------------


def texts(store, namespace="/facts/u1"):
    return sorted(r.rendered for r in store.list_records(namespace, actor_id="u1"))


def test_a_repeated_fact_changes_nothing(store):
    first = extract_and_store(store, "u1", [user("I'm vegetarian.")])
    again = extract_and_store(store, "u1", [user("I'm vegetarian!", session="s2")])
    assert first.added == 1 and again.added == 0 and again.consolidation.unchanged == 1
    assert texts(store) == ["The user is vegetarian."]  # a condition: a fact, not a preference


def test_an_updated_fact_replaces_the_old_record(store):
    extract_and_store(store, "u1", [user("I live in Vancouver.")])
    old = store.list_records("/facts/u1")[0]
    result = extract_and_store(store, "u1", [user("I moved to Toronto last year.", session="s2")])
    assert result.updated == 1 and result.added == 0
    assert texts(store) == ["The user moved to Toronto last year."]
    new = store.list_records("/facts/u1")[0]
    assert (
        new.metadata["replaces"] == old.id and new.metadata["previous_text"] == "The user lives in Vancouver."
    )


def test_an_updated_go_to_replaces_the_old_one_in_fact_and_preference(store):
    extract_and_store(store, "u1", [user("Decaf oat flat white is my go-to.")])
    extract_and_store(store, "u1", [user("Oat cortado is my go-to now.", session="s2")])
    assert texts(store) == ["The user's go-to is Oat cortado."]
    assert texts(store, "/preferences/u1") == ["When ordering coffee: Go-to is Oat cortado"]


def test_preferences_in_one_context_accumulate_until_one_is_restated(store):
    extract_and_store(store, "u1", [user("I can't stand sparkling water.")])
    extract_and_store(store, "u1", [user("I love orange juice.", session="s2")])
    assert texts(store, "/preferences/u1") == [
        "When ordering a drink or beverage: Can't stand sparkling water; loves orange juice"
    ]
    result = extract_and_store(store, "u1", [user("I can't stand sparkling water.", session="s3")])
    assert result.updated == 0 and result.consolidation.unchanged >= 1
    assert len(store.list_records("/preferences/u1")) == 1


def test_near_paraphrases_merge_and_different_values_do_not(real_store):
    def add(text: str, session: str) -> None:
        consolidate(real_store, "u1", [ExtractedMemory(SEMANTIC, text, session_id=session)])

    add("The user is vegetarian.", "a")
    add("The user is a vegetarian.", "b")  # the same fact in other words: replaced
    assert texts(real_store) == ["The user is a vegetarian."]
    add("The user is vegan.", "c")  # a different fact: kept alongside
    assert texts(real_store) == ["The user is a vegetarian.", "The user is vegan."]


def test_one_conversations_near_duplicates_keep_the_more_specific_wording(real_store):
    result = extract_and_store(
        real_store,
        "u1",
        [
            user("We're organizing a community outreach event."),
            user("We're organizing a community outreach event for our police department."),
            user("I have a dog named Biscuit and a cat."),
            user("I have a dog named Biscuit."),  # says less than the record already there
        ],
    )
    assert texts(real_store) == [
        "The user has a dog named Biscuit and a cat.",
        "The user is organizing a community outreach event for their police department.",
    ]
    assert result.added == 2 and result.updated == 1 and result.consolidation.unchanged == 1


def test_a_later_session_replaces_by_key_negation_or_detail_and_never_by_less(real_store):
    extract_and_store(real_store, "u1", [user("I live in Vancouver. I like horror movies. I love hiking.")])
    extract_and_store(
        real_store,
        "u1",
        [user("I moved to Porto. I don't like horror movies. I love hiking in the mountains.", session="s2")],
    )
    assert texts(real_store) == [
        "The user doesn't like horror movies.",
        "The user loves hiking in the mountains.",
        "The user moved to Porto.",
    ]
    extract_and_store(real_store, "u1", [user("I love hiking.", session="s3")])
    assert "The user loves hiking in the mountains." in texts(real_store)
    assert texts(real_store, "/preferences/u1") == [
        "When choosing music, films, shows or books: Doesn't like horror movies",
        "When exercising: Loves hiking in the mountains",
    ]


def test_relation_between_two_memories():
    from recallwise.extraction.consolidate import relation

    assert relation("The user is vegetarian.", "the user is vegetarian") == "same"
    assert relation("The user doesn't eat pork.", "The user eats pork.") == "negated"
    assert (
        relation("The user has a dog named Rex.", "The user has a dog.") == "different"
    )  # one word: too little
    assert relation("The user has two cats and a dog.", "The user has two cats.") == "more specific"
    assert relation("The user has two cats.", "The user has two cats and a dog.") == "less specific"
    assert (
        relation("The user always books a window seat.", "The user always books an aisle seat.")
        == "different"
    )
    assert (
        relation("The user is vegan.", "The user is vegetarian.", cosine=0.87, threshold=0.93) == "different"
    )
    assert relation("The user is a vegetarian.", "The user is vegetarian.", cosine=0.98, threshold=0.93) == (
        "more specific"  # a tie in content goes to the newer wording
    )


def test_duplicate_threshold_separates_rewordings_from_different_facts(minilm):
    """The measurement behind DUPLICATE_COSINE (see consolidate.py)."""
    rewordings = [
        ("The user is vegetarian.", "The user is a vegetarian."),
        ("The user lives in Vancouver.", "The user lives in Vancouver, Canada."),
        ("The user always books an aisle seat.", "The user always books aisle seats."),
        ("The user has a dog called Biscuit.", "The user has a dog named Biscuit."),
        ("The user is trying to cut down on caffeine.", "The user is cutting down on caffeine."),
    ]
    different = [
        ("The user lives in Vancouver.", "The user lives in Toronto."),
        ("The user is vegetarian.", "The user is vegan."),
        ("The user is allergic to peanuts.", "The user is allergic to shellfish."),
        ("The user always books an aisle seat.", "The user always books a window seat."),
    ]

    def cosine(a: str, b: str) -> float:
        va, vb = minilm.embed([a, b])
        return float(np.dot(va, vb))

    assert min(cosine(a, b) for a, b in rewordings) >= DUPLICATE_COSINE
    assert max(cosine(a, b) for a, b in different) < DUPLICATE_COSINE
    facts = [r.text for r in persona_records() if r.strategy == SEMANTIC]
    vectors = minilm.embed(facts)
    pairwise = vectors @ vectors.T
    np.fill_diagonal(pairwise, -1.0)
    assert pairwise.max() < DUPLICATE_COSINE  # no two distinct persona facts would merge


def test_extraction_never_mixes_actors(store):
    with pytest.raises(UsageError, match="belongs to actor 'someone_else'"):
        extract_and_store(store, "u1", [user("I'm vegetarian."), user("I'm vegan.", actor="someone_else")])
    assert store.count_records() == 0


def test_an_actor_without_events_is_a_note_not_an_error(store):
    result = extract_and_store(store, "nobody")
    assert result.events == 0 and result.added == 0
    assert "no events for actor 'nobody'" in result.notes[0]


def test_extract_reads_the_actors_stored_events_by_default(store):
    for event in persona_events("p1"):
        store.create_event(event)
    result = extract_and_store(store, "p1")
    assert result.sessions == 5 and result.added == len(PERSONA_RECORDS)


# ---- LLM extractor ------------------------------------------------------------------------

CANNED = {
    "facts": [{"text": "The user lives in Oslo.", "topic": "Home City"}],
    "preferences": [
        {
            "context": "Ordering coffee",
            "preference": "Black, no sugar",
            "categories": ["Coffee"],
            "topic": "coffee",
        }
    ],
}


def chat_server(reply: str | None = None, status: int = 200):
    seen: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        if status != 200:
            return httpx.Response(status, text="upstream exploded")
        return httpx.Response(200, json={"choices": [{"message": {"content": reply}}]})

    return httpx.MockTransport(handler), seen


def test_llm_extractor_sends_the_packaged_prompt_and_parses_both_shapes():
    transport, seen = chat_server("```json\n" + json.dumps(CANNED) + "\n```")
    extractor = LLMExtractor(
        OpenAIChat("tiny", base_url="http://llm.local/v1", api_key="k", transport=transport)
    )
    events = [user("I moved to Oslo."), Event("u1", "s1", "assistant", "Nice!")]
    memories = extractor.extract(events)
    body = seen[0]
    assert body["model"] == "tiny" and body["temperature"] == 0.0
    assert "third person" in body["messages"][0]["content"]
    assert "USER: I moved to Oslo.\nASSISTANT: Nice!" in body["messages"][1]["content"]
    fact, pref = memories
    assert (fact.kind, fact.text, fact.key) == (SEMANTIC, "The user lives in Oslo.", "home city")
    assert (pref.kind, pref.context, pref.text, pref.categories) == (
        PREFERENCE,
        "Ordering coffee",
        "Black, no sugar",
        ["coffee"],
    )
    assert fact.source_event_ids == [events[0].id] and fact.session_id == "s1"


def test_llm_extractor_memories_consolidate_like_any_other(store):
    transport, _ = chat_server(json.dumps(CANNED))
    extractor = LLMExtractor(OpenAIChat("tiny", base_url="http://llm.local/v1", transport=transport))
    result = extract_and_store(store, "u1", [user("I moved to Oslo.")], extractor=extractor)
    assert result.added == 2 and result.extractor == "llm:openai:tiny"
    assert texts(store, "/preferences/u1") == ["When ordering coffee: Black, no sugar"]


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("sorry, I cannot help", "not JSON"),
        ('{"facts": [{"topic": "x"}]}', r"facts\[0\] has no 'text'"),
        ('{"preferences": [{"preference": "x"}]}', r"preferences\[0\] has no 'context'"),
        ('{"preferences": [{"context": "c", "preference": "p", "categories": "coffee"}]}', "not a list"),
        ("[1, 2]", "not a JSON object"),
    ],
)
def test_bad_model_replies_are_errors_naming_the_session(reply, message):
    transport, _ = chat_server(reply)
    extractor = LLMExtractor(OpenAIChat("tiny", base_url="http://llm.local/v1", transport=transport))
    with pytest.raises(ExtractionError, match=message) as info:
        extractor.extract([user("I moved to Oslo.", session="trip")])
    assert "session 'trip'" in str(info.value)


def test_an_unreachable_or_failing_model_is_an_error():
    transport, seen = chat_server(status=500)
    extractor = LLMExtractor(OpenAIChat("tiny", base_url="http://llm.local/v1", transport=transport))
    with pytest.raises(ExtractionError, match=r"HTTP 500.*upstream exploded") as info:
        extractor.extract([user("I moved to Oslo.")])
    assert info.value.status == 500 and len(seen) == 1  # an answered request is not sent again
    assert parse_extraction('{"facts": []}') == []
    assert LLMExtractor(OpenAIChat("tiny", transport=transport)).extract([]) == []


def test_bedrock_extractor_through_converse():
    boto3 = pytest.importorskip("boto3")
    from botocore.awsrequest import AWSResponse

    from recallwise.extraction import BedrockChat

    requests = []

    def converse(model, params, **_):
        requests.append(json.loads(params["body"]))
        reply = {"output": {"message": {"role": "assistant", "content": [{"text": json.dumps(CANNED)}]}}}
        return AWSResponse("https://bedrock.local", 200, {}, None), reply

    session = boto3.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1")
    session.events.register("before-call.bedrock-runtime.Converse", converse)
    memories = LLMExtractor(BedrockChat("some-model", boto_session=session)).extract(
        [user("I moved to Oslo.")]
    )
    assert [m.text for m in memories] == ["The user lives in Oslo.", "Black, no sugar"]
    assert requests[0]["system"][0]["text"].startswith("You extract long-term memories")


def test_make_extractor_names_and_mistakes():
    assert make_extractor("rules").name == "rules"
    with pytest.raises(UsageError, match="unknown extractor"):
        make_extractor("magic")
    with pytest.raises(UsageError, match="needs a model name"):
        make_extractor("openai")


# ---- recallwise ingest --------------------------------------------------------------------


@pytest.fixture
def persona_jsonl(tmp_path):
    path = tmp_path / "persona.jsonl"
    with path.open("w") as handle:
        for session_id, turns in persona()["sessions"].items():
            messages = [{"role": role.lower(), "text": text} for role, text in turns]
            handle.write(json.dumps({"session_id": session_id, "messages": messages}) + "\n")
    return path


def ingest(capsys, *args):
    code = main(["ingest", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_ingest_builds_the_demo_store(tmp_path, capsys, persona_jsonl, minilm):
    url = f"sqlite:///{tmp_path}/demo.db"
    code, out, _ = ingest(capsys, persona_jsonl, "--actor", "demo_user", "--store", url, "--json")
    report = json.loads(out)
    assert code == 0 and report["events_loaded"] == 20 and report["records_added"] == len(PERSONA_RECORDS)
    assert report["sessions"] == sorted(persona()["sessions"])
    with SQLiteStore(url, embedder=minilm) as store:
        assert sorted(r.rendered for r in store.list_records(actor_id="demo_user")) == sorted(PERSONA_RECORDS)
        result = run_demo(store, decider=None)
    assert result.seeded == 0  # the ingested records are the demo's records
    # running the same file again loads nothing twice
    code, out, _ = ingest(capsys, persona_jsonl, "--actor", "demo_user", "--store", url, "--json")
    again = json.loads(out)
    assert code == 0 and again["events_loaded"] == 0 and again["events_already_loaded"] == 20


def test_ingest_reports_malformed_lines_by_number_and_loads_the_rest(tmp_path, capsys):
    path = tmp_path / "chat.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"session_id": "s1", "role": "user", "text": "I'm vegetarian."}),
                "{not json",
                "",
                json.dumps({"session_id": "s1", "role": "robot", "text": "beep"}),
                json.dumps({"actor_id": "someone_else", "role": "user", "text": "I live in Oslo."}),
                json.dumps(
                    {"role": "user", "content": [{"image": {"format": "png"}}, {"text": "I have a cat."}]}
                ),
                json.dumps([1, 2]),
                json.dumps({"session_id": "../x", "role": "user", "text": "hi"}),
                json.dumps({"role": "assistant", "toolUse": {}}),
            ]
        )
        + "\n"
    )
    url = f"sqlite:///{tmp_path}/m.db"
    code, out, err = ingest(capsys, path, "--actor", "u1", "--store", url)
    assert code == 1
    assert [line.split(":")[1] for line in err.strip().splitlines()] == ["2", "4", "5", "7", "8", "9"]
    assert "not JSON" in err and "'robot'" in err and "someone_else" in err and "'../x'" in err
    assert "6 malformed line(s) skipped" in out and "loaded 2 events" in out
    with SQLiteStore(url) as store:
        assert sorted(r.rendered for r in store.list_records("/facts/u1")) == [
            "The user has a cat.",
            "The user is vegetarian.",
        ]
        assert {e.session_id for e in store.list_events("u1")} == {"s1", "chat"}
    code, out, err = ingest(capsys, path, "--actor", "u1", "--store", url, "--json")
    report = json.loads(out)  # exactly one JSON object, errors inside it
    assert code == 1 and err == "" and [e["line"] for e in report["errors"]] == [2, 4, 5, 7, 8, 9]


def test_ingest_an_empty_file(tmp_path, capsys):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")
    code, out, _ = ingest(capsys, path, "--actor", "u1", "--store", f"sqlite:///{tmp_path}/m.db", "--json")
    report = json.loads(out)
    assert code == 0 and report["events_loaded"] == 0 and report["records_added"] == 0
    assert report["notes"] == [f"{path} is empty: nothing to ingest"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.jsonl", "--actor", "u1"], "no such file"),
        (["{file}", "--actor", "a/b"], "invalid --actor"),
        (["{file}", "--actor", "u1", "--extractor", "openai"], "needs a model name"),
    ],
)
def test_ingest_usage_mistakes_are_one_line_and_exit_2(tmp_path, capsys, args, message):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"role": "user", "text": "I'm vegetarian."}) + "\n")
    args = [a.replace("{file}", str(path)) for a in args]
    code, _, err = ingest(capsys, *args, "--store", f"sqlite:///{tmp_path}/m.db")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_the_chat_client_is_the_shared_one_with_its_error_mapping():
    # The extractor talks through recallwise.http.JsonClient, as the deciders do: the same
    # statuses mean the same things, raised as extraction errors.
    requests: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        key = request.headers.get("authorization")
        if key != "Bearer good":
            return httpx.Response(
                401, json={"error": {"message": "Incorrect API key", "type": "invalid_api_key"}}
            )
        return httpx.Response(200, text="<html>proxy error</html>")

    transport = httpx.MockTransport(answer)
    with pytest.raises(ExtractionError, match=r"check the API key.*Incorrect API key") as info:
        OpenAIChat("tiny", base_url="http://llm.local/v1", api_key="bad", transport=transport).complete(
            "s", "u"
        )
    assert info.value.backend_kind == "invalid_api_key" and info.value.status == 401
    assert str(requests[-1].url) == "http://llm.local/v1/chat/completions"
    with pytest.raises(ExtractionError, match="not valid JSON") as info:
        OpenAIChat("tiny", base_url="http://llm.local/v1", api_key="good", transport=transport).complete(
            "s", "u"
        )
    assert info.value.backend_kind == "invalid_json"


def test_a_reply_without_text_is_an_error():
    transport, _ = chat_server()
    with pytest.raises(ExtractionError, match="no text content"):
        OpenAIChat("tiny", base_url="http://llm.local/v1", transport=transport).complete("s", "u")
    shapeless = httpx.MockTransport(lambda request: httpx.Response(200, json={"choices": []}))
    with pytest.raises(ExtractionError, match="unexpected response shape"):
        OpenAIChat("tiny", base_url="http://llm.local/v1", transport=shapeless).complete("s", "u")
