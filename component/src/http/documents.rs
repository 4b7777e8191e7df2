//! The wire of documents, one implementation for every kind: `/api/invoices` and
//! `/api/credit-notes` with their items, payments, comments and tags, groups, PDFs,
//! signatures, e-mail and (credit notes) postal mail.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::error::ApiError;
use super::query::Query;
use super::records::{decode_changes, encode_record, scalar_type};
use super::{Payload, Request, Response, in_write};
use crate::caps::{Attachment, Caps};
use crate::codec::{Element, Emit, FieldTags, ScalarType, StaticAttrs, Text, XmlWriter};
use crate::domain::date::Date;
use crate::domain::date::format_datetime;
use crate::domain::documents::{self, DocKind, Document, Filter, Shown};
use crate::domain::emails::{self, EmailRequest, LetterRequest};
use crate::domain::schema::{Field, Kind, Scalar, Value, check_mandatory};
use crate::domain::settings::PAYMENT_TYPES;
use crate::domain::{Ctx, Error, comments, grouping, items, payments, pdfs, settings, tags};

/// Wire names of one kind.
pub struct Names {
    pub singular: &'static str,
    pub plural: &'static str,
    pub item: &'static str,
    pub items: &'static str,
    pub payment: &'static str,
    pub payments: &'static str,
    pub comment: &'static str,
    pub comments: &'static str,
    pub tag: &'static str,
    pub tags: &'static str,
    pub group: &'static str,
    pub groups: &'static str,
    pub group_lists: &'static str,
    pub params: &'static str,
}

pub fn names(kind: DocKind) -> &'static Names {
    match kind {
        DocKind::Invoice => &Names {
            singular: "invoice",
            plural: "invoices",
            item: "invoice-item",
            items: "invoice-items",
            payment: "invoice-payment",
            payments: "invoice-payments",
            comment: "invoice-comment",
            comments: "invoice-comments",
            tag: "invoice-tag",
            tags: "invoice-tags",
            group: "invoice-group",
            groups: "invoice-groups",
            group_lists: "invoice-group-lists",
            params: "invoice-params",
        },
        DocKind::CreditNote => &Names {
            singular: "credit-note",
            plural: "credit-notes",
            item: "credit-note-item",
            items: "credit-note-items",
            payment: "credit-note-payment",
            payments: "credit-note-payments",
            comment: "credit-note-comment",
            comments: "credit-note-comments",
            tag: "credit-note-tag",
            tags: "credit-note-tags",
            group: "credit-note-group",
            groups: "credit-note-groups",
            group_lists: "credit-note-group-lists",
            params: "credit-note-params",
        },
    }
}

/// A response field as written: name, `type=` attribute, getter, and whether the taxes
/// follow it.
#[derive(Clone, Copy)]
struct WireField {
    name: &'static str,
    attrs: StaticAttrs,
    get: documents::Getter,
    taxes_after: bool,
}

/// The written fields of a kind (files left out), worked out when the component is
/// compiled: a table built at run time would be built again in every instance.
fn wire_fields(kind: DocKind) -> &'static [WireField] {
    const fn count(fields: &[Field]) -> usize {
        let (mut n, mut i) = (0, 0);
        while i < fields.len() {
            if !matches!(fields[i].kind, Kind::File) {
                n += 1;
            }
            i += 1;
        }
        n
    }
    const fn table<const N: usize>(fields: &[Field]) -> [WireField; N] {
        const NONE: WireField = WireField {
            name: "",
            attrs: &[],
            get: documents::Getter::Empty,
            taxes_after: false,
        };
        let mut out = [NONE; N];
        let (mut n, mut i) = (0, 0);
        let mut taxes_placed = false;
        while i < fields.len() {
            let f = &fields[i];
            if !matches!(f.kind, Kind::File) {
                let get = documents::getter(f.name);
                let taxes_after = matches!(get, documents::Getter::Quote);
                taxes_placed |= taxes_after;
                out[n] = WireField {
                    name: f.name,
                    attrs: match scalar_type(f.kind) {
                        Some(t) => t.attrs(),
                        None => &[],
                    },
                    get,
                    taxes_after,
                };
                n += 1;
            }
            i += 1;
        }
        // Without a `quote`, the taxes come last.
        if !taxes_placed && N > 0 {
            out[N - 1].taxes_after = true;
        }
        out
    }
    static INVOICE: [WireField; count(documents::INVOICE_FIELDS)] =
        table(documents::INVOICE_FIELDS);
    static CREDIT_NOTE: [WireField; count(documents::CREDIT_NOTE_FIELDS)] =
        table(documents::CREDIT_NOTE_FIELDS);
    match kind {
        DocKind::Invoice => &INVOICE,
        DocKind::CreditNote => &CREDIT_NOTE,
    }
}

