//! Documents: invoices and credit notes, one implementation for every kind (`DocKind`
//! carries what differs, as data), with their parts: items, payments, comments and tags.
//!
//! The modules form layers whose edges point down (a test checks there is no cycle):
//!
//! ```text
//! commands   query                       what changes documents / what reads lists
//!    │   ╲    │
//!    │    storage ── tallies             load and save, index entries, tallied sums and counts
//!    │       │        │
//!    └── fields, keys │                  field tables and getters / key layout
//!            │        │
//!   model, lifecycle, kind, items, payments, comments, tags, recurring, reminder   (leaves)
//! ```
//!
//! A document changes only through `commands::change`, which recomputes what it caches
//! of its parts, moves its status by `lifecycle::transition`, saves it with its index
//! entries and tallies (`storage::save`) and writes the comments of the change.

#![warn(clippy::wildcard_enum_match_arm)]

pub mod claims;
pub mod commands;
pub mod comments;
pub mod fields;
pub mod items;
mod keys;
mod kind;
mod lifecycle;
mod model;
pub mod payments;
pub mod query;
pub mod recurring;
pub mod reminder;
pub mod storage;
pub mod tags;
pub mod tallies;

pub use commands::{Action, today};
pub use fields::{DocField, Get, fields, to_record};
pub use kind::DocKind;
pub use kind::{Lifecycle, Spec};
pub use lifecycle::{Event, Shown, Status, refusal, transition};
#[cfg(test)]
pub use model::sample as model_sample;
pub use model::{Document, Tax};
pub use query::Filter;
