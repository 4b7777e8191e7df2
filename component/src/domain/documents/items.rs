//! Items of documents: the child type, its wire fields, and how a request builds or
//! changes one. Their totals are computed from the document's price basis and tax
//! situation when read. A leaf: the document they belong to is changed by `commands`.

use faktura_einvoice::derive::unit_code;
use rust_decimal::Decimal;

use super::super::articles::ItemDefaults;
use super::super::money::{self, Line, Reduction};
use super::super::schema::{Changes, Field, Kind, Record, Scalar};
use super::super::{Ctx, Error};
use super::kind::DocKind;
use super::model::Document;
use super::reminder::Charge;
use crate::limits;

/// The storage collection (and id counter) of a kind's items.
pub fn collection(kind: DocKind) -> &'static str {
    kind.spec().items
}

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub id: u64,
    pub document_id: u64,
    pub position: i64,
    pub article_id: Option<i64>,
    pub unit: String,
    pub quantity: Decimal,
    pub unit_price: Decimal,
    pub tax_name: String,
    pub tax_rate: Decimal,
    pub title: String,
    pub description: String,
    pub reduction: String,
    /// PRODUCT or SERVICE (wire field `type`).
    pub product_type: String,
    pub created: i64,
    pub updated: i64,
    /// E-invoice terms as given; empty ones are derived when the e-invoice is made
    /// (`faktura_einvoice::derive`).
    pub unit_code: String,
    pub tax_category: String,
    pub tax_exemption_reason: String,
    /// Offers: a line shown as an option, left out of every total and tax.
    pub optional: bool,
    /// Reminders: which of the damages the service made the item is.
    pub charge: Charge,
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
    ($parent:literal, $parent_doc:literal $(, $extra:expr)* $(,)?) => {
        &[
            Field::new("id", Kind::Integer)
                .read_only()
                .doc("Id of the item (read only; assigned on create)."),
            Field::new("created", Kind::DateTime)
                .read_only()
                .doc("When the item was created (read only)."),
            Field::new("updated", Kind::DateTime)
                .read_only()
                .doc("When the item was last changed (read only)."),
            Field::new("article_id", Kind::Integer).doc(
                "Id of the article the item sells (of /api/articles). On create, the item takes \
                 the article's title, description, unit, unit code, type, tax and the price of the \
                 client's price_group for each of them the request does not give; later changes of \
                 the article change no item. Matched by the documents' article_id filter.",
            ),
            Field::new($parent, Kind::Integer)
                .mandatory()
                .doc($parent_doc),
            Field::new("position", Kind::Integer)
                .doc("Position of the item in the document. Default: after the last item."),
            Field::new("unit", Kind::Text).doc(
                "Unit of the quantity as printed, e.g. Stück or h; the default of unit_code is \
                 derived from it.",
            ),
            Field::new("quantity", Kind::Decimal)
                .doc("Quantity of units, kept at its given precision. Default: 1."),
            Field::new("unit_price", Kind::Decimal).doc(
                "Price of one unit, net or gross as the document's net_gross says, kept at its \
                 given precision. Default: 0.",
            ),
            Field::new("tax_name", Kind::Text).doc(
                "Name of the item's tax; the document's taxes are grouped by name and rate. \
                 Default: the default tax's name when neither tax_name nor tax_rate is given.",
            ),
            Field::new("tax_rate", Kind::Decimal).doc(
                "Tax rate in percent (0 to 100); 0 on a tax-free document. Default: the default \
                 tax's rate when neither tax_name nor tax_rate is given.",
            ),
            Field::new("title", Kind::Text).doc("Title of the item, printed in the item table."),
            Field::new("description", Kind::Text)
                .doc("Longer description, printed below the title."),
            Field::new("reduction", Kind::Text).doc(
                "Reduction of the item: an amount (10) or a percentage (10%) off quantity × \
                 unit_price.",
            ),
            Field::new("type", Kind::Enum(&["PRODUCT", "SERVICE"])).doc(
                "Whether the item is a product or a service; for tax-free foreign clients it \
                 decides the derived VAT category (K or AE inside the EU, G or O outside).",
            ),
            Field::new("unit_code", Kind::UnitCode).doc(
                "Unit of measure (BT-130, UN/ECE Recommendation 20) for e-invoices. Empty: derived \
                 from unit (e.g. Stück → H87, h → HUR), else C62; responses show the code that \
                 applies.",
            ),
            Field::new("tax_category", Kind::Enum(TAX_CATEGORIES)).doc(
                "VAT category (BT-151): S standard, Z zero rated, E exempt, AE reverse charge, K \
                 intra-community supply, G export, O not subject to VAT. Empty: derived when the \
                 e-invoice is made.",
            ),
            Field::new("tax_exemption_reason", Kind::Text).doc(
                "VAT exemption reason (BT-120) for e-invoices. Empty: the settings' \
                 tax_exemption_reason for category E, a standard text for AE, K, G and O.",
            ),
            Field::new("total_net", Kind::Decimal).read_only().doc(
                "Net amount of the item after its reduction, before the document reduction (read \
                 only; computed).",
            ),
            Field::new("total_gross", Kind::Decimal).read_only().doc(
                "Gross amount of the item after its reduction, before the document reduction (read \
                 only; computed).",
            ),
            Field::new("total_net_unreduced", Kind::Decimal)
                .read_only()
                .doc(
                    "Net amount of quantity × unit_price before the item's reduction (read only; \
                     computed).",
                ),
            Field::new("total_gross_unreduced", Kind::Decimal)
                .read_only()
                .doc(
                    "Gross amount of quantity × unit_price before the item's reduction (read only; \
                     computed).",
                ),
            $($extra,)*
        ]
    };
}

