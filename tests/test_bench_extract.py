"""`recallwise bench extract`: its graders, its data loader, its report, the LLM extractor through it."""

from __future__ import annotations

import json

import httpx
import pytest

from recallwise.bench.extract import (
    broken_english,
    carries,
    filed_under,
    first_person,
    fragment,
    load_conversations,
    request_words,
    run_extract_bench,
    unresolved_pronoun,
)
from recallwise.cli import main
from recallwise.errors import UsageError
from recallwise.extraction import LLMExtractor, OpenAIChat

CONVERSATIONS = [
    {
        "id": "c1",
        "source": "written",
        "messages": [
            {"role": "user", "text": "What's a good way to wind down after work?"},
            {"role": "assistant", "text": "A walk, a shower, or something light to watch."},
            {
                "role": "user",
                "text": "I've been wanting to unwind with some TV shows, but I tend to avoid anything with "
                "excessive violence or gore.",
            },
            {"role": "assistant", "text": "Comfort shows and nature documentaries are good for that."},
            {"role": "user", "text": "Thanks, I'll check those out."},
        ],
        "facts": [],
        "preference": "avoid anything with excessive violence or gore",
        "question": "Can you suggest a TV series I could start this weekend?",
    },
    {
        "id": "c2",
        "source": "outside",
        "messages": [
            {"role": "user", "text": "I have a german shepherd named Barnaby."},
            {"role": "assistant", "text": "Great name!"},
        ]
        * 5,
        "facts": ["I have a german shepherd named barnaby.", "My favorite color is grey."],
    },
]


@pytest.fixture
def data_dir(tmp_path):
    directory = tmp_path / "data"
    directory.mkdir()
    (directory / "set.jsonl").write_text("\n".join(json.dumps(c) for c in CONVERSATIONS) + "\n")
    return directory


# ---- graders ------------------------------------------------------------------------------


def test_carries_needs_two_thirds_of_the_facts_content_words_by_lemma():
    fact = "avoid anything with excessive violence or gore"
    assert carries("The user tends to avoid anything with excessive violence or gore.", fact)
    assert carries("When choosing shows: Avoids excessive violence and gore", fact)
    assert not carries("The user has been wanting to unwind after work with some TV shows.", fact)
    assert carries("The user doesn't eat pork.", "I don't eat pork")
    assert not carries("The user eats pork.", "I don't eat pork")  # the negation is a content word


def test_first_person_leftovers():
    assert first_person("a community outreach event for our police department") == ["our"]
    assert first_person("The user's mom passed away when i was young.") == ["i"]
    assert first_person("The user moved to the US in 2019.") == []


@pytest.mark.parametrize(
    "record",
    [
        "The user tend toes avoid overly complex interfaces.",
        "The user hadn'ts thought about a themed tour, but it makes perfect sense.",
        "The user haven'ts tried those yet",
        "The user heards they have an impressive selection.",
        "The user especiallies like historical fiction.",
        "They has two cats.",
        "The user likes to avoids gore.",
    ],
)
def test_broken_english_is_caught(record):
    said = (
        "I tend to avoid overly complex interfaces. I hadn't thought about it. I haven't tried those. "
        "I heard. I especially like historical fiction. two cats gore"
    )
    assert broken_english(record, said)


@pytest.mark.parametrize(
    "record",
    [
        "The user tends to avoid overly complex interfaces.",
        "The user read a lot as a child.",
        "When booking flights: Always books an aisle seat",
        "The user's dog Barnaby is a German Shepherd.",
        "The user likes to go to bus stops.",
    ],
)
def test_plain_english_is_not_flagged(record):
    said = "I read a lot. My dog Barnaby is a German Shepherd. I always book an aisle seat. bus stops"
    assert broken_english(record, said) == []


