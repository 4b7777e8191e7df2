//! Host-side bindings of the `faktura:service/service` world; nothing else.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "faktura:service/service",
    imports: { default: async | trappable },
    exports: { default: async },
    require_store_data_send: true,
    with: {
        "wasi:http": wasmtime_wasi_http::p2::bindings::http,
        "wasi:io": wasmtime_wasi::p2::bindings::io,
        "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
        "wasi:random": wasmtime_wasi::p2::bindings::random,
        "faktura:service/store.read-txn": crate::store::ReadTxn,
        "faktura:service/store.write-txn": crate::store::WriteTxn,
    },
});
