//! The wire: one value model (`Element`) and its XML and JSON readers and writers.
//!
//! Resources never print or parse XML themselves; they consume `Element` trees and produce
//! either trees or a sequence of `Emit` calls (large lists, written as they are produced).
//! This module knows nothing of invoices, accounts or storage.

#![forbid(unsafe_code)]

mod emit;
mod json;
mod value;
mod xml;

pub use emit::{Emit, FieldTags, StaticAttrs, Text, TreeBuilder, XmlWriter, emit_element};
pub use json::{decode_json, encode_json};
pub use value::{Content, Element, ScalarType};
pub use xml::{DecodeError, decode_xml, encode_xml};
