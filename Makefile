# defaultsd — build, run, test, benchmark, install.
#
#   make run     build and run the daemon in the foreground (no configuration needed)
#   make test    build and run every test
#   make settings  build and start the Settings app (defaultsd-settings) on the daemon's default socket
#   make bench   release build, then the benchmark (docs/PERFORMANCE.md)
#   make fuzz    every parser's fuzz harness under libFuzzer, FUZZ_SECONDS each (docs/RELIABILITY.md)
#   make gsettings-backend  the C library and the GIO settings backend in .build/ (docs/GSETTINGS.md)
#   make install PREFIX=/usr/local DESTDIR=

SWIFT     ?= swift
PREFIX    ?= /usr/local
DESTDIR   ?=
ARGS      ?=
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages the build and the tests use. The build needs nothing beyond the Swift toolchain.
#  The C library and the GIO module (c/) need a C compiler, GLib, GIO and json-glib; their tests
#  run GLib's own gsettings and glib-compile-schemas, and read the desktop's schemas.
#  dconf-cli, dconf-service, dbus: defaultsd-import-dconf is tested on a real dconf database.
C_PACKAGES := gcc pkg-config libglib2.0-dev libjson-glib-dev libglib2.0-bin gsettings-desktop-schemas dconf-cli dconf-service dbus
#  systemd: systemd-analyze and systemd-socket-activate, used by the tests.
#  libseccomp2: defaultsd-unit-sandbox applies the user unit's seccomp sandbox with it, where no systemd manager runs.
#  socat: the protocol examples in docs/PROTOCOL.md are run by the tests.
#  util-linux: setpriv, for the "another user" test; taskset, for the benchmark's CPU placements.
BUILD_PACKAGES :=
#  chromium, chromium-driver: the Settings app's tests drive a real headless browser over WebDriver.
#  etcd-server, etcd-client: the roaming tests run a 3-member etcd cluster on loopback (etcdctl inspects it);
#  openssl makes the certificates of the roaming test over TLS.
#  iproute2: the partition tests put members and daemons in network namespaces (`ip netns`, as root).
TEST_PACKAGES  := $(BUILD_PACKAGES) $(C_PACKAGES) systemd libseccomp2 socat util-linux chromium chromium-driver etcd-server etcd-client openssl iproute2
#  dconf-service, dconf-cli, libdconf-dev, dbus, pkg-config: dconf, the Linux peer, measured in the same run
#  (bench/dconf-probe.c is built against libdconf); hyperfine times the command-line tools;
#  valgrind (callgrind) and binutils (strip) count instructions and instruction-cache misses per request.
BENCH_PACKAGES := $(BUILD_PACKAGES) chromium chromium-driver etcd-server etcd-client iproute2 socat redis-server util-linux dconf-service dconf-cli libdconf-dev dbus pkg-config hyperfine gcc valgrind binutils

# Release builds (bench, install) link the Swift runtime into each binary. They keep Swift's
# run-time exclusivity checks: a daemon that holds a user's data prefers a clean trap to undefined
# behaviour, and `make bench` measures exactly what `make install` installs. defaultsd and
# defaults are linked fully static (Package.swift reads DEFAULTSD_STATIC_EXECUTABLES).
RELEASE   := -c release --static-swift-stdlib
RELEASE_PRODUCTS := defaultsd defaults defaultsd-bench defaultsd-settings FoundationDefaultsProbe defaultsd-client-bench
export DEFAULTSD_STATIC_EXECUTABLES := 1

BINDIR     = $(PREFIX)/bin
LIBDIR     = $(PREFIX)/lib
INCLUDEDIR = $(PREFIX)/include
# GIO loads modules from its own folder only (and GIO_EXTRA_MODULES): the module goes there
# whatever PREFIX says, as dconf's does.
GIO_MODULE_DIR = $$(pkg-config --variable=giomoduledir gio-2.0)
UNITDIR    = $(PREFIX)/lib/systemd
DATADIR    = $(PREFIX)/share/defaultsd

