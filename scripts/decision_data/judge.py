"""Judge sets: a request and one user's 20 records, each record labelled "belongs in the prompt".

Records are persona facts from Synthetic-Persona-Chat (CC BY 4.0), put in the third person
("I have two dogs." -> "The user has two dogs."). Requests are the positive gate rows of this build
whose domain is clear (CLINC150 suggestion and booking intents, xSID restaurant bookings and open
music requests, our written English positives), and, for "general requests of the same users",
negative gate rows of the same split.

Labelling rule (RELEVANT below): a record belongs when it states the user's preference, constraint,
habit or history *in the request's own domain* (food, travel, music, screen, books, fitness, pets);
a diet or allergy record also belongs to every food request, a health record to every fitness
request. Everything else is labelled as not belonging, and to keep that honest a user's other 17-19
records are drawn only from facts whose domains are all *disjoint* from the request's; facts that
fit no domain are not used at all. For a general request no record belongs.

Third round, after reading 60 labelled requests by hand: "visit" no longer makes a fact a travel one
("two grown children who never visit"), "heart" a health one only as a condition ("loves the band
heart" was a fitness record), "food bank" is not food, and a fact that is also about work ("a part
time job at burger king") is neither in nor out for a food request.
"""

from __future__ import annotations

import csv
import hashlib
import io
import random
import re
from collections import defaultdict
from typing import Any

from .common import EVAL_ONLY_SOURCES

RECORDS_PER_USER = 20
SPC_REPO = "google-research-datasets/Synthetic-Persona-Chat"

DOMAIN_RE: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.I)
    for name, pattern in {
        "diet": r"\b(allerg\w*|vegan|vegetarian|gluten|lactose|diabet\w*|kosher|halal|diet|"
        r"don'?t eat|do not eat|never eat)\b",
        "cooking": r"\b(cook\w*|bak(e|es|ing|er)|chef|garden\w*|kitchen)\b",
        "food": r"\b(food(?! bank)|foods|eat|eats|eating|pizza|burgers?|cheeseburgers?|meat|steak|"
        r"chocolate|coffee|tea|wine|beer|cheese|pasta|sushi|tacos?|restaurants?|chef|cuisine|"
        r"desserts?|cookies|candy|ice cream|fruit|spicy|soda|bbq|barbecue|seafood|chicken|"
        r"italian food|mexican food|chinese food)\b",
        "travel": r"\b(travel\w*|trips?|vacation\w*|beach\w*|abroad|countries|europe|paris|"
        r"italy|japan|mexico|fly|flying|airplanes?|road trips?|national parks?|cruise|"
        r"camping|hotels?)\b",
        "music": r"\b(music|songs?|sing|sings|singing|singer|band|guitar|piano|concerts?|rap|jazz|"
        r"rock|drums?|violin|dj|albums?|opera|musician|karaoke)\b",
        "screen": r"\b(movies?|films?|tv|television|netflix|anime|documentar\w*|sitcoms?|"
        r"horror|cartoons?|series)\b",
        "books": r"\b(books?|reading|read|novels?|poetry|comics?|authors?|library)\b",
        "fitness": r"\b(gym|run|running|marathons?|yoga|swim\w*|workouts?|exercis\w*|sports?|soccer|"
        r"football|basketball|baseball|tennis|hik\w*|bik\w*|cycling|climb\w*|ski\w*|surf\w*|"
        r"racquetball|athlete|fitness|weights)\b",
        "pets": r"\b(dogs?|cats?|pets?|pupp(y|ies)|kittens?|horses?|parrots?|hamsters?|rabbits?)\b",
        "health": r"\b(wheelchair|blind|deaf|surgery|transplant|cancer|anxiety|depress\w*|sick|"
        r"disease|injur\w*|knee|back pain|asthma|arthritis|heart (disease|attack|condition|problems?))\b",
        "work": r"\b(work|job|employ\w*|career|office|nurse|teacher|engineer|lawyer|doctor|"
        r"retired|business|boss)\b",
        "family": r"\b(wife|husband|kids?|children|son|daughter|mom|mother|dad|father|sister|"
        r"brother|married|grand\w+|family|parents)\b",
    }.items()
}
RELEVANT: dict[str, set[str]] = {
    "food": {"food", "diet"},
    "food-booking": {"diet"},
    "travel": {"travel"},
    "music": {"music"},
    "screen": {"screen"},
    "books": {"books"},
    "fitness": {"fitness", "health"},
    "pets": {"pets"},
}
# bookings of a named place with the party given: only a diet or allergy bears on them; flight,
# hotel and car bookings are left out (persona facts hold no seat, budget or hotel preferences)
CLINC_DOMAIN = {
    "meal_suggestion": "food",
    "restaurant_suggestion": "food",
    "restaurant_reservation": "food-booking",
    "travel_suggestion": "travel",
}
# a domain whose facts are neither clearly in nor clearly out for the request: not used as records
AMBIGUOUS: dict[str, set[str]] = {
    "food": {"cooking", "work"},
    "food-booking": {"cooking", "food", "work"},
    "travel": set(),
    "music": set(),
    "screen": set(),
    "books": set(),
    "fitness": set(),
    "pets": set(),
}
RELATIVE_RE = re.compile(
    r"^The user's (father|mother|dad|mom|mum|parents|brother|sister|wife|husband|son|daughter|"
    r"family|grand\w+|uncle|aunt|cousin|friends?|boyfriend|girlfriend|partner|kids|children)\b"
)
REQUEST_RE: list[tuple[str, re.Pattern[str]]] = [
    (name, re.compile(pattern, re.I))
    for name, pattern in (
        ("pets", r"\b(dog|cat|vet|puppy|kitten)\b"),
        ("music", r"\b(music|playlist|song|concert|album|dance to)\b"),
        ("screen", r"\b(movie|series|watch|documentary|show|streaming)\b"),
        ("books", r"\b(book|read|audiobook)\b"),
        ("fitness", r"\b(workout|run|running|gym|exercise|marathon|yoga|stretch\w*|training|fitness)\b"),
        (
            "food",
            r"\b(eat|dinner|lunch|breakfast|brunch|dessert|recipe|cook|bake|restaurant|menu|dishes|"
            r"meal|snack|order|wine|beer|tea|coffee|cocktail|food|takeaway|picnic|cake|tapas)\b",
        ),
        (
            "travel",
            r"\b(trip|travel|flight|hotel|itinerary|visit|holiday|getaway|stay in|layover|"
            r"beach destination|day trips|honeymoon|airbnb|road trip|pack for)\b",
        ),
    )
]


