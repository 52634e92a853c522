#!/usr/bin/env bash
# Redraws the README's pictures (docs/gallery/*.png, the explorer at its top included): runs the
# browser tests that walk through every panel, with MCPNB_GALLERY set so each one also saves its
# panel screenshots there. The pictures are only written by tests that pass, so they show what the
# tests check. Needs scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
export MCPNB_GALLERY=docs/gallery
# The kernel and the servers it starts import this checkout, whatever mcp_notebook is installed.
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
.venv/bin/python -m pytest -q tests/test_browser_panels.py tests/test_browser_apps.py \
    tests/test_browser.py::test_filling_the_form_and_calling_shows_the_result_table "$@"
ls -l "$MCPNB_GALLERY"
