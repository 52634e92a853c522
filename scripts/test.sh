#!/usr/bin/env bash
# The test command: set up (idempotent), lint and type-check the core, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check mcp_notebook tests benchmarks
.venv/bin/ruff format --check mcp_notebook tests benchmarks
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
