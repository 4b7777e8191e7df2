//! Any bytes: the JSON reader never panics, and a written document reads back to a tree
//! that writes the same JSON again.
#![no_main]

use faktura_component::codec::{decode_json, encode_json};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(element) = decode_json(data) {
        let written = encode_json(&element);
        let again = decode_json(&written).expect("written JSON reads back");
        assert_eq!(encode_json(&again), written, "encode(decode(encode(x))) == encode(x)");
    }
});
