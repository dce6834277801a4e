#!/usr/bin/env bash
# python-venv.sh: make VENV (build/venv) a virtual environment holding python/requirements-test.txt,
# installing only when the requirements changed since the last install (a stamp inside VENV).
# Usage: python-venv.sh VENV
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=$1
req="$repo/python/requirements-test.txt"
stamp="$venv/.burrow-requirements"
if [[ -x "$venv/bin/python" && -f "$stamp" ]] && cmp -s "$req" "$stamp"; then
	exit 0
fi
py=$(command -v python3 || true)
[[ -n "$py" ]] || { echo "python-venv: python3 is not installed (tools/install-deps.sh installs it)" >&2; exit 1; }
echo "python-venv: installing $(grep -v '^#' "$req" | tr '\n' ' ')into $venv (once; torch is large)"
[[ -x "$venv/bin/python" ]] || "$py" -m venv "$venv"
# pip retries dropped connections itself; a failure here fails make test with pip's message
"$venv/bin/pip" install --disable-pip-version-check -q --retries 10 --timeout 60 -r "$req"
cp "$req" "$stamp"
