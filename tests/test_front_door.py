"""The README's main command, the one for users, works on a fresh clone without root or a browser.

The command is read from README.md (the ```bash block right after the ``front-door`` comment in
the Quick start), so the README and this test cannot drift. It runs once per session in a fresh
``git clone`` of this repository (what is committed, as CI sees it), as the unprivileged ``nobody``
when the tests run as root, with its own HOME and pip cache, and with a PATH whose first folder
holds tripwires named like the development kit's tools (apt-get, sudo, npm, node, playwright,
chromium, ...): each one fails loudly and leaves a note, so a command that reaches for any of them
fails here. pip installs from a wheelhouse resolved from the package index once per run
(tests/wheels.py; ``PIP_NO_INDEX`` and ``PIP_FIND_LINKS`` in the command's environment), so the
command runs as written in a fresh virtualenv and builds the clone from source, without downloading
the same hundred wheels again. The tour must then run unattended to its end, and ``tour --lab``
from the same environment must serve the quickstart notebook.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from . import wheels

ROOT = Path(__file__).resolve().parent.parent
MARKER = "<!-- front-door:"
COMMAND_TIMEOUT = 600  # seconds: a busy machine (from the wheelhouse it takes well under a minute)
LAB_TIMEOUT = 90  # seconds for JupyterLab to serve the notebook
#: The user's python3: new enough, with venv, and where it lives (its wheels are built for it).
PYTHON3_CHECK = "import sys, venv; print(sys.version_info >= (3, 11), sys.executable)"

#: What the user's command must never call: the development kit, root, a browser.
TRIPWIRES = (
    "apt-get",
    "apt",
    "dpkg",
    "sudo",
    "su",
    "npm",
    "npx",
    "node",
    "corepack",
    "playwright",
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "firefox",
)


def readme_command(readme: str) -> str:
    """The user's command: the first ```bash block after the front-door marker, as one line."""
    _, marker, rest = readme.partition(MARKER)
    assert marker, f"README.md has no {MARKER!r} comment before the user's command"
    block = re.search(r"```bash\n(.*?)```", rest, re.DOTALL)
    assert block, "no ```bash block after the front-door marker"
    lines = [line for line in block.group(1).splitlines() if line.strip() and not line.startswith("#")]
    assert len(lines) == 1, f"the user's command should be one line, not {lines}"
    return lines[0]


def test_readme_marks_one_user_command_without_the_development_kit() -> None:
    command = readme_command((ROOT / "README.md").read_text())
    assert "mcp_notebook.demo.tour" in command
    for word in ("sudo", "apt-get", "npm", "playwright", "setup.sh", "[dev"):
        assert word not in command, f"the user's command mentions {word!r}: {command}"


# --- the command on a fresh clone ------------------------------------------------------------------


@dataclass
class FrontDoor:
    clone: Path
    env: dict[str, str]
    as_user: list[str]  # the prefix that drops root, or nothing
    output: str
    tripped: str

    def lab(self) -> list[str]:
        """``tour --lab`` in the environment the command made, as the same user."""
        python = str(self.clone / ".venv-demo" / "bin" / "python")
        return [*self.as_user, python, "-m", "mcp_notebook.demo.tour", "--lab", "--no-browser"]


def _unprivileged() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv"):
        return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    if shutil.which("runuser"):
        return ["runuser", "-u", "nobody", "--"]
    pytest.fail("running as root, and neither setpriv nor runuser is here to drop to nobody")


