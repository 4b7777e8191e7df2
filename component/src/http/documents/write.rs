//! The writer of documents (one, or a page of a list): the payload `Documents`, which
//! `http::encode` writes in the negotiated format. Every writer walks a document's fields
//! once, in the order of its kind's field table (`documents::fields`), with its taxes after
//! `quote` (or last).
//!
//! XML is written straight into the response. A page of several documents, the hottest
//! answer of the API, is written by field index through the start and end tags of the
//! kind's fields rendered once per response (`FieldTags`), each value formatted in place;
//! the buffer for the whole page is reserved after the first document. Anything else (one
//! document, JSON) goes field by field by name through `Emit`.

use crate::codec::{Emit, FieldTags, ScalarType, StaticAttrs, Text, XmlWriter};
use crate::domain::date::Date;
use crate::domain::documents::{DocField, DocKind, Document, Get};
use crate::domain::grouping::Group;
use crate::domain::schema::{Field, Kind, Scalar, Value};

use super::super::records::scalar_type;
use super::{Names, names};

/// Groups of documents to answer (`group_by`): one list, or one per currency inside a list
/// of lists.
pub struct Groups {
    pub kind: DocKind,
    pub by_currency: Vec<(String, Vec<Group>)>,
}

/// The fields of a group before its keys.
const GROUP_SUMS: [(&str, StaticAttrs); 3] = [
    ("total_gross", ScalarType::Float.attrs()),
    ("total_net", ScalarType::Float.attrs()),
    ("count", ScalarType::Integer.attrs()),
];

/// The `type=` attributes of a group key's value.
fn key_attrs(v: &Scalar) -> StaticAttrs {
    match v {
        Scalar::Int(_) => ScalarType::Integer.attrs(),
        Scalar::Date(_) => ScalarType::Date.attrs(),
        Scalar::Text(_) | Scalar::Dec(_) | Scalar::DateTime(_) | Scalar::Bool(_) => &[],
    }
}

impl Groups {
    /// Writes the groups as XML: the fields of every group by index into tags rendered
    /// once per list (a grouping by client and month writes thousands of groups).
    pub fn write_xml(&self, x: &mut XmlWriter) {
        self.write(x, &mut |x: &mut XmlWriter, n: &Names, groups: &[Group]| {
            let Some(first) = groups.first() else {
                return;
            };
            let keys = || first.keys.iter().map(|(name, v)| (*name, key_attrs(v)));
            let mut out = ByIndex {
                outer: FieldTags::new(x.depth(), GROUP_SUMS.into_iter().chain(keys())),
                inner: FieldTags::new(x.depth() + 1, keys()),
                x,
            };
            let before = out.x.written();
            write_group(n, first, &mut out);
            // The others are about as long as the first.
            let each = out.x.written() - before;
            out.x.reserve((groups.len() - 1) * (each + each / 8));
            for g in &groups[1..] {
                write_group(n, g, &mut out);
            }
        });
    }

    /// Writes the groups through any writer (JSON).
    pub fn emit(&self, e: &mut dyn Emit) {
        self.write(e, &mut |e, n, groups| {
            let mut out = ByName::new(e);
            for g in groups {
                write_group(n, g, &mut out);
            }
        });
    }

    /// Writes the lists, the groups of each by `list`.
    fn write<E: Emit + ?Sized>(&self, e: &mut E, list: &mut dyn FnMut(&mut E, &Names, &[Group])) {
        let n = names(self.kind);
        let several = self.by_currency.len() > 1;
        if several {
            e.open(n.group_lists, &[("type", "array")]);
        }
        for (currency, groups) in &self.by_currency {
            e.open(
                n.groups,
                &[("type", "array"), ("currency_code", currency.as_str())],
            );
            list(e, n, groups);
            e.close();
        }
        if several {
            e.close();
        } else if self.by_currency.is_empty() {
            e.open(n.groups, &[("type", "array")]);
            e.close();
        }
    }
}

/// Writes one group: its sums, its key values, and the key values again as parameters.
fn write_group(n: &Names, g: &Group, out: &mut impl DocumentOut) {
    out.open(n.group, &[]);
    let sums = [
        Value::Dec(g.total_gross),
        Value::Dec(g.total_net),
        Value::Int(g.count as i64),
    ];
    for (i, ((name, attrs), v)) in GROUP_SUMS.into_iter().zip(sums).enumerate() {
        out.field(FieldList::Outer, i, name, attrs, Some(v));
    }
    for (i, (name, v)) in g.keys.iter().enumerate() {
        let at = GROUP_SUMS.len() + i;
        out.field(FieldList::Outer, at, name, key_attrs(v), Some(v.as_value()));
    }
    out.open(n.params, &[]);
    for (i, (name, v)) in g.keys.iter().enumerate() {
        out.field(FieldList::Inner, i, name, key_attrs(v), Some(v.as_value()));
    }
    out.close();
    out.close();
}