.PHONY: all build run test example settings bench fuzz install clean deps-build deps-test deps-bench \
	deps-c gsettings-backend c-test install-c crash-reports

all: build

define ensure_packages
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

deps-build:
	$(call ensure_packages,$(BUILD_PACKAGES))

deps-test:
	$(call ensure_packages,$(TEST_PACKAGES))

deps-bench:
	$(call ensure_packages,$(BENCH_PACKAGES))

deps-c:
	$(call ensure_packages,$(C_PACKAGES))

build: deps-build
	$(SWIFT) build

run: build
	.build/debug/defaultsd $(ARGS)

# The Settings app over the daemon that `make run` (or the systemd units) started; it prints its address.
settings: build
	.build/debug/defaultsd-settings $(ARGS)

# Every test is written with Swift Testing; --disable-xctest keeps XCTest's empty summary out.
# The tests built on the third-party corpus (../shared, or $$DEFAULTSD_SHARED) run where it is present.
SHARED_CORPUS = $${DEFAULTSD_SHARED:-../shared}/corpus
# Before the tests, each fuzz harness runs briefly: FUZZ_TEST_SECONDS each, 30 in CI.
FUZZ_TEST_SECONDS ?= $(if $(filter true,$(CI)),30,10)
test: deps-test
	$(SWIFT) build --build-tests
	fuzz/run $(FUZZ_TEST_SECONDS)
	$(MAKE) c-test
	@[ -d "$(SHARED_CORPUS)/settings-bundles" ] && [ -d "$(SHARED_CORPUS)/json-test-suite" ] || \
		echo "Note: no shared corpus at $(SHARED_CORPUS); the tests built on it are skipped, every other test runs."
	@rm -rf $(CRASH_REPORTS) && mkdir -p $(CRASH_REPORTS)
	SWIFT_BACKTRACE=$(TEST_BACKTRACE) $(SWIFT) test --disable-xctest || { $(MAKE) --no-print-directory crash-reports; exit 1; }
	$(MAKE) example

# A crash in the tests, or in a daemon they start, writes its crashed thread's backtrace to a file
# of CRASH_REPORTS; when the tests fail, each report is printed again last, where a CI log's tail
# shows it, rather than lost among thousands of lines of other threads, registers and images.
CRASH_REPORTS = .build/crash-reports
TEST_BACKTRACE = enable=yes,interactive=no,threads=crashed,registers=none,images=none,output-to=$(CURDIR)/$(CRASH_REPORTS)
crash-reports:
	@for report in $(CRASH_REPORTS)/*.log; do [ -f "$$report" ] || continue; echo "== $$report"; head -n 40 "$$report"; done

# Examples/ClientApp built as an app outside this repository builds: in a folder of its own, with
# this checkout linked beside it as `defaultsd` (a path dependency's identity is its folder's
# name). Without the Makefile's static linking, as a dependent package sees the manifest. Then
# again by version, as an app depends on a published release: the checkout's last commit, cloned
# into a local repository and tagged with the daemon's version, named by `.package(url:from:)`
# (SwiftPM refuses unsafe flags in such a dependency, which a path dependency would let through).
EXAMPLE_DIR ?= $(or $(TMPDIR),/tmp)/defaultsd-example
EXAMPLE_VERSION := $(shell sed -n 's/.*serverVersion = "\(.*\)".*/\1/p' Sources/DefaultsServer/Protocol/Request.swift)
example: deps-build
	rm -rf "$(EXAMPLE_DIR)" && mkdir -p "$(EXAMPLE_DIR)"
	ln -s "$(CURDIR)" "$(EXAMPLE_DIR)/defaultsd"
	cp -R Examples/ClientApp "$(EXAMPLE_DIR)/ClientApp"
	cd "$(EXAMPLE_DIR)/ClientApp" && env -u DEFAULTSD_STATIC_EXECUTABLES $(SWIFT) build
	@echo "Examples/ClientApp builds as a client app with a path dependency: $(EXAMPLE_DIR)/ClientApp/.build/debug/ClientApp"
	git clone --quiet --bare "$(CURDIR)" "$(EXAMPLE_DIR)/defaultsd.git"
	git -C "$(EXAMPLE_DIR)/defaultsd.git" tag "$(EXAMPLE_VERSION)"
	sed 's|\.package(path: "\.\./defaultsd")|.package(url: "file://$(EXAMPLE_DIR)/defaultsd.git", from: "$(EXAMPLE_VERSION)")|' \
		Examples/ClientApp/Package.swift > "$(EXAMPLE_DIR)/ClientApp/Package.swift"
	grep -q 'from: "$(EXAMPLE_VERSION)"' "$(EXAMPLE_DIR)/ClientApp/Package.swift"
	cd "$(EXAMPLE_DIR)/ClientApp" && env -u DEFAULTSD_STATIC_EXECUTABLES $(SWIFT) build
	@echo "Examples/ClientApp builds with defaultsd $(EXAMPLE_VERSION) as a version dependency (the last commit; uncommitted changes are not in it)"

