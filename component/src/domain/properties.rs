//! Custom property definitions for users, incoming invoices, clients and articles: four
//! collections with one field list.

use super::records::{Draft, Resource, Rules};
use super::schema::Record;
use super::schema::{Field, Kind, Scalar, parse_bool};
use super::{Ctx, Error, property_values};
use crate::caps::Write;

pub const TYPES: &[&str] = &["TEXTFIELD", "TEXTAREA", "CHECKBOX"];

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the property (read only; assigned on create)."),
    Field::new("account_id", Kind::Integer)
        .read_only()
        .doc("Id of the account the property belongs to (read only)."),
    Field::new("name", Kind::Text)
        .mandatory()
        .doc("Name of the property, one line."),
    Field::new("type", Kind::Enum(TYPES)).mandatory().doc(
        "Kind of value: TEXTFIELD a single line of text, TEXTAREA text of several lines, CHECKBOX \
         1 or 0.",
    ),
    Field::new("default_value", Kind::Text).doc(
        "Value a property value takes when it is created or updated without one and is_nvl is 1; 1 \
         or 0 for a CHECKBOX.",
    ),
    Field::new("is_nvl", Kind::Bool)
        .doc("1: a value created or updated without value takes default_value. Default: 0."),
];

pub static USER_PROPERTIES: Resource = Resource::new(
    "user-properties",
    "user property",
    FIELDS,
    &PropertyRules(&property_values::USER_PROPERTY_VALUES),
);

pub static INCOMING_PROPERTIES: Resource = Resource::new(
    "incoming-properties",
    "incoming property",
    FIELDS,
    &PropertyRules(&property_values::INCOMING_PROPERTY_VALUES),
);

pub static CLIENT_PROPERTIES: Resource = Resource::new(
    "client-properties",
    "client property",
    FIELDS,
    &PropertyRules(&property_values::CLIENT_PROPERTY_VALUES),
);

pub static ARTICLE_PROPERTIES: Resource = Resource::new(
    "article-properties",
    "article property",
    FIELDS,
    &PropertyRules(&property_values::ARTICLE_PROPERTY_VALUES),
);

/// A property's rules; its values go with it.
struct PropertyRules(&'static Resource);

impl Rules for PropertyRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        let name = d.record.text("name");
        if name.contains(['\n', '\r']) {
            d.errors.push("name must be a single line".into());
        }
        if d.record.get("is_nvl").is_none() {
            d.record.set("is_nvl", Some(Scalar::Bool(false)));
        }
        // A checkbox's default is a boolean; keep it in the canonical 1/0 form.
        if d.record.text("type") == "CHECKBOX" {
            let value = d.record.text("default_value").trim().to_owned();
            if !value.is_empty() {
                match parse_bool(&value) {
                    Some(b) => d.record.set(
                        "default_value",
                        Some(Scalar::Text(if b { "1" } else { "0" }.into())),
                    ),
                    None => d.errors.push(format!(
                        "default_value of a CHECKBOX must be 1 or 0, got \"{value}\""
                    )),
                }
            }
        }
        Ok(())
    }

    fn before_delete(&self, ctx: &Ctx, txn: &mut dyn Write, record: &Record) -> Result<(), Error> {
        property_values::remove_of_property(ctx, txn, self.0, record.id())
    }
}
