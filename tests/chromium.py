"""A real headless Chromium driven over the DevTools protocol on a pipe (stdlib only), for the
tests of the pages the project ships: the tuner's HTML report and the service's inspector.

``--remote-debugging-pipe`` needs no port and no Node: the test reads back from the live page
(layout, drawn elements, console errors and exceptions, every request the page made), types
keys, and takes screenshots. Chromium comes from the Debian package ``chromium``; ``.ci/run``
installs it when missing.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (Debian package `chromium`; .ci/run installs it when missing)",
)

# Chromium reads DevTools commands on fd 3 and writes replies on fd 4. A fresh interpreter
# puts the pipe ends there (duplicating first, so no end is overwritten before it is moved).
_TRAMPOLINE = """
import os, sys
a, b = os.dup(int(sys.argv[1])), os.dup(int(sys.argv[2]))
os.dup2(a, 3); os.dup2(b, 4)
os.set_inheritable(3, True); os.set_inheritable(4, True)
os.execv(sys.argv[3], sys.argv[3:])
"""


class Chromium:
    """A headless Chromium page driven over the DevTools protocol (stdlib only)."""

    def __init__(self, profile: Path) -> None:
        to_chrome_r, self._out = os.pipe()
        self._in, from_chrome_w = os.pipe()
        args = [
            CHROMIUM or "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.process = subprocess.Popen(
            [sys.executable, "-c", _TRAMPOLINE, str(to_chrome_r), str(from_chrome_w), *args],
            pass_fds=(to_chrome_r, from_chrome_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        attached = self.call("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})
        self.session = attached["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(f"{domain}.enable", session=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=True,
        )

    def call(self, method: str, params: dict[str, Any] | None = None, *, session: bool = False) -> Any:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        reply = self._wait(lambda m: m.get("id") == message["id"])
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def _wait(self, done: Any, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "method" in message:
                    self.events.append(message)
                if done(message):
                    return message
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self._in], [], [], min(remaining, 1.0))
            if ready:
                chunk = os.read(self._in, 1 << 16)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self._buffer += chunk

    def load(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        self._wait(lambda m: m.get("method") == "Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")  # undefined has no value

    def screenshot(self, x: float, y: float, width: float, height: float) -> bytes:
        clip = {"x": x, "y": y, "width": width, "height": height, "scale": 1}
        shot = self.call(
            "Page.captureScreenshot",
            {"format": "png", "clip": clip, "captureBeyondViewport": True},
            session=True,
        )
        return base64.b64decode(shot["data"])

    def wait_for(self, expression: str, timeout: float = 20.0) -> Any:
        """The value of ``expression`` once it is truthy (polled); TimeoutError with the last value."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError(f"{expression!r} stayed {value!r} for {timeout} s")

    def press(self, key: str) -> None:
        """Type one key (a printable character, or a named key such as ``Escape``) into the page."""
        text = key if len(key) == 1 else ""
        for kind in ("keyDown", "keyUp"):
            params: dict[str, Any] = {"type": kind, "key": key}
            if text and kind == "keyDown":
                params["text"] = text
            self.call("Input.dispatchKeyEvent", params, session=True)

    def element_screenshot(self, selector: str, width: int = 1200) -> bytes:
        """A PNG of the element ``selector`` names, measured and drawn in one layout: the viewport
        made as tall as the page first (a capture beyond a shorter viewport lays the page out again,
        and what wraps above the element moves it)."""
        height = self.evaluate("Math.ceil(document.documentElement.scrollHeight)")
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        self.call("Emulation.setDeviceMetricsOverride", metrics, session=True)
        try:
            box = self.evaluate(
                f"(() => {{ const b = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                " return {x: b.x + scrollX, y: b.y + scrollY, width: b.width, height: b.height}; })()"
            )
            return self.screenshot(box["x"], box["y"], box["width"], box["height"])
        finally:
            metrics["height"] = 900
            self.call("Emulation.setDeviceMetricsOverride", metrics, session=True)

    def page_screenshot(self, width: int = 1200) -> bytes:
        """A PNG of the whole page, ``width`` CSS pixels wide."""
        height = self.evaluate("Math.ceil(document.documentElement.scrollHeight)")
        return self.screenshot(0, 0, width, height)

    def console_errors(self) -> list[str]:
        errors = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(" ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
            elif method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                thrown = details.get("exception", {}).get("description", "")
                errors.append(f"{details.get('text', 'exception')} {thrown}".strip())
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                errors.append(params["entry"].get("text", ""))
        return errors

    def failed_loads(self) -> list[tuple[str, str]]:
        """(url, message) of each request answered with an error status: Chromium logs each as a
        console error, so a test expecting one (a 422 the page shows as its reason) names it here."""
        return [
            (e["params"]["entry"].get("url", ""), e["params"]["entry"].get("text", ""))
            for e in self.events
            if e["method"] == "Log.entryAdded" and e["params"]["entry"].get("source") == "network"
        ]

    def requested_urls(self) -> list[str]:
        return [
            e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"
        ]

    def close(self) -> None:
        for fd in (self._out, self._in):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def inked_share(png: bytes) -> float:
    """The share of pixels in a screenshot that are not (near) white."""
    from matplotlib.image import imread

    pixels = imread(io.BytesIO(png), format="png")[..., :3]
    return float((pixels.min(axis=-1) < 0.9).mean())
