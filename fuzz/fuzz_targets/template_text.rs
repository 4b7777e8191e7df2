//! Any bytes: reading a template file's text never panics, and gives at most
//! `TEMPLATE_PARAGRAPHS_MAX` paragraphs, each trimmed and not empty. The first byte picks
//! the format the file is read as.
#![no_main]

use faktura_component::domain::template_text::paragraphs;
use faktura_component::limits::TEMPLATE_PARAGRAPHS_MAX;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, file)) = data.split_first() else {
        return;
    };
    let format = ["docx", "rtf", "doc"][usize::from(pick) % 3];
    let paras = paragraphs(format, file);
    assert!(paras.len() <= TEMPLATE_PARAGRAPHS_MAX);
    assert!(paras.iter().all(|p| !p.is_empty() && p.trim() == p));
});
