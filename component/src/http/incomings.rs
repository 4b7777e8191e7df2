//! Incoming invoices on the wire: `/api/incomings` (import an e-invoice file or enter one
//! by hand, list, get with its taxes and validation, update, delete), the uploaded file
//! (`…/{id}/file`) and its readable PDF (`…/{id}/pdf`); its items, payments and comments
//! are record resources (`records::list` checks the incoming a list names).

use super::error::ApiError;
use super::records::{self, INCOMINGS as INCOMING_WIRE, decode_base64, encode_record, page_answer};
use super::{Payload, Response, in_write};
use crate::codec::{Content, Element, ScalarType};
use crate::domain::date::Date;
use crate::domain::grouping::{GroupKey, SUPPLIER};
use crate::domain::incoming_pdf;
use crate::domain::incomings::{self, INCOMINGS};
use crate::domain::records as domain_records;
use crate::domain::schema::{Record, Scalar};
use crate::http::Call;

/// An incoming as its element: its fields, then `taxes` and `validation`.
fn element(c: &Call<'_>, txn: &dyn crate::caps::Read, record: Record) -> Result<Element, ApiError> {
    element_of(txn, c.ctx.account_id, c.ctx.today(), record)
}

/// An incoming of `account` as its element on the day `today` (its status as shown then),
/// with its `taxes` and `validation` as the store holds them.
pub(super) fn element_of(
    txn: &dyn crate::caps::Read,
    account: u64,
    today: Date,
    record: Record,
) -> Result<Element, ApiError> {
    let id = record.id();
    let record = incomings::shown(record, today);
    let mut el = encode_record(INCOMINGS.fields, "incoming", &record, None);
    let extra = incomings::extra(txn, account, id)?;
    let taxes = extra
        .taxes
        .into_iter()
        .map(|(category, rate, taxable, amount)| {
            Element::node(
                "tax",
                vec![
                    Element::text("category", category),
                    Element::typed("rate", ScalarType::Float, rate),
                    Element::typed("taxable_amount", ScalarType::Float, taxable),
                    Element::typed("amount", ScalarType::Float, amount),
                ],
            )
        })
        .collect();
    let valid = extra
        .findings
        .iter()
        .all(|(_, severity, _)| severity != "error");
    let mut validation = vec![Element::typed(
        "valid",
        ScalarType::Integer,
        if valid { "1" } else { "0" },
    )];
    validation.extend(extra.findings.into_iter().map(|(rule, severity, message)| {
        Element::node(
            "finding",
            vec![
                Element::text("rule", rule),
                Element::text("severity", severity),
                Element::text("message", message),
            ],
        )
    }));
    if let Content::Children(children) = &mut el.content {
        children.push(Element::list("taxes", taxes));
        children.push(Element::node("validation", validation));
    }
    Ok(el)
}

/// Calls `each` with the account's incomings matching the list filters `supplier_id`,
/// `status`, `number` (part of it), `from` and `to` (date), `due_from` and `due_to` (due
/// date), as shown today, in id order, read a batch at a time.
fn for_each_filtered(
    c: &Call<'_>,
    txn: &dyn crate::caps::Read,
    mut each: impl FnMut(Record),
) -> Result<(), ApiError> {
    let query = c.query;
    let today = c.ctx.today();
    let date = |name: &str| -> Result<Option<Date>, ApiError> {
        query
            .get(name)
            .map(|v| {
                Date::parse(v.trim()).ok_or_else(|| {
                    ApiError::bad(format!("{name} must be a date YYYY-MM-DD, got \"{v}\""))
                })
            })
            .transpose()
    };
    let (from, to) = (date("from")?, date("to")?);
    let (due_from, due_to) = (date("due_from")?, date("due_to")?);
    let number = query.get("number").map(str::to_lowercase);
    let supplier = query.get("supplier_id").map(str::to_owned);
    query.ids("supplier_id")?;
    let status = query.get("status").map(str::to_ascii_uppercase);
    let supplier_of = |r: &Record| r.int("supplier_id").unwrap_or(0).to_string();
    let wanted = |r: &Record| {
        let date_of = |name: &str| match r.get(name) {
            Some(Scalar::Date(d)) => Some(*d),
            _ => None,
        };
        let (d, due) = (date_of("date"), date_of("due_date"));
        supplier
            .as_deref()
            .is_none_or(|s| s.split(',').any(|s| s.trim() == supplier_of(r)))
            && status
                .as_deref()
                .is_none_or(|s| s.split(',').any(|s| s.trim() == r.text("status")))
            && number
                .as_deref()
                .is_none_or(|n| r.text("number").to_lowercase().contains(n))
            && from.is_none_or(|f| d.is_some_and(|d| d >= f))
            && to.is_none_or(|t| d.is_some_and(|d| d <= t))
            && due_from.is_none_or(|f| due.is_some_and(|d| d >= f))
            && due_to.is_none_or(|t| due.is_some_and(|d| d <= t))
    };
    domain_records::for_each(txn, &INCOMINGS, c.ctx.account_id, |r| {
        let r = incomings::shown(r, today);
        if wanted(&r) {
            each(r);
        }
        Ok(())
    })?;
    Ok(())
}

