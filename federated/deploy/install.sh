#!/bin/sh
# Install one party of a CAPE consortium (the aggregator's SuperLink host, the helper or a site) into a virtual
# environment of its own: the pinned packages of federated/requirements.txt (Flower, cryptography, numpy, scipy,
# pandas, randomgen, pycryptodome and what they pull in; nothing of the dashboard), then dpcore and capefed from this
# checkout, without dependencies. Prints the SHA-256 digest of the installed capefed sources: every party of the
# consortium compares it with the digest of the release they reviewed (docs/federated.md, "Deploying it", step 2).
#
#   federated/deploy/install.sh /opt/capefed            # PYTHON=python3.11 by default
#
# Run by tests/test_federated_packaging.py (into a temporary directory). The service units and the container file
# beside this script expect the environment at /opt/capefed/venv.
set -eu

PREFIX=${1:?usage: install.sh PREFIX (the environment goes to PREFIX/venv)}
PYTHON=${PYTHON:-python3.11}
HERE=$(cd "$(dirname "$0")" && pwd)
APP=$(dirname "$HERE")
REPO=$(dirname "$APP")

mkdir -p "$PREFIX"
"$PYTHON" -m venv "$PREFIX/venv"
PIP="$PREFIX/venv/bin/python -m pip --disable-pip-version-check --no-input"
$PIP install --quiet --require-virtualenv -r "$APP/requirements.txt"
# dpcore's own dependencies (numpy, scipy, pandas, randomgen) are among the party's pins above; --no-deps keeps pip
# from resolving anything that is not pinned there (plotly is only dpcore's figures extra).
# Built from a copy: setuptools writes build/ and dpcore.egg-info beside the sources it builds, and the checkout
# stays exactly as reviewed.
SRC=$(mktemp -d)
trap 'rm -rf "$SRC"' EXIT
cp -R "$REPO/pyproject.toml" "$REPO/README.md" "$REPO/dpcore" "$SRC/"
$PIP install --quiet --require-virtualenv --no-deps "$SRC"
$PIP install --quiet --require-virtualenv --no-deps "$APP"
"$PREFIX/venv/bin/python" -m capefed.worker --check-install > "$PREFIX/capefed.sha256"
cat "$PREFIX/capefed.sha256"
