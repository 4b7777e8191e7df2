//! Everything that changes a document or its parts: create, update, delete, complete,
//! sign, cancel, uncancel; add, change and remove an item; book and delete a payment; add
//! and remove a tag or a comment. A document changes in exactly one place, `change`: its
//! cached parts recomputed, its next status decided by the lifecycle, saved, and the
//! comments of the change written.

use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;

use super::super::clients::{self, CLIENTS};
use super::super::date::Date;
use super::super::date::format_datetime;
use super::super::einvoice;
use super::super::money::{self, Line, Reduction};
use super::super::schema::{self, Changes, Record, Scalar};
use super::super::settings::{self, parse_payment_types};
use super::super::{
    Ctx, Error, articles, clock, contacts, country_taxes, filenames, links, numbering, pdfs,
    printing, records, schedule, taxes, templates,
};
use super::claims;
use super::comments::Comment;
use super::fields;
use super::items::{self, Item};
use super::kind::{DocKind, Lifecycle};
use super::lifecycle::{Event, Status, refusal, transition};
use super::model::{Document, Tax};
use super::payments::{self, Payment};
use super::recurring::Schedule;
use super::storage;
use super::tags::{self, Tag};
use crate::caps::{EmbeddedFile, Pdf, PdfDocument, Random, Read, Write};
use crate::limits;
use crate::store;

pub fn today(ctx: &Ctx) -> Date {
    ctx.today()
}

// ---- the one way a document changes ------------------------------------------------------

/// How the lifecycle moves with a change.
#[derive(Clone, Copy)]
enum Move {
    /// The status stays.
    Stay,
    /// `event` happens.
    By(Event),
    /// The event depends on whether the payments settle the document (pay, unpay,
    /// uncancel).
    Settle(fn(bool) -> Event),
}

/// Which comment a status change writes, and when.
#[derive(Clone, Copy)]
enum StatusNote {
    None,
    /// Always, with this actionkey.
    Always(&'static str),
    /// Only when the status moved.
    WhenMoved(&'static str),
}

/// What a change recomputes, how the lifecycle moves, and what it notes.
struct Change<'a> {
    totals: bool,
    tags: bool,
    status: Move,
    /// Whether the change counts as an update of the document (`updated`).
    touch: bool,
    /// The comment of the action (actionkey, text), written before the status comment.
    note: Option<(&'static str, &'a str)>,
    status_note: StatusNote,
}

impl Change<'_> {
    const NOTHING: Change<'static> = Change {
        totals: false,
        tags: false,
        status: Move::Stay,
        touch: false,
        note: None,
        status_note: StatusNote::None,
    };
}

/// Carries out a change of `old` whose own fields are already changed in `doc`:
/// recomputes what the document caches of its parts, moves the status, saves it over
/// `old` and writes the comments.
fn change(
    ctx: &Ctx,
    txn: &mut dyn Write,
    old: &Document,
    mut doc: Document,
    c: Change<'_>,
) -> Result<Document, Error> {
    let account = ctx.account_id;
    if c.totals && doc.dunning.is_some() && old.status == Status::Draft {
        claims::refresh(ctx, txn, &mut doc)?;
    }
    if c.totals {
        recompute_totals(txn.as_read(), account, &mut doc)?;
    }
    if c.tags {
        doc.tags = storage::children::<Tag>(txn.as_read(), account, doc.kind, doc.id)?
            .into_iter()
            .map(|t| t.name)
            .collect();
    }
    let event = match c.status {
        Move::Stay => None,
        Move::By(event) => Some(event),
        Move::Settle(event) => {
            let (settlement, types) = payments::settlement(&storage::children(
                txn.as_read(),
                account,
                doc.kind,
                doc.id,
            )?);
            // A document shows what its payments add up to; a mark settles it all the same.
            doc.paid_amount = settlement.sum;
            doc.paid_types = types;
            Some(event(settlement.settles(doc.total_gross)))
        }
    };
    if let Some(event) = event {
        doc.status = transition(doc.kind, old.status, event).map_err(|m| refusal(doc.kind, m))?;
    }
    if c.touch {
        doc.updated = ctx.now;
    }
    storage::save(ctx, txn, Some(old), &doc)?;
    if let Some((actionkey, text)) = c.note {
        add_system_comment(ctx, txn, &doc, actionkey, text)?;
    }
    let status_key = match c.status_note {
        StatusNote::Always(key) => Some(key),
        StatusNote::WhenMoved(key) if doc.status != old.status => Some(key),
        StatusNote::WhenMoved(_) | StatusNote::None => None,
    };
    if let Some(key) = status_key {
        let text = format!("Status changed to {}", doc.shown(today(ctx)).as_str());
        add_system_comment(ctx, txn, &doc, key, &text)?;
    }
    Ok(doc)
}

/// Recomputes what the document caches of its items (totals, taxes, article ids) and of
/// its client's tax situation as they are now.
fn recompute_totals(txn: &dyn Read, account: u64, doc: &mut Document) -> Result<(), Error> {
    let items = storage::items(txn, account, doc.kind, doc.id)?;
    let client = load_client(txn, account, doc.client_id as i64)?;
    // Fees and default interest are damages: a reminder carries no tax.
    doc.tax_free = doc.kind == DocKind::Reminder || is_tax_free(txn, account, &client)?;
    apply_totals(doc, &items);
    Ok(())
}

/// The totals, taxes and article ids of `items` on `doc`; optional lines of an offer count
/// for nothing.
fn apply_totals(doc: &mut Document, items: &[Item]) {
    doc.article_ids = items.iter().filter_map(|i| i.article_id).collect();
    let lines: Vec<Line> = items
        .iter()
        .filter(|i| !i.optional)
        .map(Item::line)
        .collect();
    let reduction = Reduction::parse(&doc.reduction).ok().flatten();
    let t = money::document_totals(&lines, doc.basis(), reduction, doc.tax_free);
    doc.total_net = t.total_net;
    doc.total_gross = t.total_gross;
    doc.total_net_unreduced = t.total_net_unreduced;
    doc.total_gross_unreduced = t.total_gross_unreduced;
    doc.total_reduction = t.total_reduction;
    if let Some(d) = doc.dunning.as_deref() {
        // A reminder claims the invoice's open amount beside its own items.
        doc.total_net += d.claim;
        doc.total_gross += d.claim;
        doc.total_net_unreduced += d.claim;
        doc.total_gross_unreduced += d.claim;
    }
    doc.taxes = t
        .taxes
        .into_iter()
        .map(|g| Tax {
            name: g.name,
            rate: g.rate,
            net: g.net,
            amount: g.amount,
        })
        .collect();
}

fn add_system_comment(
    ctx: &Ctx,
    txn: &mut dyn Write,
    doc: &Document,
    actionkey: &str,
    text: &str,
) -> Result<Comment, Error> {
    let mut c = Comment {
        id: 0,
        document_id: doc.id,
        created: ctx.now,
        user_id: ctx.user_id,
        comment: text.to_owned(),
        actionkey: actionkey.to_owned(),
    };
    storage::add(ctx, txn, doc.kind, &mut c)?;
    Ok(c)
}

/// A comment the service writes for something that happened to a completed document
/// (MAIL, LETTER), with no other change to it.
pub fn note(
    ctx: &Ctx,
    txn: &mut dyn Write,
    doc: &Document,
    actionkey: &str,
    text: &str,
) -> Result<(), Error> {
    add_system_comment(ctx, txn, doc, actionkey, text).map(drop)
}

/// Loads a document whose `event` the lifecycle must allow (refused with `message`, or
/// the lifecycle's own refusal).
fn load_for(
    ctx: &Ctx,
    txn: &dyn Read,
    kind: DocKind,
    id: u64,
    event: Event,
) -> Result<Document, Error> {
    let doc = storage::load(txn, ctx.account_id, kind, id)?;
    transition(kind, doc.status, event).map_err(|m| refusal(kind, m))?;
    Ok(doc)
}

/// The document of a part (named by `parent_field` in a request): it must exist, else the
/// request names something that does not.
fn parent_of(
    ctx: &Ctx,
    txn: &dyn Read,
    kind: DocKind,
    id: i64,
) -> Result<Result<Document, String>, Error> {
    let field = kind.parent_field();
    if id < 1 {
        return Ok(Err(format!("{field} {id} does not exist")));
    }
    match storage::load(txn, ctx.account_id, kind, id as u64) {
        Ok(doc) => Ok(Ok(doc)),
        Err(Error::NotFound(_)) => Ok(Err(format!("{field} {id} does not exist"))),
        Err(e) => Err(e),
    }
}

// ---- create and update -----------------------------------------------------------------

fn text_of(changes: &Changes, name: &str) -> Option<String> {
    changes
        .get(name)
        .map(|v| v.as_ref().map(Scalar::to_wire).unwrap_or_default())
}

fn int_of(changes: &Changes, name: &str) -> Option<Option<i64>> {
    changes
        .get(name)
        .map(|v| v.as_ref().and_then(Scalar::as_int))
}