/// `GET /api/incomings`: the filtered list, paged and ordered, or with `group_by`
/// (supplier, status, day, week, month, year) its groups.
pub(super) fn list(c: &Call<'_>) -> Result<Response, ApiError> {
    let query = c.query;
    let group_by = query
        .get("group_by")
        .map(|raw| GroupKey::parse_list(raw, SUPPLIER).map_err(ApiError::bad))
        .transpose()?;
    let (page, per_page) = query.paging()?;
    let order = query.order(INCOMINGS.fields)?;
    let txn = c.caps.store.begin_read()?;
    // Summed or paged as they are read: an account's every incoming is never held at once.
    if let Some(keys) = group_by {
        let mut grouping = incomings::Grouping::new(&keys);
        for_each_filtered(c, txn.as_ref(), |r| grouping.add(&r))?;
        return Ok(Response::doc(200, groups(&grouping.finish())));
    }
    let mut pager = domain_records::Pager::new(&order, page, per_page);
    for_each_filtered(c, txn.as_ref(), |r| pager.push(r))?;
    let today = c.ctx.today();
    let (shown, total) = pager.finish(|ids| {
        Ok(
            domain_records::load_many(txn.as_ref(), &INCOMINGS, c.ctx.account_id, ids)?
                .into_iter()
                .map(|r| incomings::shown(r, today))
                .collect(),
        )
    })?;
    let mut children = Vec::new();
    for r in shown {
        children.push(element(c, txn.as_ref(), r)?);
    }
    Ok(page_answer("incomings", children, page, per_page, total))
}

/// Groups as invoices answer them: `incoming-groups` per currency (inside
/// `incoming-group-lists` when there are several), each `incoming-group` with its sums,
/// its key values, and the key values again as `incoming-params`.
fn groups(by_currency: &[(String, Vec<incomings::Group>)]) -> Element {
    let key = |(name, v): &(&'static str, Scalar)| match v {
        Scalar::Int(i) => Element::typed(*name, ScalarType::Integer, i.to_string()),
        Scalar::Date(_) => Element::typed(*name, ScalarType::Date, v.to_wire()),
        _ => Element::text(*name, v.to_wire()),
    };
    let list = |currency: &str, groups: &[incomings::Group]| {
        let children = groups
            .iter()
            .map(|g| {
                let mut fields = vec![
                    Element::typed(
                        "total_gross",
                        ScalarType::Float,
                        Scalar::Dec(g.total_gross).to_wire(),
                    ),
                    Element::typed(
                        "total_net",
                        ScalarType::Float,
                        Scalar::Dec(g.total_net).to_wire(),
                    ),
                    Element::typed(
                        "total_tax",
                        ScalarType::Float,
                        Scalar::Dec(g.total_tax).to_wire(),
                    ),
                    Element::typed(
                        "open_amount",
                        ScalarType::Float,
                        Scalar::Dec(g.open_amount).to_wire(),
                    ),
                    Element::typed("count", ScalarType::Integer, g.count.to_string()),
                ];
                fields.extend(g.keys.iter().map(key));
                fields.push(Element::node(
                    "incoming-params",
                    g.keys.iter().map(key).collect(),
                ));
                Element::node("incoming-group", fields)
            })
            .collect();
        Element::list("incoming-groups", children).with_attr("currency_code", currency)
    };
    match by_currency {
        [] => Element::list("incoming-groups", Vec::new()),
        [(currency, groups)] => list(currency, groups),
        several => Element::list(
            "incoming-group-lists",
            several.iter().map(|(c, g)| list(c, g)).collect(),
        ),
    }
}

pub(super) fn get(c: &Call<'_>) -> Result<Response, ApiError> {
    let id = records::parse_id(&INCOMING_WIRE, c.id)?;
    let txn = c.caps.store.begin_read()?;
    let record = domain_records::load(txn.as_ref(), &INCOMINGS, c.ctx.account_id, id)?;
    Ok(Response::doc(200, element(c, txn.as_ref(), record)?))
}

