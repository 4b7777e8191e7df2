//! Items of documents (invoices and credit notes): stored under their document; their
//! totals are computed from the document's price basis and tax situation when read.
//! Changing an item recomputes the document's cached totals in the same transaction; items
//! change only while the document is a DRAFT.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::documents::{self, DocKind, Document, Event};
use super::money::{self, Line, Reduction};
use super::schema::{Changes, Field, Kind, Record, Scalar};
use super::{Ctx, Error};
use crate::caps::{Read, Write};
use crate::limits;
use crate::store::{self, decimal_bytes};

fn collection(kind: DocKind) -> &'static str {
    match kind {
        DocKind::Invoice => "invoice-items",
        DocKind::CreditNote => "credit-note-items",
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub id: u64,
    pub document_id: u64,
    pub position: i64,
    pub article_id: Option<i64>,
    pub unit: String,
    #[serde(with = "decimal_bytes")]
    pub quantity: Decimal,
    #[serde(with = "decimal_bytes")]
    pub unit_price: Decimal,
    pub tax_name: String,
    #[serde(with = "decimal_bytes")]
    pub tax_rate: Decimal,
    pub title: String,
    pub description: String,
    pub reduction: String,
    pub kind: String,
    pub created: i64,
    pub updated: i64,
}

impl Item {
    pub fn line(&self) -> Line {
        Line {
            quantity: self.quantity,
            unit_price: self.unit_price,
            tax_name: self.tax_name.clone(),
            tax_rate: self.tax_rate,
            reduction: Reduction::parse(&self.reduction).ok().flatten(),
        }
    }
}

macro_rules! item_fields {
    ($parent:literal) => {
        &[
            Field::new("id", Kind::Integer).read_only(),
            Field::new("created", Kind::DateTime).read_only(),
            Field::new("updated", Kind::DateTime).read_only(),
            Field::new("article_id", Kind::Integer),
            Field::new($parent, Kind::Integer).mandatory(),
            Field::new("position", Kind::Integer),
            Field::new("unit", Kind::Text),
            Field::new("quantity", Kind::Decimal),
            Field::new("unit_price", Kind::Decimal),
            Field::new("tax_name", Kind::Text),
            Field::new("tax_rate", Kind::Decimal),
            Field::new("title", Kind::Text),
            Field::new("description", Kind::Text),
            Field::new("reduction", Kind::Text),
            Field::new("type", Kind::Enum(&["PRODUCT", "SERVICE"])),
            Field::new("total_net", Kind::Decimal).read_only(),
            Field::new("total_gross", Kind::Decimal).read_only(),
            Field::new("total_net_unreduced", Kind::Decimal).read_only(),
            Field::new("total_gross_unreduced", Kind::Decimal).read_only(),
        ]
    };
}

pub static INVOICE_ITEM_FIELDS: &[Field] = item_fields!("invoice_id");
pub static CREDIT_NOTE_ITEM_FIELDS: &[Field] = item_fields!("credit_note_id");

pub fn fields(kind: DocKind) -> &'static [Field] {
    match kind {
        DocKind::Invoice => INVOICE_ITEM_FIELDS,
        DocKind::CreditNote => CREDIT_NOTE_ITEM_FIELDS,
    }
}

pub fn to_record(item: &Item, inv: &Document) -> Record {
    let t = money::line_totals(&item.line(), inv.basis(), inv.tax_free);
    let mut r = Record::default();
    let mut set = |name: &str, v: Scalar| r.set(name, Some(v));
    let text = |s: &str| Scalar::Text(s.to_owned());
    set("id", Scalar::Int(item.id as i64));
    set("created", Scalar::DateTime(item.created));
    set("updated", Scalar::DateTime(item.updated));
    if let Some(a) = item.article_id {
        set("article_id", Scalar::Int(a));
    }
    set(
        inv.kind.parent_field(),
        Scalar::Int(item.document_id as i64),
    );
    set("position", Scalar::Int(item.position));
    set("unit", text(&item.unit));
    set("quantity", Scalar::Dec(item.quantity));
    set("unit_price", Scalar::Dec(item.unit_price));
    set("tax_name", text(&item.tax_name));
    set("tax_rate", Scalar::Dec(item.tax_rate));
    set("title", text(&item.title));
    set("description", text(&item.description));
    set("reduction", text(&item.reduction));
    set("type", text(&item.kind));
    set("total_net", Scalar::Dec(t.net));
    set("total_gross", Scalar::Dec(t.gross));
    set("total_net_unreduced", Scalar::Dec(t.net_unreduced));
    set("total_gross_unreduced", Scalar::Dec(t.gross_unreduced));
    r.values
        .retain(|_, v| !matches!(v, Scalar::Text(t) if t.is_empty()));
    r
}