/// Writes documents one after the other: straight into the XML writer when that is
/// where they go (static calls, one buffer reserved for all of them), a page of several
/// by index into tags rendered once; else through `e` by name.
fn emit_documents(found: &[Document], today: Date, e: &mut dyn Emit) {
    let Some(x) = e.as_xml() else {
        let mut out = ByName::new(e);
        for inv in found {
            write_document(inv, today, &mut out);
        }
        return;
    };
    let [first, rest @ ..] = found else {
        return;
    };
    if rest.is_empty() {
        // One document: its tags are written once, so rendering them first would not pay.
        write_document(first, today, &mut ByName::new(x));
        return;
    }
    debug_assert!(
        found.iter().all(|d| d.kind == first.kind),
        "a page is of one kind"
    );
    let mut out = ByIndex {
        fields: FieldTags::new(
            x.depth(),
            wire_fields(first.kind).iter().map(|f| (f.name, f.attrs)),
        ),
        // Below <invoice><taxes><tax>.
        tax: FieldTags::new(x.depth() + 2, TAX_FIELDS.iter().copied()),
        x,
    };
    let before = out.x.written();
    write_document(first, today, &mut out);
    // The others are about as long as the first.
    let each = out.x.written() - before;
    out.x.reserve(rest.len() * (each + each / 8));
    for inv in rest {
        write_document(inv, today, &mut out);
    }
}

/// The fields of a tax.
const TAX_FIELDS: [(&str, StaticAttrs); 3] = [
    ("name", &[]),
    ("rate", ScalarType::Float.attrs()),
    ("amount", ScalarType::Float.attrs()),
];

/// Which list a field is of: the kind's `wire_fields` or `TAX_FIELDS`.
#[derive(Clone, Copy)]
enum FieldList {
    Document,
    Tax,
}

/// Where `write_document` writes a document's elements.
trait DocumentOut {
    fn open(&mut self, name: &'static str, attrs: StaticAttrs);
    fn close(&mut self);
    /// Field `i` of `list`, named `name`; empty for `None`.
    fn field(
        &mut self,
        list: FieldList,
        i: usize,
        name: &'static str,
        attrs: StaticAttrs,
        value: Option<Value>,
    );
}

/// Any writer, field by field by name, non-text values formatted in one reused buffer.
struct ByName<'e, E: Emit + ?Sized> {
    e: &'e mut E,
    w: ValueWriter,
}

impl<'e, E: Emit + ?Sized> ByName<'e, E> {
    fn new(e: &'e mut E) -> Self {
        ByName {
            e,
            w: ValueWriter::default(),
        }
    }
}

impl<E: Emit + ?Sized> DocumentOut for ByName<'_, E> {
    fn open(&mut self, name: &'static str, attrs: StaticAttrs) {
        self.e.open(name, attrs);
    }

    fn close(&mut self) {
        self.e.close();
    }

    fn field(
        &mut self,
        _: FieldList,
        _: usize,
        name: &'static str,
        attrs: StaticAttrs,
        value: Option<Value>,
    ) {
        match value {
            Some(v) => self.w.emit(self.e, name, attrs, v),
            None => self.e.field(name, attrs, Text::Any("")),
        }
    }
}

/// The XML writer, field by field by index into the lists' tags, rendered once per
/// response; values formatted straight into the response.
struct ByIndex<'x> {
    x: &'x mut XmlWriter,
    fields: FieldTags,
    tax: FieldTags,
}

impl DocumentOut for ByIndex<'_> {
    fn open(&mut self, name: &'static str, attrs: StaticAttrs) {
        self.x.open(name, attrs);
    }

    fn close(&mut self) {
        self.x.close();
    }

    // Inlined into `write_document`'s loop, where `list` and `i` are known: a page of 100
    // documents runs it 4,500 times (fuel: 2.8 % of the page's guest work without).
    #[inline(always)]
    fn field(
        &mut self,
        list: FieldList,
        i: usize,
        _: &'static str,
        _: StaticAttrs,
        value: Option<Value>,
    ) {
        let tags = match list {
            FieldList::Document => &self.fields,
            FieldList::Tax => &self.tax,
        };
        match value {
            Some(Value::Text(t)) => self.x.tagged(tags, i, t),
            Some(v) => self.x.tagged_with(tags, i, |out| v.push_to(out)),
            None => self.x.tagged(tags, i, ""),
        }
    }
}

/// Writes a document in response order, its taxes after `quote` (or last).
fn write_document(inv: &Document, today: Date, out: &mut impl DocumentOut) {
    out.open(names(inv.kind).singular, &[]);
    for (i, f) in wire_fields(inv.kind).iter().enumerate() {
        out.field(
            FieldList::Document,
            i,
            f.name,
            f.attrs,
            f.get.get(inv, today),
        );
        if f.taxes_after {
            let [name, rate, amount] = TAX_FIELDS;
            out.open("taxes", &[("type", "array")]);
            for t in &inv.taxes {
                out.open("tax", &[]);
                out.field(
                    FieldList::Tax,
                    0,
                    name.0,
                    name.1,
                    Some(Value::Text(&t.name)),
                );
                out.field(FieldList::Tax, 1, rate.0, rate.1, Some(Value::Dec(t.rate)));
                out.field(
                    FieldList::Tax,
                    2,
                    amount.0,
                    amount.1,
                    Some(Value::Dec(t.amount)),
                );
                out.close();
            }
            out.close();
        }
    }
    out.close();
}

