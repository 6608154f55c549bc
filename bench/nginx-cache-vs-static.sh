#!/usr/bin/env bash
# A cached thumbnail through the cluster's nginx cache against nginx serving the same bytes as a static file,
# side by side in one run (wrk, 2 threads, 64 connections, 10 s each, alternating twice).
#
#   bench/nginx-cache-vs-static.sh [--darkroom .build/release/darkroom]
#
# Starts scripts/cluster.sh 1 over ../shared/photos with the static folder added to nginx's server block, warms one
# thumbnail into the proxy cache, saves the same bytes under the static folder, and prints requests/s of each.
set -euo pipefail
cd "$(dirname "$0")/.."
DARKROOM=${DARKROOM:-$PWD/.build/release/darkroom}
[ "${1:-}" = "--darkroom" ] && DARKROOM=$2
DIR=$(mktemp -d /tmp/darkroom-nginx-bench-XXXXXX)
chmod a+rx "$DIR"
mkdir -p "$DIR/static"
# The recipe's config with one static location added before the catch-all
sed 's|        location / { return 404; }|        location /static/ { alias '"$DIR"'/static/; }\n        location / { return 404; }|' \
  deploy/nginx.conf >"$DIR/nginx.conf.template"
trap 'kill $(cat "$DIR/cluster/nginx.pid" 2>/dev/null) 2>/dev/null; pkill -f "serve --port 2909" || true' EXIT
CLUSTER_BASE_PORT=29090 CLUSTER_DIR="$DIR/cluster" DARKROOM="$DARKROOM" CLUSTER_NGINX_CONF="$DIR/nginx.conf.template" \
  bash scripts/cluster.sh 1 -- --root "$(cd ../shared/photos && pwd)" >"$DIR/cluster.log" 2>&1 &
for _ in $(seq 1 100); do curl -fs http://127.0.0.1:29090/v1/thumb?src=jpeg/kite-2560x1600.jpg\&w=256 >/dev/null 2>&1 && break; sleep 0.1; done
URL="http://127.0.0.1:29090/v1/thumb?src=jpeg/kite-2560x1600.jpg&w=256"
curl -fs -H "Accept: image/webp" "$URL" -o "$DIR/static/kite.webp"
curl -fs -H "Accept: image/webp" -o /dev/null -D - "$URL" | grep -i "x-cache"
for round in 1 2; do
  for kind in cached static; do
    target=$URL
    [ $kind = static ] && target="http://127.0.0.1:29090/static/kite.webp"
    rate=$(wrk -t2 -c64 -d10s -H "Accept: image/webp" "$target" | awk '/Requests\/sec/ {print $2}')
    echo "round $round: $kind $rate requests/s"
  done
done