bench: deps-bench gsettings-backend
	for product in $(RELEASE_PRODUCTS); do $(SWIFT) build $(RELEASE) --product $$product || exit 1; done
	cc -O2 -Wall -o .build/release/dconf-probe bench/dconf-probe.c $$(pkg-config --cflags --libs dconf)
	cc -O2 -Wall -o .build/release/gsettings-probe bench/gsettings-probe.c $$(pkg-config --cflags --libs gio-2.0)
	mkdir -p .build/release/gsettings-schemas && glib-compile-schemas --targetdir=.build/release/gsettings-schemas bench
	.build/release/defaultsd-bench $(ARGS)
	.build/release/defaultsd-client-bench

# Every parser's harness under libFuzzer with the address sanitizer, one after another (fuzz/run).
FUZZ_SECONDS ?= 600
fuzz: deps-build
	fuzz/run $(FUZZ_SECONDS)

# Binaries, shell completions for defaults, the systemd user and system units (with their ExecStart pointing at BINDIR),
# and the reference configuration. Nothing under /etc is touched.
install: deps-build
	$(SWIFT) build $(RELEASE) --product defaultsd
	$(SWIFT) build $(RELEASE) --product defaults
	$(SWIFT) build $(RELEASE) --product defaultsd-settings
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR)/user $(DESTDIR)$(UNITDIR)/system $(DESTDIR)$(DATADIR)
	install -m 0755 .build/release/defaultsd $(DESTDIR)$(BINDIR)/defaultsd
	install -m 0755 .build/release/defaults $(DESTDIR)$(BINDIR)/defaults
	install -m 0755 .build/release/defaultsd-settings $(DESTDIR)$(BINDIR)/defaultsd-settings
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	.build/release/defaults --generate-completion-script bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/defaults
	.build/release/defaults --generate-completion-script zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_defaults
	.build/release/defaults --generate-completion-script fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/defaults.fish
	for kind in user system; do for unit in defaultsd.socket defaultsd.service; do \
		sed 's|@bindir@|$(BINDIR)|g' systemd/$$kind/$$unit > $(DESTDIR)$(UNITDIR)/$$kind/$$unit; \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$kind/$$unit; \
	done; done
	sed 's|@bindir@|$(BINDIR)|g' systemd/user/defaultsd-settings.service > $(DESTDIR)$(UNITDIR)/user/defaultsd-settings.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/user/defaultsd-settings.service
	install -m 0644 Config/defaultsd.json $(DESTDIR)$(DATADIR)/defaultsd.json
	$(MAKE) install-c

