"""mkdocs hook: BENCHMARKS.md and RELIABILITY.md live at the repository's root (where they are read
on a forge and named by tests); their pages in the site are those files, included at build time, so
the two never diverge. A page holding the comment ``<!-- root FILE: ... -->`` is, in the site, FILE
whole, with links into ``docs/`` (written for the root) made relative to the site; on GitHub the
page itself reads as a short page that links to FILE."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_INCLUDE = re.compile(r"^<!-- root ([\w.-]+\.md)\b[^>]*-->\s*$", re.M)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    found = _INCLUDE.search(markdown)
    if found is None:
        return markdown
    root = Path(config["config_file_path"]).parent
    text = (root / found.group(1)).read_text(encoding="utf-8")
    return text.replace("](docs/", "](")