/// Emits values, formatting those that are not text in one reused buffer (their ASCII
/// needs no escaping).
#[derive(Default)]
struct ValueWriter {
    wire: Vec<u8>,
}

impl ValueWriter {
    fn emit<E: Emit + ?Sized>(
        &mut self,
        e: &mut E,
        name: &'static str,
        attrs: StaticAttrs,
        v: Value,
    ) {
        if let Value::Text(t) = v {
            e.field(name, attrs, Text::Any(t));
        } else {
            self.wire.clear();
            v.push_to(&mut self.wire);
            e.field(name, attrs, Text::Ascii(&self.wire));
        }
    }
}

/// A response of one document.
fn document_response(status: u16, inv: Document, ctx: &Ctx) -> Response {
    let today = documents::today(ctx);
    Response::emitted(status, move |e| {
        emit_documents(std::slice::from_ref(&inv), today, e)
    })
}

fn parse_id(raw: &str, label: &str) -> Result<u64, ApiError> {
    raw.parse::<u64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::NotFound(format!("{label} {raw} does not exist")))
}

fn filter(kind: DocKind, query: &Query) -> Result<Filter, ApiError> {
    let mut errors = Vec::new();
    let mut id = |name: &str| {
        query.id(name).unwrap_or_else(|e| {
            errors.extend(e.messages());
            None
        })
    };
    let client_id = id("client_id");
    let contact_id = id("contact_id");
    let article_id = id("article_id").map(|a| a as i64);
    let text = |name: &str| query.get(name).map(|s| s.trim().to_lowercase());
    let number = match kind {
        DocKind::Invoice => text("invoice_number"),
        // An example of the contract spells it credit-note_number.
        DocKind::CreditNote => text("credit_note_number").or_else(|| text("credit-note_number")),
    };
    let mut f = Filter {
        kind,
        client_id,
        contact_id,
        article_id,
        number,
        tags: query.list("tags").into_iter().map(str::to_owned).collect(),
        label: text("label"),
        intro: text("intro"),
        note: text("note"),
        ..Filter::default()
    };
    for s in query.list("status") {
        match Shown::parse(s) {
            Some(st) => f.statuses.push(st),
            None => errors.push(format!(
                "status must list values of DRAFT, OPEN, OVERDUE, PAID, CANCELED, got \"{s}\""
            )),
        }
    }
    for t in query.list("payment_type") {
        match PAYMENT_TYPES.iter().find(|p| p.eq_ignore_ascii_case(t)) {
            Some(p) => f.payment_types.push((*p).to_owned()),
            None => errors.push(format!(
                "payment_type must list values of {}, got \"{t}\"",
                PAYMENT_TYPES.join(", ")
            )),
        }
    }
    for (name, slot) in [("from", &mut f.from), ("to", &mut f.to)] {
        match query.date(name) {
            Ok(d) => *slot = d,
            Err(e) => errors.extend(e.messages()),
        }
    }
    if let (Some(from), Some(to)) = (f.from, f.to)
        && from > to
    {
        errors.push(format!("from {from} is after to {to}"));
    }
    if errors.is_empty() {
        Ok(f)
    } else {
        Err(ApiError::BadRequest(errors))
    }
}

/// A list, a page of it, or its groups; `count_only` (HEAD) answers just the count header
/// without loading a page.
pub fn list(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    query: &Query,
    count_only: bool,
) -> Result<Response, ApiError> {
    let f = filter(kind, query)?;
    let today = documents::today(ctx);
    let mut txn = caps.store.begin_read()?;
    if !grouping::sums_kept(txn.as_ref(), ctx.account_id, kind)? {
        // Documents from before sums and counts were kept: sum them once, in their own
        // transaction.
        drop(txn);
        let mut write = caps.store.begin_write()?;
        grouping::rebuild(write.as_mut(), ctx.account_id, kind)?;
        write.commit()?;
        txn = caps.store.begin_read()?;
    }
    if let Some(raw) = query.get("group_by") {
        let mut keys = Vec::new();
        for k in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let key = grouping::GroupKey::parse(k).ok_or_else(|| {
                ApiError::bad(format!(
                    "group_by must list values of client, status, day, week, month, year, got \"{k}\""
                ))
            })?;
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let groups = grouping::groups(txn.as_ref(), ctx.account_id, &f, &keys, today)?;
        return Ok(Response::emitted(200, move |e| {
            emit_groups(kind, &groups, e)
        }));
    }
    let (page, per_page) = query.paging()?;
    let order = query.order(documents::fields(kind))?;
    if count_only {
        let total = documents::count(txn.as_ref(), ctx.account_id, &f, today)?;
        let mut r = Response::doc(200, Element::list(names(kind).plural, Vec::new()));
        r.headers.push(("x-total-count".into(), total.to_string()));
        return Ok(r);
    }
    let (found, total) = documents::page(
        txn.as_ref(),
        ctx.account_id,
        &f,
        &order,
        page,
        per_page,
        today,
    )?;
    let plural = names(kind).plural;
    let mut r = Response::emitted(200, move |e| {
        let (page, per_page, total) = (page.to_string(), per_page.to_string(), total.to_string());
        e.open(
            plural,
            &[
                ("type", "array"),
                ("page", &page),
                ("per_page", &per_page),
                ("total", &total),
            ],
        );
        emit_documents(&found, today, e);
        e.close();
    });
    r.headers.push(("x-total-count".into(), total.to_string()));
    Ok(r)
}

