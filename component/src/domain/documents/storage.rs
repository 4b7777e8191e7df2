//! Documents and their parts in the store: load and save (with the index entries, the
//! number claim and the tallies moved in the same transaction), and the children
//! (items, payments, comments, tags, each under its document). Converts the model to and
//! from its stored forms (`store::forms`) by hand: every field is named on both sides.
//!
//! Saves nothing it has not been handed; deciding what changes is `commands`' job. Every
//! save and delete of a document or of a part tells the account's webhooks
//! (`events::emit`), in the same transaction: a kind of document, or of part, gets its
//! events by being saved here.

use super::super::date::Date;
use super::super::events::{self, Verb};
use super::super::{Ctx, Error, numbering, pdfs};
use super::comments::{self, Comment};
use super::items::{self, Item};
use super::keys;
use super::kind::DocKind;
use super::lifecycle::Status;
use super::model::{Document, Tax};
use super::payments::{self, Payment};
use super::recurring::Schedule;
use super::reminder::{Charge, Dunning};
use super::tags::{self, Tag};
use super::tallies;
use crate::caps::{Read, Write};
use crate::store::forms::{
    Dec16, DecTuple, DecimalForm, StoredComment, StoredDocument, StoredDocumentTail, StoredDunning,
    StoredItem, StoredItemTail, StoredKind, StoredPayment, StoredSchedule, StoredStatus, StoredTag,
    StoredTax,
};
use crate::store::{self, id_of_key};

// ---- documents ---------------------------------------------------------------------------

/// Converts between a model type and its stored form, naming every field once: `same`
/// fields are copied as they are, `decimal` ones go through the decimal form, `date` ones
/// through the Julian day, `map` ones through a pair of functions; `grown` ones are what
/// the stored form gained later, kept in its tail (`store::forms::Tail`), where a new
/// field is appended without a new data version. Both directions
/// destructure the whole value, so a field added on either side and not named here does
/// not compile.
/// A stored form, or a stored form and what it grew (a pair, which postcard writes as the
/// one followed by the other).
macro_rules! grown {
    ($form:ty) => {
        $form
    };
    ($form:ty, $grown:ty) => {
        ($form, $grown)
    };
    ($form:expr) => {
        $form
    };
    ($form:expr, $grown:expr) => {
        ($form, $grown)
    };
}

macro_rules! stored_form {
    (
        $model:ident <=> $stored:ident, $to:ident, $from:ident,
        same: [$($same:ident),* $(,)?],
        decimal: [$($dec:ident),* $(,)?],
        date: [$($date:ident),* $(,)?],
        map: [$($map:ident: $into:path, $outof:path),* $(,)?]
        $(, grown: $grown:ident [$($g:ident),* $(,)?]
            $(dates [$($gd:ident),* $(,)?])?
            $(map [$($gm:ident: $ginto:path, $goutof:path),* $(,)?])?)? $(,)?
    ) => {
        fn $to(m: &$model) -> grown!($stored<Dec16> $(, $grown)?) {
            let $model {
                $($same,)* $($dec,)* $($date,)* $($map,)*
                $($($g,)* $($($gd,)*)? $($($gm,)*)?)?
            } = m;
            grown!(
                $stored {
                    $($same: Clone::clone($same),)*
                    $($dec: Dec16(*$dec),)*
                    $($date: $date.julian(),)*
                    $($map: $into($map),)*
                }
                $(, $grown {
                    $($g: Clone::clone($g),)*
                    $($($gd: $gd.julian(),)*)?
                    $($($gm: $ginto($gm),)*)?
                })?
            )
        }

        fn $from<D: DecimalForm>(s: $stored<D> $(, grown: $grown)?) -> $model {
            let $stored { $($same,)* $($dec,)* $($date,)* $($map,)* } = s;
            $(let $grown { $($g,)* $($($gd,)*)? $($($gm,)*)? } = grown;)?
            $model {
                $($same,)*
                $($dec: $dec.get(),)*
                $($date: Date::from_julian($date),)*
                $($map: $outof($map),)*
                $($($g,)* $($($gd: Date::from_julian($gd),)*)? $($($gm: $goutof($gm),)*)?)?
            }
        }
    };
}

