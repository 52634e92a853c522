"""Run the demo server over stdio: ``python -m mcp_notebook.demo [--legacy-only]``.

Without flags the server answers in whichever protocol era the client opens
with (``server/discover`` with the 2026-07-28 envelope, or the ``initialize``
handshake). ``--legacy-only`` serves the handshake era only.
"""

from mcp_notebook.demo import main

if __name__ == "__main__":
    raise SystemExit(main())
