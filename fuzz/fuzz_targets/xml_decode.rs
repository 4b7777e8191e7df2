//! Any bytes: the XML reader never panics, and what it reads writes back to the same tree.
#![no_main]

use faktura_component::codec::{decode_xml, encode_xml};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(element) = decode_xml(data) {
        let again = decode_xml(&encode_xml(&element)).expect("written XML reads back");
        assert_eq!(again, element, "decode(encode(x)) == x");
    }
});