def _chown_to_nobody(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", "nobody:nogroup", str(path)], check=True)


def _tripwires(folder: Path, log: Path) -> None:
    folder.mkdir()
    for name in TRIPWIRES:
        script = folder / name
        script.write_text(
            "#!/bin/sh\n"
            f'echo "$0 $*" >> "{log}"\n'
            'echo "front door: the user\'s command ran $0, which it must not need" >&2\n'
            "exit 97\n"
        )
        script.chmod(0o755)


def readme_extras(command: str) -> str:
    """The extras the command installs the clone with (``'.[notebook,demo,lab]'``)."""
    found = re.search(r"""pip install ['"]?\.(\[[\w,-]+\])""", command)
    assert found, f"the command should pip install the clone with extras: {command}"
    return found.group(1)


class _Run:
    """The user's command on a fresh clone: started by the fixture, which then awaits it."""

    def __init__(self, wheelhouse: Callable[[str, str], Path]) -> None:
        """``wheelhouse(python, requirement)``: the wheels that ``python`` needs to install it."""
        self.workspace = Path(tempfile.mkdtemp(prefix="front-door-"))
        self.process: subprocess.Popen[str] | None = None
        self.skip_reason = ""
        self.workspace.chmod(0o755)
        self.clone = self.workspace / "clone"
        # --no-hardlinks: the clone's files are chowned below, and a hard link would chown ours too.
        subprocess.run(
            ["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(self.clone)], check=True, timeout=120
        )
        home, tmp, self.log = (
            self.workspace / "home",
            self.workspace / "tmp",
            self.workspace / "tripwires.log",
        )
        home.mkdir()
        tmp.mkdir()
        self.log.touch()
        _tripwires(self.workspace / "tripwires", self.log)
        _chown_to_nobody(self.workspace)
        self.as_user = _unprivileged()
        # root's PATH may lead into /root (pyenv shims), which nobody cannot enter: the system's then.
        rest = "/usr/local/bin:/usr/bin:/bin" if self.as_user else os.environ.get("PATH", "/usr/bin:/bin")
        self.env = {
            **{k: v for k, v in os.environ.items() if k.startswith("PIP_") or k.lower().endswith("_proxy")},
            "PATH": f"{self.workspace / 'tripwires'}{os.pathsep}{rest}",
            "HOME": str(home),
            "TMPDIR": str(tmp),
            "LANG": "C.UTF-8",
            "PIP_CACHE_DIR": str(home / "pip-cache"),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }
        python3 = subprocess.run(
            [*self.as_user, "sh", "-c", f"python3 -c '{PYTHON3_CHECK}'"],
            env=self.env,
            capture_output=True,
            text=True,
        )
        usable, _, python = python3.stdout.strip().partition(" ")
        if usable != "True":
            self.skip_reason = (
                f"no python3 >= 3.11 with venv on the user's PATH ({rest}): {python3.stderr[-300:]}"
            )
            return
        self.command = readme_command((self.clone / "README.md").read_text())
        # The user's python3 installs from a copy the user can read (the run's folder is root's only).
        local = self.workspace / "wheelhouse"
        shutil.copytree(wheelhouse(python, f"{ROOT}{readme_extras(self.command)}"), local)
        _chown_to_nobody(local)
        self.env.update(wheels.offline(local))
        self.output_file = self.workspace / "command.out"
        with self.output_file.open("w") as sink:
            self.process = subprocess.Popen(
                [*self.as_user, "bash", "-c", self.command],
                cwd=self.clone,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        self.started = time.monotonic()

    def finish(self) -> FrontDoor:
        """Wait for the command (at most COMMAND_TIMEOUT from its start) and check it succeeded."""
        if self.skip_reason:
            pytest.skip(self.skip_reason)
        assert self.process is not None
        try:
            code = self.process.wait(timeout=max(COMMAND_TIMEOUT - (time.monotonic() - self.started), 1))
        except subprocess.TimeoutExpired:
            self.stop()
            output = self.output_file.read_text()
            pytest.fail(f"the README's command took over {COMMAND_TIMEOUT} s:\n{output[-4000:]}")
        output, tripped = self.output_file.read_text(), self.log.read_text()
        assert code == 0, f"{self.command}\nexited {code}:\n{tripped}{output[-6000:]}"
        return FrontDoor(clone=self.clone, env=self.env, as_user=self.as_user, output=output, tripped=tripped)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.workspace, ignore_errors=True)


@pytest.fixture(scope="module")
def front_door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FrontDoor]:
    run_folder = wheels.run_folder(tmp_path_factory)
    run = _Run(lambda python, requirement: wheels.wheelhouse(run_folder, python, [requirement]))
    try:
        yield run.finish()
    finally:
        run.remove()


def test_readme_command_runs_the_tour_without_root_or_a_browser(front_door: FrontDoor) -> None:
    assert front_door.tripped == "", f"the command reached for the development kit:\n{front_door.tripped}"
    tour = front_door.output
    assert "era=modern" in tour
    assert "era=legacy" in tour
    assert "Done. Both eras, one client" in tour
    assert "-m mcp_notebook.demo.tour --lab" in tour.splitlines()[-1]  # the next step, as typed
    if front_door.as_user:
        owners = {path.stat().st_uid for path in (front_door.clone / ".venv-demo").iterdir()}
        assert owners == {int(subprocess.check_output(["id", "-u", "nobody"]))}


@pytest.mark.usefixtures("no_leaked_processes")
def test_tour_lab_serves_the_quickstart_notebook(front_door: FrontDoor, tmp_path: Path) -> None:
    out = tmp_path / "lab.out"
    with out.open("w") as sink:
        lab = subprocess.Popen(
            front_door.lab(),
            cwd=front_door.clone,
            env=front_door.env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + LAB_TIMEOUT
        url = None
        while url is None and time.monotonic() < deadline and lab.poll() is None:
            found = re.search(r"http://127\.0\.0\.1:\d+/lab/tree/\S+\?token=\w+", out.read_text())
            url = found.group(0) if found else None
            time.sleep(0.2)
        assert url, f"no URL printed:\n{out.read_text()[-3000:]}"
        assert "/lab/tree/notebooks/01-quickstart.ipynb?" in url
        base, token = url.split("/lab/", 1)[0], url.rsplit("token=", 1)[1]
        contents = f"{base}/api/contents/notebooks/01-quickstart.ipynb"
        auth = {"Authorization": f"token {token}"}
        status = None
        while time.monotonic() < deadline and lab.poll() is None:
            try:
                answer = httpx.get(contents, params={"content": "0"}, headers=auth)
            except httpx.TransportError:
                time.sleep(0.3)
                continue
            status = answer.status_code
            break
        assert status == 200, f"JupyterLab answered {status}:\n{out.read_text()[-3000:]}"
        assert answer.json()["type"] == "notebook"
        page = httpx.get(url, follow_redirects=True)
        assert page.status_code == 200
        assert httpx.get(contents).status_code in (401, 403), "the token must be required"
        assert front_door.tripped == ""
    finally:
        if lab.poll() is None:
            os.killpg(lab.pid, signal.SIGTERM)
        try:
            lab.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(lab.pid, signal.SIGKILL)
            lab.wait()


def test_tour_lab_outside_a_checkout_says_where_the_notebooks_are(front_door: FrontDoor) -> None:
    done = subprocess.run(
        front_door.lab(),
        cwd=front_door.env["HOME"],
        env=front_door.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done
    assert "notebooks/ folder" in done.stderr
    assert "clone" in done.stderr


# --- without JupyterLab -----------------------------------------------------------------------------


def test_tour_lab_without_jupyterlab_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcp_notebook.demo._lab import lab

    monkeypatch.setitem(sys.modules, "jupyterlab", None)  # find_spec then finds nothing
    assert lab(cwd=ROOT, browser=False) == 2
    err = capsys.readouterr().err
    assert "needs JupyterLab" in err
    assert f"{sys.executable} -m pip install jupyterlab" in err