/// Copies the request's fields onto an item and checks it.
fn apply(item: &mut Item, c: &Changes, errors: &mut Vec<String>) {
    let dec = |name: &str| c.get(name).map(|v| v.as_ref().and_then(Scalar::as_dec));
    let text = |name: &str| {
        c.get(name)
            .map(|v| v.as_ref().map(Scalar::to_wire).unwrap_or_default())
    };
    if let Some(v) = c.get("article_id") {
        item.article_id = v.as_ref().and_then(Scalar::as_int);
    }
    if let Some(Some(p)) = c
        .get("position")
        .map(|v| v.as_ref().and_then(Scalar::as_int))
    {
        item.position = p;
    }
    if let Some(v) = dec("quantity") {
        item.quantity = v.unwrap_or(Decimal::ONE);
    }
    if let Some(v) = dec("unit_price") {
        item.unit_price = v.unwrap_or_default();
    }
    if let Some(v) = dec("tax_rate") {
        item.tax_rate = v.unwrap_or_default();
    }
    for (name, field) in [
        ("unit", &mut item.unit),
        ("tax_name", &mut item.tax_name),
        ("title", &mut item.title),
        ("description", &mut item.description),
        ("reduction", &mut item.reduction),
        ("type", &mut item.kind),
    ] {
        if let Some(v) = text(name) {
            *field = v;
        }
    }
    let max = Decimal::from(limits::AMOUNT_MAX);
    if item.quantity.abs() > max || item.unit_price.abs() > max {
        errors.push(format!(
            "quantity and unit_price must be at most {max} in absolute value"
        ));
    }
    if !(Decimal::ZERO..=Decimal::ONE_HUNDRED).contains(&item.tax_rate) {
        errors.push(format!(
            "tax_rate must be between 0 and 100, got {}",
            item.tax_rate
        ));
    }
    if let Err(e) = Reduction::parse(&item.reduction) {
        errors.push(e);
    }
}

/// A new item from a request, not yet saved and without its id (`number`). Without tax
/// fields it takes the default tax.
pub fn build(
    ctx: &Ctx,
    document_id: u64,
    position: i64,
    c: &Changes,
    default_tax: &Option<(String, Decimal)>,
) -> Result<Item, Error> {
    let mut errors = c.errors();
    let (tax_name, tax_rate) = match default_tax {
        Some((n, r)) if !c.has("tax_name") && !c.has("tax_rate") => (n.clone(), *r),
        _ => (String::new(), Decimal::ZERO),
    };
    let mut item = Item {
        id: 0,
        document_id,
        position,
        article_id: None,
        unit: String::new(),
        quantity: Decimal::ONE,
        unit_price: Decimal::ZERO,
        tax_name,
        tax_rate,
        title: String::new(),
        description: String::new(),
        reduction: String::new(),
        kind: String::new(),
        created: ctx.now,
        updated: ctx.now,
    };
    apply(&mut item, c, &mut errors);
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    Ok(item)
}

/// Gives items built for one document their ids, taken from the counter at once.
pub fn number(txn: &mut dyn Write, kind: DocKind, items: &mut [Item]) -> Result<(), Error> {
    if items.is_empty() {
        return Ok(());
    }
    let first = store::next_ids(txn, collection(kind), items.len() as u64)?;
    for (item, id) in items.iter_mut().zip(first..) {
        item.id = id;
    }
    Ok(())
}

/// A copy of an item for another document (a credit note made from an invoice), without
/// its id yet (`number`).
pub fn copy_to(item: &Item, document_id: u64, now: i64) -> Item {
    Item {
        id: 0,
        document_id,
        created: now,
        updated: now,
        ..item.clone()
    }
}

