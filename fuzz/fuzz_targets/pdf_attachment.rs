//! Any bytes: the reader of the XML attached to a PDF never panics, and what it finds is
//! within its limits. Its memory and time are bounded by those of the run (`-rss_limit_mb`,
//! `-timeout`).
#![no_main]

use faktura_einvoice::limits::PdfLimits;
use faktura_einvoice::pdf::embedded_xml;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = PdfLimits::default();
    if let Ok(found) = embedded_xml(data, &limits) {
        assert!(found.xml.len() <= limits.stream_bytes_max);
    }
});
