//! Articles: the products and services a business sells again and again, numbered in the
//! account's article range, with up to five sales prices (price groups), a unit, a tax
//! and a supplier. An item made from an article takes what the request does not give
//! (`item_defaults`); later changes of the article change no item.

use rust_decimal::Decimal;

use super::records::{self, Draft, Resource, Rules};
use super::schema::{Field, Kind, Record, Scalar};
use super::suppliers::SUPPLIERS;
use super::taxes::TAXES;
use super::units::UNITS;
use super::{Ctx, Error, numbering, property_values, record_tags, settings};
use crate::caps::{Read, Write};
use crate::limits;

/// The number range of articles.
pub const RANGE: &str = "article";

/// The price fields of the five price groups, the first the normal price.
pub const SALES_PRICES: [&str; 5] = [
    "sales_price",
    "sales_price2",
    "sales_price3",
    "sales_price4",
    "sales_price5",
];

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the article (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the article was created (read only)."),
    Field::new("updated", Kind::DateTime)
        .read_only()
        .doc("When the article was last changed (read only)."),
    Field::new("archived", Kind::Bool).doc("1 for an article no longer sold. Default: 0."),
    Field::new("article_number", Kind::Text).read_only().doc(
        "The article number: number_pre, then number zero-padded to number_length digits (read \
         only; computed).",
    ),
    Field::new("number", Kind::Integer).doc(
        "Serial number, at least 1 and unique per prefix. Default: the next free number of the \
         account's article range.",
    ),
    Field::new("number_pre", Kind::Text)
        .doc("Number prefix, one line of at most 40 characters. Default: the settings' article_number_pre."),
    Field::new("number_length", Kind::Integer).doc(
        "Minimum digits of the serial number (0 to 20). Default: the settings' \
         article_number_length.",
    ),
    Field::new("type", Kind::Enum(&["PRODUCT", "SERVICE"]))
        .doc("PRODUCT or SERVICE, taken by items made from the article; empty: neither."),
    Field::new("title", Kind::Text).doc("Title of the article, an item's title."),
    Field::new("description", Kind::Text).doc("Description, an item's description."),
    Field::new("sales_price", Kind::Decimal)
        .doc("Price of one unit (price group 1), on the document's price basis; not negative."),
    Field::new("sales_price2", Kind::Decimal)
        .doc("Price of price group 2; empty: sales_price. Not negative."),
    Field::new("sales_price3", Kind::Decimal)
        .doc("Price of price group 3; empty: sales_price. Not negative."),
    Field::new("sales_price4", Kind::Decimal)
        .doc("Price of price group 4; empty: sales_price. Not negative."),
    Field::new("sales_price5", Kind::Decimal)
        .doc("Price of price group 5; empty: sales_price. Not negative."),
    Field::new("currency_code", Kind::Currency).doc("Currency of the prices."),
    Field::new("unit_id", Kind::Integer)
        .doc("Unit of the article (a unit of /api/units): an item's unit and unit code."),
    Field::new("tax_id", Kind::Integer)
        .doc("Tax of the article (a tax of /api/taxes): an item's tax name and rate."),
    Field::new("purchase_price", Kind::Decimal).doc("Purchase price of one unit; not negative."),
    Field::new("purchase_price_net_gross", Kind::Enum(&["NET", "GROSS"]))
        .doc("Whether purchase_price is NET or GROSS."),
    Field::new("supplier_id", Kind::Integer)
        .doc("Supplier of the article (a supplier of /api/suppliers)."),
];

pub static ARTICLES: Resource = Resource::new("articles", "article", FIELDS, &ArticleRules)
    .filtered(&[
        records::Filter::part("article_number", "article_number"),
        records::Filter::part("title", "title"),
        records::Filter::part("description", "description"),
        records::Filter::exact("currency_code", "currency_code"),
        records::Filter::exact("unit_id", "unit_id"),
        records::Filter::exact("supplier_id", "supplier_id"),
    ])
    .indexed(&["unit_id", "supplier_id", "tax_id"]);

struct ArticleRules;

