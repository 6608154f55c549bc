# Darkroom — the README's two commands: `make run` and `make test`.
SWIFT      ?= swift
OUT        ?= thumbnails
SIZE       ?= 256
# The sample set: ../shared/photos beside the checkout, else Debian's gnome-backgrounds photos (installed on demand).
PHOTOS     ?= $(if $(wildcard ../shared/photos),../shared/photos,/usr/share/backgrounds/gnome)
DARKROOM   := .build/release/darkroom
# `make run`: where the server listens and keeps its disk caches.
HOST       ?= 127.0.0.1
PORT       ?= 8080
CACHE      ?= .build-serve-cache

.PHONY: install-desktop uninstall-desktop run view thumbs test test-one check lint tsan docs deps build release bench browser-test cluster cluster-test fuzz fuzz-smoke soak fuzz-jpeg clean

deps:
	@scripts/install-deps.sh $(if $(wildcard $(PHOTOS)),,gnome-backgrounds)

release: deps
	$(SWIFT) build -c release --product darkroom
	$(SWIFT) build -c release --product darkroom-worker

# Main job: the thumbnail server on the sample photos; prints the URL to open (the gallery). Ctrl-C stops it.
run: release
	$(DARKROOM) serve --host $(HOST) --port $(PORT) --root $(PHOTOS) --cache-dir $(CACHE)

# The photo browser window on the sample photos (needs a display; `xvfb-run make view` without one).
view: release
	$(DARKROOM) view $(PHOTOS)

# Thumbnail a folder of photos to files and print the summary.
thumbs: release
	$(DARKROOM) thumb $(PHOTOS) --max-pixel-size $(SIZE) --out $(OUT)

# The desktop's thumbnail service (org.freedesktop.thumbnails.Thumbnailer1): D-Bus service files and a systemd user
# unit in your own folders, so the session bus starts `darkroom thumbnaild` on a file manager's first call instead of
# tumblerd. `make uninstall-desktop` removes them (tumblerd serves again, if installed).
install-desktop: release
	$(DARKROOM) thumbnaild --install

uninstall-desktop: release
	$(DARKROOM) thumbnaild --uninstall

build: deps
	$(SWIFT) build

# The whole test suite, optimized (pixel loops in a debug build are ~30x slower) with @testable enabled, then the
# soundness checks (`make check`). The build itself treats warnings as errors (Package.swift).
# The tests' independent references are installed first when missing: libvips-tools (blur), Pillow (animated
# frames) and thumbhash.
# The window tests (a `darkroom view` and an Xvfb per test, seconds of CPU each) and the image-table kill test (which
# keeps every core busy on purpose while it kills builds) run on their own after the rest, so the server suites'
# timing tests never share the two cores with them. The suites whose renders race a fixed deadline run on their own
# too (the overload suite's admitted renders, the test client's 15 s; the abandoned-render suite's local thumbnail,
# a 4 s request timeout): the rest of the suite's load on two cores can exceed them (the overload suite did in 2 of 4
# full runs once the gain-map suites joined, the abandoned-render suite once the HDR-output ones did).
# The tests build in their own scratch path: `-enable-testing` changes every module's flags, so sharing .build with
# `make run`'s release build would rebuild everything each time one follows the other. The build carries no debug
# information (a crash's backtrace still names its functions; the line tables cost a tenth of the build on two
# cores), and the ThreadSanitizer and fuzz builds reuse its dependencies, so across `make test` only Darkroom's own
# modules compile more than once. (The index store stays: on Linux the test targets' suites are discovered from it.)
# Every phase runs under scripts/phase.sh: a phase past its limit (seconds; generous, several times a normal run on
# two cores) is stopped and fails with its log (.build-logs/NAME.log) instead of hanging the run.
TESTFLAGS  ?= -c release -Xswiftc -enable-testing -debug-info-format none
TESTBUILD  ?= .build-test
PHASE      := scripts/phase.sh
test: deps
	@scripts/install-deps.sh libvips-tools libjxl-tools librsvg2-bin libtiff-tools adwaita-icon-theme libglib2.0-bin \
		libavif-bin libheif-examples libimage-exiftool-perl ffmpeg \
		xvfb xauth dbus-daemon dbus-bin thunar imagemagick
	@scripts/install-pydeps.sh
	$(PHASE) build 2700 $(SWIFT) build --build-tests $(TESTFLAGS) --scratch-path $(TESTBUILD)
	$(PHASE) tests 1800 $(SWIFT) test $(TESTFLAGS) --scratch-path $(TESTBUILD) --skip-build \
		--skip 'ViewerWindowTests|killedBuilds|OverloadTests|AbandonedRenderTests'
	$(PHASE) deadline-tests 600 $(SWIFT) test $(TESTFLAGS) --scratch-path $(TESTBUILD) --skip-build \
		--filter 'OverloadTests|AbandonedRenderTests'
	$(PHASE) window-tests 900 $(SWIFT) test $(TESTFLAGS) --scratch-path $(TESTBUILD) --skip-build \
		--filter ViewerWindowTests
	$(PHASE) table-kill 900 $(SWIFT) test $(TESTFLAGS) --scratch-path $(TESTBUILD) --skip-build \
		--filter 'CrashTests/killedBuilds'
	$(PHASE) cluster 900 $(MAKE) cluster-test DARKROOM=$(TESTBUILD)/release/darkroom
	$(PHASE) docs 600 scripts/docs.sh $(TESTBUILD)/release
	$(MAKE) check
	$(PHASE) fuzz-smoke 2400 $(MAKE) fuzz-smoke

