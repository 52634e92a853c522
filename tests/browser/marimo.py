"""A private marimo server on 127.0.0.1 for the browser tests: ``marimo edit`` or ``marimo run``.

The twin of :mod:`.lab` for marimo (issue #38): the server runs one notebook file (marimo's own
``.py`` format) headless, with no token, on a port the OS chose, under a home of its own (marimo's
config, state and cache folders in the test's temporary folder: nothing of the user's marimo setup
leaks in or out, and its update check is off). The page is :mod:`.notebook`'s Debian chromium
through Playwright, never a downloaded browser.

Both modes run every cell when the page opens: ``marimo run`` always, ``marimo edit`` because the
private config turns marimo's ``auto_instantiate`` on (off by default since marimo 0.25, where a
user presses Run). :meth:`MarimoPage.wait_ran` waits until the cells have run (no cell queued or
running in edit mode, and the text a test names in a cell's output); what a test checks then goes
through the DOM, as a user would see it.

Stopping: SIGTERM to the server, which ends its kernels (``marimo edit`` kills its kernel process;
``marimo run``'s kernels are threads of the server). The MCP servers the notebook started must go
with them within :data:`.lab.PROCESS_GRACE`, or the test fails naming them.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import psutil
import pytest

from .lab import FORBIDDEN, PROCESS_GRACE, ROOT, LabError, kill_leftovers
from .notebook import ACTION_TIMEOUT, RUN_TIMEOUT, VIEWPORT

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

Mode = Literal["edit", "run"]
START_TIMEOUT = 90.0  # seconds for the server to answer /health (a few seconds when idle)
STOP_TIMEOUT = 30.0  # seconds for the server to stop after SIGTERM
#: What marimo draws where an ipywidgets core control was shown (issue #38: marimo#5099).
NOT_SUPPORTED = "not supported in marimo"
#: The user config marimo reads (``$XDG_CONFIG_HOME/marimo/marimo.toml``): run the cells on open.
MARIMO_CONFIG = "[runtime]\nauto_instantiate = true\n"


class MarimoError(LabError):
    pass


@dataclass
class Marimo:
    """A running marimo server on one notebook."""

    process: subprocess.Popen[bytes]
    mode: Mode
    url: str  # http://127.0.0.1:PORT/
    notebook: Path
    log_path: Path

    def descendants(self) -> list[psutil.Process]:
        """The server's processes below it: kernels (edit mode) and the MCP servers they started."""
        try:
            return psutil.Process(self.process.pid).children(recursive=True)
        except psutil.Error:
            return []

    def log(self, last: int = 80) -> str:
        lines = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-last:])

    def our_errors(self) -> list[str]:
        """Tracebacks in the server's log (where the kernels' stderr goes) that involve this package."""
        text = self.log_path.read_text(errors="replace")
        blocks = text.split("\n\n")
        return [b for b in blocks if "mcp_notebook" in b and any(bad in b for bad in FORBIDDEN)]


def marimo_notebook(*cells: str | tuple[str, str]) -> str:
    """A marimo notebook file of these cells, in order; a cell given as ``(name, source)`` is named
    (marimo marks its element ``data-cell-name``). marimo works out what each cell defines and reads
    from its code (the cell functions' parameters and returns are only for running the file as a
    script), so each cell is written as ``def NAME():`` around its source."""
    parts = ["import marimo\n\napp = marimo.App()\n"]
    for cell in cells:
        name, source = cell if isinstance(cell, tuple) else ("_", cell)
        body = textwrap.indent(source.rstrip() + "\n", "    ")
        parts.append(f"\n@app.cell\ndef {name}():\n{body}    return\n")
    parts.append('\n\nif __name__ == "__main__":\n    app.run()\n')
    return "".join(parts)


def require_marimo() -> None:
    try:
        import marimo  # noqa: F401
    except ImportError:
        pytest.fail("marimo is not installed: run scripts/setup.sh (it installs the dev extra)")