stored_form!(
    Document <=> StoredDocument, to_stored, from_stored,
    same: [
        id, client_id, contact_id, created, updated, number, number_pre, number_length,
        formatted_number, supply_date, supply_date_type, address, label, intro, note,
        currency_code, payment_types, net_gross, reduction, template_id, tax_free, paid_types,
        title, invoice_id, free_text_id, tags, article_ids,
    ],
    decimal: [
        discount_rate, quote, total_net, total_gross, total_net_unreduced,
        total_gross_unreduced, total_reduction, paid_amount,
    ],
    date: [date, due_date, discount_date],
    map: [
        kind: kind_to_stored, kind_from_stored,
        status: status_to_stored, status_from_stored,
        taxes: taxes_to_stored, taxes_from_stored,
    ],
    grown: StoredDocumentTail [buyer_reference, order_reference, offer_id, confirmation_id,
        recurring_id, portal_url, contract_reference]
        dates [validity_date]
        map [schedule: schedule_to_stored, schedule_from_stored,
            dunning: dunning_to_stored, dunning_from_stored],
);

stored_form!(
    Item <=> StoredItem, item_to_stored, item_from_stored,
    same: [
        id, document_id, position, article_id, unit, tax_name, title, description, reduction,
        product_type, created, updated,
    ],
    decimal: [quantity, unit_price, tax_rate],
    date: [],
    map: [],
    grown: StoredItemTail [unit_code, tax_category, tax_exemption_reason, optional]
        map [charge: charge_to_stored, Charge::parse_owned],
);

stored_form!(
    Payment <=> StoredPayment, payment_to_stored, payment_from_stored,
    same: [id, document_id, created, user_id, comment, payment_type, mark_paid],
    decimal: [amount],
    date: [date],
    map: [],
);

fn kind_to_stored(kind: &DocKind) -> StoredKind {
    match kind {
        DocKind::Invoice => StoredKind::Invoice,
        DocKind::CreditNote => StoredKind::CreditNote,
        DocKind::Offer => StoredKind::Offer,
        DocKind::Confirmation => StoredKind::Confirmation,
        DocKind::DeliveryNote => StoredKind::DeliveryNote,
        DocKind::Recurring => StoredKind::Recurring,
        DocKind::Reminder => StoredKind::Reminder,
    }
}

fn kind_from_stored(kind: StoredKind) -> DocKind {
    match kind {
        StoredKind::Invoice => DocKind::Invoice,
        StoredKind::CreditNote => DocKind::CreditNote,
        StoredKind::Offer => DocKind::Offer,
        StoredKind::Confirmation => DocKind::Confirmation,
        StoredKind::DeliveryNote => DocKind::DeliveryNote,
        StoredKind::Recurring => DocKind::Recurring,
        StoredKind::Reminder => DocKind::Reminder,
    }
}

fn status_to_stored(status: &Status) -> StoredStatus {
    match status {
        Status::Draft => StoredStatus::Draft,
        Status::Open => StoredStatus::Open,
        Status::Paid => StoredStatus::Paid,
        Status::Canceled => StoredStatus::Canceled,
        Status::Won => StoredStatus::Won,
        Status::Lost => StoredStatus::Lost,
        Status::Cleared => StoredStatus::Cleared,
        Status::Completed => StoredStatus::Completed,
        Status::Created => StoredStatus::Created,
    }
}

fn status_from_stored(status: StoredStatus) -> Status {
    match status {
        StoredStatus::Draft => Status::Draft,
        StoredStatus::Open => Status::Open,
        StoredStatus::Paid => Status::Paid,
        StoredStatus::Canceled => Status::Canceled,
        StoredStatus::Won => Status::Won,
        StoredStatus::Lost => Status::Lost,
        StoredStatus::Cleared => Status::Cleared,
        StoredStatus::Completed => Status::Completed,
        StoredStatus::Created => Status::Created,
    }
}

