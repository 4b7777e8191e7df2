//! Business rules: accounts, resources and their fields, defaults, numbering and validation.
//!
//! Works on `Record`s and `Changes` and talks to storage only through `caps` traits and the
//! `store` module (keys, stored forms, encoding). Never names WIT or HTTP; XML
//! only where it is the business document itself (`einvoice`: its writers and readers).

#![forbid(unsafe_code)]

pub mod accounts;
pub mod address;
pub mod articles;
pub mod client_query;
pub mod clients;
pub mod clock;
pub mod codes;
pub mod consistency;
pub mod contacts;
pub mod country_taxes;
pub mod date;
pub mod date_texts;
pub mod deliveries;
pub mod dispatch;
pub mod documents;
pub mod dunning;
pub mod einvoice;
pub mod email_templates;
pub mod emails;
pub mod events;
pub mod filenames;
pub mod girocode;
pub mod grouping;
pub mod incoming_pdf;
pub mod incomings;
pub mod links;
pub mod migrate;
pub mod money;
pub mod numbering;
pub mod opening;
pub mod pdfs;
pub mod placeholders;
pub mod portal;
pub mod printing;
pub mod properties;
pub mod property_values;
pub mod record_tags;
pub mod records;
pub mod runs;
pub mod schedule;
pub mod schema;
pub mod settings;
pub mod suppliers;
pub mod taxes;
pub mod template_text;
pub mod templates;
pub mod units;
pub mod webhooks;

use crate::caps::StoreError;

/// A failure of a business operation.
#[derive(Debug)]
pub enum Error {
    /// The request is not acceptable; one message per problem, each naming its field.
    Invalid(Vec<String>),
    /// The record does not exist in the caller's account.
    NotFound(String),
    /// The request clashes with a record that exists (an incoming invoice imported twice).
    Duplicate(String),
    /// The caller's user may not do this.
    Forbidden(String),
    /// A capability the operation needs (PDF rendering, mail) failed or is not there;
    /// the message says which.
    Unavailable(String),
    /// Storage failed; details go to the log only.
    Store(StoreError),
}

impl Error {
    pub fn invalid(msg: impl Into<String>) -> Error {
        Error::Invalid(vec![msg.into()])
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Error {
        Error::Store(e)
    }
}

/// The caller and the moment of a request, for every operation.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    pub account_id: u64,
    pub user_id: u64,
    pub is_admin: bool,
    /// Unix seconds: the account's moment (`clock`).
    pub now: i64,
    /// Seconds the account's time zone is ahead of UTC at `now`.
    pub utc_offset: i32,
}

impl Ctx {
    /// The day it is for the caller: the day of `now` in the account's time zone.
    pub fn today(&self) -> date::Date {
        date::Date::from_unix(self.now + self.utc_offset as i64)
    }
}
