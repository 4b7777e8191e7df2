//! The lines of imported e-invoices (`INCOMING_ITEMS`): read only, made by the import
//! from the invoice's lines (`changes`). A leaf.

use faktura_einvoice::model::{Category, Line};
use rust_decimal::Decimal;

use super::super::records::{self, Filter, Resource};
use super::super::schema::{Changes, Field, Kind, Scalar};

static ITEM_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the line (read only)."),
    Field::new("incoming_id", Kind::Integer)
        .read_only()
        .doc("Id of the incoming the line belongs to (read only)."),
    Field::new("line_id", Kind::Text)
        .read_only()
        .doc("Invoice line identifier (BT-126) (read only; from the file)."),
    Field::new("name", Kind::Text)
        .read_only()
        .doc("Item name (BT-153) (read only; from the file)."),
    Field::new("description", Kind::Text)
        .read_only()
        .doc("Item description (BT-154) (read only; from the file)."),
    Field::new("quantity", Kind::Decimal)
        .read_only()
        .doc("Invoiced quantity (BT-129) (read only; from the file)."),
    Field::new("unit_code", Kind::Text)
        .read_only()
        .doc("Unit of measure code (BT-130) (read only; from the file)."),
    Field::new("net_price", Kind::Decimal)
        .read_only()
        .doc("Item net price (BT-146) (read only; from the file)."),
    Field::new("net_amount", Kind::Decimal)
        .read_only()
        .doc("Line net amount (BT-131) (read only; from the file)."),
    Field::new("tax_category", Kind::Text)
        .read_only()
        .doc("VAT category code of the line (BT-151) (read only; from the file)."),
    Field::new("tax_rate", Kind::Decimal).read_only().doc(
        "VAT rate of the line in percent (BT-152); absent for category O (read only; from the \
         file).",
    ),
];

/// The lines of imported e-invoices; made by the import only.
pub static INCOMING_ITEMS: Resource = Resource::new(
    "incoming-items",
    "incoming item",
    ITEM_FIELDS,
    &records::Plain,
)
.filtered(&[Filter::exact("incoming_id", "incoming_id")])
.indexed(&["incoming_id"]);

/// The fields of the item of incoming `incoming` that `line` becomes.
pub fn changes(incoming: u64, line: &Line) -> Changes {
    let mut c = Changes::default();
    for (name, v) in [
        ("incoming_id", Some(Some(Scalar::Int(incoming as i64)))),
        ("line_id", text(&line.id)),
        ("name", text(&line.name)),
        ("description", text(&line.description)),
        ("quantity", dec(line.quantity)),
        ("unit_code", text(&line.unit_code)),
        ("net_price", dec(line.net_price)),
        ("net_amount", dec(line.net_amount)),
        ("tax_category", text(line.category.code())),
        // Not subject to VAT: the line has no rate (BR-O-05).
        (
            "tax_rate",
            (line.category != Category::O).then_some(Some(Scalar::Dec(line.rate))),
        ),
    ] {
        if let Some(v) = v {
            c.values.push((name, v));
        }
    }
    c
}

/// A term's amount as a change.
pub fn dec(d: Decimal) -> Option<Option<Scalar>> {
    Some(Some(Scalar::Dec(d)))
}

/// A term's text as a change: none for an empty term.
pub fn text(s: &str) -> Option<Option<Scalar>> {
    let s = s.trim();
    (!s.is_empty()).then(|| Some(Scalar::Text(s.to_owned())))
}