# One module's suites on the test build, while working on it: `make test-one SUITE=HDRToneMappingTests` (a
# swift-testing filter: a suite, a test target such as DarkroomImageTests, or a test's name). The build is the test
# build's, so after a `make test` only what changed compiles again.
SUITE ?= DarkroomImageTests
test-one: deps
	$(SWIFT) build --build-tests $(TESTFLAGS) --scratch-path $(TESTBUILD)
	$(SWIFT) test $(TESTFLAGS) --scratch-path $(TESTBUILD) --skip-build --filter '$(SUITE)'

# Soundness: the tree formats clean, and the thread-safety suites pass under ThreadSanitizer.
check: lint tsan

lint:
	$(PHASE) lint 600 $(SWIFT) format lint --strict --recursive --parallel Sources Tests Fuzz Package.swift

# The suites that exercise shared state from many threads, with ThreadSanitizer on Darkroom's own modules. DARKROOM_TSAN=1
# (Package.swift) instruments them and leaves out of the package what these suites do not need (the viewer, the tool,
# the fuzz targets, the other tests); the build shares the test build's scratch path and flags, so the dependencies
# are reused uninstrumented and only Darkroom's modules compile again (about half the time of a separate debug build of
# everything; the regular test binaries are rebuilt by the next `make test`, so run this after the suites that need
# them, as `make test` does). TSAN_OPTIONS makes any report fail the run; the only suppressions are the runtime
# artefacts named and argued in scripts/tsan.supp. The Swift runtime's backtracer is off (SWIFT_BACKTRACE): TSan prints
# its own report, and the backtracer, suspending threads while TSan's symbolizer runs, could loop forever instead of
# letting the process end.
# Of the workers' fault tests only the one under concurrent load runs here: a sanitized worker has no address-space
# limit (ThreadSanitizer reserves terabytes), so the test that allocates past it is for the regular build.
TSAN_SUITES ?= ThreadSafetyTests|CacheThreadSafetyTests|ConcurrencyTests|ServiceThreadsTests|SharingTests|CancellationTests|AbandonedRenderTests|ConnectionLimitTests|DecodeWorkerPoolTests|aCrashAndASpinCostTheirOwnRequestsUnderLoad|animationsPlayedFromSeveralThreadsShareTwoWorkersWithStills|ServiceThreadSafetyTests|ThumbnailQueueTests
TSAN_ENV   := DARKROOM_TSAN=1 SWIFT_BACKTRACE=enable=no \
	TSAN_OPTIONS="halt_on_error=1 abort_on_error=1 print_suppressions=1 suppressions=$(CURDIR)/scripts/tsan.supp"
tsan: deps
	$(PHASE) tsan-build 2700 env DARKROOM_TSAN=1 $(SWIFT) build --build-tests $(TESTFLAGS) --scratch-path $(TESTBUILD)
	$(PHASE) tsan-tests 1200 env $(TSAN_ENV) $(SWIFT) test $(TESTFLAGS) --scratch-path $(TESTBUILD) --skip-build \
		--filter '$(TSAN_SUITES)'

