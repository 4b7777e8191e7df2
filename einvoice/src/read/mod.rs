//! The reader of incoming e-invoices: UN/CEFACT CII (`rsm:CrossIndustryInvoice`, as
//! Factur-X / ZUGFeRD 2.x in every profile and XRechnung use it), ZUGFeRD 1.0
//! (`CrossIndustryDocument`, read where it maps onto CII) and OASIS UBL 2.1 `Invoice` and
//! `CreditNote`, into the EN 16931 model (`model`) that `cii` and `ubl` write.
//!
//! The input comes from anyone. A document type declaration is refused before anything
//! else is read, so entity definitions (billion laughs, external entities) never reach a
//! parser; only the five predefined entities and character references are resolved.
//! Elements nest at most `limits::XML_DEPTH_MAX` deep. The document is read once, front
//! to back, by a pull parser (quick-xml), and every element costs a bounded amount of work
//! besides its own bytes: reading takes time linear in the input, and nothing is sized
//! from a number the input states.
//!
//! Elements are matched by namespace and local name, never by prefix: each element's name
//! is looked up in the vocabulary of its namespace (`intern`), and a term is the path of
//! such names below the root. An element of another namespace, or one the model has no
//! term for, is skipped with everything inside it.
//!
//! The reader maps; it does not judge (`rules` does), but for the codes: where the code-list
//! rules of EN 16931 (BR-CL) bind a value, `codes` keeps those outside their lists, which
//! `rules::code_lists` reports (the lists are only there at reading). A missing term stays empty, `None`
//! or zero; what cannot be read as the model needs it (an amount that is no decimal
//! number, a date that does not exist, an unknown VAT category) is `Malformed`, naming
//! the element. Two terms the model cannot leave empty are refused when missing: the issue
//! date (BT-2), and the VAT category of a breakdown, line, allowance or charge, except in
//! ZUGFeRD 1.0, whose BASIC profile states no categories (see `Builder::finish`).
//!
//! The syntaxes differ in their vocabularies and in where each term is: `cii` and `ubl`
//! hold those, term by term, and never read XML themselves. What they share is here: the
//! entry point `read`, the XML events, the names of the elements, and the `Builder` of the
//! model with the ways a term's value is read (a decimal, a category, a date).

mod cii;
mod codes;
#[cfg(test)]
mod tests;
mod ubl;

use quick_xml::XmlVersion;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;
use rust_decimal::Decimal;
use time::Date;

use crate::codes::Coded;
use crate::limits::XML_DEPTH_MAX;
use crate::model::{
    Address, AllowanceCharge, Category, CreditTransfer, DirectDebit, Invoice, Line, LineAllowance,
    Party, Payment, Totals, VatBreakdown,
};
use cii::{DATA_TYPES, RAM, RAM_ALIASES, RSM, RSM_ALIASES};
use codes::{CodeAttrs, Scan};
use ubl::{CAC, CBC};

/// The syntax an e-invoice was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// UN/CEFACT CII (D16B, as Factur-X, ZUGFeRD 2.x and XRechnung use it) or ZUGFeRD 1.0.
    Cii,
    /// OASIS UBL 2.1, `Invoice` or `CreditNote`.
    Ubl,
}

/// An e-invoice as it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub invoice: Invoice,
    pub syntax: Syntax,
    /// BT-24 as found (empty when the document states none).
    pub specification: String,
    /// The coded values outside the code lists of the CEN rules that bind them (BR-CL), in
    /// document order, at most `limits::UNLISTED_MAX`; none are looked for in ZUGFeRD 1.0,
    /// whose namespaces those rules do not bind.
    pub unlisted: Vec<Coded>,
}

