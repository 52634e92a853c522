#!/usr/bin/env bash
# Set up a development environment from a fresh clone: a virtualenv in .venv with the package
# (editable) and its dev/test extras, and the npm test peers under tests/node_modules.
# Idempotent: a second run only checks that everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
"$python" - <<'PY' || { echo "mcp-notebook needs Python >= 3.11 (set PYTHON=...)" >&2; exit 1; }
import sys
sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY

if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# pip byte-compiles every installed module one file at a time (some 17,000 files: 36 of its 71 s on
# a fresh clone here); compileall does the same on every core. Compiled before any test runs: left
# to first imports, a hundred conformance clients starting at once each compiled the same modules
# (a fresh-clone run went from 1,233 to 1,325 s and two conformance scenarios timed out).
# compileall's status is not checked: as pip does, a file that does not compile (a template, a
# Python 2 leftover in some package) is left as it is.
.venv/bin/python -m pip install --quiet --no-compile -e ".[dev]"
.venv/bin/python -m compileall -q -j 0 .venv/lib >/dev/null 2>&1 || true

if command -v npm >/dev/null 2>&1; then
  # Also installs the conformance harness and, from the npm package `node`, the Node 22 it runs on
  # (tests/node_modules/.bin/node; the system node may be older). Its install script is allowed in
  # tests/package.json (allowScripts).
  npm ci --prefix tests --no-audit --no-fund --loglevel=error
  node22=$(tests/node_modules/.bin/node --version 2>/dev/null || true)
  case "$node22" in
    v22.*) ;;
    *) echo "tests/node_modules/.bin/node is '${node22:-missing}', not Node 22: did npm skip its install script?" >&2; exit 1 ;;
  esac
else
  echo "npm not found: the tests against @modelcontextprotocol/server-everything need Node.js and npm" >&2
  exit 1
fi

# The browser tests (tests/test_browser.py) drive Debian's chromium through Playwright: never a
# browser build downloaded by `playwright install`. Installed here when missing, as root or with
# passwordless sudo; otherwise say how (those tests fail until it is there).
if ! command -v chromium >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "chromium not found and no apt-get here: install Chromium so that \`chromium\` is on PATH (the browser tests need it)" >&2
  elif [ "$(id -u)" -eq 0 ]; then
    echo "installing Debian's chromium for the browser tests" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo "installing Debian's chromium for the browser tests (sudo)" >&2
    sudo -n apt-get update -qq
    sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "chromium not found: run \`sudo apt-get install chromium\` (the browser tests need it)" >&2
  fi
fi
