#!/usr/bin/env bash
# Set up citecheck and run the cookbook offline: create .venv if missing, install the pinned
# requirements (CPU-only) with the pip that comes with Python, re-execute every notebook from
# json_cache.json with no key and no network (each announced with how long it took last time; a fresh
# clone replays as fast as a warm machine: nothing is encoded, MiniLM's scores are recorded in
# data/minilm_scores.json), and print a summary that names each file it wrote and the command behind
# each number. Everything it writes is under .venv/ and build/; no server, no fixed port. When anything
# fails, the last lines say what: each notebook that differs, with its first differing cell and line.
#   bash setup.sh                 set up and run the cookbook
#   bash setup.sh --install-only  set up only (used by test.sh)
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
stamp=.venv/.citecheck-requirements
want=$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "installing requirements into .venv (first time: a few minutes)…"
  log=.venv/pip-install.log
  if ! .venv/bin/python -m pip install -r requirements.txt > "$log" 2>&1; then
    tail -n 40 "$log"; echo "setup.sh: pip install failed; the whole log is in $log" >&2; exit 1
  fi
  echo "$want" > "$stamp"
fi
# JupyterLab from .venv gives each kernel CurveZMQ keys: no unencrypted TCP, no warning (an existing file is kept)
mkdir -p .venv/etc/jupyter
[ -f .venv/etc/jupyter/jupyter_server_config.json ] || cp etc/jupyter/jupyter_server_config.json .venv/etc/jupyter/
[ "${1:-}" = "--install-only" ] && exit 0

export CITECHECK_OFFLINE=1 HF_HUB_OFFLINE=1 TQDM_DISABLE=1 HF_HUB_DISABLE_PROGRESS_BARS=1
mkdir -p build
failed=()
run() {  # run a command; a failure is remembered and named in the last lines
  "$@" || failed+=("exit $? from: $*")
}
echo "== re-executing the notebooks offline from json_cache.json"
echo "\$ .venv/bin/python -m citecheck.notebook"
rm -f build/notebooks/problems.txt
run .venv/bin/python -m citecheck.notebook
echo
echo "== summary (each block: the command that printed it)"
echo "\$ .venv/bin/python -m citecheck check --source data/rfc7519.txt --citations data/citations.json --expected"
run .venv/bin/python -m citecheck check --source data/rfc7519.txt --citations data/citations.json --expected
if [ -f data/claims.jsonl ]; then
  echo
  echo "\$ .venv/bin/python -m citecheck batch data/claims.jsonl --db build/audit.db --out build/report.csv"
  run .venv/bin/python -m citecheck batch data/claims.jsonl --db build/audit.db --out build/report.csv
fi
echo
echo "== files written"
echo "build/notebooks/*.ipynb   the executed notebooks (compared above with notebooks/)"
[ -f build/audit.db ] && echo "build/audit.db            the batch's audit trail (one row per citation)"
[ -f build/report.csv ] && echo "build/report.csv          the batch report (one CSV row per citation)"
echo
echo "open the notebooks: .venv/bin/jupyter lab notebooks/$([ "$(id -u)" = 0 ] && echo ' --allow-root')"
if [ ${#failed[@]} -eq 0 ]; then
  exit 0
fi
echo
echo "setup.sh: FAILED (exit 1):"
[ -s build/notebooks/problems.txt ] && sed 's/^/  /' build/notebooks/problems.txt
for line in "${failed[@]}"; do echo "  $line"; done
exit 1