/// Why a document could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Not well-formed XML in UTF-8: where and why.
    NotXml(String),
    /// The document has a document type declaration, which is refused.
    Dtd,
    /// Elements nest deeper than `XML_DEPTH_MAX`.
    TooDeep,
    /// XML of another kind: its root element, `{namespace}name` when the element has a
    /// namespace. Decided at the root element; nothing after it is read.
    NotAnInvoice(String),
    /// An e-invoice with a term that cannot be read: the element (its path below the
    /// root) and why.
    Malformed(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotXml(why) => write!(f, "not well-formed XML: {why}"),
            ReadError::Dtd => f.write_str("document type declarations (DOCTYPE) are not allowed"),
            ReadError::TooDeep => write!(f, "elements nest deeper than {XML_DEPTH_MAX} levels"),
            ReadError::NotAnInvoice(root) => {
                write!(f, "not a CII or UBL e-invoice (root element {root})")
            }
            ReadError::Malformed(why) => write!(f, "malformed e-invoice: {why}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads the e-invoice in `xml`.
pub fn read(xml: &[u8]) -> Result<Read, ReadError> {
    if declares_doctype(xml) {
        return Err(ReadError::Dtd);
    }
    let text = std::str::from_utf8(xml).map_err(|e| {
        ReadError::NotXml(format!(
            "the document is not UTF-8 (at byte {})",
            e.valid_up_to()
        ))
    })?;
    let mut reader = NsReader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut parse = Parse::default();
    loop {
        let before_root = parse.builder.is_none();
        let result = reader.read_resolved_event().map(|(resolved, event)| {
            // The root's namespace, kept for the message should it be no invoice.
            let uri = match (&resolved, &event) {
                (ResolveResult::Bound(ns), Event::Start(_) | Event::Empty(_)) if before_root => {
                    Some(shorten(ns.into_inner()).to_owned())
                }
                _ => None,
            };
            (namespace(&resolved), uri, event)
        });
        let (ns, uri, event) = match result {
            Ok(read) => read,
            Err(e) => {
                return Err(ReadError::NotXml(format!(
                    "at byte {}: {e}",
                    reader.error_position()
                )));
            }
        };
        match event {
            Event::Start(e) => parse.open(&e, ns, uri.as_deref())?,
            Event::Empty(e) => {
                parse.open(&e, ns, uri.as_deref())?;
                parse.close()?;
            }
            Event::End(_) => parse.close()?,
            Event::Text(t) => parse.text(&t.xml10_content())?,
            Event::CData(c) => parse.text(&c.xml10_content())?,
            Event::GeneralRef(r) => {
                let c = reference(&r)?;
                parse.text(c.encode_utf8(&mut [0; 4]))?;
            }
            Event::DocType(_) => return Err(ReadError::Dtd),
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
            Event::Eof => break,
        }
    }
    parse.finish()
}

/// Whether the prolog (before the root element) holds a document type declaration: what
/// comes before it may only be a byte order mark, white space, the XML declaration,
/// processing instructions and comments. Looked for in the bytes, before anything else.
fn declares_doctype(xml: &[u8]) -> bool {
    let mut rest = xml.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(xml);
    loop {
        let start = rest
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
            .unwrap_or(rest.len());
        rest = &rest[start..];
        if rest
            .get(..9)
            .is_some_and(|p| p.eq_ignore_ascii_case(b"<!DOCTYPE"))
        {
            return true;
        }
        let (open, close): (&[u8], &[u8]) = if rest.starts_with(b"<?") {
            (b"<?", b"?>")
        } else if rest.starts_with(b"<!--") {
            (b"<!--", b"-->")
        } else {
            return false;
        };
        let body = &rest[open.len()..];
        match body.windows(close.len()).position(|w| w == close) {
            Some(i) => rest = &body[i + close.len()..],
            None => return false,
        }
    }
}

/// The character of an entity or character reference.
fn reference(r: &BytesRef<'_>) -> Result<char, ReadError> {
    let resolved = if r.is_char_ref() {
        r.resolve_char_ref().ok().flatten()
    } else {
        quick_xml::escape::resolve_xml_entity(r).and_then(|s| s.chars().next())
    };
    resolved.ok_or_else(|| {
        ReadError::NotXml(format!(
            "&{};: only character references (to characters) and the five predefined entities are resolved",
            shorten(r)
        ))
    })
}

/// How many characters of a value messages show.
const SHOWN: usize = 100;

/// At most `SHOWN` characters of `s`, for a message.
fn shorten(s: &str) -> &str {
    match s.char_indices().nth(SHOWN) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `s` without leading and trailing XML white space.
fn trim(s: &str) -> &str {
    s.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'))
}

/// The date `YYYY-MM-DD`, exactly so, if it exists (2026-02-30 does not).
pub(crate) fn iso_date(s: &str) -> Option<Date> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u16> {
        s.get(r.clone())
            .filter(|p| p.bytes().all(|c| c.is_ascii_digit()))?
            .parse()
            .ok()
    };
    let year = i32::from(digits(0..4)?);
    let month = time::Month::try_from(u8::try_from(digits(5..7)?).ok()?).ok()?;
    let day = u8::try_from(digits(8..10)?).ok()?;
    Date::from_calendar_date(year, month, day).ok()
}

// ---------------------------------------------------------------------------------------
// Namespaces and names

const CII: &str = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100";
const ZUGFERD_1: &str = "urn:ferd:CrossIndustryDocument:invoice:1p0";
const UBL_INVOICE: &str = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2";
const UBL_CREDIT_NOTE: &str = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2";

/// The namespaces the reader knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ns {
    /// `rsm` of CII D16B.
    Cii,
    /// `rsm` of ZUGFeRD 1.0.
    Zugferd1,
    UblInvoice,
    UblCreditNote,
    /// `ram` of CII D16B (`:100`) or of ZUGFeRD 1.0 (`:12`).
    Ram,
    /// `udt` or `qdt` of either.
    DataType,
    Cac,
    Cbc,
    Other,
}

fn namespace(resolved: &ResolveResult<'_>) -> Ns {
    let ResolveResult::Bound(ns) = resolved else {
        return Ns::Other;
    };
    match ns.into_inner() {
        CII => Ns::Cii,
        ZUGFERD_1 => Ns::Zugferd1,
        UBL_INVOICE => Ns::UblInvoice,
        UBL_CREDIT_NOTE => Ns::UblCreditNote,
        "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
        | "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12" => {
            Ns::Ram
        }
        "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100"
        | "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:15"
        | "urn:un:unece:uncefact:data:standard:QualifiedDataType:100"
        | "urn:un:unece:uncefact:data:standard:QualifiedDataType:12" => Ns::DataType,
        "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" => Ns::Cac,
        "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2" => Ns::Cbc,
        _ => Ns::Other,
    }
}

/// The name of the root element on the stack.
const ROOT: &str = "/";
/// The name of an element the reader does not know (its contents are skipped).
const UNKNOWN: &str = "";

/// The name the reader knows an element of namespace `ns` and local name `local` by in a
/// document of `syntax`, or `UNKNOWN`.
fn intern(syntax: Syntax, ns: Ns, local: &str) -> &'static str {
    let (names, aliases): (&[&'static str], &[(&str, &'static str)]) = match (syntax, ns) {
        (Syntax::Cii, Ns::Cii | Ns::Zugferd1) => (RSM, RSM_ALIASES),
        (Syntax::Cii, Ns::Ram) => (RAM, RAM_ALIASES),
        (Syntax::Cii, Ns::DataType) => (DATA_TYPES, &[]),
        (Syntax::Ubl, Ns::Cac) => (CAC, &[]),
        (Syntax::Ubl, Ns::Cbc) => (CBC, &[]),
        _ => return UNKNOWN,
    };
    match names.binary_search_by(|n| (*n).cmp(local)) {
        Ok(i) => names[i],
        Err(_) => aliases
            .iter()
            .find(|(alias, _)| *alias == local)
            .map_or(UNKNOWN, |(_, name)| name),
    }
}

