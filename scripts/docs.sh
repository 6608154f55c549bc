#!/usr/bin/env bash
# Builds the DocC catalog of every public module (Sources/<Module>/<Module>.docc) into .build-docs/<Module>.doccarchive,
# failing on any DocC warning (an unresolved symbol link, an ambiguous one, a missing article).
#
#   scripts/docs.sh BUILD_DIR
#
# BUILD_DIR is a finished build's products folder (make test's .build-test/release): the symbol graphs are extracted
# from its modules, so nothing is compiled again. docc and swift-symbolgraph-extract come with the Swift toolchain.
set -euo pipefail

build=${1:?usage: scripts/docs.sh BUILD_DIR}
modules=(DarkroomImage DarkroomCache DarkroomTables DarkroomVideo DarkroomWorkers DarkroomThumbnailer Darkroom DarkroomServer)
out=.build-docs
rm -rf "$out"
mkdir -p "$out"

# The C modules the Swift modules import: the shims' generated module maps, the system libraries' own, and the
# C targets of the packages Darkroom depends on (their checkouts beside the build folder).
scratch=$(dirname "$build")
clang_args=()
for map in "$build"/*.build/module.modulemap Sources/C*/module.modulemap \
  "$scratch"/checkouts/*/Sources/*/include/module.modulemap "$scratch"/checkouts/*/Sources/*/module.modulemap; do
  [ -f "$map" ] && clang_args+=(-Xcc "-fmodule-map-file=$map")
done
for include in Sources/C*/include "$scratch"/checkouts/*/Sources/*/include; do
  [ -d "$include" ] && clang_args+=(-Xcc "-I$include")
done

docc=$(command -v docc || echo "$(dirname "$(command -v swift)")/docc")
failed=0
for module in "${modules[@]}"; do
  symbols="$out/symbols/$module"
  mkdir -p "$symbols"
  log="$out/$module.log"
  if ! swift symbolgraph-extract -module-name "$module" -I "$build/Modules" \
    -target "$(uname -m)-unknown-linux-gnu" -minimum-access-level public -output-dir "$symbols" \
    "${clang_args[@]}" >"$log" 2>&1; then
    cat "$log" >&2
    echo "docs: $module: no symbol graph (log: $log)" >&2
    failed=1
    continue
  fi
  "$docc" convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$symbols" \
    --fallback-display-name "$module" --fallback-bundle-identifier "org.darkroom.$module" \
    --output-path "$out/$module.doccarchive" >>"$log" 2>&1 || failed=1
  warnings=$(grep -c "warning:" "$log" || true)
  if [ "$warnings" != 0 ]; then
    grep -A3 "warning:" "$log" >&2
    echo "docs: $module has $warnings DocC warnings (log: $log)" >&2
    failed=1
  else
    echo "docs: $module built without warnings ($out/$module.doccarchive)"
  fi
done
exit "$failed"