/// Writes the key values of a group.
fn emit_keys(w: &mut ValueWriter, e: &mut dyn Emit, keys: &[(&'static str, Scalar)]) {
    for (name, v) in keys {
        let attrs = match v {
            Scalar::Int(_) => ScalarType::Integer.attrs(),
            Scalar::Date(_) => ScalarType::Date.attrs(),
            _ => &[],
        };
        w.emit(e, name, attrs, v.as_value());
    }
}

/// Writes the groups: one list, or one list per currency inside a list of lists.
fn emit_groups(kind: DocKind, by_currency: &[(String, Vec<grouping::Group>)], e: &mut dyn Emit) {
    let (float, integer) = (ScalarType::Float.attrs(), ScalarType::Integer.attrs());
    let n = names(kind);
    let mut w = ValueWriter::default();
    let several = by_currency.len() > 1;
    if several {
        e.open(n.group_lists, &[("type", "array")]);
    }
    for (currency, groups) in by_currency {
        e.open(
            n.groups,
            &[("type", "array"), ("currency_code", currency.as_str())],
        );
        for g in groups {
            e.open(n.group, &[]);
            w.emit(e, "total_gross", float, Value::Dec(g.total_gross));
            w.emit(e, "total_net", float, Value::Dec(g.total_net));
            w.emit(e, "count", integer, Value::Int(g.count as i64));
            emit_keys(&mut w, e, &g.keys);
            e.open(n.params, &[]);
            emit_keys(&mut w, e, &g.keys);
            e.close();
            e.close();
        }
        e.close();
    }
    if several {
        e.close();
    } else if by_currency.is_empty() {
        e.open(n.groups, &[("type", "array")]);
        e.close();
    }
}

pub fn get(caps: &Caps, ctx: &Ctx, kind: DocKind, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, kind.label())?;
    let txn = caps.store.begin_read()?;
    let inv = documents::load(txn.as_ref(), ctx.account_id, kind, id)?;
    Ok(document_response(200, inv, ctx))
}

pub fn create(caps: &Caps, ctx: &Ctx, kind: DocKind, req: &Request) -> Result<Response, ApiError> {
    let n = names(kind);
    let root = req.document()?;
    let changes = decode_changes(documents::fields(kind), &root, n.singular)?;
    let mut nested = Vec::new();
    if let Some(list) = root.child(n.items) {
        for el in list.children() {
            nested.push(decode_changes(items::fields(kind), el, n.item)?);
        }
    }
    let inv = in_write(caps, |txn| {
        Ok(documents::create(ctx, txn, kind, &changes, &nested)?)
    })?;
    Ok(document_response(201, inv, ctx))
}

pub fn update(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    raw: &str,
    req: &Request,
) -> Result<Response, ApiError> {
    let id = parse_id(raw, kind.label())?;
    {
        let txn = caps.store.begin_read()?;
        documents::load(txn.as_ref(), ctx.account_id, kind, id)?;
    }
    let mut changes = decode_changes(
        documents::fields(kind),
        &req.document()?,
        names(kind).singular,
    )?;
    // The invoice a credit note was made from is fixed at creation.
    changes.values.retain(|(n, _)| *n != "invoice_id");
    let inv = in_write(caps, |txn| {
        Ok(documents::update(ctx, txn, kind, id, &changes)?)
    })?;
    Ok(document_response(200, inv, ctx))
}

pub fn delete(caps: &Caps, ctx: &Ctx, kind: DocKind, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, kind.label())?;
    in_write(caps, |txn| Ok(documents::delete(ctx, txn, kind, id)?))?;
    Ok(Response::empty())
}

static COMPLETE_FIELDS: &[Field] = &[Field::new("template_id", Kind::Integer)];

static SIGNATURE_FIELDS: &[Field] = &[Field::new("base64file", Kind::File).mandatory()];

