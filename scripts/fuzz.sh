#!/usr/bin/env bash
# Runs Darkroom's fuzz targets under libFuzzer with AddressSanitizer (Swift and C) and UndefinedBehaviorSanitizer
# (the C shims), and prints executions and findings per target. Each target runs long enough to pass a million
# executions at the rate measured on a 2-core machine (docs/PERFORMANCE.md): 180 s for most, 240 s for `animation`,
# 480 s for `icc`, 1,200 s for `decode` (~1,000 exec/s: two full decodes of every input) and 2,400 s for `manifest`
# (~450 exec/s: a SQLite open, quick_check, recovery and writes per input). FUZZ_SECONDS sets one length for all.
#
#   scripts/fuzz.sh                       every target (probe decode animation icc exif url manifest), ~81 min
#   FUZZ_SECONDS=30 scripts/fuzz.sh       the CI smoke length
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
    icc) echo "${FUZZ_SECONDS:-480}" ;;
    manifest) echo "${FUZZ_SECONDS:-2400}" ;;
    *) echo "${FUZZ_SECONDS:-180}" ;;
  esac
}
TARGETS=${FUZZ_TARGETS:-probe decode animation icc exif url manifest}
PHOTOS=${PHOTOS:-../shared/photos}
RUN=${FUZZ_DIR:-.build-fuzz/run}
BIN=.build-fuzz/release/darkroom-fuzz

# Coverage and ASan on every module; UBSan on the C shims (setjmp/longjmp codecs), fatal on the first report.
DARKROOM_FUZZ=1 swift build -c release --product darkroom-fuzz --scratch-path .build-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address,undefined \
  -Xcc -fno-sanitize-recover=undefined -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld 2>&1 | grep -v -e "ld.gold: warning" -e "^warning: " >&2 || true
[ -x "$BIN" ] || { echo "fuzz: the driver did not build" >&2; exit 2; }

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
printf '%-10s %12s %10s %8s %9s  %s\n' target executions "exec/s" corpus findings log
found=0
for target in $TARGETS; do
  corpus=$RUN/corpus/$target seeds=$RUN/seeds/$target findings=$RUN/findings/$target
  mkdir -p "$corpus" "$seeds" "$findings" "Fuzz/crashers/$target"
  rm -f "$findings"/*
  DARKROOM_FUZZ_TARGET=$target DARKROOM_FUZZ_SEEDS=$seeds DARKROOM_PHOTOS=$PHOTOS "$BIN" >/dev/null
  log=$RUN/$target.log
  DARKROOM_FUZZ_TARGET=$target "$BIN" "$corpus" "$seeds" "Fuzz/crashers/$target" \
    -dict="$(dictionary "$target")" -max_total_time="$(seconds_for "$target")" -timeout=1 -rss_limit_mb=3072 \
    -max_len="$(max_len "$target")" -len_control=200 -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1 || true
  executions=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)
  rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log" | tail -1)
  units=$(find "$corpus" -type f | wc -l)
  count=$(find "$findings" -type f | wc -l)
  if [ "$count" -gt 0 ]; then
    found=1
    cp "$findings"/* "Fuzz/crashers/$target/"
  fi
  printf '%-10s %12s %10s %8s %9s  %s\n' "$target" "${executions:-?}" "${rate:-?}" "$units" "$count" "$log"
done
if [ "$found" = 1 ]; then
  echo "fuzz: findings copied to Fuzz/crashers/ (the logs above have the reports)"
  exit 1
fi
echo "fuzz: no findings"