fn schedule_to_stored(schedule: &Option<Box<Schedule>>) -> Option<StoredSchedule> {
    let s = schedule.as_deref()?;
    let Schedule {
        name,
        cycle,
        cycle_number,
        action,
        hour,
        start_date,
        end_date,
        iterations,
        counter,
        slot,
        last_creation_date,
        next_creation_date,
        next_run,
        ultimo,
        due_days,
        discount_days,
        email_sender,
        email_subject,
        email_message,
        email_filename,
        email_bcc,
        letter_color,
        letter_duplex,
        letter_paper_weight,
        last_error,
    } = s.clone();
    let day = |d: Option<Date>| d.map(Date::julian);
    Some(StoredSchedule {
        name,
        cycle,
        cycle_number,
        action,
        hour,
        start_date: day(start_date),
        end_date: day(end_date),
        iterations,
        counter,
        slot,
        last_creation_date: day(last_creation_date),
        next_creation_date: day(next_creation_date),
        next_run,
        ultimo,
        due_days,
        discount_days,
        email_sender,
        email_subject,
        email_message,
        email_filename,
        email_bcc,
        letter_color,
        letter_duplex,
        letter_paper_weight,
        last_error,
    })
}

fn schedule_from_stored(stored: Option<StoredSchedule>) -> Option<Box<Schedule>> {
    let StoredSchedule {
        name,
        cycle,
        cycle_number,
        action,
        hour,
        start_date,
        end_date,
        iterations,
        counter,
        slot,
        last_creation_date,
        next_creation_date,
        next_run,
        ultimo,
        due_days,
        discount_days,
        email_sender,
        email_subject,
        email_message,
        email_filename,
        email_bcc,
        letter_color,
        letter_duplex,
        letter_paper_weight,
        last_error,
    } = stored?;
    let day = |d: Option<i32>| d.map(Date::from_julian);
    Some(Box::new(Schedule {
        name,
        cycle,
        cycle_number,
        action,
        hour,
        start_date: day(start_date),
        end_date: day(end_date),
        iterations,
        counter,
        slot,
        last_creation_date: day(last_creation_date),
        next_creation_date: day(next_creation_date),
        next_run,
        ultimo,
        due_days,
        discount_days,
        email_sender,
        email_subject,
        email_message,
        email_filename,
        email_bcc,
        letter_color,
        letter_duplex,
        letter_paper_weight,
        last_error,
    }))
}

fn charge_to_stored(charge: &Charge) -> String {
    charge.as_str().to_owned()
}

fn dunning_to_stored(dunning: &Option<Box<Dunning>>) -> Option<StoredDunning> {
    let Dunning {
        reminder_text_id,
        level,
        level_name,
        subject,
        claim,
        invoice_number,
        invoice_date,
        invoice_due_date,
        is_old,
        flat_charge,
    } = dunning.as_deref()?.clone();
    Some(StoredDunning {
        reminder_text_id,
        level,
        level_name,
        subject,
        claim: Dec16(claim),
        invoice_number,
        invoice_date: invoice_date.map(Date::julian),
        invoice_due_date: invoice_due_date.map(Date::julian),
        is_old,
        flat_charge,
    })
}

fn dunning_from_stored(stored: Option<StoredDunning>) -> Option<Box<Dunning>> {
    let StoredDunning {
        reminder_text_id,
        level,
        level_name,
        subject,
        claim,
        invoice_number,
        invoice_date,
        invoice_due_date,
        is_old,
        flat_charge,
    } = stored?;
    Some(Box::new(Dunning {
        reminder_text_id,
        level,
        level_name,
        subject,
        claim: claim.get(),
        invoice_number,
        invoice_date: invoice_date.map(Date::from_julian),
        invoice_due_date: invoice_due_date.map(Date::from_julian),
        is_old,
        flat_charge,
    }))
}

fn taxes_to_stored(taxes: &[Tax]) -> Vec<StoredTax<Dec16>> {
    taxes
        .iter()
        .map(|t| StoredTax {
            name: t.name.clone(),
            rate: Dec16(t.rate),
            net: Dec16(t.net),
            amount: Dec16(t.amount),
        })
        .collect()
}

