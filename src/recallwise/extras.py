"""Optional extras: a missing one is one line that names it.

recallwise's default install runs the embedded default with no extras; everything else (the
service, PostgreSQL, the framework integrations, plots, other deciders) comes with an extra.
When one is missing, the user sees one line saying which extra to install, before any work:

- commands and factories call :func:`require_extra`, which raises a :class:`UsageError` (the CLI
  prints it as one line and exits 2);
- modules that cannot import without an extra wrap their third-party imports in
  :func:`extra_imports`, which turns the ``ModuleNotFoundError`` into an ``ImportError`` naming
  the extra, chained from the original;
- scripts (``examples/``) call :func:`exit_without_extra` before their framework's imports: the
  one line on stderr and exit code 2, as the CLI.

Both word the message with :func:`needs_extra`.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from .errors import UsageError

__all__ = [
    "EXTRA_MODULES",
    "exit_without_extra",
    "extra_imports",
    "install_line",
    "missing_modules",
    "needs_extra",
    "require_extra",
]

#: The modules each extra brings that recallwise imports (import names, not distribution names).
#: tests/test_extras.py checks every key is an extra of pyproject.toml.
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "serve": ("fastapi", "uvicorn", "prometheus_client"),
    "mcp": ("mcp",),
    "postgres": ("psycopg", "psycopg_pool", "pgvector"),
    "agentcore": ("bedrock_agentcore", "strands", "boto3", "botocore"),
    "strands": ("strands",),
    "langgraph": ("langgraph",),
    "adk": ("google.adk",),
    "mem0": ("mem0",),
    "llamaindex": ("llama_index.core",),
    "crewai": ("crewai",),
    "agent-framework": ("agent_framework",),
    "agent-framework-mem0": ("agent_framework", "agent_framework_mem0", "mem0"),
    "openai-agents": ("agents",),
    "agno": ("agno",),
    "plot": ("matplotlib",),
    "otel": ("opentelemetry",),
    "sparrow": ("sparrow_decider",),
    "sagemaker": ("boto3", "botocore"),
    "strands-local": ("strands_decider", "torch"),
    "sentence-transformers": ("sentence_transformers",),
}


def install_line(extra: str) -> str:
    """``pip install 'recallwise[EXTRA]'``."""
    return f"pip install 'recallwise[{extra}]'"


def needs_extra(what: str, extra: str, detail: str = "") -> str:
    """The one line: ``WHAT needs: pip install 'recallwise[EXTRA]' (DETAIL)``."""
    line = f"{what} needs: {install_line(extra)}"
    return f"{line} ({detail})" if detail else line


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a dotted name whose parent package is missing
        return False


def missing_modules(extra: str, modules: Sequence[str] | None = None) -> list[str]:
    """Which of the extra's modules (or ``modules``) cannot be imported here."""
    return [m for m in (modules or EXTRA_MODULES[extra]) if not _importable(m)]


def require_extra(extra: str, what: str, modules: Sequence[str] | None = None) -> None:
    """Raise a :class:`UsageError` naming ``extra`` when its modules (or ``modules``, the ones
    ``what`` needs) are not installed. Call it before any work."""
    absent = missing_modules(extra, modules)
    if absent:
        raise UsageError(needs_extra(what, extra, f"no module named {', '.join(map(repr, absent))}"))


def exit_without_extra(extra: str, what: str, modules: Sequence[str] | None = None) -> None:
    """For a script, before it imports ``extra``'s modules: when some are missing, print
    :func:`require_extra`'s line on stderr and exit 2 (a usage error, no traceback)."""
    try:
        require_extra(extra, what, modules)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


@contextmanager
def extra_imports(extra: str, what: str) -> Iterator[None]:
    """Around the imports of a module that needs ``extra``: a missing third-party module becomes
    an ``ImportError`` naming the extra. A missing module that is not the extra's (a bug, or a
    dependency of a dependency) is re-raised unchanged, so it is not misreported."""
    try:
        yield
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        ours = EXTRA_MODULES.get(extra, ())
        if not any(missing == m or missing.startswith(m + ".") or m.startswith(missing + ".") for m in ours):
            raise
        raise ImportError(needs_extra(what, extra, str(exc)), name=missing) from exc
