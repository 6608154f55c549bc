# Darkroom — the README's two commands: `make run` and `make test`.
SWIFT      ?= swift
OUT        ?= thumbnails
SIZE       ?= 256
# The sample set: ../shared/photos beside the checkout, else Debian's gnome-backgrounds photos (installed on demand).
PHOTOS     ?= $(if $(wildcard ../shared/photos),../shared/photos,/usr/share/backgrounds/gnome)
DARKROOM   := .build/release/darkroom

.PHONY: run test deps build release bench browser-test clean

deps:
	@scripts/install-deps.sh $(if $(wildcard $(PHOTOS)),,gnome-backgrounds)

release: deps
	$(SWIFT) build -c release --product darkroom

# Main job: thumbnail a folder of photos and print the summary.
run: release
	$(DARKROOM) thumb $(PHOTOS) --max-pixel-size $(SIZE) --out $(OUT)

build: deps
	$(SWIFT) build

# The whole test suite, optimized (pixel loops in a debug build are ~30x slower) with @testable enabled.
TESTFLAGS  ?= -c release -Xswiftc -enable-testing
test: deps
	$(SWIFT) build --build-tests $(TESTFLAGS)
	$(SWIFT) test $(TESTFLAGS)

bench: release
	$(DARKROOM) bench decode --json

# The gallery of `darkroom serve` in a real browser (headless Chromium, installed on demand; screenshots in docs/).
browser-test: release
	python3 scripts/browser-test.py --darkroom $(DARKROOM) --photos $(PHOTOS) --screenshot docs/gallery.png

clean:
	rm -rf .build $(OUT)