fn taxes_from_stored<D: DecimalForm>(taxes: Vec<StoredTax<D>>) -> Vec<Tax> {
    taxes
        .into_iter()
        .map(|t| Tax {
            name: t.name,
            rate: t.rate.get(),
            net: t.net.get(),
            amount: t.amount.get(),
        })
        .collect()
}

/// A document from its stored bytes.
pub fn decode(bytes: &[u8]) -> Result<Document, Error> {
    let doc = store::decode_with_tail(bytes, from_stored::<DecTuple>, from_stored::<Dec16>)?;
    debug_assert!(doc.totals_add_up(), "document totals add up when loaded");
    Ok(doc)
}

/// The document stored under `id`, checked to be what its key says.
fn decode_as(kind: DocKind, id: u64, bytes: Option<Vec<u8>>) -> Result<Document, Error> {
    let bytes = bytes.ok_or_else(|| kind.not_found(id))?;
    let doc = decode(&bytes)?;
    assert_eq!(
        (doc.kind, doc.id),
        (kind, id),
        "a document is stored under its own id"
    );
    Ok(doc)
}

pub fn load(txn: &dyn Read, account: u64, kind: DocKind, id: u64) -> Result<Document, Error> {
    decode_as(kind, id, txn.get(&key(account, kind, id))?)
}

/// The key of a document's stored record: what `load` reads.
pub fn key(account: u64, kind: DocKind, id: u64) -> Vec<u8> {
    keys::record(account, kind, id)
}

/// The documents with these ids, in their order, read in one call.
pub fn load_many(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    ids: &[u64],
) -> Result<Vec<Document>, Error> {
    let keys: Vec<Vec<u8>> = ids
        .iter()
        .map(|id| keys::record(account, kind, *id))
        .collect();
    let values = txn.get_many(&keys)?;
    ids.iter()
        .zip(values)
        .map(|(id, bytes)| decode_as(kind, *id, bytes))
        .collect()
}

/// Calls `f` with every document of the kind in id order, a batch at a time.
pub fn for_each(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    mut f: impl FnMut(Document) -> Result<(), Error>,
) -> Result<(), Error> {
    store::for_each(txn, &keys::all(account, kind), |(_, v)| f(decode(v)?))
}

/// The status index entry of a document (for the migration, which writes them again).
pub fn status_entry(account: u64, doc: &Document) -> (Vec<u8>, Vec<u8>) {
    keys::status_entry(account, doc)
}

/// The open-due index entry of an open document of a kind that falls due (for the
/// migration, which writes them again with what they keep).
pub fn open_due_entry(account: u64, doc: &Document) -> (Vec<u8>, Vec<u8>) {
    keys::open_due_entry(account, doc)
}

/// Prefix of the open-due index entries of a kind (for the migration).
pub fn open_due_prefix(account: u64, kind: DocKind) -> Vec<u8> {
    keys::open_due_index(account, kind)
}

/// Prefix of the status index entries of one stored status (for the migration).
pub fn status_prefix(account: u64, kind: DocKind, status: Status) -> Vec<u8> {
    keys::status_prefix(account, kind, status)
}

/// The index entries of a document (key, value): the status, date and open-due indexes
/// and its client's document index (for the consistency check).
pub fn index_entries(account: u64, doc: &Document) -> Vec<(Vec<u8>, Vec<u8>)> {
    keys::index_entries(account, doc)
}

/// Prefixes of the index entries of a kind's documents below the kind's collection:
/// status, date, open-due, due runs, reminders by invoice (for the consistency check). Each
/// entry ends in its document's id.
pub fn index_prefixes(account: u64, kind: DocKind) -> [Vec<u8>; 5] {
    [
        keys::status_index(account, kind),
        keys::date_index(account, kind),
        keys::open_due_index(account, kind),
        keys::due_index(account, kind),
        keys::invoice_index(account, kind),
    ]
}

/// The reminders of an invoice, in id order (the order they were made).
pub fn reminders_of(txn: &dyn Read, account: u64, invoice: u64) -> Result<Vec<Document>, Error> {
    let prefix = keys::of_invoice(account, DocKind::Reminder, invoice);
    let ids = store::scan_all(txn, &prefix)?
        .iter()
        .map(|(k, _)| id_of_key(k))
        .collect::<Result<Vec<u64>, _>>()?;
    load_many(txn, account, DocKind::Reminder, &ids)
}

