"""A very small headless-Chromium driver (DevTools protocol over ``--remote-debugging-pipe``).

Used by the tests and the benchmark of the report and the rating form: open a ``file://``
page, evaluate JavaScript, click, wait for a condition, take a screenshot, catch downloads.
Standard library only; no network, no websocket (the protocol runs over two pipes, fds 3/4,
with NUL-separated JSON messages).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
)


def find_chromium() -> str | None:
    """Path of a Chromium binary (env ``CHROMIUM`` first), or None."""
    for candidate in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if candidate and (path := shutil.which(candidate)):
            return path
    return None


class BrowserError(RuntimeError):
    pass


class Chromium:
    """One headless Chromium process with one page. Use as a context manager."""

    def __init__(
        self, binary: str | None = None, width: int = 1280, height: int = 900, timeout: float = 30.0
    ):
        self.binary = binary or find_chromium()
        if self.binary is None:
            raise BrowserError("no chromium binary found (apt-get install chromium)")
        self.timeout = timeout
        self.width, self.height = width, height
        self._profile = tempfile.mkdtemp(prefix="ib-chromium-")
        self._next_id = 0
        self._buffer = b""
        self.events: list[dict[str, Any]] = []
        self.console: list[str] = []
        self.session: str | None = None
        self._start()

    # ----- process and transport ----------------------------------------------------------------
    def _start(self) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def _wire() -> None:  # in the child: fd 3 = commands in, fd 4 = replies out
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)  # dup2(fd, fd) is a no-op that keeps close-on-exec
            os.set_inheritable(4, True)

        args = [
            self.binary,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={self._profile}",
            f"--window-size={self.width},{self.height}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.proc = subprocess.Popen(  # noqa: S603 - fixed binary and flags
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_wire,  # noqa: PLW1509 - fds 3/4 must be renumbered in the child
            close_fds=False,  # our own pipe ends are non-inheritable; only fds 3/4 pass
        )
        os.close(to_child_r)
        os.close(from_child_w)
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next((t for t in targets if t["type"] == "page"), None)
        target_id = (
            page["targetId"]
            if page
            else self.send("Target.createTarget", url="about:blank")["targetId"]
        )
        self.session = self.send("Target.attachToTarget", targetId=target_id, flatten=True)[
            "sessionId"
        ]
        self.send("Page.enable", session=True)
        self.send("Runtime.enable", session=True)

    def _read_message(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BrowserError("timed out waiting for chromium")
            ready, _, _ = select.select([self._from_child], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise BrowserError(f"chromium exited (code {self.proc.poll()})")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def send(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send one protocol command and wait for its reply (events are kept in ``events``)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._on_event(reply)

    def _on_event(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        if event.get("method") == "Runtime.consoleAPICalled":
            args = event["params"].get("args", [])
            self.console.append(
                " ".join(str(a.get("value", a.get("description", ""))) for a in args)
            )
        elif event.get("method") == "Runtime.exceptionThrown":
            details = event["params"]["exceptionDetails"]
            self.console.append(
                "EXCEPTION "
                + str(details.get("exception", {}).get("description", details.get("text")))
            )

    # ----- page helpers -------------------------------------------------------------------------
    def navigate(self, url: str | Path, wait_for: str | None = None) -> float:
        """Open ``url`` (a path becomes file://); with ``wait_for`` wait until that JS is truthy.

        Returns the seconds from the navigation command to the condition (or to the reply).
        """
        if isinstance(url, Path) or not str(url).startswith(
            ("file:", "http:", "https:", "about:", "data:")
        ):
            path, hash_mark, fragment = str(url).partition("#")
            url = Path(path).resolve().as_uri() + hash_mark + fragment
        start = time.monotonic()
        self.send("Page.navigate", session=True, url=str(url))
        if wait_for:
            self.wait_for(wait_for)
        return time.monotonic() - start

    def evaluate(self, expression: str, await_promise: bool = False) -> Any:
        result = self.send(
            "Runtime.evaluate",
            session=True,
            expression=expression,
            returnByValue=True,
            awaitPromise=await_promise,
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"JS error in {expression[:80]!r}: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def wait_for(
        self, expression: str, timeout: float | None = None, interval: float = 0.02
    ) -> Any:
        deadline = time.monotonic() + (timeout or self.timeout)
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(expression)
            except BrowserError:
                value = None
            if value:
                return value
            time.sleep(interval)
        raise BrowserError(f"timed out waiting for {expression!r}; console: {self.console[-5:]}")

    def screenshot(self, path: str | Path, full_page: bool = False) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", session=True, **params)["data"]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def allow_downloads(self, directory: str | Path) -> Path:
        directory = Path(directory).resolve()
        directory.mkdir(parents=True, exist_ok=True)
        self.send(
            "Browser.setDownloadBehavior",
            behavior="allow",
            downloadPath=str(directory),
            eventsEnabled=True,
        )
        return directory

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                with contextlib.suppress(BrowserError):
                    self.send("Browser.close")
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=5)
        finally:
            for fd in (self._to_child, self._from_child):
                with contextlib.suppress(OSError):
                    os.close(fd)
            shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def require_chromium() -> str | None:
    """The binary for tests: None (skip) when absent, unless ``IB_REQUIRE_CHROMIUM=1`` (CI),
    where a missing browser is an error."""
    binary = find_chromium()
    if binary is None and os.environ.get("IB_REQUIRE_CHROMIUM") == "1":
        raise BrowserError("IB_REQUIRE_CHROMIUM=1 but no chromium binary on PATH")
    return binary
