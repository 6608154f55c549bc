#!/usr/bin/env bash
# Installs the Python packages the tests use as independent references (Pillow, pillow-heif, thumbhash, libthumbor,
# imgproxy, moto, rawpy, pidng, colour-science, imagecodecs, pyultrahdr, apple-hdr-heic, jeepney), only when python3
# cannot import them: pip for the user first; Pillow else from Debian (python3-pil; apt-get, sudo when not root).
set -euo pipefail

has() { python3 -c "import $1" >/dev/null 2>&1; }

apt_install() {
  command -v apt-get >/dev/null 2>&1 || return 1
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

pip_install() {
  python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip || return 1
  python3 -m pip install --quiet --user "$1" 2>/dev/null \
    || python3 -m pip install --quiet --user --break-system-packages "$1" 2>/dev/null
}

if ! has PIL; then
  echo "install-pydeps: installing Pillow" >&2
  pip_install Pillow || apt_install python3-pil || true
fi
# thumbhash (a port of the reference ThumbHash encoder) is on PyPI only.
has thumbhash || { echo "install-pydeps: installing thumbhash" >&2; pip_install thumbhash || true; }

# pillow-heif (libheif's Python binding) reads a HEIF's thumbnail items for the embedded-thumbnail tests.
has pillow_heif || { echo "install-pydeps: installing pillow-heif" >&2; pip_install pillow-heif || true; }

# The peers' URL builders, for the imgproxy and thumbor compatibility tests.
has libthumbor || { echo "install-pydeps: installing libthumbor" >&2; pip_install libthumbor || true; }
has imgproxy || { echo "install-pydeps: installing imgproxy" >&2; pip_install imgproxy || true; }

# The camera RAW references: rawpy (libraw's own Python binding: preview and develop) and pidng (writes DNGs).
has rawpy || { echo "install-pydeps: installing rawpy" >&2; pip_install rawpy || true; }
has pidng || { echo "install-pydeps: installing pidng" >&2; pip_install pidng || true; }

# colour-science: the HDR transfer functions (ST 2084, BT.2100 HLG) and colour-space conversions the HDR tests make
# their samples with and check against.
has colour || { echo "install-pydeps: installing colour-science" >&2; pip_install colour-science || true; }

# Ultra HDR writers and libultrahdr's own decoder, for the gain-map tests: imagecodecs (libultrahdr 1.4 inside;
# writes ISO 21496-1 metadata) and pyultrahdr (writes the hdrgm XMP form and its MPF index by hand).
has imagecodecs || { echo "install-pydeps: installing imagecodecs" >&2; pip_install imagecodecs || true; }
has pyultrahdr || { echo "install-pydeps: installing pyultrahdr" >&2; pip_install pyultrahdr || true; }
# apple-hdr-heic: another reader of iPhone HEIC gain maps (pillow-heif, ExifTool for the maker note, Apple's formula).
has apple_hdr_heic || { echo "install-pydeps: installing apple-hdr-heic" >&2; pip_install apple-hdr-heic || true; }

# jeepney: a pure-Python D-Bus client, a second client of the thumbnail service beside gdbus and dbus-send.
has jeepney || { echo "install-pydeps: installing jeepney" >&2; pip_install jeepney || true; }

# An S3 API server on loopback for the S3 source tests (moto's server brings boto3, which uploads the objects).
{ has moto.server && has boto3; } || { echo "install-pydeps: installing moto[server]" >&2; pip_install 'moto[server]' || true; }

for module in PIL pillow_heif thumbhash libthumbor imgproxy moto.server boto3 rawpy pidng colour imagecodecs pyultrahdr apple_hdr_heic cv2 exiftool jeepney; do
  has "$module" || { echo "install-pydeps: $module is still missing" >&2; exit 1; }
done
