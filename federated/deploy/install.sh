#!/bin/sh
# Install one party of a CAPE consortium (the aggregator's SuperLink host, the helper or a site) into a virtual
# environment of its own: the pinned packages of federated/requirements.txt (Flower, cryptography, numpy, scipy,
# pandas, randomgen, pycryptodome and what they pull in; nothing of the dashboard), then dpcore and capefed from this
# checkout, without dependencies. Prints the SHA-256 digest of the installed capefed sources: every party of the
# consortium compares it with the digest of the release they reviewed (docs/federated.md, "Deploying it", step 1).
# An environment that already holds exactly this release is kept (a second run only checks it).
#
#   federated/deploy/install.sh /opt/capefed            # PYTHON=python3.11 by default
#   federated/deploy/install.sh PREFIX --environment-only
#
# Run as root it also prepares the host for the service units beside this script (which expect /opt/capefed/venv):
# the system user and group capefed (every unit runs as it), /etc/capefed (root:capefed 0750: keys, certificates,
# roster, node.env), /var/lib/capefed (capefed 0700: state, ledger, results), the SuperNode's task secret
# /var/lib/capefed/task-secret (32 random bytes, capefed 0600, made once) and the units in /etc/systemd/system.
# --environment-only makes the environment alone, as root too (nothing on the host outside PREFIX).
#
# Run by tests/test_federated_packaging.py (into a temporary directory, --environment-only: the suite may run as root
# on a developer's machine) and tests/test_federated_consortium.py (as root, each host in its own mount namespace).
set -eu

USAGE="usage: install.sh PREFIX [--environment-only] (the environment goes to PREFIX/venv)"
PREFIX=${1:?$USAGE}
HOST_SETUP=yes
case "${2-}" in
    "") ;;
    --environment-only) HOST_SETUP=no ;;
    *) echo "install.sh: unknown option '$2'; $USAGE" >&2; exit 2 ;;
esac
if [ $# -gt 2 ]; then
    echo "install.sh: $# arguments; $USAGE" >&2
    exit 2
fi
PYTHON=${PYTHON:-python3.11}
HERE=$(cd "$(dirname "$0")" && pwd)
APP=$(dirname "$HERE")
REPO=$(dirname "$APP")
SERVICE_USER=capefed

wanted=$(cd "$APP" && "$PYTHON" -c 'from capefed.ops.worker import installed_digest; print(installed_digest())')
have=""
if [ -x "$PREFIX/venv/bin/python" ]; then
    have=$("$PREFIX/venv/bin/python" -m capefed.ops.worker --check-install 2>/dev/null | cut -d' ' -f1) || have=""
fi
if [ "$have" != "$wanted" ]; then
    mkdir -p "$PREFIX"
    "$PYTHON" -m venv "$PREFIX/venv"
    PIP="$PREFIX/venv/bin/python -m pip --disable-pip-version-check --no-input"
    $PIP install --quiet --require-virtualenv -r "$APP/requirements.txt"
    # dpcore's own dependencies (numpy, scipy, pandas, randomgen) are among the party's pins above; --no-deps keeps
    # pip from resolving anything that is not pinned there (plotly is only dpcore's figures extra).
    # Built from a copy: setuptools writes build/ and dpcore.egg-info beside the sources it builds, and the checkout
    # stays exactly as reviewed.
    SRC=$(mktemp -d)
    trap 'rm -rf "$SRC"' EXIT
    cp -R "$REPO/pyproject.toml" "$REPO/README.md" "$REPO/dpcore" "$SRC/"
    $PIP install --quiet --require-virtualenv --no-deps "$SRC"
    $PIP install --quiet --require-virtualenv --no-deps "$APP"
fi
"$PREFIX/venv/bin/python" -m capefed.ops.worker --check-install > "$PREFIX/capefed.sha256"
cat "$PREFIX/capefed.sha256"

if [ "$HOST_SETUP" = no ]; then
    echo "--environment-only: no service user, folders, task secret or units made" >&2
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "not root: no service user, folders, task secret or units made (run as root on a party's host)" >&2
    exit 0
fi
getent group "$SERVICE_USER" >/dev/null || groupadd --system "$SERVICE_USER"
getent passwd "$SERVICE_USER" >/dev/null || useradd --system --gid "$SERVICE_USER" --home-dir /var/lib/capefed \
    --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER"
install -d -m 0750 -o root -g "$SERVICE_USER" /etc/capefed
install -d -m 0700 -o "$SERVICE_USER" -g "$SERVICE_USER" /var/lib/capefed
if [ ! -s /var/lib/capefed/task-secret ]; then
    (umask 077 && head -c 32 /dev/urandom > /var/lib/capefed/task-secret)
fi
chown "$SERVICE_USER:$SERVICE_USER" /var/lib/capefed/task-secret
chmod 0600 /var/lib/capefed/task-secret
install -d -m 0755 /etc/systemd/system
install -m 0644 "$HERE"/systemd/capefed-*.service /etc/systemd/system/
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload
fi
echo "made: user $SERVICE_USER, /etc/capefed, /var/lib/capefed, its task secret, the units in /etc/systemd/system"
