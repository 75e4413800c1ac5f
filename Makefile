# rtsnap — plain Makefile. `make run` and `make check` are the README's two commands.
#
#   make            build build/rtsnapd
#   make deps       install the Debian packages that are missing (as root)
#   make run        deps + build + run rtsnapd in the foreground on [::1]:9816
#   make check      deps + build (normal, ASan+UBSan, TSan) + unit and integration tests under prove
#   make asan|tsan  sanitizer builds in build/asan, build/tsan
#   make bench      benchmark tables (not a test)
#   make format-check

VERSION := 0.1.0
PREFIX  ?= /usr/local
BUILD   ?= build

DEB_BUILD_PKGS := build-essential pkg-config libnl-3-dev libmicrohttpd-dev libjansson-dev \
		  liburcu-dev libcmocka-dev zlib1g-dev libyaml-dev libgnutls28-dev libcrypt-dev \
		  debhelper fakeroot
DEB_TEST_PKGS  := iproute2 curl jq radvd prometheus wrk valgrind perl procps kmod chromium \
		  openssl python3 lintian mandoc systemd util-linux libseccomp-dev net-tools \
		  clang-format
PKGS := libnl-3.0 libmicrohttpd jansson liburcu-bp zlib yaml-0.1 gnutls libcrypt

CC      ?= cc
WARN    := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
	   -Wpointer-arith -Wvla -Wno-unused-parameter
OPT     ?= -O2 -g
SAN     ?=
ifeq ($(SAN),asan)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -DRTSNAP_POISON=1
endif
ifeq ($(SAN),tsan)
SANFLAGS := -fsanitize=thread -DRTSNAP_POISON=1
endif
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
ALL_CFLAGS = -std=gnu11 $(OPT) $(WARN) $(SANFLAGS) -D_GNU_SOURCE -DRTSNAP_VERSION='"$(VERSION)"' \
	     -Iinclude $(PKG_CFLAGS) $(CPPFLAGS) $(CFLAGS) -MMD -MP
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)
LIBS = $(PKG_LIBS) -lpthread

