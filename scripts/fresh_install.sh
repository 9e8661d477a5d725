#!/usr/bin/env bash
# A plain install works: copy this checkout's tracked files into a temporary folder, create a fresh
# virtualenv with the pip bundled with Python (never upgraded), `pip install -r requirements.txt`, and run
# the fetcher tests and tests/test_install.py there. Slow, so neither test.sh nor .ci/run runs it: measured
# 765 s install + 241 s tests = 1006 s with Python 3.11.7 and its pip 23.2.1 on 2 shared cores.
#   bash scripts/fresh_install.sh                    with python3.11
#   PYTHON=python3.12 bash scripts/fresh_install.sh  with another interpreter
# Leaves nothing behind (KEEP=1 keeps the folder and says where it is).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.11}
work=$(mktemp -d "${TMPDIR:-/tmp}/citecheck-fresh-XXXXXX")
[ "${KEEP:-0}" = 1 ] && echo "fresh_install: keeping $work" || trap 'rm -rf "$work"' EXIT
mkdir "$work/repo"
git ls-files -z | tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$work/repo"
"$PYTHON" -m venv "$work/venv"
pip_version=$("$work/venv/bin/python" -m pip --version | cut -d' ' -f2)
echo "fresh_install: $("$work/venv/bin/python" --version), bundled pip $pip_version, installing requirements.txt…"
started=$(date +%s)
if ! (cd "$work/repo" && "$work/venv/bin/python" -m pip install -r requirements.txt) > "$work/pip.log" 2>&1; then
  tail -n 40 "$work/pip.log"; echo "fresh_install: pip install failed (pip $pip_version)" >&2; exit 1
fi
installed=$(date +%s)
echo "fresh_install: installed in $((installed - started)) s"
cd "$work/repo"
unset CITECHECK_OFFLINE CITECHECK_CACHE TYPESAFE_ENDPOINT OPENAI_BASE_URL
"$work/venv/bin/python" -m pytest -q tests/test_install.py tests/test_fetch.py tests/test_site.py \
  tests/test_verify.py
echo "fresh_install: tests in $(( $(date +%s) - installed )) s; total $(( $(date +%s) - started )) s"
