"""One skip policy: in CI (``CI=true``) a skip fails the run unless tests/skip_allowlist.txt allows it.

Why: a module-level ``importorskip`` of a dev dependency, a missing npm peer or a setup step that
did not run turns hundreds of tests into skips, and the run stays green; only the ``-ra`` summary
shows it. Locally a skip stays a skip (a core-only install may lack the notebook extra). In CI every
skip is listed in the terminal summary, and one whose reason matches no allowlist entry makes the
exit status 1 even when every test that ran passed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ALLOWLIST = Path(__file__).resolve().parent / "skip_allowlist.txt"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def read_allowlist(path: Path = ALLOWLIST) -> list[re.Pattern[str]]:
    """The allowlist's patterns: one per non-blank, non-comment line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [re.compile(line.strip()) for line in lines if line.strip() and not line.lstrip().startswith("#")]


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The reason a skipped report gives (``Skipped: `` dropped)."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


@dataclass(eq=False)  # a plugin: hashed by identity
class SkipPolicy:
    """Collects every skip (collection and test) and judges them at the end of the session."""

    strict: bool
    allowed: list[re.Pattern[str]]
    skips: list[tuple[str, str]] = field(default_factory=list)

    def _record(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        if report.skipped and not hasattr(report, "wasxfail"):
            self.skips.append((report.nodeid, skip_reason(report)))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self._record(report)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._record(report)

    def refused(self) -> list[tuple[str, str]]:
        return [(node, why) for node, why in self.skips if not any(p.search(why) for p in self.allowed)]

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.strict and self.refused() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.strict or not self.skips:
            return
        refused = self.refused()
        terminalreporter.section(f"skips in CI: {len(self.skips)}, {len(refused)} not allowed")
        for node, why in self.skips:
            mark = "NOT ALLOWED" if (node, why) in refused else "allowed"
            terminalreporter.line(f"{mark}: {node}: {why}")
        if refused:
            terminalreporter.line(
                f"a skip in CI fails the run unless its reason matches {ALLOWLIST.name} (install the "
                "dev extra and the npm peers, or allow the skip there with a comment saying why)"
            )
