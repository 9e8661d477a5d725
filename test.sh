#!/usr/bin/env bash
# Run the test suite offline with no keys (sets up .venv first if needed).
set -euo pipefail
cd "$(dirname "$0")"
bash setup.sh --install-only
exec .venv/bin/python -m pytest -q "$@"