fn dec_of(changes: &Changes, name: &str) -> Option<Option<Decimal>> {
    changes
        .get(name)
        .map(|v| v.as_ref().and_then(Scalar::as_dec))
}

fn date_of(changes: &Changes, name: &str) -> Option<Option<Date>> {
    changes.get(name).map(|v| match v {
        Some(Scalar::Date(d)) => Some(*d),
        _ => None,
    })
}

fn load_client(txn: &dyn Read, account: u64, id: i64) -> Result<Record, Error> {
    if id < 1 {
        return Err(Error::invalid(format!("client_id {id} does not exist")));
    }
    records::load(txn, &CLIENTS, account, id as u64).map_err(|e| match e {
        Error::NotFound(_) => Error::invalid(format!("client_id {id} does not exist")),
        other @ (Error::Invalid(_)
        | Error::Duplicate(_)
        | Error::Forbidden(_)
        | Error::Unavailable(_)
        | Error::Store(_)) => other,
    })
}

/// Whether documents for this client carry no tax: tax rule NO_TAX, or COUNTRY with the
/// client's country listed among the account's country taxes.
fn is_tax_free(txn: &dyn Read, account: u64, client: &Record) -> Result<bool, Error> {
    Ok(match client.text("tax_rule") {
        "NO_TAX" => true,
        "TAX" => false,
        _ => {
            let country = client.text("country_code");
            !country.is_empty() && country_taxes::is_tax_free_country(txn, account, country)?
        }
    })
}

/// Checks the fields a create or update sets that the field kinds cannot check alone.
fn validate(doc: &Document, errors: &mut Vec<String>) {
    if let Err(e) = Reduction::parse(&doc.reduction) {
        errors.push(e);
    }
    if let Err(e) = parse_payment_types(&doc.payment_types) {
        errors.push(e);
    }
    if !(Decimal::ZERO..=Decimal::ONE_HUNDRED).contains(&doc.discount_rate) {
        errors.push(format!(
            "discount_rate must be between 0 and 100, got {}",
            doc.discount_rate
        ));
    }
    if doc.quote <= Decimal::ZERO {
        errors.push(format!("quote must be positive, got {}", doc.quote));
    }
    if doc.number < 1 && doc.kind.spec().numbered {
        errors.push(format!("number must be at least 1, got {}", doc.number));
    }
    if !(0..=limits::NUMBER_LENGTH_MAX).contains(&doc.number_length) {
        errors.push(format!(
            "number_length must be between 0 and {}, got {}",
            limits::NUMBER_LENGTH_MAX,
            doc.number_length
        ));
    }
    let label = doc.kind.label();
    if doc.due_date < doc.date {
        errors.push(format!(
            "due_date {} is before the {label} date {}",
            doc.due_date, doc.date
        ));
    }
    if doc.discount_date < doc.date {
        errors.push(format!(
            "discount_date {} is before the {label} date {}",
            doc.discount_date, doc.date
        ));
    }
    if doc.validity_date < doc.date {
        errors.push(format!(
            "validity_days must be 0 or more, got {}",
            doc.validity_date.days_since(doc.date)
        ));
    }
    if matches!(
        doc.supply_date_type.as_str(),
        "SUPPLY_DATE" | "DELIVERY_DATE"
    ) && !doc.supply_date.trim().is_empty()
        && Date::parse(doc.supply_date.trim()).is_none()
    {
        errors.push(format!(
            "supply_date must be a date (YYYY-MM-DD) with supply_date_type {}, got \"{}\"",
            doc.supply_date_type, doc.supply_date
        ));
    }
    if doc.number_pre.chars().any(char::is_control)
        || doc.number_pre.chars().count() > limits::NUMBER_PRE_CHARS_MAX
    {
        errors.push(format!(
            "number_pre must be one line of at most {} characters",
            limits::NUMBER_PRE_CHARS_MAX
        ));
    }
}

