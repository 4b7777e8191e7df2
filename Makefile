# Faktura: build, run and test. `make run` and `make test` do all set-up on a fresh machine.

CARGO       ?= cargo
WASM_TARGET := wasm32-wasip2
WASM_OUT    := target/$(WASM_TARGET)/release/faktura_component.wasm
COMPONENT   := target/release/faktura.wasm
TEST_WASM   := target/faktura-test.wasm
LISTEN      ?= 127.0.0.1:8080
DATA        ?= ./data

.PHONY: all build run test test-deps lint fmt fuzz wasm-target component test-component clean

all: build

wasm-target:
	@rustup target list --installed 2>/dev/null | grep -qx '$(WASM_TARGET)' || rustup target add $(WASM_TARGET)

# The shipped component, next to the host binary where `faktura` looks for it.
component: wasm-target
	$(CARGO) build --release --target $(WASM_TARGET) -p faktura-component
	@mkdir -p target/release
	cp $(WASM_OUT) $(COMPONENT)

# The same component with the test-only routes (a deliberate panic, ...).
test-component: wasm-target
	$(CARGO) build --release --target $(WASM_TARGET) -p faktura-component --features test-routes
	cp $(WASM_OUT) $(TEST_WASM)

build: component
	$(CARGO) build --release -p faktura

run: build
	target/release/faktura serve --listen $(LISTEN) --data $(DATA)

# Tools the tests use: qpdf and pdftotext check PDFs, aiosmtpd is a real SMTP server.
test-deps:
	@if ! command -v qpdf >/dev/null || ! command -v pdftotext >/dev/null; then \
	  apt-get update -qq && apt-get install -y -qq qpdf poppler-utils; \
	fi
	@python3 -c 'import aiosmtpd' 2>/dev/null || python3 -m pip install --quiet aiosmtpd

test: test-deps test-component build
	$(CARGO) test --release --workspace

lint: wasm-target
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p faktura-component --target $(WASM_TARGET) -- -D warnings

fmt:
	$(CARGO) fmt --all

# Fuzz the wire decoders (nightly + cargo-fuzz), FUZZ_SECONDS each, corpora seeded from the
# golden files in tests/cases.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := xml_decode json_decode query_parse
fuzz:
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	@mkdir -p fuzz/corpus/xml_decode fuzz/corpus/json_decode fuzz/corpus/query_parse
	@for f in tests/cases/*/*/response.xml; do cp "$$f" "fuzz/corpus/xml_decode/$$(echo $$f | tr / _)"; done
	@for f in tests/cases/*/*/response.json; do cp "$$f" "fuzz/corpus/json_decode/$$(echo $$f | tr / _)"; done
	@printf 'status=OPEN,PAID&per_page=50&page=2&order_by=date+DESC,id' > fuzz/corpus/query_parse/seed
	cd fuzz && for t in $(FUZZ_TARGETS); do \
	  cargo +nightly fuzz run $$t corpus/$$t -- -max_total_time=$(FUZZ_SECONDS) -max_len=65536 || exit 1; \
	done

clean:
	$(CARGO) clean