/// The invoices open at the start of `today` whose due date has passed: OVERDUE, the
/// longest overdue first (from the open-due index, without loading them).
pub fn overdue_invoices(txn: &dyn Read, account: u64, today: Date) -> Result<Vec<u64>, Error> {
    let prefix = keys::open_due_index(account, DocKind::Invoice);
    let end = keys::day(today);
    let mut ids = Vec::new();
    let past = |k: &[u8]| -> Result<bool, Error> {
        Ok(k.get(prefix.len()..prefix.len() + 4)
            .is_none_or(|day| day >= &end[..]))
    };
    store::for_each_until(txn, &prefix, None, past, |(k, _)| {
        ids.push(id_of_key(k)?);
        Ok(())
    })?;
    Ok(ids)
}

/// The recurring invoices of an account whose next run is due at the account's moment
/// `now`, the soonest first, at most `limit` of them.
pub fn due(txn: &dyn Read, account: u64, now: i64, limit: usize) -> Result<Vec<u64>, Error> {
    let prefix = keys::due_index(account, DocKind::Recurring);
    let mut ids = Vec::new();
    for (k, _) in txn.scan(&prefix, None, limit as u32, false)? {
        let at = k
            .get(prefix.len()..prefix.len() + 8)
            .and_then(|b| b.try_into().ok());
        let Some(at) = at.map(|b: [u8; 8]| (u64::from_be_bytes(b) ^ (1 << 63)) as i64) else {
            continue;
        };
        if at > now {
            break;
        }
        ids.push(id_of_key(&k)?);
    }
    Ok(ids)
}

/// The kind of document an entry of a client's document index names (under
/// `store::keys::all_client_documents`); it ends in the document's id.
pub fn kind_of_client_entry(key: &[u8]) -> Option<DocKind> {
    keys::kind_of_client_entry(key)
}

/// The ids of a client's documents of `kind`, in id order.
pub fn of_client(
    txn: &dyn Read,
    account: u64,
    client: u64,
    kind: DocKind,
) -> Result<Vec<u64>, Error> {
    store::scan_all(txn, &keys::client_documents(account, client, kind))?
        .iter()
        .map(|(k, _)| Ok(id_of_key(k)?))
        .collect()
}

/// The prefix (date placeholders resolved) and number a document claims.
fn claimed(doc: &Document) -> Option<(String, i64)> {
    doc.kind.spec().numbered.then(|| {
        (
            numbering::resolve_prefix(&doc.number_pre, doc.date),
            doc.number,
        )
    })
}

/// The key of the number claim a document holds, if its kind is numbered; its value is
/// the document's id.
pub fn claim_key(account: u64, doc: &Document) -> Option<Vec<u8>> {
    let (pre, number) = claimed(doc)?;
    Some(store::keys::number_claim(
        account,
        doc.kind.range(),
        &pre,
        number,
    ))
}