# The DocC catalogs of the public modules (Sources/<Module>/<Module>.docc) into .build-docs/, failing on any DocC
# warning; the symbol graphs come from the test build's modules, so nothing is compiled again.
docs: deps
	$(SWIFT) build $(TESTFLAGS) --scratch-path $(TESTBUILD)
	scripts/docs.sh $(TESTBUILD)/release

bench: release
	$(DARKROOM) bench decode --json

# The gallery of `darkroom serve` in a real browser (headless Chromium, installed on demand; screenshots in .build-bench/).
browser-test: release
	python3 scripts/browser-test.py --darkroom $(DARKROOM) --photos $(PHOTOS) --screenshot .build-bench/gallery.png

# N instances of `darkroom serve` behind nginx on loopback (deploy/nginx.conf); ARGS go to every instance.
N ?= 3
ARGS ?= --root $(PHOTOS)
cluster: release
	bash scripts/cluster.sh $(N) -- $(ARGS)

# 3 instances behind nginx over an S3 bucket (moto) on loopback: signing through nginx, placement, cache hits,
# SIGKILL, restart, a hung instance taken out by /health (about a minute). `make test` runs it on the test build's
# binary (DARKROOM=...); on its own it builds the release binary first.
cluster-test: $(if $(filter .build/release/darkroom,$(DARKROOM)),release,)
	@scripts/install-deps.sh nginx
	@scripts/install-pydeps.sh
	python3 scripts/cluster-test.py --darkroom $(DARKROOM) --photos $(PHOTOS)

# Every fuzz target under libFuzzer with ASan (and UBSan on the C shims), each long enough for a million executions
# (180 s; animation 4 min, icc 8, decode 20, manifest 40; FUZZ_SECONDS=N for one length); findings land in
# Fuzz/crashers/. `fuzz-smoke` is CI's 10 s a target from the seeds, Darkroom's modules built unoptimized
# (DARKROOM_FUZZ_SMOKE=1, half the build; an input may take 10 s): the instrumented driver builds, every target starts
# from its seeds and crashers, and a shallow bug a change brings in is found (the seeds and crashers themselves are
# replayed by the tests). The driver builds in the test build's scratch
# path with its flags, so after `make test`'s build only Darkroom's own modules compile again, instrumented.
FUZZENV    = FUZZ_SCRATCH=$(TESTBUILD) FUZZ_BUILD_FLAGS="$(TESTFLAGS)" PHOTOS=$(PHOTOS)
fuzz: deps
	$(FUZZENV) FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

fuzz-smoke: deps
	DARKROOM_FUZZ_SMOKE=1 $(FUZZENV) FUZZ_SECONDS=10 FUZZ_TIMEOUT=10 scripts/fuzz.sh

# 10 minutes of mixed traffic with SIGKILLs, a disk-full and a read-only spell on the cache (needs root for its
# tmpfs); checks every body, the cache, RSS and descriptors. Report in .build-bench/soak/.
SOAK_MINUTES ?= 10
soak: release
	python3 scripts/soak.py --darkroom $(DARKROOM) --photos $(PHOTOS) --minutes $(SOAK_MINUTES)

# Differential fuzzing of the JPEG DC-only reader against libjpeg, under ASan and UBSan (a few minutes).
FUZZ_ITERATIONS ?= 4000
FUZZ_SEEDS ?= $(PHOTOS)/orientation/fallenleaf-600x400-orientation-1.jpg $(PHOTOS)/jpeg/coldripple-2560x1600.jpg
fuzz-jpeg: deps
	mkdir -p .build-fuzz
	$(CC) -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -I Sources/CDarkroomJPEG/include \
		-o .build-fuzz/fuzz-jpeg-dc scripts/fuzz-jpeg-dc.c Sources/CDarkroomJPEG/dc_scan.c \
		Sources/CDarkroomJPEG/dc_huffman.c Sources/CDarkroomJPEG/dc_idct.c -ljpeg
	.build-fuzz/fuzz-jpeg-dc $(FUZZ_ITERATIONS) $(FUZZ_SEEDS)

clean:
	rm -rf .build .build-test .build-tsan .build-fuzz .build-docs .build-logs $(OUT) $(CACHE)
