"""Standing constraints: kinds of record that bear on requests outside their own life domain.

The judge's life-domain term keeps a record about the domain a message is about ("dinner" reaches
"peanut allergy" through food). Some records bear on requests of other domains: the partner's
gluten intolerance on a restaurant, a savings goal on a purchase, the kids on a family meal plan,
the home city on "nearby", a bad knee on a hike. Each kind here is two lists of short prototype
texts: records of the kind, and requests it bears on (package data, ``data/constraints.json``,
written by the project). The judge adds a term to a record's score when the record is of a kind
and the message is a request that kind bears on (``EmbeddedDecider._judge_terms``). Drink orders
are not among the diet's requests: a vegetarian diet or an allergy rarely decides a drink, and the
one held-out source where a diet does (Taskmaster-4's vegan coffee orders) is the project's only
out-of-source figure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

__all__ = ["ConstraintKind", "constraint_kinds"]


@dataclass(frozen=True)
class ConstraintKind:
    """One kind of standing constraint: what it is about, prototypes of its records, and
    prototypes of the requests it bears on."""

    name: str
    about: str
    records: tuple[str, ...]
    requests: tuple[str, ...]


@cache
def constraint_kinds() -> tuple[ConstraintKind, ...]:
    """The shipped kinds of standing constraint (package data, ``data/constraints.json``)."""
    text = resources.files("recallwise.data").joinpath("constraints.json").read_text(encoding="utf-8")
    return tuple(
        ConstraintKind(k["name"], k["about"], tuple(k["records"]), tuple(k["requests"]))
        for k in json.loads(text)
    )