# The C library (with its header and pkg-config file) and the GIO module; GIO's module cache is
# made anew, so that GSETTINGS_BACKEND=defaultsd finds the module.
install-c: gsettings-backend
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(GIO_MODULE_DIR) $(DESTDIR)$(BINDIR)
	install -m 0755 $(C_BUILD)/defaultsd-import-dconf $(DESTDIR)$(BINDIR)/defaultsd-import-dconf
	install -m 0755 $(C_BUILD)/defaultsd-schema $(DESTDIR)$(BINDIR)/defaultsd-schema
	install -m 0755 $(C_BUILD)/libdefaultsd.so.$(LIBDEFAULTSD_VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libdefaultsd.so.$(LIBDEFAULTSD_VERSION) $(DESTDIR)$(LIBDIR)/libdefaultsd.so
	install -m 0644 c/include/defaultsd.h $(DESTDIR)$(INCLUDEDIR)/defaultsd.h
	sed -e 's|@prefix@|$(PREFIX)|' -e 's|@version@|$(EXAMPLE_VERSION)|' c/lib/defaultsd.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/defaultsd.pc
	install -m 0755 $(GIO_MODULES)/libdefaultsdsettings.so $(DESTDIR)$(GIO_MODULE_DIR)/
	if [ -z "$(DESTDIR)" ] && [ "$(GIO_MODULE_DIR)" = "$$(pkg-config --variable=giomoduledir gio-2.0)" ]; then \
		gio-querymodules $(GIO_MODULE_DIR) && ldconfig; fi

# The C library (libdefaultsd) and the GIO module that makes defaultsd a GSettings backend.
# The module links the library in, so that it loads from any folder (GIO_EXTRA_MODULES) alone.
C_BUILD     := .build/c
GIO_MODULES := .build/gio-modules
C_CFLAGS    ?= -O2 -g
C_FLAGS      = -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Werror=implicit-function-declaration -fPIC $(C_CFLAGS) \
	-Ic/include $$(pkg-config --cflags gio-2.0 json-glib-1.0)
C_LIBS       = $$(pkg-config --libs gio-2.0 json-glib-1.0)
LIB_SOURCES  := c/lib/client.c c/lib/trust.c
LIB_OBJECTS  := $(patsubst c/lib/%.c,$(C_BUILD)/%.o,$(LIB_SOURCES))
MODULE_SOURCES := c/gio/backend.c c/gio/mapping.c
LIBDEFAULTSD_VERSION := 0

$(C_BUILD)/%.o: c/lib/%.c c/include/defaultsd.h | deps-c
	@mkdir -p $(C_BUILD)
	cc $(C_FLAGS) -c -o $@ $<

$(C_BUILD)/libdefaultsd.a: $(LIB_OBJECTS)
	rm -f $@ && ar rcs $@ $^

$(C_BUILD)/libdefaultsd.so.$(LIBDEFAULTSD_VERSION): $(LIB_OBJECTS)
	cc -shared -Wl,-soname,libdefaultsd.so.$(LIBDEFAULTSD_VERSION) -o $@ $^ $(C_LIBS)
	ln -sf libdefaultsd.so.$(LIBDEFAULTSD_VERSION) $(C_BUILD)/libdefaultsd.so

$(GIO_MODULES)/libdefaultsdsettings.so: $(MODULE_SOURCES) c/gio/mapping.h $(C_BUILD)/libdefaultsd.a
	@mkdir -p $(GIO_MODULES)
	cc $(C_FLAGS) -shared -Wl,--no-undefined -o $@ $(MODULE_SOURCES) $(C_BUILD)/libdefaultsd.a $(C_LIBS)

$(C_BUILD)/defaultsd-import-dconf: c/tools/import-dconf.c c/gio/mapping.c c/gio/mapping.h $(C_BUILD)/libdefaultsd.a
	cc $(C_FLAGS) -Ic/gio -o $@ c/tools/import-dconf.c c/gio/mapping.c $(C_BUILD)/libdefaultsd.a $(C_LIBS)

$(C_BUILD)/defaultsd-schema: c/tools/schema.c c/gio/mapping.c c/gio/mapping.h
	@mkdir -p $(C_BUILD)
	cc $(C_FLAGS) -Ic/gio -o $@ c/tools/schema.c c/gio/mapping.c $(C_LIBS)

gsettings-backend: deps-c $(C_BUILD)/libdefaultsd.so.$(LIBDEFAULTSD_VERSION) $(GIO_MODULES)/libdefaultsdsettings.so \
	$(C_BUILD)/defaultsd-import-dconf $(C_BUILD)/defaultsd-schema
	@echo "GIO_EXTRA_MODULES=$(CURDIR)/$(GIO_MODULES) GSETTINGS_BACKEND=defaultsd gsettings ... uses the running daemon"

# The C tests: the value and path mapping alone, then the library and the module against the
# real daemon (.build/debug/defaultsd, which `make test` has built).
C_TESTS := test-mapping test-client test-gsettings
$(C_BUILD)/test-mapping: c/tests/test-mapping.c c/gio/mapping.c c/gio/mapping.h
	@mkdir -p $(C_BUILD)
	cc $(C_FLAGS) -Ic/gio -o $@ c/tests/test-mapping.c c/gio/mapping.c $(C_LIBS)
$(C_BUILD)/test-client: c/tests/test-client.c c/tests/daemon.c c/tests/daemon.h $(C_BUILD)/libdefaultsd.a
	cc $(C_FLAGS) -o $@ c/tests/test-client.c c/tests/daemon.c $(C_BUILD)/libdefaultsd.a $(C_LIBS)
$(C_BUILD)/test-gsettings: c/tests/test-gsettings.c c/tests/daemon.c c/tests/daemon.h $(C_BUILD)/libdefaultsd.a
	cc $(C_FLAGS) -o $@ c/tests/test-gsettings.c c/tests/daemon.c $(C_BUILD)/libdefaultsd.a $(C_LIBS)

# Installed into a staging folder first, a program builds against the library through pkg-config alone.
c-test: gsettings-backend $(addprefix $(C_BUILD)/,$(C_TESTS))
	[ -x .build/debug/defaultsd ] || $(SWIFT) build --product defaultsd
	rm -rf $(C_BUILD)/stage && $(MAKE) --no-print-directory install-c PREFIX=$(CURDIR)/$(C_BUILD)/stage \
		GIO_MODULE_DIR=$(CURDIR)/$(C_BUILD)/stage/gio-modules
	PKG_CONFIG_PATH=$(CURDIR)/$(C_BUILD)/stage/lib/pkgconfig sh -c \
		'cc -o $(C_BUILD)/installed-client c/tests/installed-client.c $$(pkg-config --cflags --libs defaultsd)'
	LD_LIBRARY_PATH=$(CURDIR)/$(C_BUILD)/stage/lib DEFAULTSD_SOCKET=$(CURDIR)/$(C_BUILD)/no-daemon/socket $(C_BUILD)/installed-client
	# Each in a private HOME and XDG directories: nothing of the person running them is read or changed.
	home=$$(mktemp -d) && for test in $(C_TESTS); do \
		HOME=$$home XDG_CONFIG_HOME=$$home/.config XDG_DATA_HOME=$$home/.local/share XDG_CACHE_HOME=$$home/.cache \
		XDG_STATE_HOME=$$home/.local/state XDG_RUNTIME_DIR=$$home/run DBUS_SESSION_BUS_ADDRESS= \
		DEFAULTSD_BINARY=$(CURDIR)/.build/debug/defaultsd GIO_MODULES_DIR=$(CURDIR)/$(GIO_MODULES) \
		IMPORT_DCONF=$(CURDIR)/$(C_BUILD)/defaultsd-import-dconf SCHEMA_TOOL=$(CURDIR)/$(C_BUILD)/defaultsd-schema \
		SCHEMA_SOURCE=$(CURDIR)/c/tests/org.defaultsd.test.gschema.xml $(C_BUILD)/$$test || { rm -rf $$home; exit 1; }; \
	done; rm -rf $$home

clean:
	rm -rf .build