NON_FOOD_ALLERGY_RE = re.compile(r"allerg\w* to (cats|dogs|pets|pollen|dust|bees|animals|grass|horses)", re.I)


def domains(text: str) -> set[str]:
    found = {name for name, pattern in DOMAIN_RE.items() if pattern.search(text)}
    if NON_FOOD_ALLERGY_RE.search(text):  # an allergy to cats bears on pets, not on a restaurant
        found = (found - {"diet"}) | {"health"}
    return found


def request_domain(gate_row: dict[str, Any]) -> str | None:
    intent = gate_row.get("intent")
    if gate_row["source"] == "clinc150":
        return CLINC_DOMAIN.get(str(intent))
    if gate_row["source"] == "xsid":
        return {"BookRestaurant": "food-booking", "PlayMusic": "music"}.get(str(intent))
    if gate_row["source"] == "rw-written-en" and gate_row["kind"] not in {"recall", "reminder"}:
        found = [name for name, pattern in REQUEST_RE if pattern.search(gate_row["text"])]
        return found[0] if len(found) == 1 else None  # two domains: the rule would be unclear
    return None


_VERB_ES = re.compile(r"(s|sh|ch|x|z|o)$")
_PAST_OR_MODAL = {
    "can",
    "could",
    "will",
    "would",
    "should",
    "must",
    "might",
    "may",
    "was",
    "had",
    "did",
    "used",
    "bought",
    "went",
    "grew",
    "got",
    "made",
    "spent",
    "took",
    "lost",
    "won",
    "met",
    "left",
    "ran",
    "became",
    "began",
    "broke",
    "came",
    "drove",
    "fell",
    "felt",
    "found",
    "gave",
    "knew",
    "moved",
}
_ADVERBS = {
    "also",
    "really",
    "just",
    "still",
    "often",
    "usually",
    "always",
    "never",
    "recently",
    "only",
    "mostly",
    "sometimes",
    "absolutely",
    "definitely",
    "currently",
    "even",
}


def third_person(fact: str) -> str:
    """'I have two dogs.' -> 'The user has two dogs.'; 'My favorite color is orange.' ->
    "The user's favorite color is orange." Facts in other shapes get "the user's" for "my"."""
    text = fact.strip().rstrip(".!") + "."
    text = re.sub(r"^I'm\b", "I am", text)
    text = re.sub(r"^I've\b", "I have", text)
    text = re.sub(r"^I don't\b", "I do not", text)
    words = text.split(" ")
    if words[0] == "I" and len(words) > 1:
        out = ["The", "user"]
        rest = words[1:]
        while rest and rest[0].lower() in _ADVERBS:
            out.append(rest.pop(0))
        if rest:
            verb = rest.pop(0)
            lower = verb.lower()
            if lower == "am":
                verb = "is"
            elif lower == "have":
                verb = "has"
            elif lower == "do":
                verb = "does"
            elif lower in _PAST_OR_MODAL or lower.endswith("ed"):
                pass
            elif re.fullmatch(r"[a-z]+", lower):
                if lower.endswith("y") and len(lower) > 2 and lower[-2] not in "aeiou":
                    verb = verb[:-1] + "ies"
                elif _VERB_ES.search(lower):
                    verb = verb + "es"
                else:
                    verb = verb + "s"
            out.append(verb)
        text = " ".join(out + rest)
    elif re.match(r"^My\b", text):
        text = "The user's" + text[2:]
    text = re.sub(r"\b(and|but|so|because|when|that|where|since|if) I am\b", r"\1 they are", text)
    text = re.sub(r"\b(and|but|so|because|when|that|where|since|if) I\b", r"\1 they", text)
    text = re.sub(r"\b[Ii]'m\b", "they are", text)
    text = re.sub(r"\b[Ii] am\b", "they are", text)
    text = re.sub(r"\b[Ii]\b", "they", text)
    if text.startswith("The user"):
        text = re.sub(r"\bmy\b", "their", text)
        text = re.sub(r"\bMy\b", "Their", text)
    else:
        text = re.sub(r"\b[Mm]y\b", "the user's", text, count=1)
        text = re.sub(r"\bmy\b", "their", text)
    text = re.sub(r"\bme\b", "them", text)
    text = re.sub(r"\bmyself\b", "themselves", text)
    return text[0].upper() + text[1:]