/// Documents to answer: one, or a page of a list with its root element's attributes.
pub struct Documents {
    pub docs: Vec<Document>,
    pub list: Option<ListHead>,
    pub today: Date,
}

/// The root of a page: `<invoices type="array" page=".." per_page=".." total="..">`.
pub struct ListHead {
    pub plural: &'static str,
    pub page: u32,
    pub per_page: u32,
    pub total: usize,
}

impl Documents {
    /// Writes the answer as XML.
    pub fn write_xml(&self, x: &mut XmlWriter) {
        self.in_list(x, |x| write_xml_documents(&self.docs, self.today, x));
    }

    /// Writes the answer through any writer (JSON).
    pub fn emit(&self, e: &mut dyn Emit) {
        self.in_list(e, |e| {
            let mut out = ByName::new(e);
            for doc in &self.docs {
                write_document(doc, self.today, &mut out);
            }
        });
    }

    fn in_list<E: Emit + ?Sized>(&self, e: &mut E, body: impl FnOnce(&mut E)) {
        let Some(head) = &self.list else {
            return body(e);
        };
        let (page, per_page, total) = (
            head.page.to_string(),
            head.per_page.to_string(),
            head.total.to_string(),
        );
        e.open(
            head.plural,
            &[
                ("type", "array"),
                ("page", &page),
                ("per_page", &per_page),
                ("total", &total),
            ],
        );
        body(e);
        e.close();
    }
}

/// A response field as written: name, `type=` attribute, getter, and whether the taxes
/// follow it.
#[derive(Clone, Copy)]
struct WireField {
    name: &'static str,
    attrs: StaticAttrs,
    get: Get,
    taxes_after: bool,
}

/// The written fields of a kind (files left out), worked out when the component is
/// compiled from the kind's field table: a table built at run time would be built again in
/// every instance.
fn wire_fields(kind: DocKind) -> &'static [WireField] {
    const fn count(table: &[DocField]) -> usize {
        let (mut n, mut i) = (0, 0);
        while i < table.len() {
            if !matches!(table[i].field.kind, Kind::File) {
                n += 1;
            }
            i += 1;
        }
        n
    }
    const fn written<const N: usize>(table: &[DocField]) -> [WireField; N] {
        const NONE: WireField = WireField {
            name: "",
            attrs: &[],
            get: Get::Id,
            taxes_after: false,
        };
        let mut out = [NONE; N];
        let (mut n, mut i) = (0, 0);
        let mut taxes_placed = false;
        while i < table.len() {
            let f: &Field = &table[i].field;
            if !matches!(f.kind, Kind::File) {
                let get = table[i].get;
                let taxes_after = matches!(get, Get::Quote);
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
    use crate::domain::documents::fields::{
        CONFIRMATION, CREDIT_NOTE, DELIVERY_NOTE, INVOICE, OFFER, RECURRING, REMINDER,
    };
    static INVOICE_WIRE: [WireField; count(INVOICE)] = written(INVOICE);
    static CREDIT_NOTE_WIRE: [WireField; count(CREDIT_NOTE)] = written(CREDIT_NOTE);
    static OFFER_WIRE: [WireField; count(OFFER)] = written(OFFER);
    static CONFIRMATION_WIRE: [WireField; count(CONFIRMATION)] = written(CONFIRMATION);
    static DELIVERY_NOTE_WIRE: [WireField; count(DELIVERY_NOTE)] = written(DELIVERY_NOTE);
    static RECURRING_WIRE: [WireField; count(RECURRING)] = written(RECURRING);
    static REMINDER_WIRE: [WireField; count(REMINDER)] = written(REMINDER);
    match kind {
        DocKind::Invoice => &INVOICE_WIRE,
        DocKind::CreditNote => &CREDIT_NOTE_WIRE,
        DocKind::Offer => &OFFER_WIRE,
        DocKind::Confirmation => &CONFIRMATION_WIRE,
        DocKind::DeliveryNote => &DELIVERY_NOTE_WIRE,
        DocKind::Recurring => &RECURRING_WIRE,
        DocKind::Reminder => &REMINDER_WIRE,
    }
}

/// Writes documents one after the other into the XML writer: a page of several by index
/// into tags rendered once, one by name.
fn write_xml_documents(found: &[Document], today: Date, x: &mut XmlWriter) {
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
        outer: FieldTags::new(
            x.depth(),
            wire_fields(first.kind).iter().map(|f| (f.name, f.attrs)),
        ),
        // Below <invoice><taxes><tax>.
        inner: FieldTags::new(x.depth() + 2, TAX_FIELDS.iter().copied()),
        x,
    };
    let before = out.x.written();
    write_document(first, today, &mut out);
    // The others are about as long as the first.
    let each = out.x.written() - before;
    out.x.reserve(rest.len() * (each + each / 8));
    for doc in rest {
        write_document(doc, today, &mut out);
    }
}

/// The fields of a tax.
const TAX_FIELDS: [(&str, StaticAttrs); 3] = [
    ("name", &[]),
    ("rate", ScalarType::Float.attrs()),
    ("amount", ScalarType::Float.attrs()),
];

/// Which list of tags a field is of: a document's fields (`wire_fields`) or a group's,
/// and those of the elements inside (a tax's fields, a group's parameters).
#[derive(Clone, Copy)]
enum FieldList {
    Outer,
    Inner,
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
    outer: FieldTags,
    inner: FieldTags,
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
            FieldList::Outer => &self.outer,
            FieldList::Inner => &self.inner,
        };
        match value {
            Some(Value::Text(t)) => self.x.tagged(tags, i, t),
            Some(v) => self.x.tagged_with(tags, i, |out| v.push_to(out)),
            None => self.x.tagged(tags, i, ""),
        }
    }
}

