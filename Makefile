# defaultsd — build, run, test, benchmark, install.
#
#   make run     build and run the daemon in the foreground (no configuration needed)
#   make test    build and run every test
#   make bench   release build, then the benchmark (docs/PERFORMANCE.md)
#   make install PREFIX=/usr/local DESTDIR=

SWIFT     ?= swift
PREFIX    ?= /usr/local
DESTDIR   ?=
ARGS      ?=
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages the build and the tests use.
#  socat: the protocol examples in docs/PROTOCOL.md are run by the tests.
#  util-linux: setpriv, for the "another user" test.
TEST_PACKAGES  := socat util-linux
BENCH_PACKAGES := socat redis-server

.PHONY: all build run test bench install clean deps-test deps-bench

all: build

define ensure_packages
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

deps-test:
	$(call ensure_packages,$(TEST_PACKAGES))

deps-bench:
	$(call ensure_packages,$(BENCH_PACKAGES))

build:
	$(SWIFT) build

run: build
	.build/debug/defaultsd $(ARGS)

test: deps-test
	$(SWIFT) build --build-tests
	$(SWIFT) test

bench: deps-bench
	$(SWIFT) build -c release --product defaultsd
	$(SWIFT) build -c release --product defaultsd-bench
	.build/release/defaultsd-bench $(ARGS)

install:
	$(SWIFT) build -c release --product defaultsd
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 .build/release/defaultsd $(DESTDIR)$(PREFIX)/bin/defaultsd

clean:
	rm -rf .build