pub fn save(txn: &mut dyn Write, account: u64, kind: DocKind, item: &Item) -> Result<(), Error> {
    let coll = collection(kind);
    store::put_child(
        txn,
        account,
        coll,
        item.document_id,
        item.id,
        &store::encode(item),
    )?;
    Ok(())
}

/// The items of a document by position, then id.
pub fn load_all(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    document_id: u64,
) -> Result<Vec<Item>, Error> {
    let prefix = store::child_prefix(account, collection(kind), document_id);
    let mut items: Vec<Item> = store::scan_all(txn, &prefix)?
        .iter()
        .map(|(_, v)| store::decode(v).map_err(Error::from))
        .collect::<Result<_, _>>()?;
    items.sort_by_key(|i| (i.position, i.id));
    Ok(items)
}

pub fn load(txn: &dyn Read, account: u64, kind: DocKind, id: u64) -> Result<Item, Error> {
    let bytes = store::get_child(txn, account, collection(kind), id)?
        .ok_or_else(|| Error::NotFound(format!("{} item {id} does not exist", kind.label())))?;
    Ok(store::decode(&bytes)?)
}

/// The parent document, which must be a DRAFT for its items to change.
fn draft(ctx: &Ctx, txn: &dyn Read, kind: DocKind, id: u64) -> Result<Document, Error> {
    let doc = documents::load(txn, ctx.account_id, kind, id)?;
    documents::transition(doc.status, Event::Edit).map_err(|_| {
        documents::refusal(
            kind,
            format!(
                "items change only while the {{doc}} is a DRAFT; this {{doc}} is {}",
                doc.shown(documents::today(ctx)).as_str()
            ),
        )
    })?;
    Ok(doc)
}

/// Saves the document with totals recomputed from its items.
fn refresh(ctx: &Ctx, txn: &mut dyn Write, old: &Document) -> Result<Document, Error> {
    let mut inv = old.clone();
    documents::refresh_totals(ctx, txn, &mut inv)?;
    inv.updated = ctx.now;
    documents::save(txn, ctx.account_id, Some(old), &inv)?;
    Ok(inv)
}

pub fn create(
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
    let inv = match draft(ctx, txn.as_read(), kind, document_id) {
        Err(Error::NotFound(_)) => {
            return Err(Error::invalid(format!(
                "{parent_field} {document_id} does not exist"
            )));
        }
        other => other?,
    };
    let existing = load_all(txn.as_read(), ctx.account_id, kind, document_id)?;
    if existing.len() >= limits::ITEMS_MAX {
        return Err(Error::invalid(format!(
            "a {} holds at most {} items",
            kind.label(),
            limits::ITEMS_MAX
        )));
    }
    let position = existing.last().map_or(1, |i| i.position + 1);
    let default_tax = super::taxes::default_tax(txn.as_read(), ctx.account_id)?;
    let mut item = build(ctx, document_id, position, c, &default_tax)?;
    number(txn, kind, std::slice::from_mut(&mut item))?;
    save(txn, ctx.account_id, kind, &item)?;
    let inv = refresh(ctx, txn, &inv)?;
    Ok((item, inv))
}

pub fn update(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    id: u64,
    c: &Changes,
) -> Result<(Item, Document), Error> {
    let mut item = load(txn.as_read(), ctx.account_id, kind, id)?;
    let inv = draft(ctx, txn.as_read(), kind, item.document_id)?;
    let mut errors = c.errors();
    apply(&mut item, c, &mut errors);
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    item.updated = ctx.now;
    save(txn, ctx.account_id, kind, &item)?;
    let inv = refresh(ctx, txn, &inv)?;
    Ok((item, inv))
}

pub fn delete(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<(), Error> {
    let item = load(txn.as_read(), ctx.account_id, kind, id)?;
    let inv = draft(ctx, txn.as_read(), kind, item.document_id)?;
    let coll = collection(kind);
    store::delete_child(txn, ctx.account_id, coll, item.document_id, id)?;
    refresh(ctx, txn, &inv)?;
    Ok(())
}

pub fn delete_all(
    txn: &mut dyn Write,
    account: u64,
    kind: DocKind,
    document_id: u64,
) -> Result<(), Error> {
    let coll = collection(kind);
    for item in load_all(txn.as_read(), account, kind, document_id)? {
        store::delete_child(txn, account, coll, document_id, item.id)?;
    }
    Ok(())
}
