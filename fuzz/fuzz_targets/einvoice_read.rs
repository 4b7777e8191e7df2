//! Any bytes: the e-invoice reader never panics. What it reads, written as CII and read
//! again, is a model that writing and reading no longer change: the first round may lose
//! what the writer does not write (a buyer's tax number) or normalize (line ends), the
//! second must lose nothing.
#![no_main]

use faktura_einvoice::read::read;
use faktura_einvoice::{Profile, write};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(first) = read(data) else {
        return;
    };
    let once = read(&write(&first.invoice, Profile::FacturX)).expect("written CII reads back");
    let twice = read(&write(&once.invoice, Profile::FacturX)).expect("written CII reads back");
    assert_eq!(
        twice.invoice, once.invoice,
        "read(write(m)) == m after one round"
    );
});
