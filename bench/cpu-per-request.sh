#!/usr/bin/env bash
# Server CPU time per cached request: darkroom serve on the sample photos, one thumbnail URL warmed, then
# `wrk -t2 -c32 -d5s` against it while `perf stat -e task-clock` counts the server's CPU time. Unlike req/s, the
# figure does not depend on how much of the 2 cores wrk takes.
# Usage: bench/cpu-per-request.sh DARKROOM_BINARY [PORT] [PHOTOS]   (needs wrk and perf)
set -euo pipefail
BIN=$1
PORT=${2:-18090}
PHOTOS=${3:-$(cd "$(dirname "$0")/../.." && pwd)/shared/photos}
CACHE=$(mktemp -d)
"$BIN" serve --host 127.0.0.1 --port "$PORT" --root "$PHOTOS" --cache-dir "$CACHE" --max-renders 2 >/dev/null 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$CACHE"' EXIT
sleep 2
URL="http://127.0.0.1:$PORT/v1/thumb?src=jpeg-12mp/eveningglow-4032x3024.jpg&w=256&h=256&format=jpeg&q=82"
curl -s -o /dev/null "$URL"
curl -s -o /dev/null "$URL"
STAT=$(mktemp)
perf stat -e task-clock -p "$PID" -o "$STAT" -- sleep 5 &
SP=$!
REQ=$(wrk -t2 -c32 -d5s "$URL" | awk '/requests in/ {print $1}')
wait $SP
MS=$(awk '/task-clock/ {gsub(",", "", $1); print $1}' "$STAT")
rm -f "$STAT"
python3 -c "print('{\"binary\": \"$BIN\", \"requests\": $REQ, \"server_cpu_us_per_request\": %.2f}' % ($MS * 1000 / $REQ))"
