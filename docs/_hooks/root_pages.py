"""mkdocs hook: BENCHMARKS.md and RELIABILITY.md live at the repository's root (where they are read
on a forge and named by tests); their pages in the site are those files, included at build time, so
the two never diverge. A page whose whole text is ``{% root FILE %}`` becomes FILE, with links into
``docs/`` (written for the root) made relative to the site."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_INCLUDE = re.compile(r"^\{% root ([\w.-]+\.md) %\}\s*$")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    found = _INCLUDE.match(markdown.strip())
    if found is None:
        return markdown
    root = Path(config["config_file_path"]).parent
    text = (root / found.group(1)).read_text(encoding="utf-8")
    return text.replace("](docs/", "](")
