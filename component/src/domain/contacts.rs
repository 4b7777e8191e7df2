//! Contacts: the people at a client that documents are addressed to. A contact belongs to
//! one client; what it leaves empty is the client's, and it is shown so (`shown`). A
//! client takes its contacts with it; a contact a document names cannot be deleted.

use super::records::{self, Draft, Resource, Rules};
use super::schema::{Field, Kind, Record, Scalar};
use super::{Ctx, Error, address};
use crate::caps::{Read, Write};
use crate::store::keys;

/// The collection of clients (named, not referenced: a client takes its contacts along
/// when deleted, and so depends on this module).
const CLIENTS: &str = "clients";

/// The fields a contact shares with its client: empty on the contact means the client's.
pub const SHARED: [&str; 15] = [
    "name",
    "salutation",
    "first_name",
    "last_name",
    "street",
    "zip",
    "city",
    "state",
    "country_code",
    "phone",
    "fax",
    "mobile",
    "email",
    "www",
    "label",
];

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the contact (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the contact was created (read only)."),
    Field::new("updated", Kind::DateTime)
        .read_only()
        .doc("When the contact was last changed (read only)."),
    Field::new("client_id", Kind::Integer)
        .mandatory()
        .doc("Id of the client the contact belongs to; it does not change."),
    Field::new("label", Kind::Text).doc("What the contact is for, e.g. Buchhaltung."),
    Field::new("name", Kind::Text).doc("Company name. Empty: the client's."),
    Field::new("salutation", Kind::Text).doc("Salutation. Empty: the client's."),
    Field::new("first_name", Kind::Text).doc("First name. Empty: the client's."),
    Field::new("last_name", Kind::Text).doc("Last name. Empty: the client's."),
    Field::new("street", Kind::Text).doc("Street. Empty: the client's."),
    Field::new("zip", Kind::Text).doc("Post code. Empty: the client's."),
    Field::new("city", Kind::Text).doc("City. Empty: the client's."),
    Field::new("state", Kind::Text).doc("State. Empty: the client's."),
    Field::new("country_code", Kind::Country).doc("Country. Empty: the client's."),
    Field::new("phone", Kind::Text)
        .doc("Telephone number (BT-57 of e-invoices). Empty: the client's."),
    Field::new("fax", Kind::Text).doc("Fax number. Empty: the client's."),
    Field::new("mobile", Kind::Text).doc("Mobile number. Empty: the client's."),
    Field::new("email", Kind::Email).doc(
        "E-mail address (BT-58 of e-invoices); documents naming the contact are e-mailed to it \
         when a request names no recipient. Empty: the client's.",
    ),
    Field::new("www", Kind::Text).doc("Web site. Empty: the client's."),
    Field::new("address", Kind::Text).read_only().doc(
        "The postal address block of the contact, its empty fields the client's (read only; \
         computed); a document naming the contact takes it as its default address.",
    ),
];

pub static CONTACTS: Resource = Resource::new("contacts", "contact", FIELDS, &ContactRules)
    .filtered(&[records::Filter::exact("client_id", "client_id")])
    .indexed(&["client_id"])
    .emits("contact");

struct ContactRules;

impl Rules for ContactRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        let client = d.record.int("client_id").unwrap_or(0);
        if let Some(old) = d.old
            && old.int("client_id") != d.record.int("client_id")
        {
            d.errors.push(
                "client_id of a contact cannot be changed; make a contact of the other client"
                    .into(),
            );
            return Ok(());
        }
        if client < 1
            || records::load_named(d.txn.as_read(), CLIENTS, d.ctx.account_id, client as u64)?
                .is_none()
        {
            d.errors.push(format!("client_id {client} does not exist"));
        }
        Ok(())
    }

    fn shown(&self, txn: &dyn Read, account: u64, record: Record) -> Result<Record, Error> {
        let client = record.int("client_id").unwrap_or(0).max(0) as u64;
        let client = records::load_named(txn, CLIENTS, account, client)?.unwrap_or_default();
        Ok(resolved(record, &client))
    }

    fn before_delete(&self, ctx: &Ctx, txn: &mut dyn Write, record: &Record) -> Result<(), Error> {
        let named = txn.scan(
            &keys::contact_documents(ctx.account_id, record.id()),
            None,
            1,
            false,
        )?;
        if !named.is_empty() {
            return Err(Error::invalid(format!(
                "contact {} is named by documents and cannot be deleted",
                record.id()
            )));
        }
        Ok(())
    }
}

/// The contact as documents take it: every shared field it leaves empty the client's, and
/// its address block made of them.
pub fn resolved(mut contact: Record, client: &Record) -> Record {
    for field in SHARED {
        if field != "label" && contact.text(field).trim().is_empty() {
            contact.set(field, client.get(field).cloned());
        }
    }
    let address = address::block(&contact);
    contact.set("address", Some(Scalar::Text(address)));
    contact
}

/// The contacts of a client, in id order.
pub fn of_client(txn: &dyn Read, account: u64, client: u64) -> Result<Vec<Record>, Error> {
    records::children(txn, &CONTACTS, account, "client_id", client)
}

/// Deletes the contacts of a client, with the client.
pub fn remove_of_client(ctx: &Ctx, txn: &mut dyn Write, client: u64) -> Result<(), Error> {
    for contact in of_client(txn.as_read(), ctx.account_id, client)? {
        records::remove(ctx, txn, &CONTACTS, &contact)?;
    }
    Ok(())
}

/// Contact `id` of `client`, as documents take it; `Err` names the problem of the
/// document's `contact_id`.
pub fn of(
    txn: &dyn Read,
    account: u64,
    client: u64,
    id: i64,
) -> Result<Result<Record, String>, Error> {
    let contact = match (id > 0)
        .then(|| records::load(txn, &CONTACTS, account, id as u64))
        .transpose()
    {
        Ok(Some(c)) => c,
        Ok(None) | Err(Error::NotFound(_)) => {
            return Ok(Err(format!("contact_id {id} does not exist")));
        }
        Err(e) => return Err(e),
    };
    if contact.int("client_id") != Some(client as i64) {
        return Ok(Err(format!(
            "contact_id {id} is a contact of client {}, not of client {client}",
            contact.int("client_id").unwrap_or(0)
        )));
    }
    let client = records::load_named(txn, CLIENTS, account, client)?.unwrap_or_default();
    Ok(Ok(resolved(contact, &client)))
}
