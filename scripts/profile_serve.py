"""Where a ``recallwise serve`` process spends its CPU under ``recallwise bench serve`` load.

    python scripts/profile_serve.py [--out DIR] [--rate HZ] [-- BENCH-SERVE-ARGS...]

Runs ``recallwise bench serve ARGS --json`` (default ``--sessions 50 --turns 20``), and while its
server answers (from ``/readyz`` until it exits: the load, then the bench's 40 idle recalls):

- reads every thread's CPU seconds (user and system) from ``/proc/PID/task/TID/stat`` (four
  times a second; a thread that ends keeps its last figure), and groups them by what the thread
  is: the event loop (uvicorn, FastAPI, request validation and response serialisation), the
  request threads (anyio's workers: the policy, the store), the embedding batcher (tokenising,
  the ONNX call's own thread) and the native threads no Python code runs in (onnxruntime's
  intra-op pool);
- records a py-spy profile of the Python threads (``py-spy record --format raw --threads``, when
  py-spy is installed: ``pip install py-spy``), and prints its top frames, self and inclusive.

Writes ``bench.json`` (the bench's own answer), ``profile.raw`` and ``threads.json`` in ``--out``,
and prints the summary: CPU ms a turn by thread group, against the bench's own
``server_cpu_s_per_turn`` and ``embed_cpu_s_per_text``. Linux only (``/proc``). The profiler shares
the cores it measures: figures taken under it are for where the time goes, not for how much.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

TICKS = 100.0  # USER_HZ: /proc's clock ticks a second on Linux


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(c) for c in task.read_text().split()]
        except OSError:
            continue
    return found


def _server_pid(bench: subprocess.Popen[bytes], timeout_s: float = 300.0) -> tuple[int, int]:
    """The first ``recallwise serve`` process the bench starts, and its port."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and bench.poll() is None:
        for child in _children(bench.pid):
            try:
                argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"serve" in argv and b"--port" in argv:
                return child, int(argv[argv.index(b"--port") + 1])
        time.sleep(0.05)
    raise SystemExit("profile_serve: the bench started no server")


def _threads_cpu(pid: int) -> dict[int, tuple[float, float]]:
    """CPU seconds (user, system) of each live thread of ``pid``."""
    out: dict[int, tuple[float, float]] = {}
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(stat.parent.name)] = (int(fields[11]) / TICKS, int(fields[12]) / TICKS)
    return out


def _group(name: str | None, tid: int, pid: int) -> str:
    if tid == pid:
        return "event loop (MainThread)"
    if name is None:
        return "native threads (onnxruntime's pool)"
    if name.startswith("AnyIO worker thread"):
        return "request threads (anyio workers)"
    if name.startswith("recallwise-embed-batcher"):
        return "embedding batcher"
    return f"other Python threads ({name})"


def _read_profile(raw: Path) -> tuple[dict[int, str], list[tuple[list[str], int]]]:
    """py-spy's raw output: thread id -> name, and (frames, samples) per stack."""
    names: dict[int, str] = {}
    stacks: list[tuple[list[str], int]] = []
    if not raw.exists():
        return names, stacks
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        head = re.match(r"thread \((\d+)\)(?::\s*(.*))?", frames[0])
        if head is None:
            continue
        tid, name = int(head.group(1)), head.group(2) or ""
        if name:
            names[tid] = name
        stacks.append(([f"{name or tid}", *(re.sub(r":\d+\)$", ")", f) for f in frames[1:])], int(count)))
    return names, stacks


_START_UP = ("build_app", "build_parser", "warm_up")


def _top(stacks: list[tuple[list[str], int]], count: int) -> dict[str, list[tuple[str, float]]]:
    """The top frames by self and inclusive samples (start-up stacks left out)."""
    kept = [(f, n) for f, n in stacks if not any(s in " ".join(f) for s in _START_UP)]
    total = sum(n for _, n in kept) or 1
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    for frames, n in kept:
        own[frames[-1] if len(frames) > 1 else f"{frames[0]} (no Python frame)"] += n
        for frame in set(frames[1:]):
            inclusive[frame] += n
    return {
        "self": [(f, round(n / total, 4)) for f, n in own.most_common(count)],
        "inclusive": [(f, round(n / total, 4)) for f, n in inclusive.most_common(count)],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="where to write the files (default: a new temp dir)")
    parser.add_argument("--rate", type=int, default=100, help="py-spy samples a second (default 100)")
    parser.add_argument("--top", type=int, default=25, help="frames to print (default 25)")
    parser.add_argument("bench_args", nargs="*", help="arguments of `recallwise bench serve`, after --")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="recallwise-profile-serve-"))
    out.mkdir(parents=True, exist_ok=True)
    bench_args = args.bench_args or ["--sessions", "50", "--turns", "20"]
    command = [sys.executable, "-m", "recallwise", "bench", "serve", *bench_args, "--json"]
    with (out / "bench.json").open("wb") as sink, (out / "bench.err").open("wb") as err:
        bench = subprocess.Popen(command, stdout=sink, stderr=err)
        pid, port = _server_pid(bench)
        while bench.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        at_ready = _threads_cpu(pid)
        spy = None
        if shutil.which("py-spy"):
            record = ["py-spy", "record", "--pid", str(pid), "--rate", str(args.rate), "--format", "raw"]
            spy = subprocess.Popen(
                [*record, "--threads", "--nonblocking", "-o", str(out / "profile.raw")],
                stdout=subprocess.DEVNULL,
                stderr=(out / "py-spy.log").open("wb"),
            )
        last = dict(at_ready)
        while Path(f"/proc/{pid}").exists() and bench.poll() is None:
            last.update(_threads_cpu(pid))
            time.sleep(0.25)
        bench.wait()
        if spy is not None:
            spy.wait(timeout=60)
    result = json.loads((out / "bench.json").read_text())
    turns = result["http"]["turns"]
    names, stacks = _read_profile(out / "profile.raw")
    groups: collections.Counter[str] = collections.Counter()
    system: collections.Counter[str] = collections.Counter()
    for tid, (user, sys_s) in last.items():
        user_before, sys_before = at_ready.get(tid, (0.0, 0.0))
        group = _group(names.get(tid), tid, pid)
        groups[group] += user - user_before + sys_s - sys_before
        system[group] += sys_s - sys_before
    total = sum(groups.values())
    summary = {
        "command": command,
        "turns": turns,
        "server_cpu_ms_per_turn_threads": round(total / turns * 1000, 3),
        "bench": {
            k: result.get(k)
            for k in ("server_cpu_s_per_turn", "embed_cpu_s_per_text", "embeddings_per_turn", "ceiling_ratio")
        },
        "cpu_ms_per_turn_by_thread": {
            g: round(v / turns * 1000, 3) for g, v in sorted(groups.items(), key=lambda kv: -kv[1])
        },
        # the kernel's share of it (system calls: sockets, futexes of thread hand-offs, SQLite's I/O)
        "system_cpu_ms_per_turn_by_thread": {g: round(system[g] / turns * 1000, 3) for g in groups},
        "profile": _top(stacks, args.top),
    }
    (out / "threads.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    sys.stderr.write(f"profile_serve: files in {out}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