/// Writes a document in response order, its taxes after `quote` (or last).
fn write_document(doc: &Document, today: Date, out: &mut impl DocumentOut) {
    out.open(names(doc.kind).singular, &[]);
    for (i, f) in wire_fields(doc.kind).iter().enumerate() {
        out.field(FieldList::Outer, i, f.name, f.attrs, f.get.get(doc, today));
        if f.taxes_after {
            let [name, rate, amount] = TAX_FIELDS;
            out.open("taxes", &[("type", "array")]);
            for t in &doc.taxes {
                out.open("tax", &[]);
                out.field(
                    FieldList::Inner,
                    0,
                    name.0,
                    name.1,
                    Some(Value::Text(&t.name)),
                );
                out.field(
                    FieldList::Inner,
                    1,
                    rate.0,
                    rate.1,
                    Some(Value::Dec(t.rate)),
                );
                out.field(
                    FieldList::Inner,
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
pub(super) struct ValueWriter {
    wire: Vec<u8>,
}

impl ValueWriter {
    pub(super) fn emit<E: Emit + ?Sized>(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{TreeBuilder, encode_xml};
    use rust_decimal::Decimal;

    use crate::domain::documents::model_sample as sample;

    /// A page of several documents written by index into rendered tags is exactly the page
    /// written through the tree of `Element`s and the plain XML encoder, for both kinds.
    #[test]
    fn a_page_written_by_index_equals_the_tree_encoding() {
        for kind in DocKind::ALL {
            let page = Documents {
                docs: (1..=5).map(|id| sample(kind, id)).collect(),
                list: Some(ListHead {
                    plural: names(kind).plural,
                    page: 1,
                    per_page: 100,
                    total: 5,
                }),
                today: Date::parse("2026-11-24").unwrap(),
            };
            let mut fast = XmlWriter::new();
            page.write_xml(&mut fast);
            let mut tree = TreeBuilder::new();
            page.emit(&mut tree);
            let fast = String::from_utf8(fast.finish()).unwrap();
            assert_eq!(fast, String::from_utf8(encode_xml(&tree.finish())).unwrap());
            assert!(fast.contains("<taxes type=\"array\">"), "{fast}");
            assert_eq!(fast.matches("<tax>").count(), 5);
            for f in wire_fields(kind) {
                assert!(
                    fast.contains(&format!("<{}", f.name)),
                    "{kind:?} {} missing",
                    f.name
                );
            }
        }
    }

    /// Groups written by index into rendered tags are exactly the groups written through
    /// the tree and the plain XML encoder: one list, several currencies, and none.
    #[test]
    fn groups_written_by_index_equal_the_tree_encoding() {
        let group = |client: i64, month: &str, day: &str| Group {
            keys: vec![
                ("client_id", Scalar::Int(client)),
                ("month", Scalar::Text(month.into())),
                ("day", Scalar::Date(Date::parse(day).unwrap())),
            ],
            total_net: Decimal::new(10050, 2),
            total_gross: Decimal::new(11960, 2),
            count: 3,
        };
        let eur = vec![
            group(1, "2026-10", "2026-10-02"),
            group(2, "2026-11", "2026-11-03"),
        ];
        let usd = vec![group(7, "2025-01", "2025-01-31")];
        for by_currency in [
            vec![("EUR".to_owned(), eur.clone())],
            vec![("EUR".to_owned(), eur), ("USD".to_owned(), usd)],
            Vec::new(),
        ] {
            let groups = Groups {
                kind: DocKind::Invoice,
                by_currency,
            };
            let mut fast = XmlWriter::new();
            groups.write_xml(&mut fast);
            let mut tree = TreeBuilder::new();
            groups.emit(&mut tree);
            let fast = String::from_utf8(fast.finish()).unwrap();
            assert_eq!(fast, String::from_utf8(encode_xml(&tree.finish())).unwrap());
        }
    }
}
