//! Values of custom properties: what an incoming invoice, a client, a user or an article
//! holds for a property defined in `incoming-properties`, `client-properties`,
//! `user-properties` or `article-properties`.
//! One value per record and property; a value given as nothing takes the property's
//! default when the property says so (`is_nvl` 1). A CHECKBOX holds 1 or 0, a TEXTFIELD
//! one line.

use super::accounts;
use super::records::{self, Draft, Filter, Resource, Rules};
use super::schema::{Field, Kind, Record, Scalar, parse_bool};
use super::{Ctx, Error};
use crate::caps::{Read, Write};
use crate::store::keys;

/// Which records hold values of which properties.
struct Owner {
    /// The values resource.
    values: &'static Resource,
    /// The field naming the record (`incoming_id`).
    field: &'static str,
    /// The field naming the property (`incoming_property_id`).
    property: &'static str,
    /// The properties' collection, and a property's name in messages. (Named, not
    /// referenced: the owners and properties take their values with them on delete, and
    /// so depend on this module.)
    properties: (&'static str, &'static str),
    /// The record's name in messages.
    label: &'static str,
    /// Whether the record exists in the account.
    exists: fn(&dyn Read, u64, u64) -> Result<bool, Error>,
}

macro_rules! fields {
    ($owner:literal, $owner_doc:literal, $property:literal, $property_doc:literal) => {
        &[
            Field::new("id", Kind::Integer)
                .read_only()
                .doc("Id of the value (read only; assigned on create)."),
            Field::new("created", Kind::DateTime)
                .read_only()
                .doc("When the value was created (read only)."),
            Field::new("updated", Kind::DateTime)
                .read_only()
                .doc("When the value was last changed (read only)."),
            Field::new($owner, Kind::Integer)
                .mandatory()
                .doc($owner_doc),
            Field::new($property, Kind::Integer)
                .mandatory()
                .doc($property_doc),
            Field::new("value", Kind::Text).doc(
                "The value: one line for a TEXTFIELD, any text for a TEXTAREA, 1 or 0 for a \
                 CHECKBOX. Empty: the property's default_value when its is_nvl is 1.",
            ),
        ]
    };
}

macro_rules! filters {
    ($owner:literal, $property:literal) => {
        &[
            Filter::exact($owner, $owner),
            Filter::exact($property, $property),
        ]
    };
}

static INCOMING: Owner = Owner {
    values: &INCOMING_PROPERTY_VALUES,
    field: "incoming_id",
    property: "incoming_property_id",
    properties: ("incoming-properties", "incoming property"),
    label: "incoming",
    exists: |txn, account, id| in_collection(txn, "incomings", account, id),
};

static CLIENT: Owner = Owner {
    values: &CLIENT_PROPERTY_VALUES,
    field: "client_id",
    property: "client_property_id",
    properties: ("client-properties", "client property"),
    label: "client",
    exists: |txn, account, id| in_collection(txn, "clients", account, id),
};

static USER: Owner = Owner {
    values: &USER_PROPERTY_VALUES,
    field: "user_id",
    property: "user_property_id",
    properties: ("user-properties", "user property"),
    label: "user",
    exists: |txn, account, id| match accounts::load_user(txn, id) {
        Ok(user) => Ok(user.account_id == account),
        Err(Error::NotFound(_)) => Ok(false),
        Err(e) => Err(e),
    },
};

pub static INCOMING_PROPERTY_VALUES: Resource = Resource::new(
    "incoming-property-values",
    "incoming property value",
    fields!(
        "incoming_id",
        "Id of the incoming invoice that holds the value; it does not change.",
        "incoming_property_id",
        "Id of the incoming property the value is for; an incoming holds one value per property. \
         It does not change."
    ),
    &ValueRules(&INCOMING),
)
.filtered(filters!("incoming_id", "incoming_property_id"))
.indexed(&["incoming_id", "incoming_property_id"]);

pub static CLIENT_PROPERTY_VALUES: Resource = Resource::new(
    "client-property-values",
    "client property value",
    fields!(
        "client_id",
        "Id of the client that holds the value; it does not change.",
        "client_property_id",
        "Id of the client property the value is for; a client holds one value per property. It \
         does not change."
    ),
    &ValueRules(&CLIENT),
)
.filtered(filters!("client_id", "client_property_id"))
.indexed(&["client_id", "client_property_id"]);

pub static USER_PROPERTY_VALUES: Resource = Resource::new(
    "user-property-values",
    "user property value",
    fields!(
        "user_id",
        "Id of the user (of the account) who holds the value; it does not change.",
        "user_property_id",
        "Id of the user property the value is for; a user holds one value per property. It does \
         not change."
    ),
    &ValueRules(&USER),
)
.filtered(filters!("user_id", "user_property_id"))
.indexed(&["user_id", "user_property_id"]);

static ARTICLE: Owner = Owner {
    values: &ARTICLE_PROPERTY_VALUES,
    field: "article_id",
    property: "article_property_id",
    properties: ("article-properties", "article property"),
    label: "article",
    exists: |txn, account, id| in_collection(txn, "articles", account, id),
};