# The layers, bottom first: src/LAYER/*.c builds $(BUILD)/lib/librtsnap-LAYER.a. A layer may call
# its own and lower layers only; `make layers` checks it on the objects (tools/check_layers.sh).
LAYERS := lib route netlink text model mirror views builder collector http daemon
layer_srcs = $(wildcard src/$(1)/*.c)
layer_objs = $(patsubst src/%.c,$(BUILD)/obj/%.o,$(call layer_srcs,$(1)))
layer_lib = $(BUILD)/lib/librtsnap-$(1).a
# The archives of layer $(1) and every layer below it, highest first (the order ld needs).
layers_upto = $(foreach l,$(call layers_rev,$(call _upto,$(1),$(LAYERS))),$(call layer_lib,$(l)))
_upto = $(if $(2),$(firstword $(2)) $(if $(filter $(1),$(firstword $(2))),,$(call _upto,$(1),$(wordlist 2,$(words $(2)),$(2)))))
layers_rev = $(if $(1),$(call layers_rev,$(wordlist 2,$(words $(1)),$(1))) $(firstword $(1)))

# A source outside every layer would be built into nothing: say so at once.
STRAY_SRCS := $(filter-out src/main.c $(foreach l,$(LAYERS),src/$(l)/%.c tests/unit/$(l)/%.c),\
		$(wildcard src/*.c src/*/*.c tests/unit/test_*.c tests/unit/*/test_*.c))
ifneq ($(STRAY_SRCS),)
$(error $(STRAY_SRCS): sources live in src/LAYER/ and tests/unit/LAYER/, LAYER one of: $(LAYERS))
endif
SRCS := $(foreach l,$(LAYERS),$(call layer_srcs,$(l))) src/main.c
OBJS := $(SRCS:src/%.c=$(BUILD)/obj/%.o)
# The web page (web/*) compiled into C arrays, plain and gzip (tools/gen_web_assets.sh); part of
# the http layer.
WEB_FILES := $(sort $(wildcard web/*.html web/*.css web/*.js web/*.svg))
WEB_OBJ := $(BUILD)/obj/http/web_assets.o
OBJS += $(WEB_OBJ)
LAYER_LIBS := $(foreach l,$(LAYERS),$(call layer_lib,$(l)))
ALL_LIBS := $(call layers_upto,$(lastword $(LAYERS)))
LIB_OBJS := $(filter-out $(BUILD)/obj/main.o,$(OBJS))
# Unit tests live in tests/unit/LAYER/ and link that layer and the ones below it only.
UNIT_SRCS := $(foreach l,$(LAYERS),$(wildcard tests/unit/$(l)/test_*.c))
UNIT_BINS := $(foreach s,$(UNIT_SRCS),$(BUILD)/tests/$(basename $(notdir $(s))))
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tools/%)

.PHONY: all deps run check unit integration asan tsan bench fuzz format format-check install uninstall \
	deb clean layers
# The seccomp half of the systemd unit's sandbox, for pkg_sandbox.t (needs libseccomp-dev).
SANDBOX_BIN := $(if $(shell pkg-config --exists libseccomp 2>/dev/null && echo y),$(BUILD)/tests/sandbox_exec)
all: $(BUILD)/rtsnapd $(UNIT_BINS) $(TOOL_BINS) $(SANDBOX_BIN)

$(BUILD)/rtsnapd: $(BUILD)/obj/main.o $(LAYER_LIBS)
	$(CC) $(ALL_LDFLAGS) -o $@ $(BUILD)/obj/main.o $(ALL_LIBS) $(LIBS)

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/gen/web_assets.c: $(WEB_FILES) tools/gen_web_assets.sh
	@mkdir -p $(@D)
	sh tools/gen_web_assets.sh $@ $(WEB_FILES)

$(WEB_OBJ): $(BUILD)/gen/web_assets.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

define layer_rules
$(call layer_lib,$(1)): $(call layer_objs,$(1)) $(if $(filter http,$(1)),$(WEB_OBJ))
	@mkdir -p $$(@D)
	@rm -f $$@
	$$(AR) rcs $$@ $$^

$(foreach s,$(wildcard tests/unit/$(1)/test_*.c),
$(BUILD)/tests/$(basename $(notdir $(s))): $(s) $(call layers_upto,$(1))
	@mkdir -p $$(@D)
	@mkdir -p $(BUILD)/tests/deps
	$$(CC) $$(ALL_CFLAGS) -MF $(BUILD)/tests/deps/$(basename $(notdir $(s))).d $$(ALL_LDFLAGS) -o $$@ $$< \
		$(call layers_upto,$(1)) $$(LIBS) -lcmocka
)
endef
$(foreach l,$(LAYERS),$(eval $(call layer_rules,$(l))))
# A unit test moved to another layer leaves its old path in its dependency file: forget it.
tests/unit/%.c: ;

$(BUILD)/tests/sandbox_exec: tests/unit/sandbox_exec.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(shell pkg-config --libs libseccomp)

$(BUILD)/tools/%: tests/tools/%.c $(LAYER_LIBS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(ALL_LIBS) $(LIBS)

# Fails on a call from a lower layer into a higher one and on a cycle between objects.
layers: $(OBJS)
	@sh tools/check_layers.sh $(BUILD)/obj $(LAYERS)
	@! grep -l 'rtsnap/snapshot_impl.h' $(filter-out src/model/% src/mirror/%,$(wildcard src/*.c src/*/*.c include/rtsnap/*.h)) | \
		grep -v '^include/rtsnap/snapshot_impl.h$$' | sed 's/^/layers: a snapshot'"'"'s fields read outside model and mirror: /' | grep .

-include $(OBJS:.o=.d) $(patsubst $(BUILD)/tests/%,$(BUILD)/tests/deps/%.d,$(UNIT_BINS))

# Install the Debian packages that are missing; a no-op when everything is there.
deps:
	@missing=""; for p in $(DEB_BUILD_PKGS) $(DEB_TEST_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root to install:$$missing" >&2; exit 1; fi; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	fi

# make run RUN_FLAGS='--family inet6 --interval 60': more options for the daemon
run: deps
	@$(MAKE) --no-print-directory all
	./$(BUILD)/rtsnapd --listen '[::1]:9816' --log-level info $(RUN_FLAGS)

asan:
	@$(MAKE) --no-print-directory BUILD=build/asan SAN=asan OPT='-O1 -g' all
tsan:
	@$(MAKE) --no-print-directory BUILD=build/tsan SAN=tsan OPT='-O1 -g' all

unit: all
	prove -v $(UNIT_BINS)

# Every test: the layer check, the formatting check (clang-format, .clang-format), unit tests
# on the normal build, integration tests (root, real kernel in netns), the stress test against
# the ASan and TSan builds.
check: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory layers
	@$(MAKE) --no-print-directory format-check
	@$(MAKE) --no-print-directory asan
	@$(MAKE) --no-print-directory tsan
	prove $(PROVE_FLAGS) $(UNIT_BINS) $(UNIT_BINS:$(BUILD)/%=build/asan/%) \
		$(UNIT_BINS:$(BUILD)/%=build/tsan/%) tests/integration/*.t

# libFuzzer on the netlink parser, seeded with the recorded kernel messages (needs clang).
FUZZ_SECONDS ?= 60
fuzz:
	@mkdir -p build/fuzz/corpus
	clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude \
		tests/fuzz/fuzz_nlparse.c src/netlink/nlparse.c -o build/fuzz/fuzz_nlparse
	python3 tests/fuzz/split_corpus.py build/fuzz/corpus tests/data/*/*.nl
	./build/fuzz/fuzz_nlparse -max_total_time=$(FUZZ_SECONDS) build/fuzz/corpus 2>&1 | tail -5

bench: all
	bash bench/bench_core.sh
	bash bench/bench_metrics.sh

format:
	clang-format -i src/*.c src/*/*.c include/rtsnap/*.h tests/unit/*/*.c
format-check:
	clang-format --dry-run --Werror src/*.c src/*/*.c include/rtsnap/*.h

# make install [PREFIX=/usr/local] [DESTDIR=]: the daemon, its man page, the systemd unit
# (ExecStart pointing at SBINDIR), /etc/default/rtsnapd (kept if it exists: an operator's),
# the example web configuration, the Prometheus alert rules and the Grafana dashboard.
SBINDIR    ?= $(PREFIX)/sbin
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/rtsnapd
DATADIR    ?= $(PREFIX)/share/rtsnapd
SYSCONFDIR ?= /etc
UNITDIR    ?= $(PREFIX)/lib/systemd/system
INSTALL    ?= install

install: $(BUILD)/rtsnapd
	$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(SYSCONFDIR)/default $(DESTDIR)$(DOCDIR)/examples \
		$(DESTDIR)$(DATADIR)/prometheus $(DESTDIR)$(DATADIR)/grafana
	$(INSTALL) -m 0755 $(BUILD)/rtsnapd $(DESTDIR)$(SBINDIR)/rtsnapd
	$(INSTALL) -m 0644 man/rtsnapd.8 $(DESTDIR)$(MANDIR)/man8/rtsnapd.8
	sed -e 's|/usr/sbin/rtsnapd|$(SBINDIR)/rtsnapd|' -e 's|/etc/default/|$(SYSCONFDIR)/default/|' \
		packaging/systemd/rtsnapd.service >$(DESTDIR)$(UNITDIR)/rtsnapd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/rtsnapd.service
	[ -e $(DESTDIR)$(SYSCONFDIR)/default/rtsnapd ] || \
		$(INSTALL) -m 0644 packaging/default/rtsnapd $(DESTDIR)$(SYSCONFDIR)/default/rtsnapd
	$(INSTALL) -m 0644 packaging/examples/web-config.yml $(DESTDIR)$(DOCDIR)/examples/
	$(INSTALL) -m 0644 $(wildcard packaging/prometheus/*.rules.yml) $(DESTDIR)$(DATADIR)/prometheus/
	$(INSTALL) -m 0644 $(wildcard packaging/grafana/*.json) $(DESTDIR)$(DATADIR)/grafana/

# Removes what install put there, except an /etc/default/rtsnapd that was changed.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/rtsnapd $(DESTDIR)$(MANDIR)/man8/rtsnapd.8 \
		$(DESTDIR)$(UNITDIR)/rtsnapd.service $(DESTDIR)$(DOCDIR)/examples/web-config.yml
	rm -rf $(DESTDIR)$(DATADIR)
	-rmdir $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) 2>/dev/null
	cmp -s packaging/default/rtsnapd $(DESTDIR)$(SYSCONFDIR)/default/rtsnapd && \
		rm -f $(DESTDIR)$(SYSCONFDIR)/default/rtsnapd || true

# make deb: build/deb/rtsnapd_$(VERSION)_<arch>.deb, built by dpkg-buildpackage (debhelper) from
# a copy of the sources with packaging/debian as debian/. The changelog's version must be VERSION.
DEB_DIR  := $(BUILD)/deb
DEB_SRC  := $(DEB_DIR)/rtsnapd-$(VERSION)
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB_FILE := $(DEB_DIR)/rtsnapd_$(VERSION)_$(DEB_ARCH).deb
deb:
	@v=$$(dpkg-parsechangelog -l packaging/debian/changelog -S Version); [ "$$v" = "$(VERSION)" ] || \
		{ echo "make deb: packaging/debian/changelog is at $$v, the Makefile at $(VERSION)" >&2; exit 1; }
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_SRC)
	cp -a Makefile README.md src include man packaging web tools $(DEB_SRC)/
	cp -a packaging/debian $(DEB_SRC)/debian
	cd $(DEB_SRC) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u BUILD \
		dpkg-buildpackage -b -us -uc --no-sign >../build.log 2>&1 || \
		{ tail -n 30 ../build.log >&2; exit 1; }
	@ls $(DEB_FILE)

clean:
	rm -rf build