@pytest.mark.parametrize(
    ("record", "is_fragment"),
    [
        ("The user hadn't considered that.", True),
        ("The user has tried some of those.", True),
        ("The user will check those out.", True),
        ("The user is excited but a bit nervous.", True),
        ("The user loves the idea of string lights.", True),
        ("The user is vegetarian.", False),
        ("The user has a german shepherd named Barnaby.", False),
        ("The user is 34.", False),
        # a pronoun with nothing in the record to stand for
        ("The user finds them uncomfortable.", True),
        ("The user tends to avoid fantasy-themed ones.", True),
        ("The user has never eaten any of those.", True),
        ("When choosing food or a meal: Loves them", True),
        ("The user owns a few pairs of heels but finds them uncomfortable.", False),
        ("The user likes sci-fi novels but tends to avoid fantasy-themed ones.", False),
        ("The user avoids boat tours because they get seasick.", False),
        ("The user loves all of those bands.", False),
        ("The user is the only one in the family.", False),
        ("The user has three sisters and one brother.", False),
        ("The user visits her every December.", True),
        ("The user's mother lives in Porto and the user visits her every December.", False),
    ],
)
def test_fragments(record, is_fragment):
    assert fragment(record) is is_fragment


def test_unresolved_pronoun_names_the_pronoun():
    assert unresolved_pronoun("The user finds them uncomfortable.") == "them"
    assert unresolved_pronoun("The user has two cats and loves them.") is None


@pytest.mark.parametrize(
    ("record", "kept"),
    [
        ("Remember: I am vegetarian", True),
        ("The user asked to remember that they are vegan.", True),
        ("Note that the user prefers window seats.", True),
        ("When choosing food or a meal: Remember that I hate cilantro", True),
        ("The user is vegetarian.", False),
        ("The user remembers their first trip to Rome.", False),
    ],
)
def test_request_words(record, kept):
    assert request_words(record) is kept


def test_filed_under_reads_a_preference_records_categories():
    blob = json.dumps(
        {"context": "Exercising", "preference": "Hates water sports", "categories": ["fitness"]}
    )
    assert filed_under(blob) == ["fitness"]
    assert filed_under("The user hates water sports.") is None


# ---- data -----------------------------------------------------------------------------------


def test_load_conversations(data_dir):
    loaded = load_conversations(data_dir)
    assert [c.id for c in loaded] == ["c1", "c2"]
    assert loaded[0].preference and loaded[0].question and loaded[1].facts


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"set.jsonl:2: not JSON"),
        ('{"id": "x", "messages": []}', r"set.jsonl:2: 'messages' must be a non-empty list"),
        ('{"id": "x", "messages": [{"role": "robot", "text": "hi"}]}', r"messages\[0\] needs a role"),
        ('{"id": "c1", "messages": [{"role": "user", "text": "hi"}]}', "duplicate conversation id 'c1'"),
        (
            '{"id": "x", "messages": [{"role": "user", "text": "hi"}], "facts": "no"}',
            "'facts' must be a list",
        ),
    ],
)
def test_bad_data_names_the_file_and_line(tmp_path, line, message):
    (tmp_path / "set.jsonl").write_text(json.dumps(CONVERSATIONS[0]) + "\n" + line + "\n")
    with pytest.raises(UsageError, match=message):
        load_conversations(tmp_path)


