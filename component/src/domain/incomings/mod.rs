//! Incoming invoices: e-invoices received from suppliers, imported from the uploaded file
//! or entered by hand, with their parts: the lines of an imported e-invoice, payments and
//! comments. They share with documents what means the same: the fields of comments, the
//! rule by which payments settle their parent, and the `group_by` keys.
//!
//! The modules form layers whose edges point down (a test checks there is no cycle):
//!
//! ```text
//! import                              parse an upload (before the write transaction),
//!   │   ╲                             import it (inside)
//!   │   resource                      the incoming resource's rules: create and update
//!   │   ╱   │    ╲                    checks, the delete that takes its parts with it
//! items  payments │                   an e-invoice's lines / payments, which settle
//!           │  ╲  │                   their incoming
//!           │  comments               the users' and the service's comments
//!           │  ╱
//!         record        groups        what an incoming is: fields, stored shape, keys,
//!                                     status and open amount / group_by sums   (leaves)
//! ```
//!
//! The parts reach their incoming through `record::STORED`, its shape without the rules
//! of `resource::INCOMINGS`, which deletes them with it.

pub mod comments;
pub mod groups;
pub mod import;
pub mod items;
pub mod payments;
pub mod record;
pub mod resource;
#[cfg(test)]
mod tests;

pub use comments::INCOMING_COMMENTS;
pub use groups::{Group, Grouping};
pub use import::{Parsed, import, parse, read_file};
pub use items::INCOMING_ITEMS;
pub use payments::INCOMING_PAYMENTS;
pub use record::{Extra, children, extra, file, shown, supplier_entry};
pub use resource::INCOMINGS;