def free_port() -> int:
    """A port the OS has free now (marimo wants a number; the OS picks it, never a fixed one)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _environment(base: Path) -> dict[str, str]:
    home = base / "home"
    for folder in ("config/marimo", "state", "cache"):
        (home / folder).mkdir(parents=True, exist_ok=True)
    (home / "config" / "marimo" / "marimo.toml").write_text(MARIMO_CONFIG)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("MARIMO", "XDG_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(home / "cache"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        PYTHONUNBUFFERED="1",
    )
    return env


@contextmanager
def running_marimo(mode: Mode, notebook: Path, base: Path, *options: str) -> Iterator[Marimo]:
    """``marimo MODE notebook [options]`` started in ``base``, once it answers; stopped afterwards,
    its kernels and the MCP servers they started gone (or the test fails naming them)."""
    require_marimo()
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "marimo",
        "--yes",  # never a prompt (there is no one to answer it)
        mode,
        str(notebook),
        "--headless",
        "--no-token",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-sandbox",
        *options,
    ]
    if mode == "edit":
        argv.append("--skip-update-check")
    log_path = base / f"marimo-{mode}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            argv,
            cwd=notebook.parent,
            env=_environment(base),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    print(f"marimo {mode} (pid {process.pid}) logs to {log_path}")
    server: Marimo | None = None
    try:
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + START_TIMEOUT
        while server is None:
            if process.poll() is not None:
                raise MarimoError(f"marimo {mode} exited with {process.returncode}:\n{log_path.read_text()}")
            if time.monotonic() > deadline:
                raise MarimoError(
                    f"marimo did not answer within {START_TIMEOUT:.0f} s:\n{log_path.read_text()}"
                )
            with suppress(OSError), urllib.request.urlopen(f"{url}health", timeout=5) as answer:
                if answer.status == 200:
                    server = Marimo(process, mode, url, notebook, log_path)
                    break
            time.sleep(0.1)
        yield server
    finally:
        _stop(process, log_path)


def _read(log_path: Path) -> str:
    return log_path.read_text(errors="replace")


def _stop(process: subprocess.Popen[bytes], log_path: Path) -> None:
    """SIGTERM (marimo ends its sessions and kernels); escalates if the server does not stop."""
    try:
        below = psutil.Process(process.pid).children(recursive=True)
    except psutil.Error:
        below = []
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
        kill_leftovers(below, "processes of a marimo server that had to be killed", 0)
        raise MarimoError(
            f"marimo did not stop within {STOP_TIMEOUT:.0f} s:\n{log_path.read_text()}"
        ) from None
    kill_leftovers(below, "kernels or MCP servers of the stopped marimo", PROCESS_GRACE)


@dataclass
class MarimoPage:
    """The notebook open in a page of ``browser``; ``console`` keeps the page's messages."""

    server: Marimo
    browser: Browser
    screenshots: Path
    page: Page = field(init=False)
    console: list[str] = field(default_factory=list)

    def open(self) -> MarimoPage:
        self.page = self.browser.new_page(viewport=VIEWPORT)
        self.page.set_default_timeout(ACTION_TIMEOUT * 1000)
        self.page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        self.page.on("pageerror", lambda error: self.console.append(f"pageerror: {error}"))
        self.page.goto(self.server.url)
        return self

    def wait_ran(self, text: str) -> None:
        """Wait until the cells have run: ``text`` (what the notebook's last cell shows once every
        cell before it ran) is in an output (not only in the code), and in edit mode no cell is
        queued or running."""
        from playwright.sync_api import expect

        try:
            shown = self.page.locator(".output-area").get_by_text(text).first
            expect(shown).to_be_visible(timeout=RUN_TIMEOUT * 1000)
            busy = self.page.locator('[data-status="running"], [data-status="queued"]')
            expect(busy).to_have_count(0, timeout=RUN_TIMEOUT * 1000)
        except AssertionError:
            self.shot("not-ran")
            raise MarimoError(
                f"the notebook's cells did not run ({text!r} never showed); the server's log:\n"
                + self.server.log()
            ) from None

    def output_of(self, text: str) -> Locator:
        """The output area that holds ``text`` (marimo's cell outputs are ``.output-area``)."""
        return self.page.locator(".output-area").filter(has_text=text).first

    def cell(self, name: str) -> Locator:
        """The cell named ``name`` (see :func:`marimo_notebook`), its output included."""
        return self.page.locator(f'[data-cell-name="{name}"]').first

    def shot(self, name: str) -> None:
        with suppress(Exception):
            self.page.screenshot(path=str(self.screenshots / f"{name}.png"), full_page=True)

    def close(self) -> None:
        self.shot("last")
        (self.screenshots / "browser-console.txt").write_text("\n".join(self.console))
        with suppress(Exception):
            self.page.close()


@contextmanager
def marimo_page(
    mode: Mode, notebook: Path, browser: Browser, base: Path, screenshots: Path, *options: str
) -> Iterator[MarimoPage]:
    """The notebook served by ``marimo MODE`` and open in a page; everything stopped afterwards,
    and the page must have raised nothing uncaught nor the kernels logged a traceback of ours."""
    with running_marimo(mode, notebook, base, *options) as server:
        page = MarimoPage(server, browser, screenshots).open()
        try:
            yield page
        finally:
            page.close()
        uncaught = [line for line in page.console if line.startswith("pageerror:")]
        assert not uncaught, (
            f"uncaught errors in the page (see {screenshots}/browser-console.txt): {uncaught}"
        )
        errors = server.our_errors()
        assert not errors, "errors in marimo's log:\n" + "\n".join(errors)


__all__ = [
    "NOT_SUPPORTED",
    "Marimo",
    "MarimoError",
    "MarimoPage",
    "free_port",
    "marimo_notebook",
    "marimo_page",
    "running_marimo",
]