pub static ARTICLE_PROPERTY_VALUES: Resource = Resource::new(
    "article-property-values",
    "article property value",
    fields!(
        "article_id",
        "Id of the article that holds the value; it does not change.",
        "article_property_id",
        "Id of the article property the value is for; an article holds one value per property. \
         It does not change."
    ),
    &ValueRules(&ARTICLE),
)
.filtered(filters!("article_id", "article_property_id"))
.indexed(&["article_id", "article_property_id"]);

/// Whether record `id` of `collection` exists in the account.
fn in_collection(txn: &dyn Read, collection: &str, account: u64, id: u64) -> Result<bool, Error> {
    Ok(txn.get(&keys::record(account, collection, id))?.is_some())
}

const OWNERS: [&Owner; 4] = [&INCOMING, &CLIENT, &USER, &ARTICLE];

/// The values resource of a properties resource.
pub fn of_properties(properties: &Resource) -> &'static Resource {
    owner_of(|o| o.properties.0 == properties.collection).values
}

fn owner(values: &Resource) -> &'static Owner {
    owner_of(|o| o.values.collection == values.collection)
}

fn owner_of(which: impl Fn(&Owner) -> bool) -> &'static Owner {
    OWNERS
        .into_iter()
        .find(|o| which(o))
        .expect("every properties and values resource has its owner")
}

/// Deletes the values a record (an incoming, a client) holds, with the record.
pub fn remove_of_owner(
    ctx: &Ctx,
    txn: &mut dyn Write,
    values: &Resource,
    owner_id: u64,
) -> Result<(), Error> {
    remove_where(ctx, txn, values, owner(values).field, owner_id)
}

/// Deletes the values of a property, with the property.
pub fn remove_of_property(
    ctx: &Ctx,
    txn: &mut dyn Write,
    values: &Resource,
    property: u64,
) -> Result<(), Error> {
    remove_where(ctx, txn, values, owner(values).property, property)
}

fn remove_where(
    ctx: &Ctx,
    txn: &mut dyn Write,
    values: &Resource,
    field: &str,
    id: u64,
) -> Result<(), Error> {
    for value in records::children(txn.as_read(), values, ctx.account_id, field, id)? {
        records::remove(ctx, txn, values, &value)?;
    }
    Ok(())
}

/// Ok when the owner `id` of `values` (an incoming, a client, a user) is the account's,
/// else `NotFound` naming it.
pub fn check_owner(txn: &dyn Read, values: &Resource, account: u64, id: u64) -> Result<(), Error> {
    let o = owner(values);
    if (o.exists)(txn, account, id)? {
        Ok(())
    } else {
        Err(Error::NotFound(format!("{} {id} does not exist", o.label)))
    }
}

struct ValueRules(&'static Owner);

impl Rules for ValueRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        let o = self.0;
        let account = d.ctx.account_id;
        let (owner_id, property_id) = (
            d.record.int(o.field).unwrap_or(0),
            d.record.int(o.property).unwrap_or(0),
        );
        if let Some(old) = d.old {
            for field in [o.field, o.property] {
                if old.int(field) != d.record.int(field) {
                    d.errors.push(format!(
                        "{field} cannot be changed; delete the value and create another"
                    ));
                }
            }
            if !d.errors.is_empty() {
                return Ok(());
            }
        }
        let txn = d.txn.as_read();
        if owner_id < 1 || !(o.exists)(txn, account, owner_id as u64)? {
            d.errors
                .push(format!("{} {owner_id} does not exist", o.field));
        }
        let property = match property_id {
            1.. => txn
                .get(&keys::record(account, o.properties.0, property_id as u64))?
                .map(|bytes| records::decode_record(&bytes))
                .transpose()?,
            _ => None,
        };
        let Some(property) = property else {
            d.errors
                .push(format!("{} {property_id} does not exist", o.property));
            return Ok(());
        };
        shape_value(d.record, &property, d.errors);
        if !d.errors.is_empty() {
            return Ok(());
        }
        if d.old.is_none()
            && let Some(existing) =
                records::children(txn, o.values, account, o.field, owner_id as u64)?
                    .into_iter()
                    .find(|v| v.int(o.property) == Some(property_id))
        {
            return Err(Error::Duplicate(format!(
                "{} {owner_id} already has a value of {} {property_id}: {} {}; update that one",
                o.label,
                o.properties.1,
                o.values.label,
                existing.id()
            )));
        }
        Ok(())
    }
}

/// The value as the property's type holds it: the default where none is given and the
/// property says so, 1 or 0 for a checkbox, one line for a text field.
fn shape_value(record: &mut Record, property: &Record, errors: &mut Vec<String>) {
    let mut value = record.text("value").to_owned();
    if value.trim().is_empty() && property.bool("is_nvl") {
        value = property.text("default_value").to_owned();
    }
    match property.text("type") {
        "CHECKBOX" if !value.trim().is_empty() => match parse_bool(value.trim()) {
            Some(b) => value = if b { "1" } else { "0" }.to_owned(),
            None => errors.push(format!(
                "value of the CHECKBOX property {} must be 1 or 0, got \"{value}\"",
                property.id()
            )),
        },
        "TEXTFIELD" if value.contains(['\n', '\r']) => errors.push(format!(
            "value of the TEXTFIELD property {} must be a single line",
            property.id()
        )),
        _ => {}
    }
    record.set(
        "value",
        (!value.is_empty()).then(|| Scalar::Text(value.clone())),
    );
}