def persona_facts(snap: Any) -> list[str]:
    facts: dict[str, None] = {}
    for part in ("valid", "test"):
        blob = snap.text(SPC_REPO, f"data/Synthetic-Persona-Chat_{part}.csv")
        reader = csv.reader(io.StringIO(blob))
        next(reader)
        for record in reader:
            for column in record[:2]:
                for fact in column.split("\n"):
                    fact = fact.strip()
                    if len(fact) > 8 and re.match(r"^(I|My)\b", fact):
                        facts[fact] = None
    return list(facts)


def pool_of(fact: str) -> str:
    digest = hashlib.sha256(("spc:" + fact).encode()).digest()
    draw = int.from_bytes(digest[:8], "big") / 2**64
    return "fit" if draw < 0.55 else "calib" if draw < 0.7 else "dev" if draw < 0.8 else "heldout"


CAPS = {"fit": 450, "calib": 130, "dev": 110, "heldout": 220}


def build(snap: Any, gate_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    facts = persona_facts(snap)
    by_pool: dict[str, list[tuple[str, set[str]]]] = defaultdict(list)
    for fact in facts:
        found = domains(fact)
        if found:
            by_pool[pool_of(fact)].append((third_person(fact), found))
    requests: dict[str, list[tuple[dict[str, Any], str]]] = defaultdict(list)
    general: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for gate_row in gate_rows:
        if gate_row["label"]:
            domain = request_domain(gate_row)
            if domain:
                requests[gate_row["_split"]].append((gate_row, domain))
        elif (
            gate_row["lang"] == "en"
            and gate_row["kind"] not in {"greeting", "thanks", "follow-on"}
            # the judge files are committed: an evaluation-only text may not be copied into them
            and gate_row["source"] not in EVAL_ONLY_SOURCES
            # pasted Synthetic-Persona-Chat talk holds the same personas' facts as the records
            and gate_row["source"] != "spc-dialogue"
        ):
            general[gate_row["_split"]].append(gate_row)
    items: list[dict[str, Any]] = []
    for split, pairs in sorted(requests.items()):
        rng = random.Random(f"judge-{split}")
        # the general requests are drawn with their own generator, so adding gate rows to the pool
        # changes which general requests are drawn, never the positive items
        general_rng = random.Random(f"judge-general-{split}")
        rng.shuffle(pairs)
        pool = by_pool[split]
        for gate_row, domain in pairs[: CAPS[split]]:
            wanted = RELEVANT[domain]
            unclear = AMBIGUOUS[domain]
            # a fact about a relative in the request's domain ("The user's father played violin")
            # or one that is also in an unclear domain is neither clearly in nor clearly out: unused
            relevant = [
                f for f in pool if f[1] & wanted and not f[1] & unclear and not RELATIVE_RE.match(f[0])
            ]
            others = [f for f in pool if not f[1] & (wanted | unclear)]
            k = min(len(relevant), rng.choices((1, 2, 3), weights=(6, 2.5, 1.5))[0])
            if k == 0 or len(others) < RECORDS_PER_USER - k:
                continue
            chosen = [(t, True) for t, _ in rng.sample(relevant, k)]
            chosen += [(t, False) for t, _ in rng.sample(others, RECORDS_PER_USER - k)]
            rng.shuffle(chosen)
            records = [{"id": f"r{i + 1}", "text": t, "label": lab} for i, (t, lab) in enumerate(chosen)]
            source = "spc-" + gate_row["source"]
            items.append(
                {
                    "text": gate_row["text"],
                    "label": True,
                    "records": records,
                    "source": source,
                    "lang": gate_row["lang"],
                    "kind": gate_row["kind"],
                    "_split": split,
                    "domain": domain,
                }
            )
            if general[split] and general_rng.random() < 0.4:
                other = general[split].pop(general_rng.randrange(len(general[split])))
                if len(other["text"]) <= 1500:
                    items.append(
                        {
                            "text": other["text"],
                            "label": False,
                            "records": [{**r, "label": False} for r in records],
                            "source": "spc-general",
                            "lang": "en",
                            "kind": other["kind"],
                            "_split": split,
                            "from_source": other["source"],
                        }
                    )
    return items
