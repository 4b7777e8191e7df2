//! The incoming resource (`INCOMINGS`) and its rules: the supplier it names, one incoming
//! per supplier and number, what an imported incoming lets an update change, its entry in
//! its supplier's index, and the delete that takes its parts (items, payments, comments,
//! property values, the file and what was found in it) with it.

use super::super::property_values;
use super::super::records::{self, Draft, Resource, Rules};
use super::super::schema::{Record, Scalar};
use super::super::suppliers::SUPPLIERS;
use super::super::{Ctx, Error};
use super::comments::INCOMING_COMMENTS;
use super::items::INCOMING_ITEMS;
use super::payments::{self, INCOMING_PAYMENTS};
use super::record::{self, children, due, extra_key, file_key, supplier_entry};
use crate::caps::{Read, Write};
use crate::store::keys;

/// Its list filters are `http::incomings::filtered`'s: the status depends on the day.
pub static INCOMINGS: Resource = record::resource(&IncomingRules);

/// The fields of an imported incoming that an update may change.
const IMPORTED_CHANGEABLE: [&str; 4] = ["label", "note", "due_date", "supplier_id"];

struct IncomingRules;

impl Rules for IncomingRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        let supplier = d.record.int("supplier_id").unwrap_or(0);
        if supplier < 1
            || !records::exists(
                d.txn.as_read(),
                &SUPPLIERS,
                d.ctx.account_id,
                supplier as u64,
            )?
        {
            d.errors
                .push(format!("supplier_id {supplier} does not exist"));
            return Ok(());
        }
        match d.old {
            None => prepare_new(d, supplier),
            Some(old) => prepare_update(d, old, supplier),
        }
    }

    fn before_delete(&self, ctx: &Ctx, txn: &mut dyn Write, record: &Record) -> Result<(), Error> {
        let (account, id) = (ctx.account_id, record.id());
        txn.delete(&supplier_entry(account, record))?;
        txn.delete(&file_key(account, id))?;
        txn.delete(&extra_key(account, id))?;
        property_values::remove_of_owner(ctx, txn, &property_values::INCOMING_PROPERTY_VALUES, id)?;
        for res in [&INCOMING_ITEMS, &INCOMING_PAYMENTS, &INCOMING_COMMENTS] {
            for child in children(txn.as_read(), res, account, id)? {
                records::remove(ctx, txn, res, &child)?;
            }
        }
        Ok(())
    }
}

/// A new incoming: `manual` and an invoice unless told otherwise, refused when its
/// supplier already has one of its number, and entered in its supplier's index.
fn prepare_new(d: Draft<'_>, supplier: i64) -> Result<(), Error> {
    if d.record.get("format").is_none() {
        d.record.set("format", Some(Scalar::Text("manual".into())));
    }
    if d.record.get("type").is_none() {
        d.record.set("type", Some(Scalar::Text("INVOICE".into())));
    }
    let number = d.record.text("number").to_owned();
    if let Some(existing) =
        find_duplicate(d.txn.as_read(), d.ctx.account_id, supplier as u64, &number)?
    {
        return Err(duplicate(existing, &number, supplier));
    }
    d.txn.put(
        &keys::supplier_incoming(d.ctx.account_id, supplier as u64, d.record.id()),
        &[],
    )?;
    Ok(())
}

/// An update of the incoming `old`: an imported one keeps what its file says, a new
/// supplier or number must not be another incoming's, the supplier's index follows the
/// supplier, and a changed amount due changes what its payments pay.
fn prepare_update(d: Draft<'_>, old: &Record, supplier: i64) -> Result<(), Error> {
    // An imported incoming says what its file says: only what the file does not
    // hold (label, note, the due date it is paid by, a better supplier match)
    // changes.
    if old.text("format") != "manual" {
        for (name, _) in &d.changes.values {
            if !IMPORTED_CHANGEABLE.contains(name) && old.get(name) != d.record.get(name) {
                d.errors.push(format!(
                    "{name} comes from the imported e-invoice and cannot be changed"
                ));
            }
        }
    }
    let number = d.record.text("number").trim().to_owned();
    let old_supplier = old.int("supplier_id").unwrap_or(0);
    if (old_supplier != supplier || old.text("number").trim() != number)
        && let Some(existing) =
            find_duplicate(d.txn.as_read(), d.ctx.account_id, supplier as u64, &number)?
        && existing != d.record.id()
    {
        return Err(duplicate(existing, &number, supplier));
    }
    if old_supplier != supplier && d.errors.is_empty() {
        // The supplier's index follows a changed supplier.
        let (account, id) = (d.ctx.account_id, d.record.id());
        d.txn
            .delete(&keys::supplier_incoming(account, old_supplier as u64, id))?;
        d.txn
            .put(&keys::supplier_incoming(account, supplier as u64, id), &[])?;
    }
    let due_now = due(d.record);
    if due(old) != due_now {
        // A payment marked as paying it all pays what is due now.
        let paid = payments::paid(
            d.txn.as_read(),
            d.ctx.account_id,
            d.record.id(),
            None,
            due_now,
        )?;
        d.record.set("paid_amount", Some(Scalar::Dec(paid)));
    }
    Ok(())
}

/// The refusal of a second incoming of a supplier's number.
fn duplicate(existing: u64, number: &str, supplier: i64) -> Error {
    Error::Duplicate(format!(
        "incoming {existing} already holds number {number} of supplier {supplier}"
    ))
}

/// The incoming of `supplier` with `number`, if one exists (found through the number's
/// index, so that a supplier's thousandth import reads no more than its first).
fn find_duplicate(
    txn: &dyn Read,
    account: u64,
    supplier: u64,
    number: &str,
) -> Result<Option<u64>, Error> {
    Ok(records::find(txn, &INCOMINGS, account, "number", number)?
        .into_iter()
        .find(|r| {
            r.int("supplier_id") == Some(supplier as i64)
                && r.text("number").trim() == number.trim()
        })
        .map(|r| r.id()))
}
