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
.venv/bin/python -m pytest -q --durations=30 "$@"
.venv/bin/python -m benchmarks.guard  # the benchmark's ratio floors (benchmarks/floors.toml), serially: under 1 min
