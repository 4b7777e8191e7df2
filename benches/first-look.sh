#!/usr/bin/env bash
# First look at request rates, measured side by side in one run (wrk, 32 connections):
#   1. faktura (release) GET /api/invoices/{id}, fresh instance per request
#   2. the standalone component under `wasmtime serve -Scli`, same request
#   3. `wasmtime serve -Scli` with the minimal hello component (benches/hello)
# Needs: make build standalone wasmtime-cli, wrk (apt).
# Usage: benches/first-look.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
wasmtime=$(python3 -c 'import os, wasmtime_cli; print(os.path.join(os.path.dirname(wasmtime_cli.__file__), "wasmtime"))')
cargo build --release --target wasm32-wasip2 -p faktura-bench-hello >/dev/null
hello=target/wasm32-wasip2/release/faktura_bench_hello.wasm
host_data=$(mktemp -d)
standalone_data=$(mktemp -d)
key=bench-key-0123456789abcdef
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$host_data" "$standalone_data"; }
trap cleanup EXIT

FAKTURA_LOG=warn target/release/faktura serve --listen 127.0.0.1:18080 --data "$host_data" \
  --bootstrap-key "$key" >/dev/null 2>&1 &
pids+=($!)
"$wasmtime" serve -Scli --addr 127.0.0.1:18081 "$hello" >/dev/null 2>&1 &
pids+=($!)
"$wasmtime" serve -Scli --addr 127.0.0.1:18082 --dir "$standalone_data::/data" \
  --env FAKTURA_BOOTSTRAP_KEY="$key" target/faktura-standalone.wasm >/dev/null 2>&1 &
pids+=($!)
for port in 18080 18081 18082; do
  for _ in $(seq 600); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.2; done
done

# A client and an invoice with two items; prints the invoice id.
seed() {
  local base=$1 client
  client=$(curl -s -X POST -H "X-ServiceApiKey: $key" -H 'Content-Type: application/xml' \
    -d '<client><name>Bench GmbH</name><city>Berlin</city></client>' "$base/api/clients" |
    sed -n 's:.*<id type="integer">\([0-9]*\)</id>.*:\1:p' | head -1)
  curl -s -X POST -H "X-ServiceApiKey: $key" -H 'Content-Type: application/xml' \
    -d "<invoice><client_id>$client</client_id><invoice-items><invoice-item><name>Beratung</name><quantity>3</quantity><unit_price>100</unit_price></invoice-item><invoice-item><name>Reise</name><quantity>1</quantity><unit_price>50.5</unit_price></invoice-item></invoice-items></invoice>" \
    "$base/api/invoices" | sed -n 's:.*<id type="integer">\([0-9]*\)</id>.*:\1:p' | head -1
}
host_id=$(seed http://127.0.0.1:18080)
standalone_id=$(seed http://127.0.0.1:18082)

# Prints "requests/s p99".
run() {
  wrk -t1 -c32 -d"${secs}s" --latency "$@" |
    awk '/ 99%/ {p99 = $2} /Requests\/sec/ {rps = $2} END {print rps, p99}'
}
host=($(run -H "X-ServiceApiKey: $key" "http://127.0.0.1:18080/api/invoices/$host_id"))
standalone=($(run -H "X-ServiceApiKey: $key" "http://127.0.0.1:18082/api/invoices/$standalone_id"))
hello_rs=($(run "http://127.0.0.1:18081/"))
printf '%-52s %12s %10s %8s\n' workload "requests/s" p99 "÷ hello"
row() { awk -v n="$1" -v r="$2" -v p="$3" -v h="${hello_rs[0]}" 'BEGIN { printf "%-52s %12s %10s %8.2f\n", n, r, p, r / h }'; }
row "faktura host GET /api/invoices/{id}" "${host[0]}" "${host[1]}"
row "wasmtime serve standalone GET /api/invoices/{id}" "${standalone[0]}" "${standalone[1]}"
row "wasmtime serve -Scli hello" "${hello_rs[0]}" "${hello_rs[1]}"
awk -v a="${standalone[0]}" -v b="${host[0]}" 'BEGIN { printf "standalone ÷ faktura host: %.2f\n", a / b }'