impl Rules for ArticleRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        let account = d.ctx.account_id;
        for price in SALES_PRICES.iter().chain(&["purchase_price"]) {
            if let Some(v) = d.record.get(price).and_then(Scalar::as_dec) {
                if v.is_sign_negative() && !v.is_zero() {
                    d.errors
                        .push(format!("{price} must not be negative, got {v}"));
                } else if v > Decimal::from(limits::AMOUNT_MAX) {
                    d.errors
                        .push(format!("{price} must be at most {}", limits::AMOUNT_MAX));
                }
            }
        }
        for (field, res) in [
            ("unit_id", &UNITS),
            ("tax_id", &TAXES),
            ("supplier_id", &SUPPLIERS),
        ] {
            if let Some(id) = d.record.int(field)
                && (id < 1 || !records::exists(d.txn.as_read(), res, account, id as u64)?)
            {
                d.errors.push(format!("{field} {id} does not exist"));
            }
        }
        if let Some(len) = d.record.int("number_length")
            && !(0..=limits::NUMBER_LENGTH_MAX).contains(&len)
        {
            d.errors.push(format!(
                "number_length must be between 0 and {}, got {len}",
                limits::NUMBER_LENGTH_MAX
            ));
        }
        if let Some(n) = d.record.int("number")
            && n < 1
        {
            d.errors.push(format!("number must be at least 1, got {n}"));
        }
        if d.old.is_none() {
            let defaults = settings::load_stored(d.txn.as_read(), account)?;
            for (field, setting) in [
                ("number_pre", "article_number_pre"),
                ("number_length", "article_number_length"),
            ] {
                if !d.changes.has(field) {
                    d.record.set(field, defaults.get(setting).cloned());
                }
            }
            if !d.changes.has("archived") {
                d.record.set("archived", Some(Scalar::Bool(false)));
            }
        }
        if !d.errors.is_empty() {
            return Ok(());
        }
        numbering::number_record(d.ctx, d.txn, RANGE, "article", d.record, d.old)
    }

    fn before_delete(&self, ctx: &Ctx, txn: &mut dyn Write, record: &Record) -> Result<(), Error> {
        if let Some(n) = record.int("number") {
            numbering::release(txn, ctx.account_id, RANGE, record.text("number_pre"), n)?;
        }
        record_tags::ARTICLES.remove_of(txn, ctx.account_id, record.id())?;
        property_values::remove_of_owner(
            txn,
            &property_values::ARTICLE_PROPERTY_VALUES,
            ctx.account_id,
            record.id(),
        )
    }
}

/// What an item made from an article takes from it for the fields its request does not
/// give: title, description, unit, unit code, the price of the client's price group, tax
/// name and rate, and type. `price_group` is 1 to 5.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemDefaults {
    pub title: String,
    pub description: String,
    pub unit: String,
    pub unit_code: String,
    pub unit_price: Decimal,
    pub tax: Option<(String, Decimal)>,
    pub product_type: String,
}

/// The defaults article `id` gives an item for a client of `price_group`; an article of
/// no account of the caller's is a problem of the item's `article_id`.
pub fn item_defaults(
    txn: &dyn Read,
    account: u64,
    id: i64,
    price_group: i64,
) -> Result<Result<ItemDefaults, String>, Error> {
    let article = match (id > 0)
        .then(|| records::load(txn, &ARTICLES, account, id as u64))
        .transpose()
    {
        Ok(Some(a)) => a,
        Ok(None) | Err(Error::NotFound(_)) => {
            return Ok(Err(format!("article_id {id} does not exist")));
        }
        Err(e) => return Err(e),
    };
    let group = (price_group.clamp(1, 5) - 1) as usize;
    let price = article
        .get(SALES_PRICES[group])
        .or_else(|| article.get("sales_price"))
        .and_then(Scalar::as_dec)
        .unwrap_or_default();
    let (unit, unit_code) = match article.int("unit_id") {
        Some(u) => match records::load(txn, &UNITS, account, u as u64) {
            Ok(unit) => (
                unit.text("name").to_owned(),
                unit.text("unit_code").to_owned(),
            ),
            Err(Error::NotFound(_)) => (String::new(), String::new()),
            Err(e) => return Err(e),
        },
        None => (String::new(), String::new()),
    };
    let tax = match article.int("tax_id") {
        Some(t) => match records::load(txn, &TAXES, account, t as u64) {
            Ok(tax) => Some((
                tax.text("name").to_owned(),
                tax.get("rate").and_then(Scalar::as_dec).unwrap_or_default(),
            )),
            Err(Error::NotFound(_)) => None,
            Err(e) => return Err(e),
        },
        None => None,
    };
    Ok(Ok(ItemDefaults {
        title: article.text("title").to_owned(),
        description: article.text("description").to_owned(),
        unit,
        unit_code,
        unit_price: price,
        tax,
        product_type: article.text("type").to_owned(),
    }))
}