/// The payment terms a new document of a client starts with: due days and discount days;
/// and what of the client's terms gives no valid document, by the document field that
/// would take it (a request that sets that field does not need the client's value).
struct Terms {
    due_days: i64,
    discount_days: i64,
    /// Offers: the days the offer holds.
    validity_days: i64,
    problems: Vec<(&'static str, String)>,
}

impl Terms {
    /// The terms a document has now, kept when only its date moves.
    fn of(doc: &Document) -> Terms {
        Terms {
            due_days: doc.due_date.days_since(doc.date),
            discount_days: doc.discount_date.days_since(doc.date),
            validity_days: doc.validity_date.days_since(doc.date),
            problems: Vec::new(),
        }
    }
}

/// A new draft of a client with every field at its default: the settings, overridden by
/// the client's own terms, price basis, currency and reduction.
fn defaults_for(
    ctx: &Ctx,
    kind: DocKind,
    id: u64,
    client_id: u64,
    client: &Record,
    defaults: &Record,
    date: Date,
) -> (Document, Terms) {
    let mut problems = Vec::new();
    let mut term = |field: &'static str, takes: &'static str| {
        clients::term(client, defaults, field).unwrap_or_else(|e| {
            problems.push((
                takes,
                format!(
                    "client {}'s {e}: change the client's {field} or {field}_type",
                    client.id()
                ),
            ));
            Decimal::ZERO
        })
    };
    let due_days = term("due_days", "due_date").to_i64().unwrap_or(0);
    let discount_days = term("discount_days", "discount_date").to_i64().unwrap_or(0);
    let discount_rate = term("discount_rate", "discount_rate");
    let validity_days = defaults.int("offer_validity_days").unwrap_or(30);
    let reduction = client_reduction(client, &mut problems);
    let setting_text = |name: &str| defaults.text(&kind.setting(name)).to_owned();
    let doc = Document {
        id,
        client_id,
        created: ctx.now,
        updated: ctx.now,
        number_pre: setting_text("number_pre"),
        number_length: defaults.int(&kind.setting("number_length")).unwrap_or(0),
        due_date: date.add_days(due_days),
        address: client.text("address").to_owned(),
        discount_rate,
        discount_date: date.add_days(discount_days),
        label: setting_text("label"),
        intro: setting_text("intro"),
        note: setting_text("note"),
        currency_code: client_currency(client, defaults),
        payment_types: defaults.text("payment_types").to_owned(),
        net_gross: client_basis(client, defaults),
        reduction,
        buyer_reference: client.text("buyer_reference").to_owned(),
        validity_date: date.add_days(validity_days),
        dunning: (kind == DocKind::Reminder).then(Box::default),
        schedule: (kind == DocKind::Recurring).then(|| new_schedule(date, due_days, discount_days)),
        ..Document::blank(kind, date)
    };
    (
        doc,
        Terms {
            due_days,
            discount_days,
            validity_days,
            problems,
        },
    )
}

/// The client's reduction; one that does not parse is a problem of the `reduction` field
/// and leaves the document without one.
fn client_reduction(client: &Record, problems: &mut Vec<(&'static str, String)>) -> String {
    let mut reduction = client.text("reduction").to_owned();
    if let Err(e) = Reduction::parse(&reduction) {
        problems.push((
            "reduction",
            format!(
                "client {}'s {e}: change the client's reduction",
                client.id()
            ),
        ));
        reduction.clear();
    }
    reduction
}

/// The client's price basis (NET or GROSS), else the settings'.
fn client_basis(client: &Record, defaults: &Record) -> String {
    let client_basis = client.text("net_gross");
    if client_basis == "NET" || client_basis == "GROSS" {
        client_basis.to_owned()
    } else {
        defaults.text("net_gross").to_owned()
    }
}

/// The client's currency, else the settings'.
fn client_currency(client: &Record, defaults: &Record) -> String {
    match client.text("currency_code") {
        "" => defaults.text("currency_code").to_owned(),
        c => c.to_owned(),
    }
}

/// The schedule of a new recurring invoice: monthly from `date`, creating (not sending)
/// at 2 o'clock, with the client's payment terms.
fn new_schedule(date: Date, due_days: i64, discount_days: i64) -> Box<Schedule> {
    Box::new(Schedule {
        cycle: "MONTHLY".into(),
        cycle_number: 1,
        action: "CREATE".into(),
        hour: 2,
        start_date: Some(date),
        due_days,
        discount_days,
        letter_duplex: true,
        letter_paper_weight: 80,
        ..Schedule::default()
    })
}

/// Creates a draft with its items. Every absent field takes its default from the settings,
/// the client or the default tax; a credit note made from an invoice takes the invoice's
/// client, basis, currency, address, reduction and (without items of its own) its items.
/// The documents it is made from (`offer_id`, `confirmation_id`, a delivery note's
/// `invoice_id`) must be of its client; an invoice made from one notes it on both.
pub fn create(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    changes: &Changes,
    new_items: &[Changes],
) -> Result<Document, Error> {
    let account = ctx.account_id;
    let mut errors = changes.errors();
    let source = credit_source(txn.as_read(), account, kind, changes, &mut errors)?;
    if source.is_none() {
        schema::check_mandatory(fields::fields(kind), changes, &mut errors);
    }
    if new_items.len() > limits::ITEMS_MAX {
        errors.push(too_many_items(kind));
    }
    let (client_id, client) = client_of_new(
        txn.as_read(),
        account,
        changes,
        source.as_ref(),
        &mut errors,
    )?;
    let links = linked(
        txn.as_read(),
        account,
        kind,
        changes,
        client_id,
        &mut errors,
    )?;
    let defaults = settings::load_stored(txn.as_read(), account)?;
    let id = store::next_id(txn, kind.collection())?;
    let date = date_of(changes, "date").flatten().unwrap_or(today(ctx));
    let (mut doc, terms) = defaults_for(ctx, kind, id, client_id as u64, &client, &defaults, date);
    for (takes, problem) in &terms.problems {
        if !changes.has(takes) {
            errors.push(problem.clone());
        }
    }
    if let Some(src) = &source {
        take_credited(&mut doc, src);
    }
    take_links(&mut doc, &links);
    if let Some(s) = doc.schedule.as_deref_mut() {
        // A new series starts tomorrow unless told otherwise.
        s.start_date = Some(ctx.today().add_days(1));
    }
    apply(&mut doc, changes, &terms);
    take_contact(txn.as_read(), account, &mut doc, changes, &mut errors)?;
    let pre = numbering::resolve_prefix(&doc.number_pre, doc.date);
    if int_of(changes, "number").flatten().is_none() && kind.spec().numbered {
        doc.number = numbering::next_free(txn.as_read(), account, kind.range(), &pre)?;
    }
    validate(&doc, &mut errors);
    plan(ctx, txn.as_read(), &mut doc, changes, true, &mut errors)?;
    let built = items_of_new(
        ctx,
        txn.as_read(),
        &doc,
        new_items,
        source.as_ref(),
        &mut errors,
    )?;
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    save_new(ctx, txn, doc, &client, &pre, built, &links)
}

/// The refusal of a document with more items than it may hold.
fn too_many_items(kind: DocKind) -> String {
    format!(
        "a {} holds at most {} items",
        kind.label(),
        limits::ITEMS_MAX
    )
}

/// The items of a new document: the request's, or without any, the credited invoice's.
fn items_of_new(
    ctx: &Ctx,
    txn: &dyn Read,
    doc: &Document,
    new_items: &[Changes],
    source: Option<&Document>,
    errors: &mut Vec<String>,
) -> Result<Vec<Item>, Error> {
    let mut built = build_items(ctx, txn, doc, new_items, errors)?;
    if let (Some(src), true) = (source, new_items.is_empty()) {
        for item in storage::items(txn, ctx.account_id, DocKind::Invoice, src.id)? {
            built.push(items::copy_to(&item, doc.id, ctx.now));
        }
    }
    Ok(built)
}

/// The client of a new document, `client_id` or else the credited invoice's, with its id.
/// Without one, or when it names no client, the request is refused with every problem
/// found so far.
fn client_of_new(
    txn: &dyn Read,
    account: u64,
    changes: &Changes,
    source: Option<&Document>,
    errors: &mut Vec<String>,
) -> Result<(i64, Record), Error> {
    let Some(client_id) = int_of(changes, "client_id")
        .flatten()
        .or(source.map(|s| s.client_id as i64))
    else {
        return Err(Error::Invalid(std::mem::take(errors)));
    };
    match load_client(txn, account, client_id) {
        Ok(c) => Ok((client_id, c)),
        Err(Error::Invalid(mut e)) => {
            errors.append(&mut e);
            Err(Error::Invalid(std::mem::take(errors)))
        }
        Err(e) => Err(e),
    }
}

/// A credit note takes the credited invoice's price basis, currency, quote, address and
/// reduction, and names the invoice.
fn take_credited(doc: &mut Document, src: &Document) {
    doc.invoice_id = Some(src.id as i64);
    doc.net_gross = src.net_gross.clone();
    doc.currency_code = src.currency_code.clone();
    doc.quote = src.quote;
    doc.address = src.address.clone();
    doc.reduction = src.reduction.clone();
}

/// Names on a new document the documents it was made from.
fn take_links(doc: &mut Document, links: &[Document]) {
    for linked in links {
        let id = Some(linked.id as i64);
        match linked.kind {
            DocKind::Offer => doc.offer_id = id,
            DocKind::Confirmation => doc.confirmation_id = id,
            DocKind::Invoice => doc.invoice_id = id,
            DocKind::CreditNote
            | DocKind::DeliveryNote
            | DocKind::Recurring
            | DocKind::Reminder => {}
        }
    }
}

/// Stores a new, valid draft: its final number, tax rule and totals, then the document,
/// its items, its CREATE comment and the notes on the documents it was made from.
fn save_new(
    ctx: &Ctx,
    txn: &mut dyn Write,
    mut doc: Document,
    client: &Record,
    pre: &str,
    mut built: Vec<Item>,
    links: &[Document],
) -> Result<Document, Error> {
    let (account, kind) = (ctx.account_id, doc.kind);
    doc.payment_types = normalize_payment_types(&doc.payment_types);
    doc.formatted_number = numbering::format_number(pre, doc.number, doc.number_length);
    doc.tax_free = kind == DocKind::Reminder || is_tax_free(txn.as_read(), account, client)?;
    storage::number_items(txn, kind, &mut built)?;
    apply_totals(&mut doc, &built);
    // The document before its items: their events show its values.
    storage::save(ctx, txn, None, &doc)?;
    for item in &built {
        storage::put_new(ctx, txn, kind, item)?;
    }
    add_system_comment(
        ctx,
        txn,
        &doc,
        "CREATE",
        &format!("{} created", kind.title()),
    )?;
    note_links(ctx, txn, &doc, links)?;
    Ok(doc)
}

/// A new document of `kind` made from the document `id` of kind `from` (an invoice from an
/// offer or confirmation, a confirmation from an offer), not stored: the fields and items
/// of the body to POST. It takes the client, contact, address, texts, price basis,
/// currency, quote and reduction, names what it was made from, and takes every item but
/// an offer's optional ones. The source must be completed and still good: an offer OPEN,
/// WON or CLEARED, a confirmation COMPLETED or CLEARED.
pub fn preset(
    ctx: &Ctx,
    txn: &dyn Read,
    kind: DocKind,
    from: DocKind,
    id: u64,
) -> Result<(Record, Vec<Record>), Error> {
    let source = storage::load(txn, ctx.account_id, from, id)?;
    let good = match from.lifecycle() {
        Lifecycle::Offer => matches!(source.status, Status::Open | Status::Won | Status::Cleared),
        Lifecycle::Confirmation => matches!(source.status, Status::Completed | Status::Cleared),
        Lifecycle::Billing | Lifecycle::Delivery | Lifecycle::Template => false,
    };
    if !good {
        return Err(Error::invalid(format!(
            "a {} can be made only from a completed {} that is not lost or canceled; {} {id} is {}",
            kind.label(),
            from.label(),
            from.parent_field(),
            source.shown(today(ctx)).as_str()
        )));
    }
    let mut r = Record::default();
    let int = |v: Option<i64>| v.map(Scalar::Int);
    let text = |t: &str| (!t.is_empty()).then(|| Scalar::Text(t.to_owned()));
    for (name, value) in [
        ("client_id", Some(Scalar::Int(source.client_id as i64))),
        ("contact_id", int(source.contact_id)),
        ("address", text(&source.address)),
        ("title", text(&source.title)),
        ("label", text(&source.label)),
        ("intro", text(&source.intro)),
        ("note", text(&source.note)),
        ("net_gross", text(&source.net_gross)),
        ("currency_code", text(&source.currency_code)),
        ("quote", Some(Scalar::Dec(source.quote))),
        ("reduction", text(&source.reduction)),
        ("offer_id", int(source.offer_id)),
        (from.parent_field(), Some(Scalar::Int(id as i64))),
    ] {
        if fields::fields(kind).iter().any(|f| f.name == name) {
            r.set(name, value);
        }
    }
    let items = storage::items(txn, ctx.account_id, from, id)?
        .into_iter()
        .filter(|i| !i.optional)
        .map(|i| {
            let mut item = items::to_record(&i, &source);
            for generated in ["id", "created", "updated", "position", from.parent_field()] {
                item.set(generated, None);
            }
            item
        })
        .collect();
    Ok((r, items))
}

/// Checks the document's template (of the account) and contact (of its client), and gives
/// the document the contact's address when the request gives none.
fn take_contact(
    txn: &dyn Read,
    account: u64,
    doc: &mut Document,
    changes: &Changes,
    errors: &mut Vec<String>,
) -> Result<(), Error> {
    if let Some(Some(t)) = int_of(changes, "template_id")
        && (t < 1 || !records::exists(txn, &templates::TEMPLATES, account, t as u64)?)
    {
        errors.push(format!("template_id {t} does not exist"));
    }
    let Some(id) = doc.contact_id else {
        return Ok(());
    };
    match contacts::of(txn, account, doc.client_id, id)? {
        Ok(contact) => {
            if !changes.has("address") && changes.has("contact_id") {
                doc.address = contact.text("address").to_owned();
            }
        }
        Err(problem) => errors.push(problem),
    }
    Ok(())
}

/// The invoice a credit note is made from (`invoice_id`), if it names one.
fn credit_source(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    changes: &Changes,
    errors: &mut Vec<String>,
) -> Result<Option<Document>, Error> {
    let (DocKind::CreditNote, Some(invoice)) = (kind, int_of(changes, "invoice_id").flatten())
    else {
        return Ok(None);
    };
    match storage::load(txn, account, DocKind::Invoice, invoice.max(0) as u64) {
        Ok(doc) => Ok(Some(doc)),
        Err(Error::NotFound(_)) => {
            errors.push(format!("invoice_id {invoice} does not exist"));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The fields by which a document names the documents it was made from, of the kinds they
/// name (a credit note's `invoice_id` is its source, `credit_source`).
const LINKS: [&str; 3] = ["offer_id", "confirmation_id", "invoice_id"];

/// The documents a new document of `kind` for `client` names as made from: each must
/// exist in the account and be of the same client.
fn linked(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    changes: &Changes,
    client: i64,
    errors: &mut Vec<String>,
) -> Result<Vec<Document>, Error> {
    let mut out = Vec::new();
    for field in LINKS {
        let Some(Some(id)) = int_of(changes, field) else {
            continue;
        };
        let Some(of) = DocKind::of_parent_field(field) else {
            continue;
        };
        if kind == DocKind::CreditNote && of == DocKind::Invoice {
            continue;
        }
        match storage::load(txn, account, of, id.max(0) as u64) {
            Ok(doc) if doc.client_id as i64 == client => out.push(doc),
            Ok(doc) => errors.push(format!(
                "{field} {id} is {} {} of client {}, not of client {client}",
                article(of.label()),
                of.label(),
                doc.client_id
            )),
            Err(Error::NotFound(_)) => errors.push(format!("{field} {id} does not exist")),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// "a" or "an" before a word.
fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// Notes on an invoice or confirmation and on the documents it was made from that it was
/// made from them (CREATE_FROM_OFFER, CREATE_FROM_CONFIRMATION).
fn note_links(
    ctx: &Ctx,
    txn: &mut dyn Write,
    doc: &Document,
    links: &[Document],
) -> Result<(), Error> {
    if !matches!(doc.kind, DocKind::Invoice | DocKind::Confirmation) {
        return Ok(());
    }
    for from in links {
        let actionkey = match from.kind {
            DocKind::Offer => "CREATE_FROM_OFFER",
            DocKind::Confirmation => "CREATE_FROM_CONFIRMATION",
            DocKind::Invoice
            | DocKind::CreditNote
            | DocKind::DeliveryNote
            | DocKind::Recurring
            | DocKind::Reminder => {
                continue;
            }
        };
        add_system_comment(
            ctx,
            txn,
            doc,
            actionkey,
            &format!(
                "{} created from {} {}",
                doc.kind.title(),
                from.kind.label(),
                from.formatted_number
            ),
        )?;
        add_system_comment(
            ctx,
            txn,
            from,
            actionkey,
            &format!(
                "{} {} created from this {}",
                doc.kind.title(),
                doc.formatted_number,
                from.kind.label()
            ),
        )?;
    }
    Ok(())
}

/// The items of a new document from the request, numbered by position; their problems
/// go to `errors`, each named by the item's place.
fn build_items(
    ctx: &Ctx,
    txn: &dyn Read,
    doc: &Document,
    new_items: &[Changes],
    errors: &mut Vec<String>,
) -> Result<Vec<Item>, Error> {
    let default_tax = item_tax(txn, ctx.account_id, doc.kind)?;
    let group = price_group(txn, ctx.account_id, doc.client_id)?;
    let mut built = Vec::with_capacity(new_items.len());
    for (i, item) in new_items.iter().enumerate() {
        let built_item = match article_of(txn, ctx.account_id, group, item)? {
            Ok(from) => items::build(ctx, doc.id, i as i64 + 1, item, &default_tax, from.as_ref()),
            Err(problem) => Err(Error::invalid(problem)),
        };
        match built_item {
            Ok(it) => built.push(it),
            Err(Error::Invalid(item_errors)) => errors.extend(
                item_errors
                    .into_iter()
                    .map(|e| format!("item {}: {e}", i + 1)),
            ),
            Err(e) => return Err(e),
        }
    }
    Ok(built)
}

/// The tax an item of a kind takes when it names none: the default tax; none on a
/// reminder (its fees and interest are damages, not a supply).
fn item_tax(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
) -> Result<Option<(String, Decimal)>, Error> {
    if kind == DocKind::Reminder {
        return Ok(None);
    }
    taxes::default_tax(txn, account)
}

/// The price group of a client's documents (1 to 5; 1 when it names none).
fn price_group(txn: &dyn Read, account: u64, client: u64) -> Result<i64, Error> {
    let client = load_client(txn, account, client as i64)?;
    Ok(client.int("price_group").unwrap_or(1))
}

/// What the article an item names gives it, for a client of `group`; none when it names
/// none, the problem of its `article_id` when the account has no such article.
fn article_of(
    txn: &dyn Read,
    account: u64,
    group: i64,
    item: &Changes,
) -> Result<Result<Option<articles::ItemDefaults>, String>, Error> {
    match item.get("article_id") {
        Some(Some(Scalar::Int(id))) => {
            Ok(articles::item_defaults(txn, account, *id, group)?.map(Some))
        }
        _ => Ok(Ok(None)),
    }
}

fn normalize_payment_types(list: &str) -> String {
    parse_payment_types(list)
        .map(|t| t.join(","))
        .unwrap_or_else(|_| list.to_owned())
}

/// Copies the request's fields onto the document. `terms` are the days to keep when only
/// the date moves. Every writable field of every kind is applied here (a test walks
/// them); `client_id` and the documents it was made from (`invoice_id`, `offer_id`,
/// `confirmation_id`) are applied by the caller, which checks what they name.
fn apply(doc: &mut Document, c: &Changes, terms: &Terms) {
    if let Some(schedule) = doc.schedule.as_deref_mut() {
        apply_schedule(schedule, c);
    }
    if let Some(dunning) = doc.dunning.as_deref_mut() {
        if let Some(v) = text_of(c, "subject") {
            dunning.subject = v;
        }
        if let Some(Some(v)) = int_of(c, "reminder_text_id") {
            dunning.reminder_text_id = v;
        }
    }
    if let Some(v) = int_of(c, "contact_id") {
        doc.contact_id = v;
    }
    if let Some(Some(n)) = int_of(c, "number") {
        doc.number = n;
    }
    if let Some(Some(n)) = int_of(c, "number_length") {
        doc.number_length = n;
    }
    apply_dates(doc, c, terms);
    if let Some(v) = dec_of(c, "discount_rate") {
        doc.discount_rate = v.unwrap_or_default();
    }
    for (name, field) in [
        ("number_pre", &mut doc.number_pre),
        ("supply_date", &mut doc.supply_date),
        ("supply_date_type", &mut doc.supply_date_type),
        ("address", &mut doc.address),
        ("label", &mut doc.label),
        ("intro", &mut doc.intro),
        ("note", &mut doc.note),
        ("payment_types", &mut doc.payment_types),
        ("reduction", &mut doc.reduction),
        ("buyer_reference", &mut doc.buyer_reference),
        ("order_reference", &mut doc.order_reference),
        ("contract_reference", &mut doc.contract_reference),
        ("title", &mut doc.title),
    ] {
        if let Some(v) = text_of(c, name) {
            *field = v;
        }
    }
    if let Some(Some(v)) = c.get("net_gross").cloned() {
        doc.net_gross = v.to_wire();
    }
    if let Some(Some(v)) = c.get("currency_code").cloned() {
        doc.currency_code = v.to_wire();
    }
    if let Some(v) = dec_of(c, "quote") {
        doc.quote = v.unwrap_or(Decimal::ONE);
    }
    if let Some(v) = int_of(c, "template_id") {
        doc.template_id = v;
    }
    if let Some(v) = int_of(c, "free_text_id") {
        doc.free_text_id = v;
    }
}

/// Copies the request's dates onto the document. A new `date` moves the due, discount and
/// validity dates by the document's `terms`; days or dates given as well win over them.
/// Without a schedule, `due_days` sets the due date (a schedule keeps them for its
/// invoices).
fn apply_dates(doc: &mut Document, c: &Changes, terms: &Terms) {
    if let Some(Some(d)) = date_of(c, "date") {
        doc.date = d;
        doc.due_date = d.add_days(terms.due_days);
        doc.discount_date = d.add_days(terms.discount_days);
        doc.validity_date = d.add_days(terms.validity_days);
    }
    if let (Some(Some(days)), None) = (int_of(c, "due_days"), &doc.schedule) {
        doc.due_date = doc.date.add_days(days);
    }
    if let Some(Some(days)) = int_of(c, "validity_days") {
        doc.validity_date = doc.date.add_days(days);
    }
    if let Some(Some(d)) = date_of(c, "due_date") {
        doc.due_date = d;
    }
    if let Some(Some(d)) = date_of(c, "discount_date") {
        doc.discount_date = d;
    }
}

/// Copies the request's fields of a recurring invoice's schedule onto it. A next creation
/// date set by hand moves the series to it; set empty, the series stops.
fn apply_schedule(s: &mut Schedule, c: &Changes) {
    for (name, field) in [
        ("name", &mut s.name),
        ("cycle", &mut s.cycle),
        ("action", &mut s.action),
        ("email_sender", &mut s.email_sender),
        ("email_subject", &mut s.email_subject),
        ("email_message", &mut s.email_message),
        ("email_filename", &mut s.email_filename),
        ("email_bcc", &mut s.email_bcc),
    ] {
        if let Some(v) = text_of(c, name) {
            *field = v;
        }
    }
    for (name, field) in [
        ("cycle_number", &mut s.cycle_number),
        ("hour", &mut s.hour),
        ("iterations", &mut s.iterations),
        ("due_days", &mut s.due_days),
        ("discount_days", &mut s.discount_days),
        ("letter_paper_weight", &mut s.letter_paper_weight),
    ] {
        if let Some(Some(v)) = int_of(c, name) {
            *field = v;
        }
    }
    for (name, field) in [
        ("ultimo", &mut s.ultimo),
        ("letter_color", &mut s.letter_color),
        ("letter_duplex", &mut s.letter_duplex),
    ] {
        if let Some(v) = c.get(name) {
            *field = matches!(v, Some(Scalar::Bool(true)));
        }
    }
    if let Some(Some(d)) = date_of(c, "start_date") {
        s.start_date = Some(d);
        s.slot = 0;
    }
    if let Some(d) = date_of(c, "end_date") {
        s.end_date = d;
    }
    match date_of(c, "next_creation_date") {
        Some(Some(d)) => {
            s.start_date = Some(d);
            s.slot = 0;
            s.next_creation_date = Some(d);
        }
        Some(None) => s.stop(),
        None => {}
    }
}

/// A recurring invoice's schedule checked and its next run planned in the account's zone;
/// nothing for other kinds. A stopped series (no next creation date after the first run,
/// or stopped by hand) stays stopped until a next creation date is set.
fn plan(
    ctx: &Ctx,
    txn: &dyn Read,
    doc: &mut Document,
    changes: &Changes,
    fresh: bool,
    errors: &mut Vec<String>,
) -> Result<(), Error> {
    let Some(s) = doc.schedule.as_deref_mut() else {
        return Ok(());
    };
    validate_schedule(s, changes, ctx.today(), errors);
    let stopped_by_hand = matches!(changes.get("next_creation_date"), Some(None));
    if errors.is_empty() && !stopped_by_hand && (s.next_creation_date.is_some() || fresh) {
        let zone = clock::load(txn, ctx.account_id)?.zone;
        let zone = schedule::zone(&zone).unwrap_or(jiff::tz::TimeZone::UTC);
        s.plan(&zone);
    }
    Ok(())
}

/// Checks a recurring invoice's schedule as a create or an update leaves it; `today` is
/// the account's.
fn validate_schedule(s: &Schedule, changes: &Changes, today: Date, errors: &mut Vec<String>) {
    if !(0..=23).contains(&s.hour) {
        errors.push(format!("hour must be between 0 and 23, got {}", s.hour));
    }
    if s.cycle_number < 1 {
        errors.push(format!(
            "cycle_number must be at least 1, got {}",
            s.cycle_number
        ));
    }
    if s.iterations < 0 {
        errors.push(format!(
            "iterations must be 0 or more, got {}",
            s.iterations
        ));
    }
    for (name, days) in [("due_days", s.due_days), ("discount_days", s.discount_days)] {
        if !(0..=limits::TERM_DAYS_MAX).contains(&days) {
            errors.push(format!(
                "{name} must be between 0 and {}, got {days}",
                limits::TERM_DAYS_MAX
            ));
        }
    }
    if ![80, 90].contains(&s.letter_paper_weight) {
        errors.push(format!(
            "letter_paper_weight must be 80 or 90, got {}",
            s.letter_paper_weight
        ));
    }
    if changes.has("start_date")
        && let Some(start) = s.start_date
        && start < today
    {
        errors.push(format!("start_date {start} is before today, {today}"));
    }
    if let Some(Some(next)) = date_of(changes, "next_creation_date")
        && next < today
    {
        errors.push(format!(
            "next_creation_date {next} is in the past (today is {today})"
        ));
    }
    if let (Some(start), Some(end)) = (s.start_date, s.end_date)
        && end < start
    {
        errors.push(format!("end_date {end} is before start_date {start}"));
    }
    for bcc in s
        .email_bcc
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
    {
        if !super::super::codes::is_email(bcc) {
            errors.push(format!("email_bcc \"{bcc}\" is not an e-mail address"));
        }
    }
}

/// Changes a draft's fields; its totals follow.
pub fn update(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    id: u64,
    changes: &Changes,
) -> Result<Document, Error> {
    let old = load_for(ctx, txn.as_read(), kind, id, Event::Edit)?;
    let mut errors = changes.errors();
    schema::check_not_cleared(fields::fields(kind), changes, &mut errors);
    if let (Some(Some(text)), Some(d)) = (int_of(changes, "reminder_text_id"), &old.dunning)
        && text != d.reminder_text_id
    {
        errors.push(format!(
            "reminder_text_id is fixed when the reminder is made (it is {}); delete the draft \
             and make the reminder again with reminder_text_id {text}",
            d.reminder_text_id
        ));
    }
    let mut doc = old.clone();
    if let Some(Some(client_id)) = int_of(changes, "client_id")
        && client_id as u64 != old.client_id
    {
        match load_client(txn.as_read(), ctx.account_id, client_id) {
            Ok(_) => doc.client_id = client_id as u64,
            Err(Error::Invalid(mut e)) => errors.append(&mut e),
            Err(e) => return Err(e),
        }
    }
    apply(&mut doc, changes, &Terms::of(&old));
    if changes.has("contact_id") || changes.has("template_id") || doc.client_id != old.client_id {
        take_contact(
            txn.as_read(),
            ctx.account_id,
            &mut doc,
            changes,
            &mut errors,
        )?;
    }
    validate(&doc, &mut errors);
    plan(ctx, txn.as_read(), &mut doc, changes, false, &mut errors)?;
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    doc.payment_types = normalize_payment_types(&doc.payment_types);
    let pre = numbering::resolve_prefix(&doc.number_pre, doc.date);
    doc.formatted_number = numbering::format_number(&pre, doc.number, doc.number_length);
    change(
        ctx,
        txn,
        &old,
        doc,
        Change {
            totals: true,
            touch: true,
            ..Change::NOTHING
        },
    )
}

/// A draft's cached parts recomputed as they are now (a reminder's claim and interest
/// with them), without counting as a change of it.
pub fn refresh(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<Document, Error> {
    let old = storage::load(txn.as_read(), ctx.account_id, kind, id)?;
    change(
        ctx,
        txn,
        &old,
        old.clone(),
        Change {
            totals: true,
            ..Change::NOTHING
        },
    )
}

/// Deletes the document with its items, payments, comments, tags and PDFs, and frees its
/// number.
pub fn delete(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<(), Error> {
    let doc = storage::load(txn.as_read(), ctx.account_id, kind, id)?;
    if kind == DocKind::Reminder && doc.status != Status::Draft {
        return Err(refusal(
            kind,
            format!(
                "only a DRAFT {{doc}} can be deleted (cancel it instead); this {{doc}} is {}",
                doc.shown(today(ctx)).as_str()
            ),
        ));
    }
    if kind == DocKind::Invoice {
        // The reminders of an invoice go with it: they claim nothing any more.
        for reminder in storage::reminders_of(txn.as_read(), ctx.account_id, id)? {
            links::forget(txn, &reminder.portal_url)?;
            storage::delete(ctx, txn, &reminder)?;
        }
    }
    einvoice::delete_all(txn, ctx.account_id, kind, id)?;
    links::forget(txn, &doc.portal_url)?;
    storage::delete(ctx, txn, &doc)
}

// ---- lifecycle actions -------------------------------------------------------------------

/// The actions of `PUT /{kind}/{id}/{action}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Complete,
    Cancel,
    Uncancel,
    Win,
    Lose,
    Clear,
    Unclear,
}

impl Action {
    /// The lifecycle event of the action, and the actionkey of the comment it writes.
    fn event(self) -> (Event, &'static str) {
        match self {
            Action::Complete => (Event::Complete, "STATUS"),
            Action::Cancel => (Event::Cancel, "CANCEL"),
            Action::Uncancel => (Event::Uncancel { settled: false }, "UNCANCEL"),
            Action::Win => (Event::Win, "WIN"),
            Action::Lose => (Event::Lose, "LOSE"),
            Action::Clear => (Event::Clear, "CLEAR"),
            Action::Unclear => (Event::Unclear, "UNCLEAR"),
        }
    }
}

/// DRAFT → the kind's completed status (an invoice OPEN, or OVERDUE when its due date has
/// passed). The number is fixed from now on, the e-invoices of a kind that has them are
/// issued, and the PDF (and its print version) is rendered and stored in the same
/// transaction. The template is the one the request asks for, else the document's own,
/// else the default template of the kind's type. A kind the portal shows gets its link
/// (`customerportal_url`) when the settings name the service's `public_url`, before its
/// PDF is rendered, whose texts may name the link.
pub fn complete(
    ctx: &Ctx,
    txn: &mut dyn Write,
    pdf: &dyn Pdf,
    random: &dyn Random,
    kind: DocKind,
    id: u64,
    template_id: Option<u64>,
) -> Result<Document, Error> {
    let account = ctx.account_id;
    let old = load_for(ctx, txn.as_read(), kind, id, Event::Complete)?;
    if old.dunning.is_some() {
        check_claim(ctx, txn.as_read(), &old)?;
    }
    // The request's template first, for every kind, then the document's own.
    let asked = template_id.or(old.template_id.map(|t| t as u64));
    let template = templates::for_document(txn.as_read(), account, kind.template_type(), asked)?;
    let defaults = settings::load_stored(txn.as_read(), account)?;
    let mut completed = old.clone();
    let public_url = settings::public_url(&defaults);
    if kind.spec().portal && !public_url.is_empty() {
        let target = links::Target::Document(kind, id);
        completed.portal_url = links::issue(txn, random, public_url, account, target, ctx.now)?;
    }
    // Totals are final: computed once more from the items as they are now.
    let doc = change(
        ctx,
        txn,
        &old,
        completed,
        Change {
            totals: true,
            status: Move::By(Event::Complete),
            touch: true,
            status_note: StatusNote::Always("STATUS"),
            ..Change::NOTHING
        },
    )?;
    if doc.dunning.is_some() {
        claims::completed(ctx, txn, &doc)?;
    }
    let items = storage::items(txn.as_read(), account, kind, id)?;
    let client = load_client(txn.as_read(), account, doc.client_id as i64)?;
    // The e-invoices first: a rule of the profiles this document must meet refuses the
    // completion before anything is rendered.
    let factur_x = if kind.spec().einvoices {
        issue_einvoices(txn, account, &doc, &items, &client, &defaults)?
    } else {
        None
    };
    let printed = Printed {
        doc: &doc,
        items: &items,
        client: &client,
        defaults: &defaults,
    };
    save_pdfs(
        ctx,
        txn,
        pdf,
        &printed,
        template.as_ref(),
        factur_x.as_deref(),
    )?;
    Ok(doc)
}

/// Refuses to complete a reminder whose invoice may not be claimed (any longer).
fn check_claim(ctx: &Ctx, txn: &dyn Read, reminder: &Document) -> Result<(), Error> {
    let invoice = claims::invoice_of(txn, ctx.account_id, reminder)?;
    match claims::refusal(&invoice, today(ctx)) {
        Some(problem) => Err(Error::invalid(format!(
            "the reminder cannot be completed: {problem}"
        ))),
        None => Ok(()),
    }
}

/// What a completed document's PDFs are printed from.
struct Printed<'a> {
    doc: &'a Document,
    items: &'a [Item],
    client: &'a Record,
    defaults: &'a Record,
}

/// Renders and stores the PDF of a completed document and its print version, named by the
/// kind's `filename` setting; with `einvoice_pdf` set, both carry the Factur-X XML.
fn save_pdfs(
    ctx: &Ctx,
    txn: &mut dyn Write,
    pdf: &dyn Pdf,
    printed: &Printed,
    template: Option<&Record>,
    factur_x: Option<&[u8]>,
) -> Result<(), Error> {
    let Printed {
        doc,
        items,
        client,
        defaults,
    } = *printed;
    let (account, kind, id) = (ctx.account_id, doc.kind, doc.id);
    let template_text = match template {
        Some(t) => templates::text_of(txn.as_read(), account, t)?,
        None => Vec::new(),
    };
    let values = printing::values_of(doc, client, defaults);
    let filename = match defaults.text(&kind.setting("filename")).trim() {
        "" => format!("{}_{id}", kind.spec().file_stem),
        pattern => values.resolve(pattern),
    };
    let filename = format!("{}.pdf", filenames::sanitize(&filename));
    let layouts = printing::documents(doc, items, client, defaults, &values, &template_text);
    for (variant, mut layout) in [pdfs::Variant::Original, pdfs::Variant::Print]
        .into_iter()
        .zip(layouts)
    {
        if defaults.bool("einvoice_pdf")
            && let Some(xml) = factur_x
        {
            attach_factur_x(&mut layout, xml, ctx.now);
        }
        let bytes = pdf
            .render(&layout)
            .map_err(|e| Error::Unavailable(format!("PDF rendering failed: {e}")))?;
        pdfs::save(
            txn,
            account,
            (kind.collection(), id),
            variant,
            ctx.now,
            &filename,
            bytes,
        )?;
    }
    drop(values);
    Ok(())
}

/// Makes a PDF an archival one (PDF/A-3) that carries the Factur-X XML as its alternative.
fn attach_factur_x(layout: &mut PdfDocument, xml: &[u8], now: i64) {
    layout.archival = true;
    layout.attachments = vec![EmbeddedFile {
        filename: faktura_einvoice::FACTUR_X_FILE.into(),
        mimetype: "text/xml".into(),
        description: "Factur-X / ZUGFeRD invoice (EN 16931)".into(),
        relationship: "Alternative".into(),
        modified: format_datetime(now),
        content: xml.to_vec(),
    }];
    layout.factur_x = Some(("EN 16931".into(), faktura_einvoice::FACTUR_X_FILE.into()));
}

/// Issues the e-invoices of a completed document; the Factur-X XML, when its profile
/// issued one (a PDF with `einvoice_pdf` carries it).
fn issue_einvoices(
    txn: &mut dyn Write,
    account: u64,
    doc: &Document,
    items: &[Item],
    client: &Record,
    defaults: &Record,
) -> Result<Option<Vec<u8>>, Error> {
    let inv = einvoice::model_of(txn.as_read(), account, doc, items, client, defaults)?;
    let required = einvoice::required(defaults, client);
    let issued = einvoice::issue(txn, account, doc, &inv, &required)?;
    Ok(issued.into_iter().find_map(|(p, e)| match (p, e) {
        (faktura_einvoice::Profile::FacturX, einvoice::Issued::Xml { xml, .. }) => Some(xml),
        _ => None,
    }))
}

/// A status change by an action (cancel, uncancel, win, lose, clear, unclear), with its
/// comment. Uncanceling a document that takes payments settles it by its payments.
fn move_status(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    id: u64,
    action: Action,
) -> Result<Document, Error> {
    let (event, actionkey) = action.event();
    let old = storage::load(txn.as_read(), ctx.account_id, kind, id)?;
    let uncancel = matches!(event, Event::Uncancel { .. });
    let status = if uncancel && kind.spec().payments.is_some() {
        Move::Settle(|settled| Event::Uncancel { settled })
    } else if uncancel && old.dunning.is_some() {
        // A reminder comes back PAID when its invoice is.
        let invoice = claims::invoice_of(txn.as_read(), ctx.account_id, &old)?;
        Move::By(Event::Uncancel {
            settled: invoice.status == Status::Paid,
        })
    } else {
        Move::By(event)
    };
    let doc = change(
        ctx,
        txn,
        &old,
        old.clone(),
        Change {
            status,
            touch: true,
            status_note: StatusNote::Always(actionkey),
            ..Change::NOTHING
        },
    )?;
    follow(ctx, txn, &doc)?;
    Ok(doc)
}

/// The reminders of an invoice follow its payments: PAID when it is, OPEN again when a
/// payment is taken back, with what was paid since they took their claim.
fn follow(ctx: &Ctx, txn: &mut dyn Write, invoice: &Document) -> Result<(), Error> {
    if invoice.kind != DocKind::Invoice {
        return Ok(());
    }
    let settled = invoice.status == Status::Paid;
    for reminder in storage::reminders_of(txn.as_read(), ctx.account_id, invoice.id)? {
        if !matches!(reminder.status, Status::Open | Status::Paid) {
            continue;
        }
        let mut next = reminder.clone();
        next.paid_amount = claims::paid_since_claim(&reminder, invoice);
        if next.paid_amount == reminder.paid_amount && (reminder.status == Status::Paid) == settled
        {
            continue;
        }
        let event = if reminder.status == Status::Open {
            Event::Pay { settled }
        } else {
            Event::Unpay { settled }
        };
        change(
            ctx,
            txn,
            &reminder,
            next,
            Change {
                status: Move::By(event),
                touch: true,
                status_note: StatusNote::WhenMoved("STATUS"),
                ..Change::NOTHING
            },
        )?;
    }
    Ok(())
}

pub fn cancel(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<Document, Error> {
    move_status(ctx, txn, kind, id, Action::Cancel)
}

/// Runs one of the lifecycle actions.
#[expect(
    clippy::too_many_arguments,
    reason = "the capabilities completion needs, and the action with its one option"
)]
pub fn act(
    ctx: &Ctx,
    txn: &mut dyn Write,
    pdf: &dyn Pdf,
    random: &dyn Random,
    kind: DocKind,
    id: u64,
    action: Action,
    template_id: Option<u64>,
) -> Result<Document, Error> {
    match action {
        Action::Complete => complete(ctx, txn, pdf, random, kind, id, template_id),
        Action::Cancel
        | Action::Uncancel
        | Action::Win
        | Action::Lose
        | Action::Clear
        | Action::Unclear => move_status(ctx, txn, kind, id, action),
    }
}

/// Replaces a completed document's portal link by a new one (or gives it its first, when it
/// was completed before the settings named a `public_url`): the old link opens nothing from
/// now on, and the new one works `portal_link_days` from now.
pub fn renew_link(
    ctx: &Ctx,
    txn: &mut dyn Write,
    random: &dyn Random,
    kind: DocKind,
    id: u64,
) -> Result<Document, Error> {
    let old = storage::load(txn.as_read(), ctx.account_id, kind, id)?;
    if !kind.spec().portal {
        return Err(refusal(kind, "a {doc} has no portal link".into()));
    }
    if old.status == Status::Draft {
        return Err(refusal(
            kind,
            "only a completed {doc} has a portal link; this {doc} is DRAFT".into(),
        ));
    }
    let defaults = settings::load_stored(txn.as_read(), ctx.account_id)?;
    let public_url = settings::public_url(&defaults);
    if public_url.is_empty() {
        return Err(Error::invalid(
            "portal links need the address clients reach this service at: set the settings' \
             public_url",
        ));
    }
    links::forget(txn, &old.portal_url)?;
    let mut doc = old.clone();
    let target = links::Target::Document(kind, id);
    doc.portal_url = links::issue(txn, random, public_url, ctx.account_id, target, ctx.now)?;
    change(
        ctx,
        txn,
        &old,
        doc,
        Change {
            note: Some(("PORTAL_LINK", "Portal link renewed")),
            ..Change::NOTHING
        },
    )
}

/// The client's answer to an offer in the portal: `accepted` WON, else LOST, with a comment
/// naming who answered and when. Only an OPEN offer still valid today takes an answer.
pub fn answer_offer(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    id: u64,
    accepted: bool,
    name: &str,
) -> Result<Document, Error> {
    let (event, actionkey, verb, status_key) = if accepted {
        (Event::Win, "PORTAL_ACCEPT", "Accepted", "WIN")
    } else {
        (Event::Lose, "PORTAL_DECLINE", "Declined", "LOSE")
    };
    let old = load_for(ctx, txn.as_read(), kind, id, event)?;
    let today = today(ctx);
    if old.validity_date < today {
        return Err(refusal(
            kind,
            format!(
                "the {{doc}} was valid until {}: it can no longer be answered",
                old.validity_date
            ),
        ));
    }
    let local = ctx.now + i64::from(ctx.utc_offset);
    let text = format!(
        "{verb} by {name} in the customer portal on {} at {:02}:{:02}",
        today,
        local.rem_euclid(86_400) / 3600,
        local.rem_euclid(3600) / 60
    );
    change(
        ctx,
        txn,
        &old,
        old.clone(),
        Change {
            status: Move::By(event),
            touch: true,
            note: Some((actionkey, &text)),
            status_note: StatusNote::Always(status_key),
            ..Change::NOTHING
        },
    )
}

/// A comment the client wrote in the portal (actionkey PORTAL_COMMENT).
pub fn comment_from_portal(
    ctx: &Ctx,
    txn: &mut dyn Write,
    doc: &Document,
    text: &str,
) -> Result<Comment, Error> {
    let count = storage::children::<Comment>(txn.as_read(), ctx.account_id, doc.kind, doc.id)?;
    if count.len() >= limits::COMMENTS_MAX {
        return Err(Error::invalid(format!(
            "a {} holds at most {} comments",
            doc.kind.label(),
            limits::COMMENTS_MAX
        )));
    }
    add_system_comment(ctx, txn, doc, "PORTAL_COMMENT", text)
}

/// Keeps an uploaded signed PDF beside the original; only for completed documents.
pub fn sign(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    id: u64,
    file: Vec<u8>,
) -> Result<(), Error> {
    let account = ctx.account_id;
    let doc = storage::load(txn.as_read(), account, kind, id)?;
    if doc.status == Status::Draft {
        return Err(refusal(
            kind,
            "a signature can be uploaded only for completed {doc}s; this {doc} is DRAFT".into(),
        ));
    }
    if !file.starts_with(b"%PDF-") {
        return Err(Error::invalid("base64file is not a PDF file"));
    }
    let original = pdfs::load(
        txn.as_read(),
        account,
        kind.collection(),
        id,
        pdfs::Variant::Original,
    )?;
    let stem = original
        .map(|p| p.filename.trim_end_matches(".pdf").to_owned())
        .unwrap_or_else(|| format!("{}_{id}", kind.spec().file_stem));
    pdfs::save(
        txn,
        account,
        (kind.collection(), id),
        pdfs::Variant::Signed,
        ctx.now,
        &format!("{stem}_signed.pdf"),
        file,
    )?;
    note(ctx, txn, &doc, "SIGN", "Signed PDF uploaded")
}

// ---- items -------------------------------------------------------------------------------

/// The document of an item, which must be a DRAFT for its items to change.
fn draft_for_items(ctx: &Ctx, txn: &dyn Read, kind: DocKind, id: u64) -> Result<Document, Error> {
    let doc = storage::load(txn, ctx.account_id, kind, id)?;
    transition(kind, doc.status, Event::Edit).map_err(|_| {
        refusal(
            kind,
            format!(
                "items change only while the {{doc}} is a DRAFT; this {{doc}} is {}",
                doc.shown(today(ctx)).as_str()
            ),
        )
    })?;
    Ok(doc)
}

/// The change of a draft whose items changed: its totals follow.
fn items_changed(ctx: &Ctx, txn: &mut dyn Write, old: &Document) -> Result<Document, Error> {
    change(
        ctx,
        txn,
        old,
        old.clone(),
        Change {
            totals: true,
            touch: true,
            ..Change::NOTHING
        },
    )
}

pub fn add_item(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    c: &Changes,
) -> Result<(Item, Document), Error> {
    let parent_field = kind.parent_field();
    let document_id = match c.get(parent_field) {
        Some(Some(Scalar::Int(id))) if *id > 0 => *id as u64,
        _ => {
            let mut errors = c.errors();
            if !c.invalid.iter().any(|(n, _)| *n == parent_field) {
                errors.push(format!("{parent_field} is mandatory"));
            }
            return Err(Error::Invalid(errors));
        }
    };
    let doc = match draft_for_items(ctx, txn.as_read(), kind, document_id) {
        Err(Error::NotFound(_)) => {
            return Err(Error::invalid(format!(
                "{parent_field} {document_id} does not exist"
            )));
        }
        other => other?,
    };
    let existing = storage::items(txn.as_read(), ctx.account_id, kind, document_id)?;
    if existing.len() >= limits::ITEMS_MAX {
        return Err(Error::invalid(too_many_items(kind)));
    }
    let position = existing.last().map_or(1, |i| i.position + 1);
    let default_tax = item_tax(txn.as_read(), ctx.account_id, kind)?;
    let group = price_group(txn.as_read(), ctx.account_id, doc.client_id)?;
    let from = article_of(txn.as_read(), ctx.account_id, group, c)?.map_err(Error::invalid)?;
    let mut item = items::build(ctx, document_id, position, c, &default_tax, from.as_ref())?;
    storage::number_items(txn, kind, std::slice::from_mut(&mut item))?;
    storage::put_new(ctx, txn, kind, &item)?;
    let doc = items_changed(ctx, txn, &doc)?;
    Ok((item, doc))
}

pub fn change_item(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    id: u64,
    c: &Changes,
) -> Result<(Item, Document), Error> {
    let mut item: Item = storage::child(txn.as_read(), ctx.account_id, kind, id)?;
    let doc = draft_for_items(ctx, txn.as_read(), kind, item.document_id)?;
    let mut errors = c.errors();
    items::apply(&mut item, c, &mut errors);
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    item.updated = ctx.now;
    storage::put(ctx, txn, kind, &item)?;
    let doc = items_changed(ctx, txn, &doc)?;
    Ok((item, doc))
}

pub fn remove_item(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<(), Error> {
    let item: Item = storage::child(txn.as_read(), ctx.account_id, kind, id)?;
    let doc = draft_for_items(ctx, txn.as_read(), kind, item.document_id)?;
    storage::remove(ctx, txn, kind, &item)?;
    items_changed(ctx, txn, &doc).map(drop)
}

// ---- payments ----------------------------------------------------------------------------

pub fn book_payment(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    c: &Changes,
) -> Result<Payment, Error> {
    let mut errors = c.errors();
    let (document, payment) = payments::build(ctx, kind, c, today(ctx), &mut errors);
    let doc = match document {
        Some(id) => match parent_of(ctx, txn.as_read(), kind, id)? {
            Ok(doc) => Some(doc),
            Err(problem) => {
                errors.push(problem);
                None
            }
        },
        None => None,
    };
    let (Some(doc), Some(mut payment), true) = (doc, payment, errors.is_empty()) else {
        return Err(Error::Invalid(errors));
    };
    let booked: Vec<Payment> = storage::children(txn.as_read(), ctx.account_id, kind, doc.id)?;
    check_room(
        kind,
        booked.len(),
        limits::PAYMENTS_MAX,
        "holds",
        "payments",
    )?;
    payment.document_id = doc.id;
    storage::add(ctx, txn, kind, &mut payment)?;
    payments_changed(ctx, txn, &doc, &payment, |settled| Event::Pay { settled })?;
    Ok(payment)
}

/// The change of a document whose payments changed by `payment` (booked, or deleted):
/// its paid amount and status follow, with a PAYMENT or DELETE_PAYMENT comment.
fn payments_changed(
    ctx: &Ctx,
    txn: &mut dyn Write,
    doc: &Document,
    payment: &Payment,
    event: fn(bool) -> Event,
) -> Result<Document, Error> {
    let (actionkey, verb) = match event(false) {
        Event::Pay { .. } => ("PAYMENT", "booked"),
        Event::Edit
        | Event::Complete
        | Event::Unpay { .. }
        | Event::Cancel
        | Event::Uncancel { .. }
        | Event::Win
        | Event::Lose
        | Event::Clear
        | Event::Unclear => ("DELETE_PAYMENT", "deleted"),
    };
    let text = format!(
        "Payment of {} {} {verb}",
        payment.amount.normalize(),
        doc.currency_code
    );
    let doc = change(
        ctx,
        txn,
        doc,
        doc.clone(),
        Change {
            status: Move::Settle(event),
            touch: true,
            note: Some((actionkey, &text)),
            status_note: StatusNote::WhenMoved("STATUS"),
            ..Change::NOTHING
        },
    )?;
    follow(ctx, txn, &doc)?;
    Ok(doc)
}

pub fn delete_payment(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<(), Error> {
    let (payment, doc) = remove_part::<Payment>(ctx, txn, kind, id)?;
    payments_changed(ctx, txn, &doc, &payment, |settled| Event::Unpay { settled }).map(drop)
}

// ---- tags --------------------------------------------------------------------------------

/// Tags a document; a name it already carries (in any case) answers that tag.
pub fn add_tag(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, c: &Changes) -> Result<Tag, Error> {
    let mut errors = c.errors();
    schema::check_mandatory(tags::fields(kind), c, &mut errors);
    let doc = match c.get(kind.parent_field()) {
        Some(Some(Scalar::Int(id))) if *id > 0 => *id,
        _ => return Err(Error::Invalid(errors)),
    };
    let doc = match parent_of(ctx, txn.as_read(), kind, doc)? {
        Ok(doc) => Some(doc),
        Err(problem) => {
            errors.push(problem);
            None
        }
    };
    let name = match c.get("name") {
        Some(Some(v)) => v.to_wire().trim().to_owned(),
        _ => String::new(),
    };
    let (Some(doc), true) = (doc, errors.is_empty()) else {
        return Err(Error::Invalid(errors));
    };
    let existing: Vec<Tag> = storage::children(txn.as_read(), ctx.account_id, kind, doc.id)?;
    if let Some(same) = existing.iter().find(|t| t.name.eq_ignore_ascii_case(&name)) {
        return Ok(same.clone());
    }
    check_room(kind, existing.len(), limits::TAGS_MAX, "carries", "tags")?;
    let mut tag = Tag {
        id: 0,
        document_id: doc.id,
        name,
    };
    storage::add(ctx, txn, kind, &mut tag)?;
    tags_changed(ctx, txn, &doc)?;
    Ok(tag)
}

/// The change of a document whose tags changed: it keeps their names.
fn tags_changed(ctx: &Ctx, txn: &mut dyn Write, doc: &Document) -> Result<Document, Error> {
    let c = Change {
        tags: true,
        ..Change::NOTHING
    };
    change(ctx, txn, doc, doc.clone(), c)
}

pub fn remove_tag(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<(), Error> {
    let (_, doc) = remove_part::<Tag>(ctx, txn, kind, id)?;
    tags_changed(ctx, txn, &doc).map(drop)
}

// ---- comments ----------------------------------------------------------------------------

/// A user's comment on a document.
pub fn add_comment(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    c: &Changes,
) -> Result<Comment, Error> {
    let mut errors = c.errors();
    schema::check_mandatory(super::comments::fields(kind), c, &mut errors);
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    let document = match c.get(kind.parent_field()) {
        Some(Some(Scalar::Int(id))) => *id,
        _ => 0,
    };
    let doc = parent_of(ctx, txn.as_read(), kind, document)?.map_err(Error::invalid)?;
    let text = match c.get("comment") {
        Some(Some(v)) => v.to_wire(),
        _ => return Err(Error::invalid("comment is mandatory")),
    };
    let count = storage::children::<Comment>(txn.as_read(), ctx.account_id, kind, doc.id)?.len();
    check_room(kind, count, limits::COMMENTS_MAX, "holds", "comments")?;
    add_system_comment(ctx, txn, &doc, "COMMENT", &text)
}

pub fn remove_comment(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<(), Error> {
    let c: Comment = storage::child(txn.as_read(), ctx.account_id, kind, id)?;
    storage::remove(ctx, txn, kind, &c)
}

// ---- parts -------------------------------------------------------------------------------

/// Refuses one more part of a document that has `count` of them, `max` at the most: "a
/// <kind> <verb> at most <max> <parts>".
fn check_room(
    kind: DocKind,
    count: usize,
    max: usize,
    verb: &str,
    parts: &str,
) -> Result<(), Error> {
    if count >= max {
        return Err(Error::invalid(format!(
            "a {} {verb} at most {max} {parts}",
            kind.label()
        )));
    }
    Ok(())
}

/// Removes a document's part by its id: the part as it was, and its document.
fn remove_part<P: storage::Child>(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    id: u64,
) -> Result<(P, Document), Error> {
    let part: P = storage::child(txn.as_read(), ctx.account_id, kind, id)?;
    let doc = storage::load(txn.as_read(), ctx.account_id, kind, part.ids().0)?;
    storage::remove(ctx, txn, kind, &part)?;
    Ok((part, doc))
}

#[cfg(test)]
mod tests {
    use super::super::super::schema::Access;
    use super::super::fields::table;
    use super::*;

    /// Every writable field of every kind reaches the document: a field parsed but never
    /// applied would be silently dropped.
    #[test]
    fn every_writable_field_is_applied() {
        let ctx = Ctx {
            account_id: 1,
            user_id: 1,
            is_admin: true,
            now: 1_795_000_000,
            utc_offset: 0,
        };
        let date = Date::parse("2026-11-02").unwrap();
        for kind in DocKind::ALL {
            let (blank, _) = defaults_for(
                &ctx,
                kind,
                1,
                1,
                &Record::default(),
                &Record::default(),
                date,
            );
            for f in table(kind) {
                if f.field.access != Access::Write
                    || ["client_id", "invoice_id", "offer_id", "confirmation_id"]
                        .contains(&f.field.name)
                {
                    continue;
                }
                let value = match f.field.kind {
                    schema::Kind::Integer => Scalar::Int(7),
                    schema::Kind::Decimal => Scalar::Dec(Decimal::new(75, 1)),
                    schema::Kind::Date => Scalar::Date(Date::parse("2026-12-24").unwrap()),
                    schema::Kind::Enum(words) => Scalar::Text(words[1].into()),
                    schema::Kind::Currency => Scalar::Text("CHF".into()),
                    schema::Kind::Bool => Scalar::Bool(true),
                    schema::Kind::Text
                    | schema::Kind::DateTime
                    | schema::Kind::Country
                    | schema::Kind::File
                    | schema::Kind::Email
                    | schema::Kind::Iban
                    | schema::Kind::Bic
                    | schema::Kind::UnitCode
                    | schema::Kind::Tag
                    | schema::Kind::Recipients => Scalar::Text("x7".into()),
                    schema::Kind::Words(words) => Scalar::Text(words[1].into()),
                };
                let changes = Changes {
                    values: vec![(f.field.name, Some(value.clone()))],
                    ..Changes::default()
                };
                let mut doc = blank.clone();
                let terms = Terms {
                    due_days: 14,
                    discount_days: 0,
                    validity_days: 30,
                    problems: Vec::new(),
                };
                apply(&mut doc, &changes, &terms);
                let got = f.get.get(&doc, date).map(|v| v.to_scalar());
                assert_eq!(got, Some(value), "{kind:?} {} is not applied", f.field.name);
            }
        }
    }
}
