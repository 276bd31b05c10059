"""The guide's write-path example runs as written and prints what the guide says it prints."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide.md"


def test_the_guides_write_path_example_prints_what_the_guide_shows(tmp_path: Path) -> None:
    section = GUIDE.read_text().split("### The write path", 1)[1].split("\n### ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    shown = re.search(r"prints\n\n```text\n(.*?)```", section, re.S)
    assert code is not None and shown is not None
    done = subprocess.run(
        [sys.executable, "-c", code.group(1)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == shown.group(1)
    assert (tmp_path / "memory.db").exists()
