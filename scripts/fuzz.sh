#!/usr/bin/env bash
# Runs Darkroom's fuzz targets under libFuzzer with AddressSanitizer on Darkroom's own modules (Swift and C) and
# UndefinedBehaviorSanitizer on the C shims, one target per core at a time, and prints executions and findings per
# target. Each target runs long enough to pass a million
# executions at the rate measured on a 2-core machine (docs/PERFORMANCE.md): 180 s for most, 240 s for `animation`,
# 480 s for `icc`, 900 s for `video` (~1,200 exec/s: FFmpeg opens every input), 1,200 s for `decode` (~1,000 exec/s:
# two full decodes of every input) and 2,400 s for `manifest` (~450 exec/s: a SQLite open, quick_check, recovery and
# writes per input). FUZZ_SECONDS sets one length for all.
#
#   scripts/fuzz.sh                       every target, longest first (96 min of runs, ~48 min on two cores)
#   FUZZ_SECONDS=10 scripts/fuzz.sh       the CI smoke length (`make fuzz-smoke` also builds Darkroom's modules
#                                         unoptimized, DARKROOM_FUZZ_SMOKE=1, and so allows an input 10 s,
#                                         FUZZ_TIMEOUT=10, instead of the optimized build's 1 s)
#   FUZZ_TARGETS="decode icc" scripts/fuzz.sh
#
# Each target starts from its seeds (small files Darkroom encodes, and the sample photos in $PHOTOS or their ICC
# profiles and EXIF blocks), its saved crashers (Fuzz/crashers/TARGET) and the corpus it grew in earlier runs
# (.build-fuzz/run/corpus/TARGET), with the dictionary Fuzz/dictionaries/*.dict for its input. A finding stops
# that target: its input is copied to Fuzz/crashers/TARGET/ (fix it, then commit the file: `make test` replays
# it) and the script exits 1 after the last target.
set -euo pipefail
cd "$(dirname "$0")/.."

# The default length of a target's run (FUZZ_SECONDS overrides it for all).
seconds_for() {
  case "$1" in
    decode) echo "${FUZZ_SECONDS:-1200}" ;;
    animation) echo "${FUZZ_SECONDS:-240}" ;;
    video) echo "${FUZZ_SECONDS:-900}" ;;
    icc) echo "${FUZZ_SECONDS:-480}" ;;
    manifest) echo "${FUZZ_SECONDS:-2400}" ;;
    *) echo "${FUZZ_SECONDS:-180}" ;;
  esac
}
TARGETS=${FUZZ_TARGETS:-manifest decode icc animation video probe exif url}
PHOTOS=${PHOTOS:-../shared/photos}
RUN=${FUZZ_DIR:-.build-fuzz/run}
# The driver builds in the test build's scratch path with the test build's flags, so the dependencies are reused as
# they are and only Darkroom's own modules compile again, instrumented (Package.swift). The Makefile passes both (its
# TESTBUILD and TESTFLAGS); the defaults here are theirs, for running the script by itself.
SCRATCH=${FUZZ_SCRATCH:-.build-test}
read -r -a FLAGS <<<"${FUZZ_BUILD_FLAGS:--c release -Xswiftc -enable-testing}"
BIN=$SCRATCH/release/darkroom-fuzz

mkdir -p "$RUN"
if ! DARKROOM_FUZZ=1 swift build "${FLAGS[@]}" --product darkroom-fuzz --scratch-path "$SCRATCH" >"$RUN/build.log" 2>&1
then
  grep -v -e "ld.gold: warning" -e "^warning: " "$RUN/build.log" | tail -40 >&2
  echo "fuzz: the driver did not build (log: $RUN/build.log)" >&2
  exit 2
fi

dictionary() {
  case "$1" in
    probe | decode | animation) echo Fuzz/dictionaries/images.dict ;;
    *) echo "Fuzz/dictionaries/$1.dict" ;;
  esac
}

# The longest input libFuzzer makes for a target: photos in the seeds are cut there (their headers and first scans
# stay), which keeps decoding inputs small and the rate high.
max_len() {
  case "$1" in
    url) echo 4096 ;;
    probe | exif) echo 16384 ;;
    *) echo 32768 ;;
  esac
}

export SWIFT_BACKTRACE=enable=no  # libFuzzer and ASan report crashes; Swift's backtracer would wait on them
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:handle_abort=1}
# Process-wide caches of system libraries (fontconfig's, loaded once for SVG text) are not leaks of an input
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/Fuzz/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# One target's run; its row of the summary goes to $RUN/TARGET.row, and a finding (or a run that did not get going)
# to $RUN/TARGET.failed.
run_target() {
  local target=$1
  local corpus=$RUN/corpus/$target seeds=$RUN/seeds/$target findings=$RUN/findings/$target log=$RUN/$target.log
  mkdir -p "$corpus" "$seeds" "$findings" "Fuzz/crashers/$target"
  rm -f "$findings"/* "$RUN/$target.failed" "$RUN/$target.row"
  DARKROOM_FUZZ_TARGET=$target DARKROOM_FUZZ_SEEDS=$seeds DARKROOM_PHOTOS=$PHOTOS "$BIN" >/dev/null
  DARKROOM_FUZZ_TARGET=$target "$BIN" "$corpus" "$seeds" "Fuzz/crashers/$target" \
    -dict="$(dictionary "$target")" -max_total_time="$(seconds_for "$target")" -timeout="${FUZZ_TIMEOUT:-1}" -rss_limit_mb=3072 \
    -max_len="$(max_len "$target")" -len_control=200 -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1 || true
  local executions rate units count
  executions=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)
  rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log" | tail -1)
  units=$(find "$corpus" -type f | wc -l)
  count=$(find "$findings" -type f | wc -l)
  if [ "$count" -gt 0 ]; then
    cp "$findings"/* "Fuzz/crashers/$target/"
    echo "finding" >"$RUN/$target.failed"
  elif [ -z "$executions" ] || [ "$executions" = 0 ]; then
    echo "did not run" >"$RUN/$target.failed"
  fi
  printf '%-10s %12s %10s %8s %9s  %s\n' "$target" "${executions:-?}" "${rate:-?}" "$units" "$count" "$log" \
    >"$RUN/$target.row"
}

# Targets run side by side, one per core (each libFuzzer process is one thread); FUZZ_JOBS sets how many.
JOBS=${FUZZ_JOBS:-$(nproc)}
for target in $TARGETS; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  run_target "$target" &
done
wait

printf '%-10s %12s %10s %8s %9s  %s\n' target executions "exec/s" corpus findings log
failed=0
for target in $TARGETS; do
  cat "$RUN/$target.row" 2>/dev/null || echo "$target: no result"
  if [ -e "$RUN/$target.failed" ] || [ ! -e "$RUN/$target.row" ]; then failed=1; fi
done
if [ "$failed" = 1 ]; then
  echo "fuzz: a target found an input (copied to Fuzz/crashers/) or did not run; its log above has the report"
  exit 1
fi
echo "fuzz: no findings"