/// UNTDID 5305 VAT categories an item may name (`faktura_einvoice::model::Category`).
const TAX_CATEGORIES: &[&str] = &["S", "Z", "E", "AE", "K", "G", "O"];

static INVOICE_ITEM_FIELDS: &[Field] = item_fields!(
    "invoice_id",
    "Id of the invoice the item belongs to; its items change only while it is a DRAFT. Not sent \
     in items nested in an invoice."
);
static CREDIT_NOTE_ITEM_FIELDS: &[Field] = item_fields!(
    "credit_note_id",
    "Id of the credit note the item belongs to; its items change only while it is a DRAFT. Not \
     sent in items nested in a credit note."
);

static OFFER_ITEM_FIELDS: &[Field] = item_fields!(
    "offer_id",
    "Id of the offer the item belongs to; its items change only while it is a DRAFT. Not sent \
     in items nested in an offer.",
    Field::new("optional", Kind::Bool).doc(
        "1 makes the line an option: shown (and marked as optional on the PDF), but left out of \
         every total and tax of the offer, and not taken into documents made from it. Default: 0.",
    ),
);
static RECURRING_ITEM_FIELDS: &[Field] = item_fields!(
    "recurring_id",
    "Id of the recurring invoice the item belongs to; every invoice it makes takes a copy of \
     its items, with the date placeholders of title and description resolved for the run. \
     Not sent in items nested in a recurring invoice."
);
static CONFIRMATION_ITEM_FIELDS: &[Field] = item_fields!(
    "confirmation_id",
    "Id of the confirmation the item belongs to; its items change only while it is a DRAFT. Not \
     sent in items nested in a confirmation."
);
static DELIVERY_NOTE_ITEM_FIELDS: &[Field] = item_fields!(
    "delivery_note_id",
    "Id of the delivery note the item belongs to; its items change only while it is a DRAFT. \
     Not sent in items nested in a delivery note."
);

/// A reminder's items: fees and interest, damages that carry no tax.
static REMINDER_ITEM_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the item (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the item was created (read only)."),
    Field::new("updated", Kind::DateTime)
        .read_only()
        .doc("When the item was last changed (read only)."),
    Field::new("reminder_id", Kind::Integer).mandatory().doc(
        "Id of the reminder the item belongs to; its items change only while it is a DRAFT. Not \
         sent in items nested in a reminder.",
    ),
    Field::new("position", Kind::Integer)
        .doc("Position of the item in the reminder. Default: after the last item."),
    Field::new("title", Kind::Text).doc("Title of the item, printed in the claim table."),
    Field::new("description", Kind::Text).doc("Longer description, printed below the title."),
    Field::new("quantity", Kind::Decimal).doc("Quantity. Default: 1."),
    Field::new("unit_price", Kind::Decimal).doc("Amount of one unit. Default: 0."),
    Field::new("total", Kind::Decimal)
        .read_only()
        .doc("quantity × unit_price, rounded to cents (read only; computed)."),
    Field::new("is_charge", Kind::Bool).doc(
        "1: the item is a dunning fee (the level's fee or the flat charge of § 288 (5) BGB). \
         Fees and default interest are damages, not a supply: no VAT is charged on them.",
    ),
];

