"""Helpers for the end-to-end browser tests (tests/test_browser*.py).

``lab`` starts a private JupyterLab server; ``notebook`` writes a notebook, opens it in headless
Chromium through Playwright and runs it. The browser is Debian's ``chromium`` (scripts/setup.sh
installs it), never a browser build downloaded by ``playwright install``. The fixtures the test
modules share are in ``fixtures.py``.
"""
