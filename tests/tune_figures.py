"""The figures ``tune gate`` and ``tune validator`` report for each candidate wording (beside its
``errors``): the JSON contract that the tuning tests, in process and through the CLI, check."""

from __future__ import annotations

GATE_KEYS = {
    "best_accuracy",
    "best_threshold",
    "margin",
    "auc",
    "configured_threshold",
    "accuracy_at_configured",
    "cv_accuracy",
    "ece",
    "brier",
}
VALIDATOR_KEYS = {
    "margin",
    "best_accuracy",
    "best_threshold",
    "mean_auc",
    "mean_p_at_k",
    "configured_threshold",
    "accuracy_at_configured",
    "relative_delta",
    "relative_accuracy",
}
