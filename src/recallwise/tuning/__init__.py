"""Measuring question wordings on labelled data and fitting thresholds (``recallwise tune``).

Separation (one absolute threshold for all items) and ranking (each query's relevant records
first) are measured side by side, because a wording can have either without the other.
"""

from __future__ import annotations

from .candidates import WordingCandidate, default_candidates, load_candidates, parse_candidates
from .data import CaseSet, LabelSet, load_cases, load_labels, parse_cases, parse_labels
from .run import CandidateResult, QueryRanking, TuneResult, tune_gate, tune_validator

__all__ = [
    "CandidateResult",
    "CaseSet",
    "LabelSet",
    "QueryRanking",
    "TuneResult",
    "WordingCandidate",
    "default_candidates",
    "load_candidates",
    "load_cases",
    "load_labels",
    "parse_candidates",
    "parse_cases",
    "parse_labels",
    "tune_gate",
    "tune_validator",
]
