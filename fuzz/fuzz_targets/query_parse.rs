//! Any query string: parsing, paging and order_by answer a value or a 400, never a panic.
#![no_main]

use faktura_component::http::fuzz_query;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(raw) = std::str::from_utf8(data) {
        fuzz_query(raw);
    }
});
