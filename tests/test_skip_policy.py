"""The skip policy (tests/skip_policy.py), run on a throwaway suite in a pytest subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.skip_policy import read_allowlist

ROOT = Path(__file__).resolve().parent.parent

CONFTEST = """
from tests.skip_policy import SkipPolicy, in_ci, read_allowlist

def pytest_configure(config):
    config.pluginmanager.register(SkipPolicy(strict=in_ci(), allowed=read_allowlist()), "policy")
"""

SUITE = {
    "test_allowed.py": (
        "import pytest\n\n"
        "def test_windows_only():\n"
        "    pytest.skip('this is Windows: the module loads')\n\n"
        "def test_runs():\n"
        "    assert True\n"
    ),
    "test_missing_dependency.py": (
        "import pytest\n\npytest.importorskip('no_such_module_for_the_policy')\n\ndef test_x():\n    pass\n"
    ),
    "test_other_skip.py": "import pytest\n\ndef test_y():\n    pytest.skip('the peer is not installed')\n",
}


PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]


def _run(tmp_path: Path, files: list[str], ci: str | None, *options: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    for name in files:
        (tmp_path / name).write_text(SUITE[name])
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [*PYTEST, *options, *files],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_in_ci_a_skip_not_allowed_fails_the_run_and_is_listed(tmp_path: Path) -> None:
    run = _run(tmp_path, list(SUITE), ci="true")
    assert run.returncode == 1, run.stdout
    assert "skips in CI: 3, 2 not allowed" in run.stdout
    assert "NOT ALLOWED: test_missing_dependency.py: could not import 'no_such_module_for_the_policy'" in (
        run.stdout
    )
    assert "NOT ALLOWED: test_other_skip.py::test_y: the peer is not installed" in run.stdout
    assert "allowed: test_allowed.py::test_windows_only: this is Windows: the module loads" in run.stdout


def test_in_ci_a_skip_not_allowed_fails_a_parallel_run_too(tmp_path: Path) -> None:
    """scripts/test.sh runs the suite on pytest-xdist workers: the controller still judges every skip."""
    run = _run(tmp_path, list(SUITE), "true", "-n", "2", "--dist", "loadfile")
    assert run.returncode == 1, run.stdout
    assert "skips in CI: 3, 2 not allowed" in run.stdout
    assert "NOT ALLOWED: test_other_skip.py::test_y: the peer is not installed" in run.stdout


def test_in_ci_allowed_skips_pass(tmp_path: Path) -> None:
    run = _run(tmp_path, ["test_allowed.py"], ci="true")
    assert run.returncode == 0, run.stdout
    assert "skips in CI: 1, 0 not allowed" in run.stdout


@pytest.mark.parametrize("ci", [None, "false"])
def test_outside_ci_a_skip_stays_a_skip(tmp_path: Path, ci: str | None) -> None:
    run = _run(tmp_path, list(SUITE), ci=ci)
    assert run.returncode == 0, run.stdout
    assert "skips in CI" not in run.stdout


def test_a_failing_run_keeps_its_status(tmp_path: Path) -> None:
    (tmp_path / "test_fails.py").write_text("def test_f():\n    assert False\n")
    SUITE["test_fails.py"] = (tmp_path / "test_fails.py").read_text()
    try:
        run = _run(tmp_path, ["test_fails.py", "test_other_skip.py"], ci="true")
    finally:
        del SUITE["test_fails.py"]
    assert run.returncode == 1, run.stdout
    assert "1 failed" in run.stdout


def test_every_allowlist_entry_follows_a_comment_saying_why() -> None:
    lines = (ROOT / "tests" / "skip_allowlist.txt").read_text(encoding="utf-8").splitlines()
    assert read_allowlist(), "the allowlist is empty"
    previous = ""
    for line in lines:
        if line.strip() and not line.startswith("#") and not previous.strip():
            pytest.fail(f"allowlist entry without a comment above it saying why: {line}")
        previous = line
