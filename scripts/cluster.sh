#!/usr/bin/env bash
# Runs N `darkroom serve` instances on loopback behind nginx (deploy/nginx.conf), over one folder or S3 bucket.
#
#   scripts/cluster.sh [N] [-- darkroom serve options…]     e.g. scripts/cluster.sh 3 -- --root ~/Pictures
#
# Instances listen on 127.0.0.1:$((BASE+1))…$((BASE+N)) (BASE defaults to 18080; set CLUSTER_BASE_PORT), each with
# its own cache folder under $CLUSTER_DIR (default .build-bench/cluster); nginx listens on BASE and caches under
# the same folder (CLUSTER_NGINX_CONF names another config template). Installs nginx from Debian when missing.
# Prints the URL; Ctrl-C (or SIGTERM) stops everything.
#
# Health: open-source nginx only notices a failed instance when a request to it fails (a dead one at once, a hung one
# only after proxy_read_timeout). So this script polls each instance's /health every CLUSTER_HEALTH_INTERVAL seconds
# (default 1, answer within CLUSTER_HEALTH_TIMEOUT, default 1) and marks the ones that fail `down` in the upstream,
# then reloads nginx; an instance that answers again is put back the same way. Marking `down` keeps the consistent
# hash of the other instances' sources. It never marks every instance down (nginx then keeps trying them all).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-3}
shift || true
[ "${1:-}" = "--" ] && shift
BASE=${CLUSTER_BASE_PORT:-18080}
DIR=${CLUSTER_DIR:-$PWD/.build-bench/cluster}
DARKROOM=${DARKROOM:-$PWD/.build/release/darkroom}
[ -x "$DARKROOM" ] || { echo "cluster: no $DARKROOM (make release)" >&2; exit 2; }
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  echo "cluster: installing nginx (apt-get)" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nginx-light >/dev/null \
    || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nginx >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
mkdir -p "$DIR/nginx-cache"
# nginx's workers drop root for an unprivileged user: let them reach the folder and write the cache
chmod a+rx "$DIR" && chmod -R a+rwX "$DIR/nginx-cache"
pids=()
stop() {
  trap - INT TERM EXIT
  kill "$(cat "$DIR/nginx.pid" 2>/dev/null)" 2>/dev/null || true
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop INT TERM EXIT
# Writes $DIR/nginx.conf from the template, with the instances whose ports are listed in $1 marked down.
write_conf() {
  local ports="" port mark
  for i in $(seq 1 "$N"); do
    port=$((BASE + i))
    mark=""
    case " $1 " in *" $port "*) mark=" down" ;; esac
    ports+="        server 127.0.0.1:$port max_fails=1 fail_timeout=5s$mark;\n"
  done
  sed -e "s|@PORTS@|$ports|" -e "s|@CACHE@|$DIR/nginx-cache|" -e "s|@LISTEN@|127.0.0.1:$BASE|" \
      -e "s|@PID@|$DIR/nginx.pid|" "${CLUSTER_NGINX_CONF:-deploy/nginx.conf}" >"$DIR/nginx.conf.new"
  mv "$DIR/nginx.conf.new" "$DIR/nginx.conf"
}
for i in $(seq 1 "$N"); do
  port=$((BASE + i))
  mkdir -p "$DIR/instance-$i"
  # Every connection comes from nginx, so the per-client-address limit is off (nginx bounds its own)
  "$DARKROOM" serve --port "$port" --cache-dir "$DIR/instance-$i" --max-connections-per-client 0 "$@" \
    >"$DIR/instance-$i.log" 2>&1 &
  pids+=($!)
done
write_conf ""
for i in $(seq 1 "$N"); do  # wait for each instance's /health
  for _ in $(seq 1 100); do
    curl -fs "http://127.0.0.1:$((BASE + i))/health" >/dev/null 2>&1 && break
    sleep 0.1
  done
done
"$NGINX" -c "$DIR/nginx.conf" -p "$DIR" -g "daemon off;" &
nginx=$!
pids+=($nginx)
echo "cluster: $N instances behind nginx at http://127.0.0.1:$BASE/ (instances on $((BASE + 1))-$((BASE + N)); Ctrl-C stops)"
down=""
while kill -0 "$nginx" 2>/dev/null; do
  failing=""
  for i in $(seq 1 "$N"); do
    port=$((BASE + i))
    curl -fs --max-time "${CLUSTER_HEALTH_TIMEOUT:-1}" "http://127.0.0.1:$port/health" >/dev/null 2>&1 || failing+=" $port"
  done
  [ "$(echo $failing | wc -w)" -ge "$N" ] && failing=""  # all failing: leave them to nginx's own retries
  if [ "$failing" != "$down" ]; then
    down=$failing
    write_conf "$down"
    kill -HUP "$nginx" 2>/dev/null || true
    echo "cluster: health: instances down:${down:- none}"
  fi
  sleep "${CLUSTER_HEALTH_INTERVAL:-1}" &
  wait $! || true
done
wait
