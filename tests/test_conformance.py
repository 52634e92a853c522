"""The official MCP client conformance suite, run against our client (tests/conformance/client.py).

Three runs of ``@modelcontextprotocol/conformance`` (pinned in tests/package.json, installed with
the Node 22 it needs by ``npm ci --prefix tests``):

* ``0.1.16`` with ``--suite all``: the released suite (2025-11-25 and older revisions);
* ``0.2.0-alpha.12`` with ``--suite all``: every client scenario, each at its own default revision
  (2025-11-25 for those that exist there, 2026-07-28 for the ones new in it, 2025-11-25 for
  extensions);
* ``0.2.0-alpha.12`` with ``--requirements 2026-07-28``: what conformance to 2026-07-28 requires
  plus the extension scenarios, all on the 2026-07-28 wire (a scenario that exists in both
  revisions must be run once under each: one run does not cover the other).

Each run goes against ``tests/conformance/expected-failures-<run>.yml``. The test prints one line per
scenario to the log (even when it passes), and fails naming each unexpected failure with its failed
checks, read from the output folder. ``sse-retry`` times the client's reconnect on the harness's
clock (450-700 ms after the mock closed a stream) inside the full parallel run, and must pass
there: the other clients lower their CPU priority so that the harness is not too starved to keep
time (see tests/conformance/client.py).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
NODE = TESTS / "node_modules" / ".bin" / "node"
CLIENT = TESTS / "conformance" / "client.py"
STABLE = TESTS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
ALPHA = TESTS / "node_modules" / "conformance-alpha" / "dist" / "index.js"

#: How long one client may take inside the harness (its --timeout), and one harness run in all. The
#: harness starts all of a suite's ~100 scenario clients at once and serves them from one Node
#: process: beside the parallel suite on 2 cores, auth scenarios (a dozen round trips each) took over
#: 25 s where alone they take 1-3 s, so a client gets 60 s (conformance/client.py's deadlines sit
#: under it); a client that hangs still fails its scenario, a minute later.
SCENARIO_TIMEOUT_MS = 60_000
RUN_TIMEOUT = 480.0
#: Scenarios a harness run may skip, per run id, each with the reason. A skip not listed here fails
#: the run, and so does an entry that is not skipped: a skipped scenario counts as not passed.
#: (Measured: none of the three runs skips one today; the harness skips a scenario that does not
#: apply at the spec version a run pins.)
EXPECTED_SKIPS: dict[str, dict[str, str]] = {}

pytestmark = pytest.mark.peers


@dataclass(frozen=True)
class HarnessRun:
    id: str
    harness: Path
    selection: tuple[str, ...]

    @property
    def expected_failures(self) -> Path:
        return TESTS / "conformance" / f"expected-failures-{self.id}.yml"


RUNS = [
    HarnessRun("0.1.16", STABLE, ("--suite", "all")),
    HarnessRun("0.2.0-alpha.12", ALPHA, ("--suite", "all")),
    HarnessRun("0.2.0-alpha.12-2026-07-28", ALPHA, ("--requirements", "2026-07-28")),
]


@dataclass
class Outcome:
    scenario: str
    passed: int
    failed: int
    warnings: int
    skipped: bool = False

    @property
    def ok(self) -> bool:
        """Passed: ran, and no check failed or warned. A scenario the harness skipped proved
        nothing, so it is not a pass (it must be listed in EXPECTED_SKIPS with a reason)."""
        return not self.skipped and self.failed == 0 and self.warnings == 0

    def line(self) -> str:
        if self.skipped:
            return f"  SKIP  {self.scenario}  (not run by the harness: not passed)"
        counts = f"{self.passed} checks ok"
        if self.failed:
            counts += f", {self.failed} failing"
        if self.warnings:
            counts += f", {self.warnings} warning(s)"
        return f"  {'ok  ' if self.ok else 'FAIL'}  {self.scenario}  ({counts})"


_SUMMARY_LINE = re.compile(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed(?:, (\d+) warnings)?")
_SKIPPED_LINE = re.compile(r"^- (\S+): skipped$")
_RUNNING = re.compile(r"^Running .*\((\d+) scenarios\) in parallel")


def client_command() -> str:
    """The command the harness runs (it splits it on spaces and appends the server URL)."""
    command = f"{sys.executable} {CLIENT}"
    if len(command.split(" ")) != 2:
        pytest.fail(f"the harness splits its --command on spaces; these paths contain one: {command}")
    return command


def run_harness(
    run: HarnessRun, command: str, out: Path, extra: tuple[str, ...] = ()
) -> tuple[int, str, str, float]:
    """Run one harness invocation with a hard time bound; its exit code, stdout, stderr, seconds."""
    argv = [
        str(NODE),
        str(run.harness),
        "client",
        "--command",
        command,
        "--timeout",
        str(SCENARIO_TIMEOUT_MS),
        "-o",
        str(out),
        *extra,
    ]
    started = time.monotonic()
    # A session of its own, so that on timeout the harness and every client it spawned go together.
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(
            f"conformance {run.id} did not finish within {RUN_TIMEOUT:.0f} s\n"
            f"--- stdout (end) ---\n{stdout[-3000:]}\n--- stderr (end) ---\n{stderr[-3000:]}"
        )
    return proc.returncode, stdout, stderr, time.monotonic() - started


def parse_summary(stdout: str) -> tuple[int | None, dict[str, Outcome]]:
    """The announced scenario count and the per-scenario lines of the suite summary."""
    announced = None
    outcomes: dict[str, Outcome] = {}
    in_summary = False
    for line in stdout.splitlines():
        if (m := _RUNNING.match(line)) and announced is None:
            announced = int(m.group(1))
        if line.strip() == "=== SUITE SUMMARY ===":
            in_summary = True
            continue
        if not in_summary:
            continue
        if m := _SUMMARY_LINE.match(line):
            outcomes[m.group(2)] = Outcome(m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(5) or 0))
        elif m := _SKIPPED_LINE.match(line):
            outcomes[m.group(1)] = Outcome(m.group(1), 0, 0, 0, skipped=True)
    return announced, outcomes


def read_expected_failures(path: Path) -> dict[str, str]:
    """``client:`` entries of an expected-failures file, each with the comment above it as reason."""
    entries: dict[str, str] = {}
    reason: list[str] = []
    in_client = False
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not raw.startswith((" ", "-", "#")) and line:
            in_client = line.startswith("client:")
            reason = []
            continue
        if line.startswith("#"):
            reason.append(line.lstrip("# "))
        elif in_client and line.startswith("- "):
            entries[line[2:].strip().strip("'\"")] = " ".join(reason)
            reason = []
    return entries


def scenario_dirs(out: Path, scenario: str) -> list[Path]:
    """The result folders the harness wrote for one scenario (``<scenario>-<timestamp>``)."""
    parent = (out / scenario).parent
    stem = scenario.rsplit("/", 1)[-1]
    pattern = re.compile(re.escape(stem) + r"-\d{4}-\d{2}-\d{2}T")
    if not parent.is_dir():
        return []
    return sorted(p for p in parent.iterdir() if p.is_dir() and pattern.match(p.name))


def explain(out: Path, scenario: str) -> str:
    """The failed and warned checks of a scenario, and the end of its client's stderr."""
    lines = [f"{scenario}:"]
    for folder in scenario_dirs(out, scenario):
        try:
            checks = json.loads((folder / "checks.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            lines.append(f"    (no readable checks.json in {folder}: {exc})")
            continue
        for check in checks:
            if check.get("status") in ("FAILURE", "WARNING"):
                message = check.get("errorMessage") or check.get("description") or ""
                label = f"{check['status']} {check.get('id')} [{check.get('name')}]"
                lines.append(f"    {label}: {message[:400]}")
        stderr_file = folder / "stderr.txt"
        if stderr_file.exists():
            tail = stderr_file.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-6:]
            if tail:
                lines.append("    client stderr (end):")
                lines.extend(f"      {t[:300]}" for t in tail)
    if len(lines) == 1:
        lines.append("    (no result folder found)")
    return "\n".join(lines)


@pytest.mark.parametrize("run", RUNS, ids=[r.id for r in RUNS])
def test_conformance(run: HarnessRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for path in (NODE, run.harness):
        if not path.exists():
            pytest.fail(f"{path} is missing: run `npm ci --prefix tests` (the .ci/run script does)")
    version = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith("v22."), f"the harness needs Node 22, {NODE} is {version.strip()}"
    command = client_command()
    expected = read_expected_failures(run.expected_failures)
    out = tmp_path / "results"

    code, stdout, stderr, seconds = run_harness(
        run, command, out, (*run.selection, "--expected-failures", str(run.expected_failures))
    )
    (tmp_path / "harness.stdout").write_text(stdout, encoding="utf-8")
    (tmp_path / "harness.stderr").write_text(stderr, encoding="utf-8")
    announced, outcomes = parse_summary(stdout)
    if announced is None or len(outcomes) != announced:
        pytest.fail(
            f"conformance {run.id} ({' '.join(run.selection)}) gave no complete summary "
            f"(announced {announced} scenarios, found {len(outcomes)}; exit {code})\n"
            f"--- stdout (end) ---\n{stdout[-3000:]}\n--- stderr (end) ---\n{stderr[-3000:]}"
        )

    skipped = {name for name, o in outcomes.items() if o.skipped}
    expected_skips = EXPECTED_SKIPS.get(run.id, {})
    failing = {name for name, o in outcomes.items() if not o.ok} - skipped
    report = [
        f"\nconformance {run.id} ({' '.join(run.selection)}): {len(outcomes)} scenarios, "
        f"{len(outcomes) - len(failing) - len(skipped)} ok, {len(failing)} failing "
        f"({len(failing & set(expected))} of them expected), {len(skipped)} skipped (not passed), "
        f"harness exit {code}, {seconds:.1f} s"
    ]
    for name in sorted(outcomes):
        report.append(outcomes[name].line())
        if name in failing and name in expected:
            report.append(f"      expected: {expected[name][:150]}")
        if name in skipped and name in expected_skips:
            report.append(f"      expected skip: {expected_skips[name][:150]}")
    with capsys.disabled():  # the table goes to the log even when the test passes
        print("\n".join(report), flush=True)

    unexpected = sorted(failing - set(expected))
    stale = sorted(name for name in expected if name not in failing)
    problems = []
    if unexpected:
        problems.append("unexpected failures:\n" + "\n".join(explain(out, name) for name in unexpected))
    if stale:
        listed = run.expected_failures.name
        problems.append(f"passing or not run, but listed in {listed} (remove them): {', '.join(stale)}")
    if unexpected_skips := sorted(skipped - set(expected_skips)):
        problems.append(
            "skipped by the harness, so not passed (fix the run, or list them in EXPECTED_SKIPS with "
            f"a reason): {', '.join(unexpected_skips)}"
        )
    if stale_skips := sorted(set(expected_skips) - skipped):
        problems.append(f"run, but listed in EXPECTED_SKIPS (remove them): {', '.join(stale_skips)}")
    if not problems and code != 0:
        problems.append(f"the harness exited {code} although every failure was expected:\n{stdout[-2000:]}")
    assert not problems, f"conformance {run.id} ({' '.join(run.selection)}): " + "\n\n".join(problems)


def test_a_scenario_the_harness_skipped_is_not_a_pass() -> None:
    stdout = (
        "Running client suite (2 scenarios) in parallel\n"
        "=== SUITE SUMMARY ===\n"
        "✓ ran: 3 passed, 0 failed\n"
        "- not-applicable: skipped\n"
    )
    announced, outcomes = parse_summary(stdout)
    assert announced == 2
    assert outcomes["ran"].ok
    assert outcomes["not-applicable"].skipped
    assert not outcomes["not-applicable"].ok
    assert "not passed" in outcomes["not-applicable"].line()
