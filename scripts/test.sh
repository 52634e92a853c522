#!/usr/bin/env bash
# The test command: set up (idempotent), lint and type-check the core, check the import contracts,
# run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check mcp_notebook tests benchmarks
.venv/bin/ruff format --check mcp_notebook tests benchmarks
.venv/bin/mypy
# the import contracts in pyproject.toml ([tool.importlinter]): layers, no cycles, a light core
.venv/bin/lint-imports
# on every core (pytest-xdist): a file's tests stay on one worker; the real-clock deadline tests, the
# soak and the benchmark smoke run one after another on one worker (tests/parallel.py)
.venv/bin/python -m pytest -q --durations=30 -n auto --dist loadfile "$@"