/// The collections of a kind's children, each child under its document.
pub fn child_collections(kind: DocKind) -> Vec<&'static str> {
    let spec = kind.spec();
    [
        Some(spec.items),
        spec.payments,
        Some(spec.comments),
        Some(spec.tags),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Writes the document and moves its index entries, number claim and tallies; its
/// event is `create` without `old`, `status` when its stored status moved, else `update`.
pub fn save(
    ctx: &Ctx,
    txn: &mut dyn Write,
    old: Option<&Document>,
    new: &Document,
) -> Result<(), Error> {
    let account = ctx.account_id;
    assert!(
        new.totals_add_up(),
        "document totals add up before they are saved"
    );
    let new_claim = claimed(new);
    let old_claim = old.and_then(claimed);
    if let Some(new_claim) = new_claim.filter(|c| old_claim.as_ref() != Some(c)) {
        let range = new.kind.range();
        if !numbering::claim(txn, account, range, &new_claim.0, new_claim.1, new.id)? {
            return Err(Error::Duplicate(format!(
                "number {} is already used by another {} with prefix \"{}\"",
                new_claim.1,
                new.kind.label(),
                new_claim.0
            )));
        }
        if let Some((pre, n)) = old_claim {
            numbering::release(txn, account, range, &pre, n)?;
        }
    }
    // Entries the save leaves as they are are not written again.
    let old_entries = old
        .map(|o| keys::index_entries(account, o))
        .unwrap_or_default();
    let entries = keys::index_entries(account, new);
    for (k, _) in old_entries.iter().filter(|e| !entries.contains(e)) {
        txn.delete(k)?;
    }
    for (k, v) in entries.iter().filter(|e| !old_entries.contains(e)) {
        txn.put(k, v)?;
    }
    tallies::update(txn, account, new.kind, old, Some(new))?;
    let bytes = store::encode(&to_stored(new));
    txn.put(&keys::record(account, new.kind, new.id), &bytes)?;
    let verb = match old {
        None => Verb::Create,
        Some(o) if o.status != new.status => Verb::Status,
        Some(_) => Verb::Update,
    };
    events::emit(ctx, txn, new.kind.range(), verb, new.id, |_| {
        Ok(events::snapshot_of(ctx, bytes, None))
    })
}

/// Tells the account's webhooks that `doc` was sent (an e-mail or a letter handed over).
pub fn sent(ctx: &Ctx, txn: &mut dyn Write, doc: &Document) -> Result<(), Error> {
    tell_as_stored(ctx, txn, doc, Verb::Send)
}

/// Tells the account's webhooks that `doc`, stored OPEN, shows OVERDUE from `ctx`'s day
/// on: a status that time changed.
pub fn fell_due(ctx: &Ctx, txn: &mut dyn Write, doc: &Document) -> Result<(), Error> {
    tell_as_stored(ctx, txn, doc, Verb::Status)
}

/// An event `verb` of `doc` as it is stored, for what happened without changing it.
fn tell_as_stored(ctx: &Ctx, txn: &mut dyn Write, doc: &Document, verb: Verb) -> Result<(), Error> {
    events::emit(ctx, txn, doc.kind.range(), verb, doc.id, |_| {
        Ok(events::snapshot_of(
            ctx,
            store::encode(&to_stored(doc)),
            None,
        ))
    })
}

/// Deletes the document with its items, payments, comments, tags and PDFs, its index
/// entries and kept contribution, and frees its number. Its event is `delete`, showing it
/// as it was; its parts go with it without events of their own.
pub fn delete(ctx: &Ctx, txn: &mut dyn Write, doc: &Document) -> Result<(), Error> {
    let account = ctx.account_id;
    let kind = doc.kind;
    events::emit(ctx, txn, kind.range(), Verb::Delete, doc.id, |_| {
        Ok(events::snapshot_of(
            ctx,
            store::encode(&to_stored(doc)),
            None,
        ))
    })?;
    for (k, _) in keys::index_entries(account, doc) {
        txn.delete(&k)?;
    }
    tallies::update(txn, account, kind, Some(doc), None)?;
    if let Some((pre, number)) = claimed(doc) {
        numbering::release(txn, account, kind.range(), &pre, number)?;
    }
    for collection in child_collections(kind) {
        let prefix = store::keys::children(account, collection, doc.id);
        for (k, _) in store::scan_all(txn.as_read(), &prefix)? {
            store::delete_child(txn, account, collection, doc.id, id_of_key(&k)?)?;
        }
    }
    if kind == DocKind::Recurring {
        super::recurring::remove_receivers(ctx, txn, doc.id)?;
    }
    pdfs::delete_all(txn, account, kind.collection(), doc.id)?;
    txn.delete(&keys::record(account, kind, doc.id))?;
    Ok(())
}

// ---- children ----------------------------------------------------------------------------

/// A part of documents as the store keeps it: under its document, in its kind's collection,
/// with an id from that collection's counter.
pub trait Child: Sized {
    /// The part's name in events (`item` makes `invoice_item.create`); none for parts that
    /// have no events.
    const EVENT: Option<&'static str>;
    /// Whether the part shows values of its document (an item's totals): its events keep
    /// the document's bytes beside its own.
    const SHOWS_DOCUMENT: bool = false;
    fn collection(kind: DocKind) -> &'static str;
    /// The id of its document, and its own.
    fn ids(&self) -> (u64, u64);
    fn set_id(&mut self, id: u64);
    fn encode(&self) -> Vec<u8>;
    fn decode(bytes: &[u8]) -> Result<Self, Error>;
    /// The answer when no child of this id is in the account.
    fn not_found(kind: DocKind, id: u64) -> Error;
}

/// The collection and ids of a child type whose fields are `id` and `document_id`.
macro_rules! child_ids {
    ($module:ident) => {
        fn collection(kind: DocKind) -> &'static str {
            $module::collection(kind)
        }
        fn ids(&self) -> (u64, u64) {
            (self.document_id, self.id)
        }
        fn set_id(&mut self, id: u64) {
            self.id = id;
        }
    };
}