pub fn fields(kind: DocKind) -> &'static [Field] {
    match kind {
        DocKind::Reminder => REMINDER_ITEM_FIELDS,
        DocKind::Invoice => INVOICE_ITEM_FIELDS,
        DocKind::CreditNote => CREDIT_NOTE_ITEM_FIELDS,
        DocKind::Offer => OFFER_ITEM_FIELDS,
        DocKind::Confirmation => CONFIRMATION_ITEM_FIELDS,
        DocKind::DeliveryNote => DELIVERY_NOTE_ITEM_FIELDS,
        DocKind::Recurring => RECURRING_ITEM_FIELDS,
    }
}

/// The item's wire fields; its totals as the document computes them.
pub fn to_record(item: &Item, doc: &Document) -> Record {
    let t = money::line_totals(&item.line(), doc.basis(), doc.tax_free);
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
        doc.kind.parent_field(),
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
    set("type", text(&item.product_type));
    set(
        "unit_code",
        Scalar::Text(unit_code(&item.unit_code, &item.unit)),
    );
    set("tax_category", text(&item.tax_category));
    set("tax_exemption_reason", text(&item.tax_exemption_reason));
    set("optional", Scalar::Bool(item.optional));
    set("is_charge", Scalar::Bool(item.charge.is_charge()));
    set("total", Scalar::Dec(t.net));
    set("total_net", Scalar::Dec(t.net));
    set("total_gross", Scalar::Dec(t.gross));
    set("total_net_unreduced", Scalar::Dec(t.net_unreduced));
    set("total_gross_unreduced", Scalar::Dec(t.gross_unreduced));
    r.values
        .retain(|_, v| !matches!(v, Scalar::Text(t) if t.is_empty()));
    r
}

/// Copies the request's fields onto an item and checks it.
pub fn apply(item: &mut Item, c: &Changes, errors: &mut Vec<String>) {
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
    if let Some(v) = c.get("optional") {
        item.optional = matches!(v, Some(Scalar::Bool(true)));
    }
    if let Some(v) = c.get("is_charge") {
        let charge = matches!(v, Some(Scalar::Bool(true)));
        if charge != item.charge.is_charge() {
            item.charge = if charge { Charge::Fee } else { Charge::None };
        }
    }
    for (name, field) in [
        ("unit", &mut item.unit),
        ("tax_name", &mut item.tax_name),
        ("title", &mut item.title),
        ("description", &mut item.description),
        ("reduction", &mut item.reduction),
        ("type", &mut item.product_type),
    ] {
        if let Some(v) = text(name) {
            *field = v;
        }
    }
    for (name, field) in [
        ("unit_code", &mut item.unit_code),
        ("tax_category", &mut item.tax_category),
        ("tax_exemption_reason", &mut item.tax_exemption_reason),
    ] {
        if let Some(v) = text(name) {
            *field = v.trim().to_owned();
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

/// A new item from a request, not yet saved and without its id. Made from an article, it
/// takes the article's values (`from`) for every field the request does not give; without
/// tax fields it takes the article's tax, else the default tax.
pub fn build(
    ctx: &Ctx,
    document_id: u64,
    position: i64,
    c: &Changes,
    default_tax: &Option<(String, Decimal)>,
    from: Option<&ItemDefaults>,
) -> Result<Item, Error> {
    let mut errors = c.errors();
    let tax = from
        .and_then(|a| a.tax.clone())
        .or_else(|| default_tax.clone());
    let (tax_name, tax_rate) = match tax {
        Some((n, r)) if !c.has("tax_name") && !c.has("tax_rate") => (n, r),
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
        product_type: String::new(),
        created: ctx.now,
        updated: ctx.now,
        unit_code: String::new(),
        tax_category: String::new(),
        tax_exemption_reason: String::new(),
        optional: false,
        charge: Charge::None,
    };
    if let Some(a) = from {
        item.title = a.title.clone();
        item.description = a.description.clone();
        item.unit = a.unit.clone();
        item.unit_code = a.unit_code.clone();
        item.unit_price = a.unit_price;
        item.product_type = a.product_type.clone();
    }
    apply(&mut item, c, &mut errors);
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    Ok(item)
}

/// A copy of an item for another document (a credit note made from an invoice), without
/// its id yet.
pub fn copy_to(item: &Item, document_id: u64, now: i64) -> Item {
    Item {
        id: 0,
        document_id,
        created: now,
        updated: now,
        ..item.clone()
    }
}
