//! What the faktura host and the plug component both implement of the component's imports,
//! as plain Rust: the key-value table on redb (`kv`), the PDF and thumbnail renderer
//! (`render`, with PDF/A-3 and embedded files from `pdfa`) and the mail outbox files
//! (`outbox`).
//!
//! It names no WIT type, spawns no task and opens no socket, so it compiles natively and
//! for `wasm32-wasip2` alike; each side maps its own bindings onto these types.

pub mod kv;
pub mod outbox;
mod pdfa;
pub mod render;
