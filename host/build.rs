//! Rebuilds the crate when the WIT it generates its bindings from changes (the
//! `bindgen!` macro reads the files, but cargo would not know to look at them).

fn main() {
    println!("cargo:rerun-if-changed=../wit");
}
