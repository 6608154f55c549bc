#!/usr/bin/env bash
# The screenshots in docs/ of `darkroom view`, taken under Xvfb by scripts (what README and PERFORMANCE show):
#   docs/view-grid.jpg         the sample photos' grid (every format in ../shared/photos), settled
#   docs/view-large.jpg        one photo opened large
#   docs/view-fast-scroll.jpg  a cold fling at 180 px over 12 MP photos whose ThumbHashes an earlier visit remembered:
#                              cells not decoded yet show their placeholders
# Usage: bench/view-screenshots.sh [DARKROOM] [PHOTOS]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
darkroom="${1:-$here/../.build/release/darkroom}"
photos="${2:-$here/../../shared/photos}"
out="$here/../docs"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
view() { xvfb-run -a -s "-screen 0 1400x900x24" "$darkroom" view --renderer software --desktop-thumbnails "$work/none" "$@"; }

# The grid and a large view of the sample photos
cat > "$work/grid.txt" <<EOF
settle 30
wait 0.5
screenshot $out/view-grid.png
key Down
key Right
key Right
key Return
settle 30
screenshot $out/view-large.png
EOF
view "$photos" --cache-dir "$work/cache-samples" --script "$work/grid.txt"

# 600 links to the 12 MP photos; a first visit at 256 px remembers their ThumbHashes
mkdir -p "$work/lib"
files=("$photos"/jpeg-12mp/*.jpg)
for i in $(seq 0 599); do
  target="$work/lib/p$(printf %04d "$i").jpg"
  ln "${files[$((i % ${#files[@]}))]}" "$target" 2>/dev/null || cp "${files[$((i % ${#files[@]}))]}" "$target"
done
printf 'settle 30\nscroll 3000 10\nsettle 30\n' > "$work/visit.txt"
view "$work/lib" --cell-size 256 --cache-dir "$work/cache-lib" --script "$work/visit.txt"
# Then a cold fling at 180 px (a new thumbnail size: no table entries, the hashes still fit): placeholders show
printf 'settle 30\nscroll 6000 1.2\nscreenshot %s\n' "$out/view-fast-scroll.png" > "$work/fling.txt"
view "$work/lib" --cell-size 180 --no-table --cache-dir "$work/cache-lib" --script "$work/fling.txt"
# Saved as PNG by the viewer; committed as JPEG (quality 85, Pillow) to keep the repository small
python3 - "$out" <<'PY'
import sys
from PIL import Image
for name in ("view-grid", "view-large", "view-fast-scroll"):
    path = f"{sys.argv[1]}/{name}"
    Image.open(path + ".png").convert("RGB").save(path + ".jpg", quality=85, optimize=True)
PY
rm -f "$out/view-grid.png" "$out/view-large.png" "$out/view-fast-scroll.png"
echo "wrote $out/view-grid.jpg $out/view-large.jpg $out/view-fast-scroll.jpg"
