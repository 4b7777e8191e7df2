//! Custom property definitions for users, incoming invoices and clients: three collections
//! with one field list.

use super::records::{Resource, Rules};
use super::schema::{Changes, Field, Kind, Record, Scalar, parse_bool};
use super::{Ctx, Error};
use crate::caps::Write;

pub const TYPES: &[&str] = &["TEXTFIELD", "TEXTAREA", "CHECKBOX"];

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer).read_only(),
    Field::new("account_id", Kind::Integer).read_only(),
    Field::new("name", Kind::Text).mandatory(),
    Field::new("type", Kind::Enum(TYPES)).mandatory(),
    Field::new("default_value", Kind::Text),
    Field::new("is_nvl", Kind::Bool),
];

pub static USER_PROPERTIES: Resource = Resource {
    collection: "user-properties",
    label: "user property",
    fields: FIELDS,
    filters: &[],
    rules: &PropertyRules,
};

pub static INCOMING_PROPERTIES: Resource = Resource {
    collection: "incoming-properties",
    label: "incoming property",
    fields: FIELDS,
    filters: &[],
    rules: &PropertyRules,
};

pub static CLIENT_PROPERTIES: Resource = Resource {
    collection: "client-properties",
    label: "client property",
    fields: FIELDS,
    filters: &[],
    rules: &PropertyRules,
};

struct PropertyRules;

impl Rules for PropertyRules {
    fn prepare(
        &self,
        _ctx: &Ctx,
        _txn: &mut dyn Write,
        record: &mut Record,
        _old: Option<&Record>,
        _changes: &Changes,
        errors: &mut Vec<String>,
    ) -> Result<(), Error> {
        let name = record.text("name");
        if name.contains(['\n', '\r']) {
            errors.push("name must be a single line".into());
        }
        if record.get("is_nvl").is_none() {
            record.set("is_nvl", Some(Scalar::Bool(false)));
        }
        // A checkbox's default is a boolean; keep it in the canonical 1/0 form.
        if record.text("type") == "CHECKBOX" {
            let value = record.text("default_value").trim().to_owned();
            if !value.is_empty() {
                match parse_bool(&value) {
                    Some(b) => record.set(
                        "default_value",
                        Some(Scalar::Text(if b { "1" } else { "0" }.into())),
                    ),
                    None => errors.push(format!(
                        "default_value of a CHECKBOX must be 1 or 0, got \"{value}\""
                    )),
                }
            }
        }
        Ok(())
    }
}