// ---------------------------------------------------------------------------------------
// The document, event by event

/// The attributes of the element opened last that terms need.
#[derive(Debug, Default)]
struct Attrs {
    scheme_id: Option<String>,
    unit_code: Option<String>,
    format: Option<String>,
    currency_id: Option<String>,
    /// `name` of UBL's `cbc:PaymentMeansCode` (BT-82).
    name: Option<String>,
}

impl Attrs {
    fn scheme(&self) -> Option<&str> {
        self.scheme_id.as_deref().map(trim)
    }
}

#[derive(Default)]
struct Parse {
    /// The names of the open elements, `ROOT` first.
    stack: Vec<&'static str>,
    /// The text of the element opened or closed last.
    text: String,
    attrs: Attrs,
    /// Made when the root element is an e-invoice.
    builder: Option<Builder>,
    /// The code-list scan, made with the builder (but for ZUGFeRD 1.0).
    scan: Option<Scan>,
    /// The root element has ended.
    ended: bool,
}

impl Parse {
    fn open(&mut self, e: &BytesStart<'_>, ns: Ns, uri: Option<&str>) -> Result<(), ReadError> {
        if self.ended {
            return Err(ReadError::NotXml(
                "an element after the root element".into(),
            ));
        }
        if self.stack.len() >= XML_DEPTH_MAX {
            return Err(ReadError::TooDeep);
        }
        let qname = e.name();
        let local = qname.local_name().into_inner();
        let name = match (&self.builder, self.stack.last()) {
            (None, _) => {
                self.open_root(ns, local, qname.into_inner(), uri)?;
                ROOT
            }
            (Some(_), Some(&UNKNOWN)) => UNKNOWN,
            (Some(b), _) => intern(b.syntax, ns, local),
        };
        self.stack.push(name);
        self.text.clear();
        self.attrs = Attrs::default();
        let mut codes = self.read_attributes(e, name)?;
        if let Some(scan) = &mut self.scan {
            if name != UNKNOWN && name != ROOT {
                codes.scheme_id.clone_from(&self.attrs.scheme_id);
                codes.unit_code.clone_from(&self.attrs.unit_code);
                codes.currency_id.clone_from(&self.attrs.currency_id);
            }
            scan.open(ns, local, codes);
        }
        if name != UNKNOWN
            && let Some(b) = &mut self.builder
            && let Some(path) = self.stack.get(1..)
            && !path.is_empty()
        {
            b.start(path);
        }
        Ok(())
    }