pub fn action(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    raw: &str,
    action: &str,
    req: &Request,
) -> Result<Response, ApiError> {
    let id = parse_id(raw, kind.label())?;
    let mut template_id = None;
    let body = req.optional_document()?;
    if let (Some(root), "complete") = (&body, action) {
        let changes = decode_changes(COMPLETE_FIELDS, root, "complete")?;
        if let Some((_, e)) = changes.invalid.first() {
            return Err(ApiError::bad(e.clone()));
        }
        template_id = match changes.get("template_id") {
            Some(Some(Scalar::Int(t))) if *t > 0 => Some(*t as u64),
            Some(Some(Scalar::Int(t))) => {
                return Err(ApiError::bad(format!("template_id {t} does not exist")));
            }
            _ => None,
        };
    }
    in_write(caps, |txn| {
        match action {
            "complete" => documents::complete(ctx, txn, caps.pdf, kind, id, template_id)?,
            "cancel" => documents::cancel(ctx, txn, kind, id)?,
            _ => documents::uncancel(ctx, txn, kind, id)?,
        };
        Ok(())
    })?;
    Ok(Response::empty())
}

/// `GET .../{id}/pdf`: the `pdf` record, or the bytes with `format=pdf` or
/// `Accept: application/pdf`; `type=print` and `type=signed` pick the other files.
pub fn pdf(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    raw: &str,
    req: &Request,
    query: &Query,
) -> Result<Response, ApiError> {
    let id = parse_id(raw, kind.label())?;
    let variant = match query.get("type").map(str::to_ascii_lowercase).as_deref() {
        None | Some("original") => pdfs::Variant::Original,
        Some("print") => pdfs::Variant::Print,
        Some("signed") => pdfs::Variant::Signed,
        Some(other) => {
            return Err(ApiError::bad(format!(
                "type must be print or signed, got \"{other}\""
            )));
        }
    };
    let txn = caps.store.begin_read()?;
    documents::load(txn.as_ref(), ctx.account_id, kind, id)?;
    if variant == pdfs::Variant::Print
        && !settings::load_stored(txn.as_ref(), ctx.account_id)?.bool("print_version")
    {
        return Err(ApiError::bad(
            "type=print needs the print version switched on (settings print_version=1)",
        ));
    }
    let label = kind.label();
    let file = pdfs::load(txn.as_ref(), ctx.account_id, kind.collection(), id, variant)?
        .ok_or_else(|| {
            ApiError::NotFound(match variant {
                pdfs::Variant::Signed => format!("{label} {id} has no signed PDF"),
                pdfs::Variant::Original | pdfs::Variant::Print => {
                    format!("{label} {id} has no PDF: it is a DRAFT")
                }
            })
        })?;
    let wants_bytes = query
        .get("format")
        .is_some_and(|f| f.eq_ignore_ascii_case("pdf"))
        || req
            .header("accept")
            .is_some_and(|a| a.to_ascii_lowercase().contains("application/pdf"));
    if wants_bytes {
        let disposition = format!("inline; filename=\"{}\"", file.filename.replace('"', ""));
        return Ok(Response {
            status: 200,
            headers: vec![
                ("content-type".into(), "application/pdf".into()),
                ("content-disposition".into(), disposition),
            ],
            payload: Payload::Bytes(file.content),
        });
    }
    let record = Element::node(
        "pdf",
        vec![
            Element::typed("id", ScalarType::Integer, file.id.to_string()),
            Element::typed(
                "created",
                ScalarType::DateTime,
                format_datetime(file.created),
            ),
            Element::typed(kind.parent_field(), ScalarType::Integer, id.to_string()),
            Element::text("filename", file.filename.clone()),
            Element::text("mimetype", "application/pdf"),
            Element::typed(
                "filesize",
                ScalarType::Integer,
                file.content.len().to_string(),
            ),
            Element::text("base64file", BASE64.encode(&file.content)),
        ],
    );
    Ok(Response::doc(200, record))
}

/// `PUT .../{id}/upload-signature`: a signed PDF kept beside the original.
pub fn upload_signature(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    raw: &str,
    req: &Request,
) -> Result<Response, ApiError> {
    let id = parse_id(raw, kind.label())?;
    {
        let txn = caps.store.begin_read()?;
        documents::load(txn.as_ref(), ctx.account_id, kind, id)?;
    }
    let changes = decode_changes(SIGNATURE_FIELDS, &req.document()?, "signature")?;
    let mut errors = changes.errors();
    check_mandatory(SIGNATURE_FIELDS, &changes, &mut errors);
    if !errors.is_empty() {
        return Err(ApiError::BadRequest(errors));
    }
    let file = changes
        .files
        .into_iter()
        .next()
        .map(|(_, b)| b)
        .unwrap_or_default();
    in_write(caps, |txn| Ok(documents::sign(ctx, txn, kind, id, file)?))?;
    Ok(Response::empty())
}

/// The mandatory `invoice_id` (`credit_note_id`) of a child list; the document must
/// exist in the account.
fn parent(caps: &Caps, ctx: &Ctx, kind: DocKind, query: &Query) -> Result<Document, ApiError> {
    let field = kind.parent_field();
    let id = query
        .id(field)?
        .ok_or_else(|| ApiError::bad(format!("{field} is mandatory")))?;
    let txn = caps.store.begin_read()?;
    Ok(documents::load(txn.as_ref(), ctx.account_id, kind, id)?)
}

