"""A missing extra is one line that names it (recallwise.extras).

The commands and imports run in a real subprocess in which the extra's packages cannot be
imported (a meta-path finder refuses them, as a plain ``pip install recallwise`` would leave them
missing), so what is checked is what a user on a plain install sees.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from recallwise.errors import UsageError
from recallwise.extras import EXTRA_MODULES, extra_imports, needs_extra, require_extra

ROOT = Path(__file__).resolve().parents[1]

#: run in the child: refuse the named top-level packages, then run the rest of the script
BLOCK = textwrap.dedent(
    """
    import sys

    class Refuse:
        def __init__(self, names):
            self.names = names

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in self.names or name in self.names:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Refuse(set(sys.argv[1].split(","))))
    """
)


def child(blocked: str, body: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    script = BLOCK + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script, blocked, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


CLI = """
from recallwise.cli import main
sys.exit(main(sys.argv[2:]))
"""


def test_every_extra_named_is_an_extra_of_the_package() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRA_MODULES) <= set(extras)


def test_require_extra_names_the_extra_and_the_missing_module() -> None:
    with pytest.raises(UsageError) as info:
        require_extra("serve", "recallwise serve", ("fastapi", "surely_not_installed_module"))
    message = str(info.value)
    assert message.startswith("recallwise serve needs: pip install 'recallwise[serve]'")
    assert "surely_not_installed_module" in message and "fastapi" not in message.split("(")[1]
    require_extra("serve", "recallwise serve", ("json",))  # present: nothing happens


def test_extra_imports_names_the_extra_chained_from_the_original() -> None:
    with pytest.raises(ImportError) as info, extra_imports("langgraph", "recallwise.integrations.langgraph"):
        raise ModuleNotFoundError("No module named 'langgraph'", name="langgraph")
    assert str(info.value) == needs_extra(
        "recallwise.integrations.langgraph", "langgraph", "No module named 'langgraph'"
    )
    assert isinstance(info.value.__cause__, ModuleNotFoundError)
    # a parent package of a dotted module counts too ("google" for google.adk)
    with pytest.raises(ImportError, match=r"recallwise\[adk\]"), extra_imports("adk", "x"):
        raise ModuleNotFoundError("No module named 'google'", name="google")


def test_extra_imports_does_not_misreport_another_missing_module() -> None:
    with pytest.raises(ModuleNotFoundError) as info, extra_imports("langgraph", "x"):
        raise ModuleNotFoundError("No module named 'somethingelse'", name="somethingelse")
    assert "recallwise[" not in str(info.value)


@pytest.mark.parametrize(
    ("blocked", "argv", "extra"),
    [
        ("uvicorn", ["serve", "--port", "1"], "serve"),
        ("aiohttp", ["bench", "serve", "--sessions", "1", "--turns", "1"], "serve"),
        ("mcp", ["mcp", "--actor", "a"], "mcp"),
        ("psycopg", ["search", "drink", "--store", "postgresql://u:p@127.0.0.1:1/db"], "postgres"),
    ],
)
def test_a_command_without_its_extra_is_one_line_exit_2(
    tmp_path: Path, blocked: str, argv: list[str], extra: str
) -> None:
    store = tmp_path / "m.db"
    store.touch()
    if "--store" not in argv and argv[0] in ("serve", "mcp"):
        argv = [*argv, "--store", f"sqlite:///{store}"]
    done = child(blocked, CLI, *argv, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"pip install 'recallwise[{extra}]'" in lines[0], done.stderr


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        ("recallwise.integrations.langgraph", "langgraph", "langgraph"),
        ("recallwise.integrations.adk", "google", "adk"),
        ("recallwise.integrations.mem0", "mem0", "mem0"),
        ("recallwise.integrations.strands", "strands", "strands"),
        ("recallwise.integrations.agentcore", "bedrock_agentcore", "agentcore"),
        ("recallwise.integrations.llamaindex", "llama_index", "llamaindex"),
        ("recallwise.integrations.crewai", "crewai", "crewai"),
        ("recallwise.integrations.agent_framework", "agent_framework", "agent-framework"),
        ("recallwise.integrations.openai_agents", "agents", "openai-agents"),
        ("recallwise.integrations.agno", "agno", "agno"),
    ],
)
def test_an_integration_without_its_extra_raises_an_import_error_naming_it(
    module: str, blocked: str, extra: str
) -> None:
    done = child(blocked, f"import {module}\n")
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: ") and f"pip install 'recallwise[{extra}]'" in last, last


#: each framework example, the extra it checks, and the top-level module refused in the child
FRAMEWORK_EXAMPLES = [
    ("llamaindex_gated.py", "llamaindex", "llama_index"),
    ("crewai_gated.py", "crewai", "crewai"),
    ("agent_framework_gated.py", "agent-framework", "agent_framework"),
    ("openai_agents_gated.py", "openai-agents", "agents"),
    ("agno_gated.py", "agno", "agno"),
]


@pytest.mark.parametrize(("example", "extra", "module"), FRAMEWORK_EXAMPLES)
def test_a_framework_example_without_its_extra_is_one_line_and_exit_2(
    tmp_path: Path, example: str, extra: str, module: str
) -> None:
    run = """
    import os
    import runpy
    sys.argv = [sys.argv[2], "--store", sys.argv[3], "--json"]
    sys.path.insert(0, os.path.dirname(sys.argv[0]))  # as `python examples/X.py` has it
    runpy.run_path(sys.argv[0], run_name="__main__")
    """
    path = str(ROOT / "examples" / example)
    result = child(module, run, path, f"sqlite:///{tmp_path}/m.db")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and not result.stdout
    (line,) = result.stderr.strip().splitlines()
    needs = f"error: examples/{example} needs: pip install 'recallwise[{extra}]'"
    assert line.startswith(f"{needs} (no module named '")
    assert f"'{module}" in line
