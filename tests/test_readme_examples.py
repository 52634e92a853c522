"""The README's examples run as written, where Debian has no ``python`` on PATH (#37, item 3).

Every ```python block of README.md, and every block of ``%mcp`` lines, runs in a subprocess of its
own, read from the README so the two cannot drift: blocks of "In a notebook" and magic blocks as
one cell of an IPython shell (top-level ``await`` and magics, as in a notebook), the others as a
script. The subprocess's PATH is one empty folder: no ``python`` (as on Debian, or in a virtualenv
made by the README's set-up and never activated), no pyenv shims; the examples start the demo
server as ``python -m mcp_notebook.demo`` and must still reach it. Each must exit 0.

Not run: ```bash blocks (they set things up: a virtualenv, the development kit, a benchmark run;
tests/test_front_door.py runs the user's one), a fenced block that is neither Python nor magics
(a picture of folders), and a block the README marks ``<!-- readme-example: skip: REASON -->``
(a fragment, or one that needs a server of yours); ``test_what_is_not_run_says_why`` lists them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SKIP_MARKER = re.compile(r"<!-- readme-example: skip: (?P<reason>.+?) -->")
FENCE = re.compile(r"^```(?P<lang>\w*)\s*$")
NOTEBOOK_SECTION = "## In a notebook"
TIMEOUT = 240  # seconds per block: the notebook block does a dozen things, on a busy machine

#: One cell of an IPython shell: what a notebook does with a block, top-level await included.
CELL_RUNNER = """
import sys
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
result = shell.run_cell(open(sys.argv[1], encoding="utf-8").read())
sys.exit(0 if result.success else 1)
"""


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    section: str  # the "## " heading it is under
    marked_skip: str | None  # the reason a marker before it gives

    @property
    def magics(self) -> bool:
        lines = [line for line in self.code.splitlines() if line.strip()]
        return bool(lines) and all(line.lstrip().startswith("%") for line in lines)

    @property
    def skip_reason(self) -> str | None:
        if self.lang == "bash":
            return "shell commands that set things up or run the tests (the front door: test_front_door.py)"
        if self.lang != "python" and not self.magics:
            return "not code"
        return self.marked_skip

    @property
    def in_ipython(self) -> bool:
        return self.magics or self.section == NOTEBOOK_SECTION

    def __str__(self) -> str:
        return f"README.md:{self.line}"


def readme_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    section = ""
    previous = ""  # the last non-blank line before a fence
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = FENCE.match(line)
        if line.startswith("## "):
            section = line.strip()
        if fence is None:
            if line.strip():
                previous = line
            index += 1
            continue
        end = index + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        marker = SKIP_MARKER.search(previous)
        code = "\n".join(lines[index + 1 : end]) + "\n"
        blocks.append(Block(index + 1, fence["lang"], code, section, marker["reason"] if marker else None))
        previous = ""
        index = end + 1
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))
RUN = [block for block in BLOCKS if block.skip_reason is None]


def test_the_examples_the_readme_presents_as_runnable_are_all_found() -> None:
    sections = {block.section for block in RUN}
    assert "## Using the client" in sections
    assert NOTEBOOK_SECTION in sections
    assert any(block.magics for block in RUN)


def test_what_is_not_run_says_why() -> None:
    skipped = [block for block in BLOCKS if block.skip_reason is not None]
    for block in skipped:
        assert block.skip_reason.strip(), f"{block} is skipped without a reason"
    # a marker on a block that runs anyway would be a reason nobody reads
    for block in RUN:
        assert block.marked_skip is None, block


@pytest.fixture
def no_python_env(tmp_path: Path) -> dict[str, str]:
    """The examples' environment: PATH is one empty folder, so there is no ``python`` on it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    assert shutil.which("python", path=str(bin_dir)) is None
    env = {"PATH": str(bin_dir), "HOME": str(home), "IPYTHONDIR": str(home / ".ipython"), "LANG": "C.UTF-8"}
    for name in ("TMPDIR", "SYSTEMROOT"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


@pytest.mark.timeout(TIMEOUT + 60)
@pytest.mark.usefixtures("no_leaked_processes")
@pytest.mark.parametrize("block", RUN, ids=str)
def test_a_readme_example_runs_as_written(
    block: Block, tmp_path: Path, no_python_env: dict[str, str]
) -> None:
    source = tmp_path / "example.py"
    source.write_text(block.code, encoding="utf-8")
    argv = (
        [sys.executable, "-c", CELL_RUNNER, str(source)]
        if block.in_ipython
        else [sys.executable, str(source)]
    )
    done = subprocess.run(
        argv, cwd=tmp_path, env=no_python_env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    output = (done.stdout + done.stderr)[-6000:]
    assert done.returncode == 0, f"{block} ({block.section}) failed:\n{block.code}\n--- its output:\n{output}"
    assert "Traceback" not in output, output