    /// The root element opens: the e-invoice's syntax decides the builder and the
    /// code-list scan; any other root is `NotAnInvoice`.
    fn open_root(
        &mut self,
        ns: Ns,
        local: &str,
        qname: &str,
        uri: Option<&str>,
    ) -> Result<(), ReadError> {
        let (syntax, zugferd1) = match (ns, local) {
            (Ns::Cii, "CrossIndustryInvoice") => (Syntax::Cii, false),
            (Ns::Zugferd1, "CrossIndustryDocument") => (Syntax::Cii, true),
            (Ns::UblInvoice, "Invoice") | (Ns::UblCreditNote, "CreditNote") => (Syntax::Ubl, false),
            _ => {
                return Err(ReadError::NotAnInvoice(match uri {
                    Some(uri) => format!("{{{uri}}}{}", shorten(local)),
                    None => shorten(qname).to_owned(),
                }));
            }
        };
        self.builder = Some(Builder::new(syntax, zugferd1));
        self.scan = (!zugferd1).then(|| Scan::new(syntax));
        Ok(())
    }

    /// The attributes of element `name` that terms read (into `self.attrs`), and those
    /// the code-list rules read of elements the model has no term for (returned).
    fn read_attributes(
        &mut self,
        e: &BytesStart<'_>,
        name: &'static str,
    ) -> Result<CodeAttrs, ReadError> {
        let scanned = self.scan.is_some();
        let mut codes = CodeAttrs::default();
        let mut attributes = e.attributes();
        attributes.with_checks(false);
        for attr in attributes {
            let attr =
                attr.map_err(|err| ReadError::NotXml(format!("a malformed attribute: {err}")))?;
            let termed = name != UNKNOWN && name != ROOT;
            let slot = match attr.key.into_inner() {
                "schemeID" if termed => &mut self.attrs.scheme_id,
                "unitCode" if termed => &mut self.attrs.unit_code,
                "format" if termed => &mut self.attrs.format,
                "currencyID" if termed => &mut self.attrs.currency_id,
                "name" if termed => &mut self.attrs.name,
                "schemeID" if scanned => &mut codes.scheme_id,
                "unitCode" if scanned => &mut codes.unit_code,
                "currencyID" if scanned => &mut codes.currency_id,
                "mimeCode" if scanned => &mut codes.mime_code,
                "listID" if scanned => &mut codes.list_id,
                _ => continue,
            };
            if slot.is_none() {
                let value = attr
                    .normalized_value(XmlVersion::Implicit1_0)
                    .map_err(|err| ReadError::NotXml(format!("a malformed attribute: {err}")))?;
                *slot = Some(value.into_owned());
            }
        }
        Ok(codes)
    }

