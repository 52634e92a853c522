"""The benchmark runs end to end at tiny sizes, so it cannot rot. No timing is asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXPECTED_CASES = {
    "connect/stdio/echo/modern",
    "connect/stdio/echo/legacy",
    "connect/stdio/sdk-demo/modern",
    "connect/stdio/sdk-demo/legacy",
    "connect/http/echo/modern",
    "connect/http/echo/legacy",
    "sequential/stdio/echo",
    "sequential/stdio/sdk-demo",
    "sequential/http/echo",
    "in-flight-10/stdio/echo",
    "in-flight-100/stdio/echo",
    "in-flight-1000/stdio/echo",
    "in-flight-10/http/echo",
    "in-flight-100/http/echo",
    "list-tools/stdio/echo",
    "big-result/stdio/echo",
    "flood-log/stdio/echo",
    "flood-progress/stdio/echo",
    "memory/stdio/echo",
    "import",
    "dataframe/stdio/echo",
}
CLIENTS = {"ours", "ours_novalidate", "sdk", "fastmcp", "raw"}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    pytest.importorskip("pandas", reason="the DataFrame case needs pandas (the notebook extra)")
    out = tmp_path_factory.mktemp("bench") / "results.json"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--smoke", "--quiet", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ratio = ours / theirs" in proc.stdout
    return json.loads(out.read_text())


def test_every_case_is_present_and_ran(report: dict) -> None:
    cases = {case["id"]: case for case in report["cases"]}
    assert set(cases) == EXPECTED_CASES
    for case_id, case in cases.items():
        assert set(case["results"]) == CLIENTS, case_id
        statuses = {client: result["status"] for client, result in case["results"].items()}
        assert "error" not in statuses.values(), (case_id, case["results"])
        assert statuses["ours"] == "ok", case_id  # every case, stdio and HTTP
        for client, status in statuses.items():
            if status == "ok":
                metrics = case["results"][client]["metrics"]
                assert metrics, (case_id, client)
                for values in metrics.values():
                    assert isinstance(values["median"], int | float)


def test_report_has_the_table_the_machine_and_the_targets(report: dict) -> None:
    assert report["mode"] == "smoke"
    assert report["machine"]["python"]
    assert report["table"]["rows"]
    assert len(report["table"]["header"]) == len(report["table"]["rows"][0])
    assert {t["target"].split(" (")[0] for t in report["targets"]} >= {
        "sequential ≥ 85 % of the raw limit",
        "100 in flight ≥ 10× the SDK client",
        "≥ 2× the SDK over HTTP",
        "1,000 in flight with flat memory",
        "import < 100 ms without notebook libraries",
    }
