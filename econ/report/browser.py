"""Open report pages in headless Chromium and say whether they work offline.

Drives Chromium through the DevTools protocol over a pipe (``--remote-debugging-pipe``:
the browser reads commands on fd 3 and writes replies on fd 4, NUL-separated JSON), so it
needs nothing beyond the standard library and a Chromium binary. The network is refused
three ways: host resolution maps every name to nothing, a proxy that does not exist, and
DevTools' URL blocking for ``http(s)``/``ws(s)``; every request the page attempts that is
not ``file:``/``data:``/``about:``/``blob:`` is reported.

For each page: console errors, uncaught exceptions, browser log errors (failed loads),
attempted network requests, JavaScript dialogs (an ``alert`` from injected markup would
show here), and each chart's status and number of drawn marks as recorded by
``assets/econ.js``, with the time from navigation start until every chart was drawn.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from econ.errors import ReportError

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
LOCAL_SCHEMES = ("file:", "data:", "about:", "blob:", "chrome-error:")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--window-size=1280,900",
    "--disable-dev-shm-usage",
)


def find_chromium() -> str | None:
    """Path of a Chromium binary: ``$ECON_CHROMIUM``, else the first of CANDIDATES on ``PATH``."""
    explicit = os.environ.get("ECON_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).exists() else None
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageCheck:
    """What happened when one page was opened."""

    path: Path
    charts: list[dict] = field(default_factory=list)  # {id, status, marks, error} per chart
    console_errors: list[str] = field(default_factory=list)
    console_warnings: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    log_errors: list[str] = field(default_factory=list)
    network: list[str] = field(default_factory=list)  # non-local URLs the page tried to load
    dialogs: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)  # recorded by econ.js (load and script errors)
    render_s: float = float("nan")  # navigation start until every chart was drawn (the page's own clock)
    wall_s: float = float("nan")  # from the navigate command until the page reported back

    @property
    def ok(self) -> bool:
        drawn = all(c.get("status") == "rendered" and c.get("marks", 0) > 0 for c in self.charts)
        return drawn and not (
            self.console_errors
            or self.exceptions
            or self.log_errors
            or self.network
            or self.dialogs
            or self.page_errors
        )

    def problems(self) -> list[str]:
        out = [
            f"chart {c.get('id')}: {c.get('status')} ({c.get('marks', 0)} marks) {c.get('error') or ''}".strip()
            for c in self.charts
            if c.get("status") != "rendered" or not c.get("marks")
        ]
        for label in ("console_errors", "exceptions", "log_errors", "network", "dialogs", "page_errors"):
            out += [f"{label}: {item}" for item in getattr(self, label)]
        return out


class Chromium:
    """A headless Chromium driven over the DevTools pipe; use as a context manager."""

    def __init__(self, executable: str | None = None, *, timeout_s: float = 30.0):
        self.executable = executable or find_chromium()
        if not self.executable:
            raise ReportError(
                "no Chromium found", "install Debian's chromium (apt-get install chromium) or set ECON_CHROMIUM"
            )
        self.timeout_s = timeout_s
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict] = []
        self.session: str | None = None

    # -- process and pipe

    def __enter__(self) -> Chromium:
        self._profile = tempfile.mkdtemp(prefix="econ-chromium-")
        self._log = tempfile.TemporaryFile()
        cmd_read, self._cmd_write = os.pipe()  # we write commands -> child's fd 3
        self._event_read, event_write = os.pipe()  # child's fd 4 -> we read replies

        def wire_fds():  # runs in the child: put the pipe ends at 3 and 4, inheritable
            a = fcntl.fcntl(cmd_read, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(event_write, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [self.executable, *FLAGS, f"--user-data-dir={self._profile}", "--remote-debugging-pipe", "about:blank"]
        self.process = subprocess.Popen(
            args, preexec_fn=wire_fds, close_fds=False, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log
        )
        os.close(cmd_read)
        os.close(event_write)
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
                self.call(domain, session=True)
            self.call("Network.setBlockedURLs", {"urls": ["http://*", "https://*", "ws://*", "wss://*"]}, session=True)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self.process.poll() is None:
                self._send("Browser.close")
                self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired, ReportError):
            self.process.kill()
            self.process.wait(timeout=5)
        finally:
            for fd in (self._cmd_write, self._event_read):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._log.close()
            shutil.rmtree(self._profile, ignore_errors=True)

    def _stderr_tail(self) -> str:
        self._log.seek(0)
        lines = [ln for ln in self._log.read().decode("utf-8", "replace").splitlines() if "dbus" not in ln]
        return "\n".join(lines[-8:])

    def _send(self, method: str, params: dict | None = None, *, session: bool = False) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        try:
            os.write(self._cmd_write, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise ReportError(
                f"Chromium exited: {self._stderr_tail()}", "check that the chromium binary starts headless"
            ) from None
        return self._next_id

    def _receive(self, deadline: float) -> dict | None:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self._event_read], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(self._event_read, 1 << 20)
            if not chunk:
                raise ReportError(
                    f"Chromium closed the DevTools pipe: {self._stderr_tail()}", "check the chromium binary"
                )
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message = json.loads(raw)
        if message.get("method") == "Page.javascriptDialogOpening":  # never leave the page blocked on a dialog
            self._send("Page.handleJavaScriptDialog", {"accept": True}, session=True)
        return message

    def call(
        self, method: str, params: dict | None = None, *, session: bool = False, timeout_s: float | None = None
    ) -> dict:
        """Send one command and return its result; events that arrive meanwhile are kept."""
        wanted = self._send(method, params, session=session)
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        while True:
            message = self._receive(deadline)
            if message is None:
                raise ReportError(
                    f"Chromium did not answer {method} in time", "the page may hang; open it in a browser"
                )
            if message.get("id") == wanted:
                if "error" in message:
                    raise ReportError(
                        f"Chromium refused {method}: {message['error'].get('message')}", "check the page URL"
                    )
                return message.get("result", {})
            self._events.append(message)

    def _wait_for(self, method: str, deadline: float) -> bool:
        if any(e.get("method") == method for e in self._events):
            return True
        while True:
            message = self._receive(deadline)
            if message is None:
                return False
            self._events.append(message)
            if message.get("method") == method:
                return True

    # -- pages

    def check(self, path: Path, *, timeout_s: float = 15.0, width_px: int | None = None) -> PageCheck:
        """Open ``path`` from ``file://`` and report what happened (see :class:`PageCheck`); ``width_px`` sets the
        viewport's width first (a phone below 600 px: touch and mobile layout)."""
        path = Path(path).resolve()
        if width_px is not None:
            self.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": width_px, "height": 900, "deviceScaleFactor": 1, "mobile": width_px < 600},
                session=True,
            )
        result = PageCheck(path)
        self._events = []
        started = time.monotonic()
        deadline = started + timeout_s
        nav = self.call("Page.navigate", {"url": path.as_uri()}, session=True, timeout_s=timeout_s)
        if nav.get("errorText"):
            result.log_errors.append(f"navigation failed: {nav['errorText']}")
            return result
        if not self._wait_for("Page.loadEventFired", deadline):
            result.exceptions.append("the page did not finish loading in time")
            return result
        ready = self.call(
            "Runtime.evaluate",
            {
                "expression": "window.econReady ? window.econReady : Promise.resolve({charts: [], errors: [], "
                "renderMs: 0})",
                "awaitPromise": True,
                "returnByValue": True,
            },
            session=True,
            timeout_s=max(0.1, deadline - time.monotonic()),
        )
        result.wall_s = time.monotonic() - started
        value = (ready.get("result") or {}).get("value") or {}
        if "exceptionDetails" in ready:
            result.exceptions.append(_exception_text(ready["exceptionDetails"]))
        result.charts = value.get("charts", [])
        result.page_errors = [str(e) for e in value.get("errors", [])]
        result.render_s = float(value.get("renderMs", float("nan"))) / 1000.0
        self._drain(0.05)
        self._collect(result)
        return result

    def evaluate(self, expression: str, *, timeout_s: float = 10.0) -> Any:
        """Evaluate JavaScript in the open page (promises are awaited); returns the JSON value."""
        reply = self.call(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            session=True,
            timeout_s=timeout_s,
        )
        if "exceptionDetails" in reply:
            raise ReportError(
                f"script failed in the page: {_exception_text(reply['exceptionDetails'])}", "check the expression"
            )
        return (reply.get("result") or {}).get("value")

    def events(self, method: str, *, wait_s: float = 0.1) -> list[dict]:
        """DevTools events named ``method`` received since the last :meth:`check` (after waiting ``wait_s``)."""
        self._drain(wait_s)
        return [e for e in self._events if e.get("method") == method]

    def _drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (message := self._receive(deadline)) is not None:
            self._events.append(message)

    def _collect(self, result: PageCheck) -> None:
        for event in self._events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                if params.get("type") in ("error", "assert"):
                    result.console_errors.append(text)
                elif params.get("type") == "warning":
                    result.console_warnings.append(text)
            elif method == "Runtime.exceptionThrown":
                result.exceptions.append(_exception_text(params.get("exceptionDetails", {})))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                result.log_errors.append(f"{entry.get('text')} ({entry.get('url', '')})")
            elif method == "Network.requestWillBeSent":
                url = params.get("request", {}).get("url", "")
                if not url.startswith(LOCAL_SCHEMES):
                    result.network.append(url)
            elif method == "Page.javascriptDialogOpening":
                result.dialogs.append(f"{params.get('type')}: {params.get('message')}")


def _exception_text(details: dict) -> str:
    exception = details.get("exception") or {}
    return str(exception.get("description") or details.get("text") or details)


def check_pages(paths: list[Path], *, executable: str | None = None, timeout_s: float = 15.0) -> list[PageCheck]:
    """Open every page in one headless Chromium; one :class:`PageCheck` each, in order."""
    with Chromium(executable) as browser:
        return [browser.check(p, timeout_s=timeout_s) for p in paths]
