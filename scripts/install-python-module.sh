#!/usr/bin/env bash
# Builds the Python module (python/, a release build through maturin) and installs it, with its
# requirements, into the venv of PYTHON (default .venv/bin/python): what the python step of .ci/run
# runs once, and the live and cluster tests run before they import cqlwire unless
# CQLWIRE_PYTHON_MODULE_INSTALLED says that step did.
#
#   scripts/install-python-module.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-$PWD/.venv/bin/python}
"$PYTHON" -m pip install --quiet --disable-pip-version-check -r python/requirements.txt
# maturin comes from the venv (python/requirements.txt), hence the venv's bin first on PATH.
PATH="$(dirname "$PYTHON"):$PATH" "$PYTHON" -m pip install --quiet --disable-pip-version-check \
    --no-build-isolation --force-reinstall --no-deps ./python
