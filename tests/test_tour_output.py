"""The terminal tour reads as prose: no raw dict or dataclass reprs, whole numbers as integers.

``python -m mcp_notebook.demo.tour`` is the first thing the README runs (tests/test_front_door.py
runs it from a fresh clone); this runs it from the checkout, piped as CI and ``| tee`` run it, and
reads its output as the pipe delivers it: a line at a time (not one block at the end), with request
counts that add up.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import PYTHON

ROOT = Path(__file__).resolve().parents[1]
HANG_GUARD = 300  # only stops a hang; the tour takes about 25 s
SECOND_ERA = "=== The same server restricted"


@dataclass
class TourRun:
    #: stdout as the pipe delivered it, one read at a time.
    chunks: list[str]
    returncode: int
    stderr: str

    @property
    def out(self) -> str:
        return "".join(self.chunks)


def _without(environ: Mapping[str, str], name: str) -> dict[str, str]:
    return {key: value for key, value in environ.items() if key != name}


@pytest.fixture(scope="module")
def tour() -> TourRun:
    """One run of the tour for the module, its stdout read as it comes."""
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            [PYTHON, "-m", "mcp_notebook.demo.tour"],
            cwd=ROOT,
            # as a user's shell runs it: PYTHONUNBUFFERED (set by some CI and test runners) hides
            # the block buffering of a piped stdout
            env={**_without(os.environ, "PYTHONUNBUFFERED"), "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        assert process.stdout is not None
        chunks: list[bytes] = []
        try:
            while chunk := os.read(process.stdout.fileno(), 1 << 16):
                chunks.append(chunk)
            returncode = process.wait(timeout=HANG_GUARD)
        finally:
            process.stdout.close()
            if process.poll() is None:
                process.kill()
                process.wait()
        stderr.seek(0)
        errors = stderr.read().decode(errors="replace")
    return TourRun([chunk.decode() for chunk in chunks], returncode, errors)


def test_the_tour_prints_no_raw_reprs(tour: TourRun) -> None:
    out = tour.out
    assert tour.returncode == 0, tour.stderr[-3000:]
    assert "era=modern" in out
    assert "era=legacy" in out
    assert "{'" not in out, out
    assert "ConnectionStats(" not in out, out
    assert "server=mcp-notebook-demo 0.1.0 ('MCP Notebook demo server')" in out, out
    assert "connection stats:" in out
    assert "4/4 step 4/4" in out, out  # the progress total as an integer, not 4.0
    assert "resources: demo://readme, " in out, out


def test_piped_the_tour_prints_as_it_goes(tour: TourRun) -> None:
    """The first era's lines reach the pipe while the tour goes on: block-buffered, they all came
    in one piece at the end (or in 8 KiB blocks), the second era's with them."""
    assert tour.returncode == 0, tour.stderr[-3000:]
    assert SECOND_ERA in tour.out
    assert SECOND_ERA not in tour.chunks[0], tour.chunks[0]


def test_the_tours_request_counts_add_up(tour: TourRun) -> None:
    """Each era's stats line says how many requests there were and how every one of them ended or
    stays open: the parts add up to the total (a listen stream left open is one of them)."""
    assert tour.returncode == 0, tour.stderr[-3000:]
    lines = re.findall(r"^ +(\d+) requests\W+(.*)$", tour.out, flags=re.MULTILINE)
    assert len(lines) == 2, tour.out
    for total, parts in lines:
        counted = [int(n) for n in re.findall(r"(\d+) [a-z]", parts)]
        assert sum(counted) == int(total), (total, parts)