fn page_of(query: &Query, plural: &str, children: Vec<Element>) -> Result<Response, ApiError> {
    let (page, per_page) = query.paging()?;
    let total = children.len();
    let start = (page as usize - 1).saturating_mul(per_page as usize);
    let children = children
        .into_iter()
        .skip(start)
        .take(per_page as usize)
        .collect();
    let root = Element::list(plural, children)
        .with_attr("page", page.to_string())
        .with_attr("per_page", per_page.to_string())
        .with_attr("total", total.to_string());
    let mut r = Response::doc(200, root);
    r.headers.push(("x-total-count".into(), total.to_string()));
    Ok(r)
}

// ---- items --------------------------------------------------------------------------

fn item_element(item: &items::Item, inv: &Document) -> Element {
    encode_record(
        items::fields(inv.kind),
        names(inv.kind).item,
        &items::to_record(item, inv),
        None,
    )
}

pub fn items_list(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    query: &Query,
) -> Result<Response, ApiError> {
    let inv = parent(caps, ctx, kind, query)?;
    let txn = caps.store.begin_read()?;
    let list = items::load_all(txn.as_ref(), ctx.account_id, kind, inv.id)?;
    page_of(
        query,
        names(kind).items,
        list.iter().map(|i| item_element(i, &inv)).collect(),
    )
}

pub fn item_get(caps: &Caps, ctx: &Ctx, kind: DocKind, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, &format!("{} item", kind.label()))?;
    let txn = caps.store.begin_read()?;
    let item = items::load(txn.as_ref(), ctx.account_id, kind, id)?;
    let inv = documents::load(txn.as_ref(), ctx.account_id, kind, item.document_id)?;
    Ok(Response::doc(200, item_element(&item, &inv)))
}

pub fn item_create(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    req: &Request,
) -> Result<Response, ApiError> {
    let changes = decode_changes(items::fields(kind), &req.document()?, names(kind).item)?;
    let (item, inv) = in_write(caps, |txn| Ok(items::create(ctx, txn, kind, &changes)?))?;
    Ok(Response::doc(201, item_element(&item, &inv)))
}

pub fn item_update(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    raw: &str,
    req: &Request,
) -> Result<Response, ApiError> {
    let id = parse_id(raw, &format!("{} item", kind.label()))?;
    {
        let txn = caps.store.begin_read()?;
        items::load(txn.as_ref(), ctx.account_id, kind, id)?;
    }
    let mut changes = decode_changes(items::fields(kind), &req.document()?, names(kind).item)?;
    // An item stays with its document.
    changes.values.retain(|(n, _)| *n != kind.parent_field());
    let (item, inv) = in_write(caps, |txn| Ok(items::update(ctx, txn, kind, id, &changes)?))?;
    Ok(Response::doc(200, item_element(&item, &inv)))
}

pub fn item_delete(caps: &Caps, ctx: &Ctx, kind: DocKind, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, &format!("{} item", kind.label()))?;
    in_write(caps, |txn| Ok(items::delete(ctx, txn, kind, id)?))?;
    Ok(Response::empty())
}

// ---- payments -----------------------------------------------------------------------

fn payment_element(kind: DocKind, p: &payments::Payment) -> Element {
    encode_record(
        payments::fields(kind),
        names(kind).payment,
        &payments::to_record(kind, p),
        None,
    )
}

pub fn payments_list(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    query: &Query,
) -> Result<Response, ApiError> {
    let inv = parent(caps, ctx, kind, query)?;
    let txn = caps.store.begin_read()?;
    let list = payments::list(txn.as_ref(), ctx.account_id, kind, inv.id)?;
    page_of(
        query,
        names(kind).payments,
        list.iter().map(|p| payment_element(kind, p)).collect(),
    )
}

pub fn payment_get(caps: &Caps, ctx: &Ctx, kind: DocKind, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, "payment")?;
    let txn = caps.store.begin_read()?;
    let p = payments::load(txn.as_ref(), ctx.account_id, kind, id)?;
    Ok(Response::doc(200, payment_element(kind, &p)))
}

pub fn payment_create(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    req: &Request,
) -> Result<Response, ApiError> {
    let changes = decode_changes(
        payments::fields(kind),
        &req.document()?,
        names(kind).payment,
    )?;
    let p = in_write(caps, |txn| Ok(payments::create(ctx, txn, kind, &changes)?))?;
    Ok(Response::doc(201, payment_element(kind, &p)))
}

pub fn payment_delete(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    raw: &str,
) -> Result<Response, ApiError> {
    let id = parse_id(raw, "payment")?;
    in_write(caps, |txn| Ok(payments::delete(ctx, txn, kind, id)?))?;
    Ok(Response::empty())
}

// ---- comments -----------------------------------------------------------------------

