#!/usr/bin/env bash
# Installs the system packages Darkroom builds against, only when pkg-config cannot find them.
# Debian/Ubuntu (apt-get); uses sudo only when not root. Extra apt packages may be passed as arguments.
set -euo pipefail

modules=(libjpeg libturbojpeg spng libwebp libwebpdemux libwebpmux libgif sqlite3 lcms2 libheif libavif libjxl libtiff-4
         libraw_r librsvg-2.0 sdl2 libavformat libavcodec libswscale libavutil libseccomp
         libsystemd)
packages=(pkg-config libjpeg62-turbo-dev libturbojpeg0-dev libspng-dev libwebp-dev libgif-dev libsqlite3-dev liblcms2-dev
          libheif-dev libavif-dev libjxl-dev libtiff-dev libraw-dev librsvg2-dev libsdl2-dev libavformat-dev
          libavcodec-dev libswscale-dev libavutil-dev libseccomp-dev libsystemd-dev)
extra=("$@")

missing=0
if ! command -v pkg-config >/dev/null 2>&1; then
  missing=1
else
  for m in "${modules[@]}"; do pkg-config --exists "$m" || missing=1; done
fi
for p in "${extra[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing=1; done
[ "$missing" = 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: missing codec libraries and no apt-get here; install: ${packages[*]} ${extra[*]}" >&2
  exit 1
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
echo "install-deps: installing ${packages[*]} ${extra[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}" "${extra[@]}" >/dev/null
