//! A minimal `wasi:http/incoming-handler` that answers "hello" to every request: the anchor
//! that Faktura's request rate is compared with under `wasmtime serve`.

#![cfg(target_arch = "wasm32")]

use wasip2::http::types::{
    Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam,
};

struct Hello;

impl wasip2::exports::http::incoming_handler::Guest for Hello {
    fn handle(_request: IncomingRequest, out: ResponseOutparam) {
        let response = OutgoingResponse::new(Fields::new());
        let body = response.body().expect("a fresh response has a body");
        ResponseOutparam::set(out, Ok(response));
        {
            let stream = body.write().expect("a fresh body has a stream");
            stream
                .blocking_write_and_flush(b"hello\n")
                .expect("writing the body");
        }
        OutgoingBody::finish(body, None).expect("finishing the body");
    }
}

wasip2::http::proxy::export!(Hello);