/// The children of a document, in id order.
pub fn children<C: Child>(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    doc: u64,
) -> Result<Vec<C>, Error> {
    let mut found = Vec::new();
    store::for_each(
        txn,
        &store::keys::children(account, C::collection(kind), doc),
        |(_, v)| {
            found.push(C::decode(v)?);
            Ok::<_, Error>(())
        },
    )?;
    Ok(found)
}

/// One child by its own id.
pub fn child<C: Child>(txn: &dyn Read, account: u64, kind: DocKind, id: u64) -> Result<C, Error> {
    match store::get_child(txn, account, C::collection(kind), id)? {
        Some(bytes) => C::decode(&bytes),
        None => Err(C::not_found(kind, id)),
    }
}

/// Stores a new child, giving it the next id.
pub fn add<C: Child>(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    c: &mut C,
) -> Result<(), Error> {
    c.set_id(store::next_id(txn, C::collection(kind))?);
    put_new(ctx, txn, kind, c)
}

/// Writes a new child that has its id already (`number_items`).
pub fn put_new<C: Child>(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    c: &C,
) -> Result<(), Error> {
    write_child(ctx, txn, kind, c, Verb::Create)
}

/// Writes a changed child.
pub fn put<C: Child>(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, c: &C) -> Result<(), Error> {
    write_child(ctx, txn, kind, c, Verb::Update)
}

fn write_child<C: Child>(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    c: &C,
    verb: Verb,
) -> Result<(), Error> {
    let (doc, id) = c.ids();
    let bytes = c.encode();
    store::put_child(txn, ctx.account_id, C::collection(kind), doc, id, &bytes)?;
    child_event(ctx, txn, kind, c, verb, bytes)
}

pub fn remove<C: Child>(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, c: &C) -> Result<(), Error> {
    let (doc, id) = c.ids();
    child_event(ctx, txn, kind, c, Verb::Delete, c.encode())?;
    Ok(store::delete_child(
        txn,
        ctx.account_id,
        C::collection(kind),
        doc,
        id,
    )?)
}

/// The event of a part, `{range}_{part}.{verb}`: its bytes, and its document's where it
/// shows values of it.
fn child_event<C: Child>(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    c: &C,
    verb: Verb,
    bytes: Vec<u8>,
) -> Result<(), Error> {
    let Some(part) = C::EVENT else {
        return Ok(());
    };
    let (doc, id) = c.ids();
    let resource = format!("{}_{part}", kind.range());
    events::emit(ctx, txn, &resource, verb, id, |txn| {
        let parent = match C::SHOWS_DOCUMENT {
            true => txn
                .get(&keys::record(ctx.account_id, kind, doc))?
                .map(|doc| shown_of_document(&doc))
                .transpose()?,
            false => None,
        };
        Ok(events::snapshot_of(ctx, bytes, parent))
    })
}