/// `POST /api/incomings`: with `base64file`, the e-invoice it holds imported (its
/// `filename`, `label`, `note` optional); without, an incoming entered by hand.
pub(super) fn create(c: &Call<'_>) -> Result<Response, ApiError> {
    let root = c.req.document()?;
    if root.name != "incoming" {
        return Err(ApiError::bad(format!(
            "expected an <incoming> root element, found <{}>",
            root.name
        )));
    }
    let text = |name: &str| {
        root.child(name)
            .and_then(Element::as_text)
            .map(str::to_owned)
    };
    let record = match text("base64file").filter(|f| !f.trim().is_empty()) {
        Some(encoded) => {
            let file = decode_base64(&encoded)
                .ok_or_else(|| ApiError::bad("base64file is not valid base64"))?;
            if file.len() > crate::limits::INCOMING_FILE_BYTES_MAX {
                return Err(ApiError::TooLarge(format!(
                    "the file is larger than {} bytes",
                    crate::limits::INCOMING_FILE_BYTES_MAX
                )));
            }
            let filename = text("filename").unwrap_or_default();
            if let Some(problem) = crate::domain::filenames::problem("filename", &filename) {
                return Err(ApiError::bad(problem));
            }
            let (label, note) = (text("label"), text("note"));
            // Read once: a conflict runs the transaction again, not the parse.
            let parsed = incomings::parse(file)?;
            in_write(c.caps, |txn| {
                Ok(incomings::import(
                    c.ctx,
                    txn,
                    &parsed,
                    &filename,
                    label.as_deref(),
                    note.as_deref(),
                )?)
            })?
        }
        None => {
            let changes = records::decode_changes(INCOMINGS.fields, &root, "incoming")?;
            in_write(c.caps, |txn| {
                Ok(domain_records::create(c.ctx, txn, &INCOMINGS, &changes)?)
            })?
        }
    };
    let txn = c.caps.store.begin_read()?;
    Ok(Response::doc(201, element(c, txn.as_ref(), record)?))
}

/// `GET /api/incomings/{id}/pdf`: a readable PDF of the e-invoice (the upload itself for
/// a PDF, a rendering of an XML e-invoice).
pub(super) fn pdf(c: &Call<'_>) -> Result<Response, ApiError> {
    if let Some(other) = c
        .query
        .get("format")
        .filter(|f| !f.eq_ignore_ascii_case("pdf"))
    {
        return Err(ApiError::bad(format!(
            "format must be pdf (the answer is the PDF), got \"{other}\""
        )));
    }
    let id = records::parse_id(&INCOMING_WIRE, c.id)?;
    let txn = c.caps.store.begin_read()?;
    let bytes = incoming_pdf::pdf(txn.as_ref(), c.caps.pdf, c.ctx.account_id, id)?;
    Ok(Response {
        status: 200,
        headers: vec![
            ("content-type".into(), "application/pdf".into()),
            (
                "content-disposition".into(),
                format!("inline; filename=\"incoming_{id}.pdf\""),
            ),
        ],
        payload: Payload::Bytes(bytes),
    })
}

/// `GET /api/incomings/{id}/file`: the uploaded file byte for byte.
pub(super) fn file(c: &Call<'_>) -> Result<Response, ApiError> {
    let id = records::parse_id(&INCOMING_WIRE, c.id)?;
    let txn = c.caps.store.begin_read()?;
    let (bytes, record) =
        incomings::file(txn.as_ref(), c.ctx.account_id, id)?.ok_or_else(|| {
            ApiError::NotFound(format!("incoming {id} was entered by hand and has no file"))
        })?;
    let mimetype = if record.text("format") == "pdf-cii" {
        "application/pdf"
    } else {
        "application/xml"
    };
    let name = match record.text("filename") {
        "" => format!("incoming_{id}"),
        n => n.replace('"', ""),
    };
    Ok(Response {
        status: 200,
        headers: vec![
            ("content-type".into(), mimetype.into()),
            (
                "content-disposition".into(),
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        payload: Payload::Bytes(bytes),
    })
}

use super::described::{Param, Shape};

/// The query of `pdf`, for the API description.
pub(super) const PDF_PARAMS: &[Param] = &[Param::new(
    "format",
    Shape::OneOf(&["pdf"]),
    "Optional, as for a document's PDF: the answer is the PDF's bytes.",
)];

/// The query of `list` (`filtered` and `group_by`), for the API description.
pub(super) const LIST_PARAMS: &[Param] = &[
    Param::new(
        "supplier_id",
        Shape::Ids,
        "Only incomings of these suppliers.",
    ),
    Param::new(
        "status",
        Shape::Text,
        "Only incomings of these statuses (comma-separated), as shown today.",
    ),
    Param::new(
        "number",
        Shape::Text,
        "Only incomings whose number contains this.",
    ),
    Param::new(
        "from",
        Shape::Date,
        "Only incomings dated on or after this day.",
    ),
    Param::new(
        "to",
        Shape::Date,
        "Only incomings dated on or before this day.",
    ),
    Param::new(
        "due_from",
        Shape::Date,
        "Only incomings due on or after this day.",
    ),
    Param::new(
        "due_to",
        Shape::Date,
        "Only incomings due on or before this day.",
    ),
    Param::new(
        "group_by",
        Shape::AnyOf(&["supplier", "status", "day", "week", "month", "year"]),
        "Instead of the list, its sums grouped by these keys.",
    ),
];

/// The incoming record for the API description.
pub(super) fn schema() -> super::described::Schema {
    super::described::Schema {
        singular: INCOMING_WIRE.singular,
        plural: INCOMING_WIRE.plural,
        fields: INCOMINGS.fields,
        filters: Vec::new(),
        owner: None,
    }
}
