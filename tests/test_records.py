import json

import pytest

from recallwise import InvalidIdError, MemoryRecord, render_text, resolve_namespace, validate_id


def test_preference_blob_renders_to_prose():
    blob = json.dumps(
        {"context": "Ordering coffee", "preference": "Decaf oat flat white", "categories": ["x"]}
    )
    assert render_text(blob) == "When ordering coffee: Decaf oat flat white"


def test_acronym_context_keeps_its_case():
    blob = json.dumps({"context": "YVR departures", "preference": "Arrive two hours early"})
    assert render_text(blob) == "When YVR departures: Arrive two hours early"


def test_unknown_dict_renders_key_values_without_categories():
    blob = json.dumps({"drink": "tea", "sugar": 0, "categories": ["beverages"]})
    assert render_text(blob) == "drink: tea; sugar: 0"


def test_list_joins_with_semicolons():
    assert render_text(json.dumps(["tea", "coffee", {"a": "b"}])) == "tea; coffee; a: b"


@pytest.mark.parametrize("text", ["The user is vegetarian.", "{not json", "[1, 2", "42", '"quoted"', ""])
def test_unparseable_or_scalar_text_passes_through(text):
    assert render_text(text) == text


def test_record_rendered_property():
    r = MemoryRecord(
        actor_id="a", namespace="/n/a", text=json.dumps({"context": "Flying", "preference": "Aisle"})
    )
    assert r.rendered == "When flying: Aisle"
    assert r.id and r.created_at > 0


@pytest.mark.parametrize(
    "bad", ["", "a/b", "..", "a..b", "*", "50%", "{actorId}", "al ice", "tab\t", "x" * 129, 5]
)
def test_invalid_ids_are_rejected(bad):
    with pytest.raises(InvalidIdError):
        validate_id(bad)


def test_namespace_template_resolution():
    assert (
        resolve_namespace("/facts/{actorId}/{sessionId}", actor_id="u1", session_id="s-2") == "/facts/u1/s-2"
    )
    with pytest.raises(InvalidIdError, match="sessionId"):
        resolve_namespace("/facts/{sessionId}", actor_id="u1")
    with pytest.raises(InvalidIdError):
        resolve_namespace("/facts/{actorId}", actor_id="../other")