/// What a part's event keeps of its document, in the document's stored form: a blank
/// document of its kind and id with the values a part shows of it (an item's totals
/// follow its document's price basis and `tax_free`). An event of each item of a document,
/// for each webhook, would otherwise carry a copy of the whole document.
fn shown_of_document(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    let doc = decode(bytes)?;
    let mut shown = Document::blank(doc.kind, doc.date);
    shown.id = doc.id;
    shown.net_gross = doc.net_gross;
    shown.tax_free = doc.tax_free;
    Ok(store::encode(&to_stored(&shown)))
}

/// The items of a document by position, then id.
pub fn items(txn: &dyn Read, account: u64, kind: DocKind, doc: u64) -> Result<Vec<Item>, Error> {
    let mut list: Vec<Item> = children(txn, account, kind, doc)?;
    list.sort_by_key(|i| (i.position, i.id));
    Ok(list)
}

/// Gives new items of one document their ids, taken from the counter at once.
pub fn number_items(txn: &mut dyn Write, kind: DocKind, list: &mut [Item]) -> Result<(), Error> {
    if list.is_empty() {
        return Ok(());
    }
    let count = u32::try_from(list.len())
        .map_err(|_| Error::invalid(format!("{} items are too many", list.len())))?;
    let ids = store::next_ids(txn, items::collection(kind), count)?;
    for (item, id) in list.iter_mut().zip(ids) {
        item.id = id;
    }
    Ok(())
}

impl Child for Item {
    const EVENT: Option<&'static str> = Some("item");
    const SHOWS_DOCUMENT: bool = true;
    child_ids!(items);
    fn encode(&self) -> Vec<u8> {
        store::encode(&item_to_stored(self))
    }
    fn decode(bytes: &[u8]) -> Result<Item, Error> {
        let (v1, current) = (item_from_stored::<DecTuple>, item_from_stored::<Dec16>);
        Ok(store::decode_with_tail(bytes, v1, current)?)
    }
    fn not_found(kind: DocKind, id: u64) -> Error {
        Error::NotFound(format!("{} item {id} does not exist", kind.label()))
    }
}

impl Child for Payment {
    const EVENT: Option<&'static str> = Some("payment");
    child_ids!(payments);
    fn encode(&self) -> Vec<u8> {
        store::encode(&payment_to_stored(self))
    }
    fn decode(bytes: &[u8]) -> Result<Payment, Error> {
        let (v1, current) = (
            payment_from_stored::<DecTuple>,
            payment_from_stored::<Dec16>,
        );
        Ok(store::decode(bytes, v1, current)?)
    }
    fn not_found(_: DocKind, id: u64) -> Error {
        Error::NotFound(format!("payment {id} does not exist"))
    }
}

impl Child for Comment {
    const EVENT: Option<&'static str> = Some("comment");
    child_ids!(comments);
    fn encode(&self) -> Vec<u8> {
        let Comment {
            id,
            document_id,
            created,
            user_id,
            comment,
            actionkey,
        } = self;
        store::encode(&StoredComment {
            id: *id,
            parent_id: *document_id,
            created: *created,
            user_id: *user_id,
            comment: comment.clone(),
            actionkey: actionkey.clone(),
        })
    }
    fn decode(bytes: &[u8]) -> Result<Comment, Error> {
        let StoredComment {
            id,
            parent_id,
            created,
            user_id,
            comment,
            actionkey,
        } = store::decode_plain(bytes)?;
        Ok(Comment {
            id,
            document_id: parent_id,
            created,
            user_id,
            comment,
            actionkey,
        })
    }
    fn not_found(_: DocKind, id: u64) -> Error {
        Error::NotFound(format!("comment {id} does not exist"))
    }
}

impl Child for Tag {
    const EVENT: Option<&'static str> = None;
    child_ids!(tags);
    fn encode(&self) -> Vec<u8> {
        store::encode(&StoredTag {
            id: self.id,
            document_id: self.document_id,
            name: self.name.clone(),
        })
    }
    fn decode(bytes: &[u8]) -> Result<Tag, Error> {
        let StoredTag {
            id,
            document_id,
            name,
        } = store::decode_plain(bytes)?;
        Ok(Tag {
            id,
            document_id,
            name,
        })
    }
    fn not_found(_: DocKind, id: u64) -> Error {
        Error::NotFound(format!("tag {id} does not exist"))
    }
}