fn comment_fields(kind: DocKind) -> &'static [Field] {
    match kind {
        DocKind::Invoice => &comments::INVOICE_FIELDS,
        DocKind::CreditNote => &comments::CREDIT_NOTE_FIELDS,
    }
}

fn comment_element(kind: DocKind, c: &comments::Comment) -> Element {
    let record = comments::to_record(c, kind.parent_field());
    encode_record(comment_fields(kind), names(kind).comment, &record, None)
}

pub fn comments_list(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    query: &Query,
) -> Result<Response, ApiError> {
    let inv = parent(caps, ctx, kind, query)?;
    let txn = caps.store.begin_read()?;
    let list = comments::list(txn.as_ref(), ctx.account_id, kind.collection(), inv.id)?;
    page_of(
        query,
        names(kind).comments,
        list.iter().map(|c| comment_element(kind, c)).collect(),
    )
}

pub fn comment_get(caps: &Caps, ctx: &Ctx, kind: DocKind, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, "comment")?;
    let txn = caps.store.begin_read()?;
    let c = comments::load(txn.as_ref(), ctx.account_id, kind.collection(), id)?;
    Ok(Response::doc(200, comment_element(kind, &c)))
}

pub fn comment_create(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    req: &Request,
) -> Result<Response, ApiError> {
    let fields = comment_fields(kind);
    let changes = decode_changes(fields, &req.document()?, names(kind).comment)?;
    let mut errors = changes.errors();
    check_mandatory(fields, &changes, &mut errors);
    let parent_field = kind.parent_field();
    let doc_id = match changes.get(parent_field) {
        Some(Some(Scalar::Int(id))) => *id,
        _ => 0,
    };
    if !errors.is_empty() {
        return Err(ApiError::BadRequest(errors));
    }
    let c = in_write(caps, |txn| {
        match documents::load(txn.as_read(), ctx.account_id, kind, doc_id.max(0) as u64) {
            Err(Error::NotFound(_)) => {
                return Err(ApiError::bad(format!(
                    "{parent_field} {doc_id} does not exist"
                )));
            }
            other => other?,
        };
        Ok(comments::create(
            ctx,
            txn,
            kind.collection(),
            doc_id as u64,
            &changes,
        )?)
    })?;
    Ok(Response::doc(201, comment_element(kind, &c)))
}

pub fn comment_delete(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    raw: &str,
) -> Result<Response, ApiError> {
    let id = parse_id(raw, "comment")?;
    in_write(caps, |txn| {
        Ok(comments::delete(
            txn,
            ctx.account_id,
            kind.collection(),
            id,
        )?)
    })?;
    Ok(Response::empty())
}

// ---- tags ---------------------------------------------------------------------------

fn tag_element(kind: DocKind, t: &tags::Tag) -> Element {
    encode_record(
        tags::fields(kind),
        names(kind).tag,
        &tags::to_record(kind, t),
        None,
    )
}

pub fn tags_list(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    query: &Query,
) -> Result<Response, ApiError> {
    let inv = parent(caps, ctx, kind, query)?;
    let txn = caps.store.begin_read()?;
    let list = tags::list(txn.as_ref(), ctx.account_id, kind, inv.id)?;
    page_of(
        query,
        names(kind).tags,
        list.iter().map(|t| tag_element(kind, t)).collect(),
    )
}

pub fn tag_get(caps: &Caps, ctx: &Ctx, kind: DocKind, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, "tag")?;
    let txn = caps.store.begin_read()?;
    Ok(Response::doc(
        200,
        tag_element(kind, &tags::load(txn.as_ref(), ctx.account_id, kind, id)?),
    ))
}

pub fn tag_create(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    req: &Request,
) -> Result<Response, ApiError> {
    let changes = decode_changes(tags::fields(kind), &req.document()?, names(kind).tag)?;
    let t = in_write(caps, |txn| Ok(tags::create(ctx, txn, kind, &changes)?))?;
    Ok(Response::doc(201, tag_element(kind, &t)))
}

pub fn tag_delete(caps: &Caps, ctx: &Ctx, kind: DocKind, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, "tag")?;
    in_write(caps, |txn| Ok(tags::delete(ctx, txn, kind, id)?))?;
    Ok(Response::empty())
}

// ---- e-mail and post ----------------------------------------------------------------

