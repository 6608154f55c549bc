#!/usr/bin/env bash
# Runs one phase of `make test` under a time limit, so a hang becomes a failure with its log instead of a run that
# sits until CI's own limit.
#
#   scripts/phase.sh NAME SECONDS COMMAND...
#
# The output goes to the terminal as it comes and to .build-logs/NAME.log. Past SECONDS the command and everything it
# started (timeout signals its whole process group: swift test, the test binary, a sanitizer's symbolizer) get
# SIGTERM, then SIGKILL 30 s later; the phase then fails, naming the log and showing its last lines.
set -uo pipefail

if [ $# -lt 3 ]; then
  echo "usage: scripts/phase.sh NAME SECONDS COMMAND..." >&2
  exit 2
fi
name=$1
limit=$2
shift 2

mkdir -p .build-logs
log=".build-logs/$name.log"
started=$(date +%s)
timeout --kill-after=30 "$limit" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
elapsed=$(($(date +%s) - started))

if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
  {
    echo
    echo "phase $name: still running after ${limit} s: stopped as hung (full log: $log). Its last lines:"
    tail -n 40 "$log" | sed 's/^/  | /'
  } >&2
  exit 1
fi
echo "phase $name: exit $rc after ${elapsed} s" >&2
exit "$rc"
