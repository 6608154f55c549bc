#!/usr/bin/env bash
# The 12 MP photos (shared/photos/jpeg-12mp) in the formats vipsthumbnail reads too, for bench/thumb-vs-vips.py:
# TIFF with LZW in strips (libvips' default layout), TIFF in 256×256 deflate tiles, and lossy JPEG XL at distance 1
# (cjxl from the decoded pixels, not a JPEG recompression). Also a DNG with a full-size JPEG preview per photo, for
# the RAW preview-vs-develop figure. Written once into OUT (default .build-bench/formats).
#   bench/make-format-samples.sh [OUT] [PHOTOS]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.build-bench/formats}
photos=${2:-../shared/photos/jpeg-12mp}
mkdir -p "$out/tiff" "$out/tiff-tiled" "$out/jxl" "$out/dng"
for jpg in "$photos"/*.jpg; do
  name=$(basename "$jpg" .jpg)
  [ -f "$out/tiff/$name.tif" ] || vips copy "$jpg" "$out/tiff/$name.tif[compression=lzw]"
  [ -f "$out/tiff-tiled/$name.tif" ] || vips tiffsave "$jpg" "$out/tiff-tiled/$name.tif" --tile --tile-width 256 \
    --tile-height 256 --compression deflate
  [ -f "$out/jxl/$name.jxl" ] || { vips copy "$jpg" "$out/jxl/$name.png" && cjxl "$out/jxl/$name.png" \
    "$out/jxl/$name.jxl" -d 1 --quiet && rm "$out/jxl/$name.png"; }
  [ -f "$out/dng/$name.dng" ] || python3 scripts/make-dng.py "$jpg" "$out/dng/$name.dng" --preview 4032
done
echo "$out"