/// Reads an `<email>` document: recipients (several `to`, `cc`, `bcc`, each possibly a
/// comma-separated list), texts and attachments.
pub fn decode_email(root: &Element) -> Result<EmailRequest, ApiError> {
    if root.name != "email" {
        return Err(ApiError::bad(format!(
            "expected an <email> root element, found <{}>",
            root.name
        )));
    }
    let mut errors = Vec::new();
    let text = |name: &str| {
        root.child(name)
            .and_then(Element::as_text)
            .map(str::to_owned)
    };
    let mut req = EmailRequest {
        from: text("from").filter(|s| !s.trim().is_empty()),
        subject: text("subject"),
        body: text("body"),
        filename: text("filename"),
        email_template_id: text("email_template_id")
            .filter(|t| !t.trim().is_empty())
            .map(|t| {
                t.trim().parse::<u64>().map_err(|_| {
                    ApiError::bad(format!("email_template_id must be an integer, got \"{t}\""))
                })
            })
            .transpose()?,
        ..EmailRequest::default()
    };
    if let Some(recipients) = root.child("recipients") {
        for r in recipients.children() {
            let list = match r.name.as_str() {
                "to" => &mut req.to,
                "cc" => &mut req.cc,
                "bcc" => &mut req.bcc,
                other => {
                    errors.push(format!("recipients take to, cc and bcc, not <{other}>"));
                    continue;
                }
            };
            list.extend(
                r.as_text()
                    .unwrap_or_default()
                    .split(',')
                    .map(str::trim)
                    .filter(|a| !a.is_empty())
                    .map(str::to_owned),
            );
        }
    }
    if let Some(attachments) = root.child("attachments") {
        for a in attachments.children() {
            let field = |name: &str| a.child(name).and_then(Element::as_text).unwrap_or_default();
            match super::records::decode_base64(field("base64file")) {
                Some(content) if !content.is_empty() => req.attachments.push(Attachment {
                    filename: field("filename").to_owned(),
                    mimetype: match field("mimetype").trim() {
                        "" => "application/octet-stream".to_owned(),
                        m => m.to_owned(),
                    },
                    content,
                }),
                _ => errors.push(format!(
                    "attachment \"{}\": base64file is missing or not valid base64",
                    field("filename")
                )),
            }
        }
    }
    if errors.is_empty() {
        Ok(req)
    } else {
        Err(ApiError::BadRequest(errors))
    }
}

/// `POST .../{id}/email`.
pub fn email(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    raw: &str,
    req: &Request,
) -> Result<Response, ApiError> {
    let id = parse_id(raw, kind.label())?;
    {
        let txn = caps.store.begin_read()?;
        documents::load(txn.as_ref(), ctx.account_id, kind, id)?;
    }
    let email = decode_email(&req.document()?)?;
    in_write(caps, |txn| {
        Ok(emails::send(ctx, txn, caps.mail, kind, id, email)?)
    })?;
    Ok(Response::empty())
}

static MAIL_FIELDS: &[Field] = &[
    Field::new("color", Kind::Bool),
    Field::new("duplex", Kind::Bool),
    Field::new("paper_weight", Kind::Integer),
];

/// `POST /api/credit-notes/{id}/mail`: the PDF and PDF attachments as a letter.
pub fn post(
    caps: &Caps,
    ctx: &Ctx,
    kind: DocKind,
    raw: &str,
    req: &Request,
) -> Result<Response, ApiError> {
    let id = parse_id(raw, kind.label())?;
    {
        let txn = caps.store.begin_read()?;
        documents::load(txn.as_ref(), ctx.account_id, kind, id)?;
    }
    let root = req.optional_document()?;
    let mut letter = LetterRequest::default();
    if let Some(root) = &root {
        if root.name != "mail" {
            return Err(ApiError::bad(format!(
                "expected a <mail> root element, found <{}>",
                root.name
            )));
        }
        let changes = decode_changes(MAIL_FIELDS, root, "mail")?;
        let mut errors = changes.errors();
        if let Some(Some(Scalar::Bool(b))) = changes.get("color") {
            letter.color = *b;
        }
        if let Some(Some(Scalar::Bool(b))) = changes.get("duplex") {
            letter.duplex = *b;
        }
        if let Some(Some(Scalar::Int(w))) = changes.get("paper_weight") {
            match u32::try_from(*w) {
                Ok(w @ (80 | 90)) => letter.paper_weight = w,
                _ => errors.push(format!("paper_weight must be 80 or 90, got {w}")),
            }
        }
        if let Some(list) = root.child("attachments") {
            for a in list.children() {
                let field =
                    |name: &str| a.child(name).and_then(Element::as_text).unwrap_or_default();
                if let Some(problem) =
                    documents::filename_problem("attachment filename", field("filename"))
                {
                    errors.push(problem);
                    continue;
                }
                match super::records::decode_base64(field("base64file")) {
                    Some(content) if content.starts_with(b"%PDF-") => {
                        letter.attachments.push(Attachment {
                            filename: field("filename").to_owned(),
                            mimetype: "application/pdf".into(),
                            content,
                        })
                    }
                    Some(_) => errors.push(format!(
                        "attachment \"{}\" is not a PDF file",
                        field("filename")
                    )),
                    None => errors.push(format!(
                        "attachment \"{}\": base64file is not valid base64",
                        field("filename")
                    )),
                }
            }
        }
        if !errors.is_empty() {
            return Err(ApiError::BadRequest(errors));
        }
    }
    in_write(caps, |txn| {
        emails::post(ctx, txn, caps.mail, kind, id, letter).map_err(|e| match e {
            Error::Invalid(m) => ApiError::BadRequest(m),
            other => ApiError::from(other),
        })
    })?;
    Ok(Response::empty())
}
