//! Tags of clients: a record resource named by its client (`client_id`) and indexed by
//! it and by the tag's name, so that a client's tags and the clients carrying a tag are
//! read without a scan. A client takes its tags with it when it is deleted. The client is
//! named by its collection, not referenced: clients depend on this module.

use super::records::{self, Draft, Resource, Rules};
use super::schema::{self, Changes, Field, Kind, Record, Scalar};
use super::{Ctx, Error};
use crate::caps::{Read, Write};
use crate::limits;
use crate::store::keys;

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the tag (read only; assigned on create)."),
    Field::new("client_id", Kind::Integer)
        .mandatory()
        .doc("Id of the client the tag is on; it does not change."),
    Field::new("name", Kind::Tag).mandatory().doc(
        "Name of the tag: one line without commas, at most 100 characters. A name the client \
         already carries (in any case) answers that tag.",
    ),
];

pub static CLIENT_TAGS: Resource = Resource::new("client-tags", "client tag", FIELDS, &TagRules)
    .filtered(&[records::Filter::exact("client_id", "client_id")])
    .indexed(&["client_id", "name"]);

/// The collection of clients, whose records the tags name.
const CLIENTS: &str = "clients";

/// Whether client `id` exists in the account.
pub fn client_exists(txn: &dyn Read, account: u64, id: u64) -> Result<bool, Error> {
    Ok(txn.get(&keys::record(account, CLIENTS, id))?.is_some())
}

/// Tags a client; a name it already carries (in any case) answers that tag.
pub fn add(ctx: &Ctx, txn: &mut dyn Write, changes: &Changes) -> Result<Record, Error> {
    let mut errors = changes.errors();
    schema::check_mandatory(FIELDS, changes, &mut errors);
    let client = match changes.get("client_id") {
        Some(Some(Scalar::Int(id))) if *id > 0 => Some(*id as u64),
        _ => None,
    };
    let name = match changes.get("name") {
        Some(Some(v)) => v.to_wire().trim().to_owned(),
        _ => String::new(),
    };
    let Some(client) = client.filter(|_| errors.is_empty()) else {
        return Err(Error::Invalid(errors));
    };
    if !name.is_empty()
        && let Some(same) = of_client(txn.as_read(), ctx.account_id, client)?
            .into_iter()
            .find(|t| same_name(t.text("name"), &name))
    {
        return Ok(same);
    }
    records::create(ctx, txn, &CLIENT_TAGS, changes)
}

/// The tags of a client, in id order.
pub fn of_client(txn: &dyn Read, account: u64, client: u64) -> Result<Vec<Record>, Error> {
    records::children(txn, &CLIENT_TAGS, account, "client_id", client)
}

/// Deletes the tags of a client, with the client.
pub fn remove_of_client(txn: &mut dyn Write, account: u64, client: u64) -> Result<(), Error> {
    for tag in of_client(txn.as_read(), account, client)? {
        records::remove(txn, &CLIENT_TAGS, account, &tag)?;
    }
    Ok(())
}

/// The ids of the clients carrying a tag named `name` (in any case), in id order.
pub fn clients_tagged(txn: &dyn Read, account: u64, name: &str) -> Result<Vec<u64>, Error> {
    let ids = records::ids_named(txn, &CLIENT_TAGS, account, "name", name)?;
    let mut clients: Vec<u64> = records::load_many(txn, &CLIENT_TAGS, account, &ids)?
        .iter()
        .filter(|t| same_name(t.text("name"), name))
        .filter_map(|t| t.int("client_id"))
        .map(|c| c as u64)
        .collect();
    clients.sort_unstable();
    clients.dedup();
    Ok(clients)
}

/// Whether two tag names are the same in any case.
fn same_name(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

struct TagRules;

impl Rules for TagRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        let account = d.ctx.account_id;
        let client = d.record.int("client_id").unwrap_or(0);
        if let Some(old) = d.old
            && old.int("client_id") != d.record.int("client_id")
        {
            d.errors
                .push("client_id cannot be changed; delete the tag and create another".into());
            return Ok(());
        }
        if client < 1 || !client_exists(d.txn.as_read(), account, client as u64)? {
            d.errors.push(format!("client_id {client} does not exist"));
            return Ok(());
        }
        let name = d.record.text("name").trim().to_owned();
        if !d.errors.is_empty() {
            return Ok(());
        }
        d.record.set("name", Some(Scalar::Text(name)));
        let carried = of_client(d.txn.as_read(), account, client as u64)?.len();
        if d.old.is_none() && carried >= limits::TAGS_MAX {
            d.errors.push(format!(
                "a client carries at most {} tags",
                limits::TAGS_MAX
            ));
        }
        Ok(())
    }
}
