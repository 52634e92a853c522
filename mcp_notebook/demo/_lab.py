"""JupyterLab at the quickstart notebook: ``python -m mcp_notebook.demo.tour --lab``.

The notebooks are the repository's ``notebooks/`` folder; the installed package does not carry
them (a wheel could, but an editable install would then grow a stray ``mcp_notebook`` folder in
site-packages). So ``--lab`` works from a checkout: the current directory when it is one (the
README's demo command installs the package into a virtualenv and runs from the clone), else the
checkout an editable install points to. Anywhere else it says where the notebooks are.

JupyterLab is the optional ``lab`` extra. It runs on this interpreter (``python -m jupyterlab``),
so its kernel sees the same installed package. The token is chosen here and passed through the
environment (``JUPYTER_TOKEN``, not the command line, which other local users can read), so the
URL of the notebook is printed before JupyterLab starts; JupyterLab then replaces this process and
owns the terminal. It listens on 127.0.0.1 only.

One Ctrl-C stops it: in a terminal Jupyter Server answers the first Ctrl-C with "Shut down this
Jupyter server (y/[n])?" and resumes after 5 s without a "y" or a second Ctrl-C, which read as a
lab that would not stop. ``answer_yes`` makes the first one shut it down, kernels included (a
kernel's MCP servers stop with the kernel).
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import socket
import subprocess
import sys
from pathlib import Path

__all__ = ["QUICKSTART", "find_checkout", "lab"]

QUICKSTART = "notebooks/01-quickstart.ipynb"
"""The notebook ``--lab`` opens, relative to the repository's root."""

REPOSITORY_HINT = (
    "the notebooks are in the mcp-notebook repository's notebooks/ folder: run this from a clone "
    "of it (or open them on Binder, through the badge in its README)"
)


def find_checkout(cwd: Path) -> Path | None:
    """The repository checkout whose notebooks to serve: ``cwd`` if it is one, else this package's own."""
    for root in (cwd, Path(__file__).resolve().parents[2]):
        if (root / QUICKSTART).is_file() and (root / "mcp_notebook" / "demo" / "tour.py").is_file():
            return root
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def lab(*, cwd: Path | None = None, browser: bool = True, port: int = 0) -> int:
    """Start JupyterLab at the quickstart notebook; returns an exit code if it cannot.

    On POSIX a successful start never returns: JupyterLab replaces this process.
    """
    if importlib.util.find_spec("jupyterlab") is None:
        print(
            f"--lab needs JupyterLab, which is not installed for {sys.executable}.\n"
            f"Install it with:  {sys.executable} -m pip install jupyterlab\n"
            "(from a clone of the repository, the README's demo command installs it: the `lab` extra)",
            file=sys.stderr,
        )
        return 2
    root = find_checkout(cwd or Path.cwd())
    if root is None:
        print(f"--lab found no notebooks: {REPOSITORY_HINT}.", file=sys.stderr)
        return 2
    port = port or _free_port()
    token = secrets.token_hex(24)
    print(f"JupyterLab serves {root} on this interpreter ({sys.executable}).")
    print(f"The quickstart notebook: http://127.0.0.1:{port}/lab/tree/{QUICKSTART}?token={token}")
    print("Stop JupyterLab (and its kernels, with their servers) with one Ctrl-C.", flush=True)
    argv = [
        sys.executable,
        "-m",
        "jupyterlab",
        QUICKSTART,
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.answer_yes=True",  # one Ctrl-C stops it, without a y/n question
        f"--ServerApp.root_dir={root}",
    ]
    if not browser:
        argv.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # JupyterLab refuses root unless told; it listens on loopback only, behind the token.
        print("Running as root: JupyterLab is started with --allow-root.", flush=True)
        argv.append("--allow-root")
    env = {**os.environ, "JUPYTER_TOKEN": token}
    if os.name == "posix":
        os.chdir(root)
        os.execve(sys.executable, argv, env)
    try:
        return subprocess.call(argv, cwd=root, env=env)
    except KeyboardInterrupt:  # JupyterLab got the same Ctrl-C and stops by itself
        return 130
