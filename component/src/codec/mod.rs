//! The wire: one value model (`Element`) and its XML and JSON readers and writers.
//!
//! Resources never print or parse XML themselves; they produce and consume `Element` trees.
//! This module knows nothing of invoices, accounts or storage.

mod json;
mod value;
mod xml;

pub use json::{decode_json, encode_json};
pub use value::{Content, Element, ScalarType};
pub use xml::{DecodeError, decode_xml, encode_xml};