    fn close(&mut self) -> Result<(), ReadError> {
        let Some(&name) = self.stack.last() else {
            return Err(ReadError::NotXml("an end tag without its start tag".into()));
        };
        if let Some(scan) = &mut self.scan {
            scan.close();
        }
        if name != UNKNOWN
            && let Some(b) = &mut self.builder
            && let Some(path) = self.stack.get(1..)
            && !path.is_empty()
        {
            b.end(path, trim(&self.text), &self.attrs)
                .map_err(|why| ReadError::Malformed(format!("{}: {why}", path.join("/"))))?;
        }
        self.stack.pop();
        self.text.clear();
        if self.stack.is_empty() {
            self.ended = true;
        }
        Ok(())
    }

    fn text(&mut self, s: &str) -> Result<(), ReadError> {
        if let Some(scan) = &mut self.scan
            && !self.stack.is_empty()
        {
            scan.text(s);
        }
        match self.stack.last() {
            None if !trim(s).is_empty() => {
                Err(ReadError::NotXml("text outside the root element".into()))
            }
            None | Some(&UNKNOWN) => Ok(()),
            Some(_) => {
                self.text.push_str(s);
                Ok(())
            }
        }
    }

    fn finish(self) -> Result<Read, ReadError> {
        if !self.stack.is_empty() {
            return Err(ReadError::NotXml(
                "the document ends before its root element does".into(),
            ));
        }
        let unlisted = self.scan.map(Scan::finish).unwrap_or_default();
        match self.builder {
            Some(b) => b.finish(unlisted),
            None => Err(ReadError::NotXml("the document has no root element".into())),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The invoice, term by term

/// A document level allowance or charge, a ZUGFeRD 1.0 logistics charge, or a line's
/// allowance or charge, as read so far.
#[derive(Debug, Default)]
struct AllowanceChargeSoFar {
    charge: Option<bool>,
    amount: Decimal,
    base: Option<Decimal>,
    percent: Option<Decimal>,
    category: Option<Category>,
    rate: Decimal,
    reason: String,
    reason_code: String,
}

#[derive(Debug, Default)]
struct VatSoFar {
    taxable: Decimal,
    tax: Decimal,
    category: Option<Category>,
    rate: Decimal,
    exemption_reason: String,
    exemption_code: String,
}

#[derive(Debug, Default)]
struct LineSoFar {
    id: String,
    note: String,
    quantity: Decimal,
    unit_code: String,
    net_amount: Decimal,
    allowance: Option<LineAllowance>,
    /// The line's allowance or charge being read.
    pending: Option<AllowanceChargeSoFar>,
    net_price: Decimal,
    category: Option<Category>,
    rate: Decimal,
    name: String,
    description: String,
    seller_id: String,
}

impl LineSoFar {
    /// The line's allowance or charge is read: the first allowance is BG-27; charges
    /// (BG-28) and further allowances have no place in the model.
    fn settle(&mut self) -> Result<(), String> {
        let Some(a) = self.pending.take() else {
            return Ok(());
        };
        match a.charge {
            None => Err("no ChargeIndicator".into()),
            Some(true) => Ok(()),
            Some(false) => {
                if self.allowance.is_none() {
                    self.allowance = Some(LineAllowance {
                        amount: a.amount,
                        base: a.base,
                        percent: a.percent,
                        reason: a.reason,
                        reason_code: a.reason_code,
                    });
                }
                Ok(())
            }
        }
    }
}

/// The invoice as read so far. Single terms keep their first occurrence.
struct Builder {
    syntax: Syntax,
    zugferd1: bool,
    specification: String,
    number: String,
    issue_date: Option<Date>,
    type_code: String,
    currency: String,
    due_date: Option<Date>,
    buyer_reference: String,
    order_reference: String,
    contract_reference: String,
    preceding: Option<(String, Option<Date>)>,
    /// Referenced invoices seen: only the first is BT-25.
    references: u32,
    notes: Vec<String>,
    payment_terms: String,
    delivery_date: Option<Date>,
    deliver_to: Option<Address>,
    seller: Party,
    buyer: Party,
    /// Payment means seen: only the first is BG-16.
    means: u32,
    payment: Payment,
    transfer: CreditTransfer,
    debit: DirectDebit,
    allowance_charges: Vec<AllowanceChargeSoFar>,
    totals: Totals,
    /// BT-115 is stated (a document of ZUGFeRD 1.0 BASIC may leave it out).
    payable_read: bool,
    /// BT-110 is read (a second tax total is BT-111, in the accounting currency).
    vat_total: bool,
    vat: Vec<VatSoFar>,
    lines: Vec<LineSoFar>,
    /// UBL's `PartyTaxScheme` being read: its company ID and tax scheme.
    tax_scheme: (String, String),
}

/// A single term: its first non-empty occurrence.
fn fill(term: &mut String, value: &str) {
    if term.is_empty() {
        term.push_str(value);
    }
}

/// A term that may repeat in the document: its occurrences, one per line.
fn append(term: &mut String, value: &str) {
    if !value.is_empty() {
        if !term.is_empty() {
            term.push('\n');
        }
        term.push_str(value);
    }
}

/// BT-22: every note, in order.
fn note(notes: &mut Vec<String>, value: &str) {
    if !value.is_empty() {
        notes.push(value.to_owned());
    }
}

fn first(term: &mut Option<Date>, value: Option<Date>) {
    if term.is_none() {
        *term = value;
    }
}

/// A decimal number as XML Schema writes it (`-12.50`, `+3`, `.5`): no exponent, no
/// grouping, at most 28 significant digits.
fn decimal(v: &str) -> Result<Decimal, String> {
    let bad = || format!("'{}' is not a decimal number", shorten(v));
    let (negative, unsigned) = match v.as_bytes().first() {
        Some(b'-') => (true, &v[1..]),
        Some(b'+') => (false, &v[1..]),
        _ => (false, v),
    };
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    if v.len() > 64
        || (int.is_empty() && frac.is_empty())
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let mut canonical = String::with_capacity(v.len() + 2);
    if negative {
        canonical.push('-');
    }
    canonical.push_str(if int.is_empty() { "0" } else { int });
    if !frac.is_empty() {
        canonical.push('.');
        canonical.push_str(frac);
    }
    Decimal::from_str_exact(&canonical).map_err(|_| bad())
}

fn boolean(v: &str) -> Result<bool, String> {
    match v {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(format!("'{}' is neither true nor false", shorten(v))),
    }
}

fn category(v: &str) -> Result<Category, String> {
    Category::parse(v).ok_or_else(|| format!("'{}' is no VAT category code", shorten(v)))
}

/// Whether an electronic address (BT-34, BT-49) is an e-mail address, the only kind the
/// model holds.
fn email_scheme(a: &Attrs) -> bool {
    a.scheme().is_none_or(|s| s == "EM")
}

impl Builder {
    fn new(syntax: Syntax, zugferd1: bool) -> Builder {
        Builder {
            syntax,
            zugferd1,
            specification: String::new(),
            number: String::new(),
            issue_date: None,
            type_code: String::new(),
            currency: String::new(),
            due_date: None,
            buyer_reference: String::new(),
            order_reference: String::new(),
            contract_reference: String::new(),
            preceding: None,
            references: 0,
            notes: Vec::new(),
            payment_terms: String::new(),
            delivery_date: None,
            deliver_to: None,
            seller: Party::default(),
            buyer: Party::default(),
            means: 0,
            payment: Payment::default(),
            transfer: CreditTransfer::default(),
            debit: DirectDebit::default(),
            allowance_charges: Vec::new(),
            totals: Totals::default(),
            payable_read: false,
            vat_total: false,
            vat: Vec::new(),
            lines: Vec::new(),
            tax_scheme: (String::new(), String::new()),
        }
    }

    /// An element at `path` (below the root) opens: groups that repeat begin.
    fn start(&mut self, path: &[&str]) {
        match self.syntax {
            Syntax::Cii => self.cii_start(path),
            Syntax::Ubl => self.ubl_start(path),
        }
    }

    /// The element at `path` ends, with its text `v` (trimmed) and attributes `a`.
    fn end(&mut self, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
        match self.syntax {
            Syntax::Cii => self.cii_end(path, v, a),
            Syntax::Ubl => self.ubl_end(path, v, a),
        }
    }

    fn preceding_starts(&mut self) {
        self.references = self.references.saturating_add(1);
        if self.references == 1 {
            self.preceding = Some((String::new(), None));
        }
    }

    /// BT-115 as the document states it.
    fn payable(&mut self, amount: Decimal) {
        self.totals.payable = amount;
        self.payable_read = true;
    }

    /// BT-110, unless `currency` says it is BT-111 (another currency than BT-5).
    fn vat_total(&mut self, amount: Decimal, currency: Option<&str>) {
        let invoice_currency =
            currency.is_none_or(|c| self.currency.is_empty() || trim(c) == self.currency);
        if invoice_currency && !self.vat_total {
            self.totals.vat = amount;
            self.vat_total = true;
        }
    }

    /// The model of what was read. Groups without the VAT category the model needs are
    /// refused, but in ZUGFeRD 1.0, whose BASIC profile states no category: there a
    /// breakdown or line with a rate is standard rated (`S`), and a line without any tax
    /// has the category and rate of the only breakdown, if there is just one.
    fn finish(mut self, unlisted: Vec<Coded>) -> Result<Read, ReadError> {
        let issue_date = self.issue_date.ok_or_else(|| {
            ReadError::Malformed(match self.syntax {
                Syntax::Cii => "ExchangedDocument/IssueDateTime: no issue date (BT-2)".into(),
                Syntax::Ubl => "IssueDate: no issue date (BT-2)".into(),
            })
        })?;
        let zugferd1 = self.zugferd1;
        let vat = vat_breakdowns(self.vat, zugferd1)?;
        let (allowances, charges) = document_allowances_charges(self.allowance_charges, zugferd1)?;
        let mut notes = self.notes;
        let lines = invoice_lines(self.lines, &vat, zugferd1, &mut notes)?;
        if !self.payable_read {
            // Left out: what EN 16931 makes of the stated totals (BR-CO-16).
            let t = &mut self.totals;
            t.payable = t.with_vat - t.paid + t.rounding;
        }
        let payment = payment_instructions(self.payment, self.transfer, self.debit);

        Ok(Read {
            invoice: Invoice {
                number: self.number,
                issue_date,
                type_code: self.type_code,
                currency: self.currency,
                due_date: self.due_date,
                buyer_reference: self.buyer_reference,
                order_reference: self.order_reference,
                contract_reference: self.contract_reference,
                preceding: self.preceding,
                notes,
                payment_terms: self.payment_terms,
                delivery_date: self.delivery_date,
                deliver_to: self.deliver_to,
                seller: self.seller,
                buyer: self.buyer,
                payment,
                allowances,
                charges,
                totals: self.totals,
                vat,
                lines,
            },
            syntax: self.syntax,
            specification: self.specification,
            unlisted,
        })
    }
}

/// The VAT breakdowns (BG-23) as read, each with its category (BT-118); in ZUGFeRD 1.0
/// a breakdown with a rate and no category is standard rated.
fn vat_breakdowns(read: Vec<VatSoFar>, zugferd1: bool) -> Result<Vec<VatBreakdown>, ReadError> {
    let mut vat = Vec::with_capacity(read.len());
    for (i, v) in read.into_iter().enumerate() {
        let category = match v.category {
            Some(c) => c,
            None if zugferd1 && !v.rate.is_zero() => Category::S,
            None => {
                return Err(ReadError::Malformed(format!(
                    "VAT breakdown {}: no VAT category (BT-118)",
                    i + 1
                )));
            }
        };
        vat.push(VatBreakdown {
            taxable: v.taxable,
            tax: v.tax,
            category,
            rate: v.rate,
            exemption_reason: v.exemption_reason,
            exemption_code: v.exemption_code,
        });
    }
    Ok(vat)
}

/// The document level allowances (BG-20) and charges (BG-21) as read, in that order,
/// each with its charge indicator and VAT category (BT-95, BT-102).
fn document_allowances_charges(
    read: Vec<AllowanceChargeSoFar>,
    zugferd1: bool,
) -> Result<(Vec<AllowanceCharge>, Vec<AllowanceCharge>), ReadError> {
    let mut allowances = Vec::new();
    let mut charges = Vec::new();
    for (i, a) in read.into_iter().enumerate() {
        let Some(charge) = a.charge else {
            return Err(ReadError::Malformed(format!(
                "document level allowance or charge {}: no ChargeIndicator",
                i + 1
            )));
        };
        let category = match a.category {
            Some(c) => c,
            None if zugferd1 && !a.rate.is_zero() => Category::S,
            None => {
                return Err(ReadError::Malformed(format!(
                    "document level allowance or charge {}: no VAT category (BT-95, BT-102)",
                    i + 1
                )));
            }
        };
        let out = AllowanceCharge {
            amount: a.amount,
            base: a.base,
            percent: a.percent,
            category,
            rate: a.rate,
            reason: a.reason,
            reason_code: a.reason_code,
        };
        if charge {
            charges.push(out);
        } else {
            allowances.push(out);
        }
    }
    Ok((allowances, charges))
}

/// The invoice lines (BG-25) as read, each with its VAT category (BT-151); a line of
/// text alone goes to `notes`. In ZUGFeRD 1.0 a line without a category is standard
/// rated when it has a rate, else takes the category of the only breakdown in `vat`.
fn invoice_lines(
    read: Vec<LineSoFar>,
    vat: &[VatBreakdown],
    zugferd1: bool,
    notes: &mut Vec<String>,
) -> Result<Vec<Line>, ReadError> {
    let mut lines = Vec::with_capacity(read.len());
    for (i, l) in read.into_iter().enumerate() {
        // A line of text alone (ZUGFeRD 1.0 and EXTENDED write notes between the
        // lines: no tax, no quantity, no amounts) is no invoice line; its text is
        // kept with the invoice's notes.
        if l.category.is_none()
            && l.quantity.is_zero()
            && l.net_amount.is_zero()
            && l.net_price.is_zero()
            && l.name.trim().is_empty()
        {
            if !l.note.trim().is_empty() {
                notes.push(l.note.trim().to_owned());
            }
            continue;
        }
        let (category, rate) = match (l.category, vat) {
            (Some(c), _) => (c, l.rate),
            (None, _) if zugferd1 && !l.rate.is_zero() => (Category::S, l.rate),
            (None, [only]) if zugferd1 => (only.category, only.rate),
            (None, _) => {
                return Err(ReadError::Malformed(format!(
                    "line {} ({}): no VAT category (BT-151)",
                    i + 1,
                    shorten(&l.id)
                )));
            }
        };
        lines.push(Line {
            id: l.id,
            note: l.note,
            quantity: l.quantity,
            unit_code: l.unit_code,
            net_amount: l.net_amount,
            allowance: l.allowance,
            net_price: l.net_price,
            category,
            rate,
            name: l.name,
            description: l.description,
            seller_id: l.seller_id,
        });
    }
    Ok(lines)
}

/// The payment instructions (BG-16) with the credit transfer (BG-17) and direct debit
/// (BG-19) that were stated: a group with none of its terms is left out.
fn payment_instructions(
    mut payment: Payment,
    transfer: CreditTransfer,
    debit: DirectDebit,
) -> Payment {
    if !(transfer.iban.is_empty() && transfer.account_name.is_empty() && transfer.bic.is_empty()) {
        payment.credit_transfer = Some(transfer);
    }
    if !(debit.mandate.is_empty() && debit.creditor_id.is_empty() && debit.debited_iban.is_empty())
    {
        payment.direct_debit = Some(debit);
    }
    payment
}
