#!/usr/bin/env bash
# Installs the Python packages the tests use as independent references (Pillow), only when python3 cannot import
# them: pip for the user first, else Debian's python3-pil (apt-get; sudo when not root).
set -euo pipefail

if python3 -c 'import PIL' >/dev/null 2>&1; then exit 0; fi
echo "install-pydeps: installing Pillow" >&2
if python3 -m pip --version >/dev/null 2>&1; then
  python3 -m pip install --quiet --user Pillow 2>/dev/null \
    || python3 -m pip install --quiet --user --break-system-packages Pillow 2>/dev/null || true
fi
if ! python3 -c 'import PIL' >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || { echo "install-pydeps: no pip or apt-get; install Pillow" >&2; exit 1; }
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-pil >/dev/null
fi
python3 -c 'import PIL' >/dev/null 2>&1 || { echo "install-pydeps: Pillow still missing" >&2; exit 1; }