def test_a_directory_without_data_is_a_usage_error(tmp_path, capsys):
    assert main(["bench", "extract", "--data", str(tmp_path / "missing")]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert main(["bench", "extract", "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no *.jsonl files" in err and len(err.strip().splitlines()) == 1
    assert main(["bench", "extract", "--data", str(tmp_path), "--limit", "0"]) == 2
    assert "--limit must be at least 1" in capsys.readouterr().err


# ---- the report -----------------------------------------------------------------------------


def test_bench_extract_json(data_dir, capsys):
    assert main(["bench", "extract", "--data", str(data_dir), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["extractor"] == "rules" and report["conversations"] == 2
    assert report["preference_stored"] == 1.0 and report["question_conversations"] == 1
    written, outside = report["by_source"]["written"], report["by_source"]["outside"]
    assert written["fact_recall"] == 1.0
    assert outside["facts_labelled"] == 2 and outside["fact_recall"] == 0.5  # the colour was never said
    assert report["examples"]["facts_missed"] == [{"id": "c2", "fact": "My favorite color is grey."}]
    assert report["broken_english"] == report["first_person"] == report["fragments"] == 0
    assert report["request_words"] == 0 and report["topic_graded"] == 0
    speed = report["speed"]
    assert speed["conversations_timed"] == 1 and 0 < speed["extract_p50_ms"] <= speed["p50_ms"]
    assert speed["ingest"]["conversations"] == 200 and speed["ingest"]["messages"] == 200 * 5 + 100 * 5
    assert speed["ingest"]["seconds"] > 0 and speed["ingest"]["cpu_seconds"] > 0
    assert report["errors"] == []


def test_wrong_topics_and_request_words_are_counted(tmp_path):
    said = {"role": "user", "text": "Remember: I hate water sports."}
    rows = [
        {
            "id": "t1",
            "source": "s",
            "messages": [said],
            "preference": "hate water sports",
            "topic": "fitness",
        },
        {
            "id": "t2",
            "source": "s",
            "messages": [said],
            "preference": "hate water sports",
            "topic": "beverages",
        },
        {"id": "t3", "source": "s", "messages": [said], "preference": "hate water sports", "topic": "none"},
    ]
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    report = run_extract_bench(tmp_path, ingest_conversations=0).as_dict()
    assert report["preference_stored"] == 1.0 and report["request_words"] == 0
    assert report["topic_graded"] == 3 and report["topic_wrong"] == 2
    assert {e["id"] for e in report["examples"]["topic_wrong"]} == {"t2", "t3"}
    assert report["speed"]["ingest"] == {
        "conversations": 0,
        "messages": 0,
        "seconds": None,
        "cpu_seconds": None,
    }


def test_a_negative_ingest_count_is_a_usage_error(data_dir, capsys):
    # every numeric flag gets the CLI's one range check (cli.checked_numbers): argparse's exit 2
    with pytest.raises(SystemExit) as exited:
        main(["bench", "extract", "--data", str(data_dir), "--ingest", "-1"])
    assert exited.value.code == 2
    assert "argument --ingest: '-1' is not allowed: an integer >= 0" in capsys.readouterr().err


def test_bench_extract_text(data_dir, capsys):
    assert main(["bench", "extract", "--data", str(data_dir), "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert "rules on" in out and "fact recall" in out and "speed:" in out


def test_the_llm_extractor_is_measured_by_the_same_bench(data_dir):
    reply = {
        "facts": [{"text": "The user avoids TV shows with excessive violence or gore.", "topic": "tv"}],
        "preferences": [
            {
                "context": "Choosing shows",
                "preference": "Avoids excessive violence and gore",
                "categories": ["entertainment"],
            }
        ],
    }
    calls: list[dict] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(json.loads(request.content))
        return httpx.Response(200, json={"choices": [{"message": {"content": json.dumps(reply)}}]})

    chat = OpenAIChat("tiny", base_url="http://llm.local/v1", transport=httpx.MockTransport(answer))
    result = run_extract_bench(data_dir, extractor=LLMExtractor(chat), ingest_conversations=0).as_dict()
    assert result["extractor"] == "llm:openai:tiny" and len(calls) == 3  # 2 conversations + 1 timed
    assert result["records"] == 4 and result["preference_stored"] == 1.0
    assert result["by_source"]["outside"]["fact_recall"] == 0.0


def test_an_extractor_error_is_counted_and_the_run_goes_on(data_dir):
    failing = httpx.MockTransport(lambda request: httpx.Response(500, text="model exploded"))
    chat = OpenAIChat("tiny", base_url="http://llm.local/v1", transport=failing)
    result = run_extract_bench(data_dir, extractor=LLMExtractor(chat), ingest_conversations=0)
    assert len(result.errors) == 2 and result.errors[0].startswith("c1: ")
    assert result.total["records"] == 0 and result.total["fact_recall"] == 0.0
