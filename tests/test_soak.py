"""The soak run in CI: 60 s of mixed load on one connection whose server is killed every 3 s.

``benchmarks/soak.py`` does the work and judges it (every call ends, nothing hangs, memory flat,
no task, descriptor or process left behind); this test runs it in a fresh interpreter, so what
it counts is the client's alone, and shows its report when an invariant broke. The 30-minute run
is documented in the README's Reliability section.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_connection_under_mixed_load_with_its_server_killed_every_few_seconds_stays_flat() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.soak", "--seconds", "60", "--kill-every", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.stdout.strip(), f"no report; stderr:\n{run.stderr[-4000:]}"
    report = json.loads(run.stdout)
    assert run.returncode == 0, f"invariants broke: {report['problems']}\n{json.dumps(report, indent=2)}"
    assert report["kills"] >= 15
    assert report["reconnects"] >= report["kills"] // 2
    assert report["ok"] > 100
    assert report["malformed_frames"] > 0
