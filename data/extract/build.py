"""Build the extraction benchmark's conversations: data/extract/{dev,heldout}/*.jsonl.

    python data/extract/build.py [--spc DIR]

DIR holds Synthetic-Persona-Chat's ``Synthetic-Persona-Chat_valid.csv`` (-> dev) and
``Synthetic-Persona-Chat_test.csv`` (-> heldout), from the repository snapshot named in
SOURCES.md; without ``--spc`` the ``spc.jsonl`` files are left as they are. The written
conversations come from ``written/{dev,heldout}.txt`` (-> ``written.jsonl``) and
``written/requests-{dev,heldout}.txt`` (-> ``requests.jsonl``) beside this file.
Deterministic: the same inputs give the same files.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
from pathlib import Path

from recallwise.bench.extract import carries

HERE = Path(__file__).resolve().parent
SPC_FILES = {"dev": "Synthetic-Persona-Chat_valid.csv", "heldout": "Synthetic-Persona-Chat_test.csv"}
SPC_SAMPLE = 150
SEED = 35


def written(path: Path, source: str = "written") -> list[dict]:
    """The blocks of a written file: '# id:', '# preference:', '# fact:', '# question:', '# topic:',
    'U:'/'A:' turns."""
    out: list[dict] = []
    current: dict | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        header = re.match(r"^# (id|preference|fact|question|topic): (.+)$", line)
        if header:
            key, value = header.groups()
            if key == "id":
                current = {"id": value, "source": source, "messages": [], "facts": []}
                out.append(current)
            elif current is None:
                raise SystemExit(f"{path}:{number}: {key} before any id")
            elif key == "fact":
                current["facts"].append(value)
            else:
                current[key] = value
        elif line.startswith(("U: ", "A: ")):
            if current is None:
                raise SystemExit(f"{path}:{number}: a turn before any id")
            current["messages"].append({"role": "user" if line[0] == "U" else "assistant", "text": line[3:]})
    for conversation in out:
        if not conversation["messages"] or "preference" not in conversation:
            raise SystemExit(f"{path}: conversation {conversation['id']} has no turns or no preference")
    return out


def spc(path: Path, split: str) -> list[dict]:
    """A seeded sample of Synthetic-Persona-Chat: User 1 is the user, User 2 the assistant.

    A conversation's labelled facts are User 1's persona lines that one of User 1's statements
    (a sentence not ending in "?") carries (the benchmark's own :func:`carries`): a persona line
    never said is not a fact the extractor could find.
    """
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    chosen = sorted(random.Random(SEED).sample(range(len(rows)), SPC_SAMPLE))
    out = []
    for index in chosen:
        row = rows[index]
        messages = []
        for line in row["Best Generated Conversation"].splitlines():
            match = re.match(r"^\s*User ([12]):\s*(.+)$", line)
            if match and match.group(2).strip():
                role = "user" if match.group(1) == "1" else "assistant"
                messages.append({"role": role, "text": match.group(2).strip()})
        # statements only: a persona line the user merely asks about ("Do you ride horses?") is not said
        said = [s for m in messages if m["role"] == "user" for s in re.split(r"(?<=[.!?])\s+", m["text"])]
        said = [s for s in said if not s.rstrip().endswith("?")]
        persona = [p.strip() for p in row["user 1 personas"].splitlines() if p.strip()]
        facts = [p for p in persona if any(carries(turn, p) for turn in said)]
        out.append({"id": f"spc-{split}-{index}", "source": "spc", "messages": messages, "facts": facts})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--spc", type=Path, help="directory with the Synthetic-Persona-Chat CSVs (default: keep spc.jsonl)"
    )
    args = parser.parse_args()
    for split, filename in SPC_FILES.items():
        target = HERE / split
        target.mkdir(exist_ok=True)
        sets = [
            ("written.jsonl", written(HERE / "written" / f"{split}.txt")),
            ("requests.jsonl", written(HERE / "written" / f"requests-{split}.txt", "requests")),
        ]
        if args.spc is not None:
            sets.append(("spc.jsonl", spc(args.spc / filename, split)))
        for name, conversations in sets:
            with (target / name).open("w", encoding="utf-8") as handle:
                for conversation in conversations:
                    handle.write(json.dumps(conversation, ensure_ascii=False) + "\n")
            facts = sum(len(c["facts"]) + ("preference" in c) for c in conversations)
            print(f"{split}/{name}: {len(conversations)} conversations, {facts} labelled facts")


if __name__ == "__main__":
    main()
