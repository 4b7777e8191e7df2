//! The reader of incoming e-invoices: UN/CEFACT CII (`rsm:CrossIndustryInvoice`, as
//! Factur-X / ZUGFeRD 2.x in every profile and XRechnung use it), ZUGFeRD 1.0
//! (`CrossIndustryDocument`, read where it maps onto CII) and OASIS UBL 2.1 `Invoice` and
//! `CreditNote`, into the EN 16931 model (`model`) that `cii` and `ubl` write.
//!
//! The input comes from anyone. A document type declaration is refused before anything
//! else is read, so entity definitions (billion laughs, external entities) never reach a
//! parser; only the five predefined entities and character references are resolved.
//! Elements nest at most `MAX_DEPTH` deep. The document is read once, front to back, by a
//! pull parser (quick-xml), and every element costs a bounded amount of work besides its
//! own bytes: reading takes time linear in the input, and nothing is sized from a number
//! the input states.
//!
//! Elements are matched by namespace and local name, never by prefix: each element's name
//! is looked up in the vocabulary of its namespace (`intern`), and a term is the path of
//! such names below the root. An element of another namespace, or one the model has no
//! term for, is skipped with everything inside it.
//!
//! The reader maps; it does not judge (`rules` does). A missing term stays empty, `None`
//! or zero; what cannot be read as the model needs it (an amount that is no decimal
//! number, a date that does not exist, an unknown VAT category) is `Malformed`, naming
//! the element. Two terms the model cannot leave empty are refused when missing: the issue
//! date (BT-2), and the VAT category of a breakdown, line, allowance or charge, except in
//! ZUGFeRD 1.0, whose BASIC profile states no categories (see `Builder::finish`).

use quick_xml::XmlVersion;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;
use rust_decimal::Decimal;

use super::super::date::Date;
use super::model::{
    Address, AllowanceCharge, Category, CreditTransfer, DirectDebit, Invoice, Line, LineAllowance,
    Party, Payment, Totals, VatBreakdown,
};

/// How deep elements may nest, the root counting as one.
pub const MAX_DEPTH: usize = 64;

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
}

/// Why a document could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// Not well-formed XML in UTF-8: where and why.
    NotXml(String),
    /// The document has a document type declaration, which is refused.
    Dtd,
    /// Elements nest deeper than `MAX_DEPTH`.
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
            ReadError::TooDeep => write!(f, "elements nest deeper than {MAX_DEPTH} levels"),
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

/// The CII `rsm` names (sorted, for `binary_search`).
const RSM: &[&str] = &[
    "ExchangedDocument",
    "ExchangedDocumentContext",
    "SupplyChainTradeTransaction",
];

/// ZUGFeRD 1.0 names and the CII D16B names they stand for.
const RSM_ALIASES: &[(&str, &str)] = &[
    ("HeaderExchangedDocument", "ExchangedDocument"),
    (
        "SpecifiedExchangedDocumentContext",
        "ExchangedDocumentContext",
    ),
    (
        "SpecifiedSupplyChainTradeTransaction",
        "SupplyChainTradeTransaction",
    ),
];

/// The CII `ram` names the model has terms in (sorted). ZUGFeRD 1.0's
/// `SpecifiedTradeSettlementMonetarySummation` (the header's and the lines') and its
/// logistics charges (`SpecifiedLogisticsServiceCharge`, `AppliedAmount`,
/// `AppliedTradeTax`) are among them.
const RAM: &[&str] = &[
    "AccountName",
    "ActualAmount",
    "ActualDeliverySupplyChainEvent",
    "AllowanceTotalAmount",
    "ApplicableHeaderTradeAgreement",
    "ApplicableHeaderTradeDelivery",
    "ApplicableHeaderTradeSettlement",
    "ApplicableTradeTax",
    "AppliedAmount",
    "AppliedTradeTax",
    "AssociatedDocumentLineDocument",
    "BICID",
    "BasisAmount",
    "BilledQuantity",
    "BuyerOrderReferencedDocument",
    "BuyerReference",
    "BuyerTradeParty",
    "CalculatedAmount",
    "CalculationPercent",
    "CategoryCode",
    "CategoryTradeTax",
    "ChargeAmount",
    "ChargeIndicator",
    "ChargeTotalAmount",
    "CityName",
    "CompleteNumber",
    "Content",
    "CountryID",
    "CountrySubDivisionName",
    "CreditorReferenceID",
    "DefinedTradeContact",
    "DepartmentName",
    "Description",
    "DirectDebitMandateID",
    "DueDateDateTime",
    "DuePayableAmount",
    "EmailURIUniversalCommunication",
    "ExemptionReason",
    "ExemptionReasonCode",
    "FormattedIssueDateTime",
    "GlobalID",
    "GrandTotalAmount",
    "GuidelineSpecifiedDocumentContextParameter",
    "IBANID",
    "ID",
    "IncludedNote",
    "IncludedSupplyChainTradeLineItem",
    "Information",
    "InvoiceCurrencyCode",
    "InvoiceReferencedDocument",
    "IssueDateTime",
    "IssuerAssignedID",
    "LineID",
    "LineOne",
    "LineTotalAmount",
    "LineTwo",
    "Name",
    "NetPriceProductTradePrice",
    "OccurrenceDateTime",
    "PayeePartyCreditorFinancialAccount",
    "PayeeSpecifiedCreditorFinancialInstitution",
    "PayerPartyDebtorFinancialAccount",
    "PaymentReference",
    "PersonName",
    "PostalTradeAddress",
    "PostcodeCode",
    "ProprietaryID",
    "RateApplicablePercent",
    "Reason",
    "ReasonCode",
    "RoundingAmount",
    "SellerAssignedID",
    "SellerTradeParty",
    "ShipToTradeParty",
    "SpecifiedLegalOrganization",
    "SpecifiedLineTradeAgreement",
    "SpecifiedLineTradeDelivery",
    "SpecifiedLineTradeSettlement",
    "SpecifiedLogisticsServiceCharge",
    "SpecifiedTaxRegistration",
    "SpecifiedTradeAllowanceCharge",
    "SpecifiedTradePaymentTerms",
    "SpecifiedTradeProduct",
    "SpecifiedTradeSettlementHeaderMonetarySummation",
    "SpecifiedTradeSettlementLineMonetarySummation",
    "SpecifiedTradeSettlementMonetarySummation",
    "SpecifiedTradeSettlementPaymentMeans",
    "TaxBasisTotalAmount",
    "TaxTotalAmount",
    "TelephoneUniversalCommunication",
    "TotalPrepaidAmount",
    "TypeCode",
    "URIID",
    "URIUniversalCommunication",
];

/// ZUGFeRD 1.0 `ram` names and the CII D16B names they stand for.
const RAM_ALIASES: &[(&str, &str)] = &[
    ("ApplicablePercent", "RateApplicablePercent"),
    (
        "ApplicableSupplyChainTradeAgreement",
        "ApplicableHeaderTradeAgreement",
    ),
    (
        "ApplicableSupplyChainTradeDelivery",
        "ApplicableHeaderTradeDelivery",
    ),
    (
        "ApplicableSupplyChainTradeSettlement",
        "ApplicableHeaderTradeSettlement",
    ),
    (
        "SpecifiedSupplyChainTradeAgreement",
        "SpecifiedLineTradeAgreement",
    ),
    (
        "SpecifiedSupplyChainTradeDelivery",
        "SpecifiedLineTradeDelivery",
    ),
    (
        "SpecifiedSupplyChainTradeSettlement",
        "SpecifiedLineTradeSettlement",
    ),
];

/// The `udt` and `qdt` names (sorted).
const DATA_TYPES: &[&str] = &["DateTimeString", "Indicator"];

/// The UBL `cac` names the model has terms in (sorted).
const CAC: &[&str] = &[
    "AccountingCustomerParty",
    "AccountingSupplierParty",
    "Address",
    "AllowanceCharge",
    "BillingReference",
    "ClassifiedTaxCategory",
    "Contact",
    "Country",
    "CreditNoteLine",
    "Delivery",
    "DeliveryLocation",
    "FinancialInstitutionBranch",
    "InvoiceDocumentReference",
    "InvoiceLine",
    "Item",
    "LegalMonetaryTotal",
    "OrderReference",
    "Party",
    "PartyIdentification",
    "PartyLegalEntity",
    "PartyTaxScheme",
    "PayeeFinancialAccount",
    "PayerFinancialAccount",
    "PaymentMandate",
    "PaymentMeans",
    "PaymentTerms",
    "PostalAddress",
    "Price",
    "SellersItemIdentification",
    "TaxCategory",
    "TaxScheme",
    "TaxSubtotal",
    "TaxTotal",
];

/// The UBL `cbc` names the model has terms in (sorted).
const CBC: &[&str] = &[
    "ActualDeliveryDate",
    "AdditionalStreetName",
    "AllowanceChargeReason",
    "AllowanceChargeReasonCode",
    "AllowanceTotalAmount",
    "Amount",
    "BaseAmount",
    "BuyerReference",
    "ChargeIndicator",
    "ChargeTotalAmount",
    "CityName",
    "CompanyID",
    "CountrySubentity",
    "CreditNoteTypeCode",
    "CreditedQuantity",
    "CustomizationID",
    "Description",
    "DocumentCurrencyCode",
    "DueDate",
    "ElectronicMail",
    "EndpointID",
    "ID",
    "IdentificationCode",
    "InvoiceTypeCode",
    "InvoicedQuantity",
    "IssueDate",
    "LineExtensionAmount",
    "MultiplierFactorNumeric",
    "Name",
    "Note",
    "PayableAmount",
    "PayableRoundingAmount",
    "PaymentDueDate",
    "PaymentID",
    "PaymentMeansCode",
    "Percent",
    "PostalZone",
    "PrepaidAmount",
    "PriceAmount",
    "RegistrationName",
    "StreetName",
    "TaxAmount",
    "TaxExclusiveAmount",
    "TaxExemptionReason",
    "TaxExemptionReasonCode",
    "TaxInclusiveAmount",
    "TaxableAmount",
    "Telephone",
];

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
        if self.stack.len() >= MAX_DEPTH {
            return Err(ReadError::TooDeep);
        }
        let qname = e.name();
        let local = qname.local_name().into_inner();
        let name = match (&self.builder, self.stack.last()) {
            (None, _) => {
                let (syntax, zugferd1) = match (ns, local) {
                    (Ns::Cii, "CrossIndustryInvoice") => (Syntax::Cii, false),
                    (Ns::Zugferd1, "CrossIndustryDocument") => (Syntax::Cii, true),
                    (Ns::UblInvoice, "Invoice") | (Ns::UblCreditNote, "CreditNote") => {
                        (Syntax::Ubl, false)
                    }
                    _ => {
                        return Err(ReadError::NotAnInvoice(match uri {
                            Some(uri) => format!("{{{uri}}}{}", shorten(local)),
                            None => shorten(qname.into_inner()).to_owned(),
                        }));
                    }
                };
                self.builder = Some(Builder::new(syntax, zugferd1));
                ROOT
            }
            (Some(_), Some(&UNKNOWN)) => UNKNOWN,
            (Some(b), _) => intern(b.syntax, ns, local),
        };
        self.stack.push(name);
        self.text.clear();
        self.attrs = Attrs::default();
        let mut attributes = e.attributes();
        attributes.with_checks(false);
        for attr in attributes {
            let attr =
                attr.map_err(|err| ReadError::NotXml(format!("a malformed attribute: {err}")))?;
            if name == UNKNOWN || name == ROOT {
                continue;
            }
            let slot = match attr.key.into_inner() {
                "schemeID" => &mut self.attrs.scheme_id,
                "unitCode" => &mut self.attrs.unit_code,
                "format" => &mut self.attrs.format,
                "currencyID" => &mut self.attrs.currency_id,
                "name" => &mut self.attrs.name,
                _ => continue,
            };
            if slot.is_none() {
                let value = attr
                    .normalized_value(XmlVersion::Implicit1_0)
                    .map_err(|err| ReadError::NotXml(format!("a malformed attribute: {err}")))?;
                *slot = Some(value.into_owned());
            }
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

    fn close(&mut self) -> Result<(), ReadError> {
        let Some(&name) = self.stack.last() else {
            return Err(ReadError::NotXml("an end tag without its start tag".into()));
        };
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
        match self.builder {
            Some(b) => b.finish(),
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

/// A CII date (`udt:DateTimeString` or `qdt:DateTimeString`): format 102 `YYYYMMDD` (also
/// without a format), 610 `YYYYMM` (its first day); 616 (a week) is no date.
fn cii_date(v: &str, a: &Attrs) -> Result<Option<Date>, String> {
    let digits = |len: usize| v.len() == len && v.bytes().all(|b| b.is_ascii_digit());
    let date = match a.format.as_deref().map(trim) {
        None | Some("102") if digits(8) => {
            Date::parse(&format!("{}-{}-{}", &v[..4], &v[4..6], &v[6..]))
        }
        Some("610") if digits(6) => Date::parse(&format!("{}-{}-01", &v[..4], &v[4..])),
        Some("616") => return Ok(None),
        None | Some("102" | "610") => None,
        Some(other) => return Err(format!("unknown date format '{}'", shorten(other))),
    };
    match date {
        Some(d) => Ok(Some(d)),
        None => Err(format!(
            "'{}' is no date in format {}",
            shorten(v),
            a.format.as_deref().map_or("102", |f| shorten(trim(f)))
        )),
    }
}

/// A UBL date, `YYYY-MM-DD`, with a time zone (`Z`, `+01:00`) ignored.
fn ubl_date(v: &str) -> Result<Option<Date>, String> {
    let zone = v.get(10..).unwrap_or("");
    let zone_ok = zone.is_empty()
        || zone == "Z"
        || (zone.len() == 6
            && matches!(zone.as_bytes()[0], b'+' | b'-')
            && zone.as_bytes()[3] == b':'
            && zone
                .bytes()
                .enumerate()
                .all(|(i, b)| matches!(i, 0 | 3) || b.is_ascii_digit()));
    match v.get(..10).filter(|_| zone_ok).and_then(Date::parse) {
        Some(d) => Ok(Some(d)),
        None => Err(format!("'{}' is no date (YYYY-MM-DD)", shorten(v))),
    }
}

/// Whether an electronic address (BT-34, BT-49) is an e-mail address, the only kind the
/// model holds.
fn email_scheme(a: &Attrs) -> bool {
    a.scheme().is_none_or(|s| s == "EM")
}

const TX: &str = "SupplyChainTradeTransaction";
const AGREEMENT: &str = "ApplicableHeaderTradeAgreement";
const DELIVERY: &str = "ApplicableHeaderTradeDelivery";
const SETTLEMENT: &str = "ApplicableHeaderTradeSettlement";
const LINE_ITEM: &str = "IncludedSupplyChainTradeLineItem";
const SUPPLIER: &str = "AccountingSupplierParty";
const CUSTOMER: &str = "AccountingCustomerParty";

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

    /// BT-110, unless `currency` says it is BT-111 (another currency than BT-5).
    fn vat_total(&mut self, amount: Decimal, currency: Option<&str>) {
        let invoice_currency =
            currency.is_none_or(|c| self.currency.is_empty() || trim(c) == self.currency);
        if invoice_currency && !self.vat_total {
            self.totals.vat = amount;
            self.vat_total = true;
        }
    }

    // --- CII ----------------------------------------------------------------------------

    fn cii_start(&mut self, path: &[&str]) {
        match path {
            [TX, LINE_ITEM] => self.lines.push(LineSoFar::default()),
            [
                TX,
                LINE_ITEM,
                "SpecifiedLineTradeSettlement",
                "SpecifiedTradeAllowanceCharge",
            ] => {
                if let Some(line) = self.lines.last_mut() {
                    line.pending = Some(AllowanceChargeSoFar::default());
                }
            }
            [TX, DELIVERY, "ShipToTradeParty", "PostalTradeAddress"] => {
                self.deliver_to.get_or_insert_with(Address::default);
            }
            [TX, SETTLEMENT, "SpecifiedTradeSettlementPaymentMeans"] => {
                self.means = self.means.saturating_add(1);
            }
            [TX, SETTLEMENT, "ApplicableTradeTax"] => self.vat.push(VatSoFar::default()),
            [TX, SETTLEMENT, "SpecifiedTradeAllowanceCharge"] => {
                self.allowance_charges.push(AllowanceChargeSoFar::default());
            }
            [TX, SETTLEMENT, "SpecifiedLogisticsServiceCharge"] => {
                self.allowance_charges.push(AllowanceChargeSoFar {
                    charge: Some(true),
                    ..AllowanceChargeSoFar::default()
                });
            }
            [TX, SETTLEMENT, "InvoiceReferencedDocument"] => self.preceding_starts(),
            _ => {}
        }
    }

    fn cii_end(&mut self, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
        match path {
            [
                "ExchangedDocumentContext",
                "GuidelineSpecifiedDocumentContextParameter",
                "ID",
            ] => fill(&mut self.specification, v),
            ["ExchangedDocument", "ID"] => fill(&mut self.number, v),
            ["ExchangedDocument", "TypeCode"] => fill(&mut self.type_code, v),
            ["ExchangedDocument", "IssueDateTime", "DateTimeString"] => {
                first(&mut self.issue_date, cii_date(v, a)?);
            }
            ["ExchangedDocument", "IncludedNote", "Content"] => note(&mut self.notes, v),
            [TX, LINE_ITEM, rest @ ..] => {
                if let Some(line) = self.lines.last_mut() {
                    cii_line(line, rest, v, a)?;
                }
            }
            [TX, AGREEMENT, rest @ ..] => self.cii_agreement(rest, v, a),
            [TX, DELIVERY, rest @ ..] => self.cii_delivery(rest, v, a)?,
            [TX, SETTLEMENT, rest @ ..] => self.cii_settlement(rest, v, a)?,
            _ => {}
        }
        Ok(())
    }

    fn cii_agreement(&mut self, path: &[&str], v: &str, a: &Attrs) {
        match path {
            ["BuyerReference"] => fill(&mut self.buyer_reference, v),
            ["SellerTradeParty", rest @ ..] => cii_party(&mut self.seller, true, rest, v, a),
            ["BuyerTradeParty", rest @ ..] => cii_party(&mut self.buyer, false, rest, v, a),
            ["BuyerOrderReferencedDocument", "IssuerAssignedID" | "ID"] => {
                fill(&mut self.order_reference, v);
            }
            _ => {}
        }
    }

    fn cii_delivery(&mut self, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
        match path {
            ["ShipToTradeParty", "PostalTradeAddress", field] => {
                if let Some(address) = &mut self.deliver_to {
                    cii_address(address, field, v);
                }
            }
            [
                "ActualDeliverySupplyChainEvent",
                "OccurrenceDateTime",
                "DateTimeString",
            ] => first(&mut self.delivery_date, cii_date(v, a)?),
            _ => {}
        }
        Ok(())
    }

    fn cii_settlement(&mut self, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
        match path {
            ["CreditorReferenceID"] => fill(&mut self.debit.creditor_id, v),
            ["PaymentReference"] => fill(&mut self.payment.remittance, v),
            ["InvoiceCurrencyCode"] => fill(&mut self.currency, v),
            ["SpecifiedTradeSettlementPaymentMeans", rest @ ..] if self.means == 1 => match rest {
                ["TypeCode"] => fill(&mut self.payment.means_code, v),
                ["Information"] => fill(&mut self.payment.means_text, v),
                ["PayerPartyDebtorFinancialAccount", "IBANID"] => {
                    fill(&mut self.debit.debited_iban, v);
                }
                [
                    "PayeePartyCreditorFinancialAccount",
                    "IBANID" | "ProprietaryID",
                ] => {
                    fill(&mut self.transfer.iban, v);
                }
                ["PayeePartyCreditorFinancialAccount", "AccountName"] => {
                    fill(&mut self.transfer.account_name, v);
                }
                ["PayeeSpecifiedCreditorFinancialInstitution", "BICID"] => {
                    fill(&mut self.transfer.bic, v);
                }
                _ => {}
            },
            ["ApplicableTradeTax", rest @ ..] => {
                if let Some(vat) = self.vat.last_mut() {
                    match rest {
                        ["CalculatedAmount"] => vat.tax = decimal(v)?,
                        ["BasisAmount"] => vat.taxable = decimal(v)?,
                        ["CategoryCode"] => vat.category = Some(category(v)?),
                        ["RateApplicablePercent"] => vat.rate = decimal(v)?,
                        ["ExemptionReason"] => fill(&mut vat.exemption_reason, v),
                        ["ExemptionReasonCode"] => fill(&mut vat.exemption_code, v),
                        _ => {}
                    }
                }
            }
            [
                "SpecifiedTradeAllowanceCharge" | "SpecifiedLogisticsServiceCharge",
                rest @ ..,
            ] => {
                if let Some(ac) = self.allowance_charges.last_mut() {
                    cii_allowance_charge(ac, rest, v)?;
                }
            }
            ["SpecifiedTradePaymentTerms", "Description"] => append(&mut self.payment_terms, v),
            [
                "SpecifiedTradePaymentTerms",
                "DueDateDateTime",
                "DateTimeString",
            ] => {
                first(&mut self.due_date, cii_date(v, a)?);
            }
            ["SpecifiedTradePaymentTerms", "DirectDebitMandateID"] => {
                fill(&mut self.debit.mandate, v);
            }
            [
                "SpecifiedTradeSettlementHeaderMonetarySummation"
                | "SpecifiedTradeSettlementMonetarySummation",
                field,
            ] => self.cii_total(field, v, a)?,
            ["InvoiceReferencedDocument", rest @ ..] if self.references == 1 => {
                if let Some((number, date)) = &mut self.preceding {
                    match rest {
                        ["IssuerAssignedID"] => fill(number, v),
                        ["FormattedIssueDateTime", "DateTimeString"] => {
                            first(date, cii_date(v, a)?);
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// BG-22.
    fn cii_total(&mut self, field: &str, v: &str, a: &Attrs) -> Result<(), String> {
        let t = &mut self.totals;
        match field {
            "LineTotalAmount" => t.line_net = decimal(v)?,
            "ChargeTotalAmount" => t.charges = decimal(v)?,
            "AllowanceTotalAmount" => t.allowances = decimal(v)?,
            "TaxBasisTotalAmount" => t.without_vat = decimal(v)?,
            "TaxTotalAmount" => self.vat_total(decimal(v)?, a.currency_id.as_deref()),
            "RoundingAmount" => t.rounding = decimal(v)?,
            "GrandTotalAmount" => t.with_vat = decimal(v)?,
            "TotalPrepaidAmount" => t.paid = decimal(v)?,
            "DuePayableAmount" => {
                t.payable = decimal(v)?;
                self.payable_read = true;
            }
            _ => {}
        }
        Ok(())
    }

    // --- UBL ----------------------------------------------------------------------------

    fn ubl_start(&mut self, path: &[&str]) {
        match path {
            ["InvoiceLine" | "CreditNoteLine"] => self.lines.push(LineSoFar::default()),
            ["InvoiceLine" | "CreditNoteLine", "AllowanceCharge"] => {
                if let Some(line) = self.lines.last_mut() {
                    line.pending = Some(AllowanceChargeSoFar::default());
                }
            }
            ["AllowanceCharge"] => self.allowance_charges.push(AllowanceChargeSoFar::default()),
            ["TaxTotal", "TaxSubtotal"] => self.vat.push(VatSoFar::default()),
            ["PaymentMeans"] => self.means = self.means.saturating_add(1),
            ["BillingReference", "InvoiceDocumentReference"] => self.preceding_starts(),
            ["Delivery", "DeliveryLocation", "Address"] => {
                self.deliver_to.get_or_insert_with(Address::default);
            }
            [SUPPLIER | CUSTOMER, "Party", "PartyTaxScheme"] => {
                self.tax_scheme = (String::new(), String::new());
            }
            _ => {}
        }
    }

    fn ubl_end(&mut self, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
        match path {
            ["CustomizationID"] => fill(&mut self.specification, v),
            ["ID"] => fill(&mut self.number, v),
            ["IssueDate"] => first(&mut self.issue_date, ubl_date(v)?),
            ["DueDate"] => first(&mut self.due_date, ubl_date(v)?),
            ["InvoiceTypeCode" | "CreditNoteTypeCode"] => fill(&mut self.type_code, v),
            ["Note"] => note(&mut self.notes, v),
            ["DocumentCurrencyCode"] => fill(&mut self.currency, v),
            ["BuyerReference"] => fill(&mut self.buyer_reference, v),
            ["OrderReference", "ID"] => fill(&mut self.order_reference, v),
            ["BillingReference", "InvoiceDocumentReference", field] if self.references == 1 => {
                if let Some((number, date)) = &mut self.preceding {
                    match *field {
                        "ID" => fill(number, v),
                        "IssueDate" => first(date, ubl_date(v)?),
                        _ => {}
                    }
                }
            }
            [SUPPLIER, "Party", rest @ ..] => ubl_party(
                &mut self.seller,
                Some(&mut self.debit.creditor_id),
                &mut self.tax_scheme,
                rest,
                v,
                a,
            ),
            [CUSTOMER, "Party", rest @ ..] => {
                ubl_party(&mut self.buyer, None, &mut self.tax_scheme, rest, v, a);
            }
            ["Delivery", "ActualDeliveryDate"] => first(&mut self.delivery_date, ubl_date(v)?),
            ["Delivery", "DeliveryLocation", "Address", rest @ ..] => {
                if let Some(address) = &mut self.deliver_to {
                    ubl_address(address, rest, v);
                }
            }
            ["PaymentMeans", rest @ ..] if self.means == 1 => self.ubl_payment(rest, v, a)?,
            ["PaymentTerms", "Note"] => append(&mut self.payment_terms, v),
            ["AllowanceCharge", rest @ ..] => {
                if let Some(ac) = self.allowance_charges.last_mut() {
                    ubl_allowance_charge(ac, rest, v)?;
                }
            }
            ["TaxTotal", "TaxAmount"] => self.vat_total(decimal(v)?, a.currency_id.as_deref()),
            ["TaxTotal", "TaxSubtotal", rest @ ..] => {
                if let Some(vat) = self.vat.last_mut() {
                    match rest {
                        ["TaxableAmount"] => vat.taxable = decimal(v)?,
                        ["TaxAmount"] => vat.tax = decimal(v)?,
                        ["TaxCategory", "ID"] => vat.category = Some(category(v)?),
                        ["TaxCategory", "Percent"] => vat.rate = decimal(v)?,
                        ["TaxCategory", "TaxExemptionReasonCode"] => {
                            fill(&mut vat.exemption_code, v);
                        }
                        ["TaxCategory", "TaxExemptionReason"] => {
                            fill(&mut vat.exemption_reason, v);
                        }
                        _ => {}
                    }
                }
            }
            ["LegalMonetaryTotal", field] => {
                let t = &mut self.totals;
                match *field {
                    "LineExtensionAmount" => t.line_net = decimal(v)?,
                    "TaxExclusiveAmount" => t.without_vat = decimal(v)?,
                    "TaxInclusiveAmount" => t.with_vat = decimal(v)?,
                    "AllowanceTotalAmount" => t.allowances = decimal(v)?,
                    "ChargeTotalAmount" => t.charges = decimal(v)?,
                    "PrepaidAmount" => t.paid = decimal(v)?,
                    "PayableRoundingAmount" => t.rounding = decimal(v)?,
                    "PayableAmount" => {
                        t.payable = decimal(v)?;
                        self.payable_read = true;
                    }
                    _ => {}
                }
            }
            ["InvoiceLine" | "CreditNoteLine", rest @ ..] => {
                if let Some(line) = self.lines.last_mut() {
                    ubl_line(line, rest, v, a)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// BG-16 (the first `cac:PaymentMeans`), and BT-9 of a credit note.
    fn ubl_payment(&mut self, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
        match path {
            ["PaymentMeansCode"] => {
                fill(&mut self.payment.means_code, v);
                fill(
                    &mut self.payment.means_text,
                    a.name.as_deref().map_or("", trim),
                );
            }
            ["PaymentDueDate"] => first(&mut self.due_date, ubl_date(v)?),
            ["PaymentID"] => fill(&mut self.payment.remittance, v),
            ["PayeeFinancialAccount", "ID"] => fill(&mut self.transfer.iban, v),
            ["PayeeFinancialAccount", "Name"] => fill(&mut self.transfer.account_name, v),
            ["PayeeFinancialAccount", "FinancialInstitutionBranch", "ID"] => {
                fill(&mut self.transfer.bic, v);
            }
            ["PaymentMandate", "ID"] => fill(&mut self.debit.mandate, v),
            ["PaymentMandate", "PayerFinancialAccount", "ID"] => {
                fill(&mut self.debit.debited_iban, v);
            }
            _ => {}
        }
        Ok(())
    }

    /// The model of what was read. Groups without the VAT category the model needs are
    /// refused, but in ZUGFeRD 1.0, whose BASIC profile states no category: there a
    /// breakdown or line with a rate is standard rated (`S`), and a line without any tax
    /// has the category and rate of the only breakdown, if there is just one.
    fn finish(mut self) -> Result<Read, ReadError> {
        let malformed = |what: String| ReadError::Malformed(what);
        let issue_date = self.issue_date.ok_or_else(|| {
            malformed(match self.syntax {
                Syntax::Cii => "ExchangedDocument/IssueDateTime: no issue date (BT-2)".into(),
                Syntax::Ubl => "IssueDate: no issue date (BT-2)".into(),
            })
        })?;
        let zugferd1 = self.zugferd1;

        let mut vat = Vec::with_capacity(self.vat.len());
        for (i, v) in self.vat.into_iter().enumerate() {
            let category = match v.category {
                Some(c) => c,
                None if zugferd1 && !v.rate.is_zero() => Category::S,
                None => {
                    return Err(malformed(format!(
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

        let mut allowances = Vec::new();
        let mut charges = Vec::new();
        for (i, a) in self.allowance_charges.into_iter().enumerate() {
            let Some(charge) = a.charge else {
                return Err(malformed(format!(
                    "document level allowance or charge {}: no ChargeIndicator",
                    i + 1
                )));
            };
            let category = match a.category {
                Some(c) => c,
                None if zugferd1 && !a.rate.is_zero() => Category::S,
                None => {
                    return Err(malformed(format!(
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

        let mut lines = Vec::with_capacity(self.lines.len());
        let mut notes = self.notes;
        for (i, l) in self.lines.into_iter().enumerate() {
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
            let (category, rate) = match (l.category, vat.as_slice()) {
                (Some(c), _) => (c, l.rate),
                (None, _) if zugferd1 && !l.rate.is_zero() => (Category::S, l.rate),
                (None, [only]) if zugferd1 => (only.category, only.rate),
                (None, _) => {
                    return Err(malformed(format!(
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

        if !self.payable_read {
            // Left out: what EN 16931 makes of the stated totals (BR-CO-16).
            let t = &mut self.totals;
            t.payable = t.with_vat - t.paid + t.rounding;
        }
        let t = &self.transfer;
        let d = &self.debit;
        let mut payment = self.payment;
        if !(t.iban.is_empty() && t.account_name.is_empty() && t.bic.is_empty()) {
            payment.credit_transfer = Some(self.transfer);
        }
        if !(d.mandate.is_empty() && d.creditor_id.is_empty() && d.debited_iban.is_empty()) {
            payment.direct_debit = Some(self.debit);
        }

        Ok(Read {
            invoice: Invoice {
                number: self.number,
                issue_date,
                type_code: self.type_code,
                currency: self.currency,
                due_date: self.due_date,
                buyer_reference: self.buyer_reference,
                order_reference: self.order_reference,
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
        })
    }
}

/// BG-25 below `ram:IncludedSupplyChainTradeLineItem`.
fn cii_line(line: &mut LineSoFar, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
    const SETTLEMENT: &str = "SpecifiedLineTradeSettlement";
    match path {
        ["AssociatedDocumentLineDocument", "LineID"] => fill(&mut line.id, v),
        ["AssociatedDocumentLineDocument", "IncludedNote", "Content"] => {
            append(&mut line.note, v);
        }
        ["SpecifiedTradeProduct", "SellerAssignedID"] => fill(&mut line.seller_id, v),
        ["SpecifiedTradeProduct", "Name"] => fill(&mut line.name, v),
        ["SpecifiedTradeProduct", "Description"] => fill(&mut line.description, v),
        [
            "SpecifiedLineTradeAgreement",
            "NetPriceProductTradePrice",
            "ChargeAmount",
        ] => line.net_price = decimal(v)?,
        ["SpecifiedLineTradeDelivery", "BilledQuantity"] => {
            line.quantity = decimal(v)?;
            fill(&mut line.unit_code, a.unit_code.as_deref().map_or("", trim));
        }
        [SETTLEMENT, "ApplicableTradeTax", "CategoryCode"] => {
            line.category = Some(category(v)?);
        }
        [SETTLEMENT, "ApplicableTradeTax", "RateApplicablePercent"] => line.rate = decimal(v)?,
        [SETTLEMENT, "SpecifiedTradeAllowanceCharge"] => line.settle()?,
        [SETTLEMENT, "SpecifiedTradeAllowanceCharge", rest @ ..] => {
            if let Some(ac) = &mut line.pending {
                cii_allowance_charge(ac, rest, v)?;
            }
        }
        [
            SETTLEMENT,
            "SpecifiedTradeSettlementLineMonetarySummation"
            | "SpecifiedTradeSettlementMonetarySummation",
            "LineTotalAmount",
        ] => line.net_amount = decimal(v)?,
        _ => {}
    }
    Ok(())
}

/// BG-20, BG-21 or BG-27 (`ram:SpecifiedTradeAllowanceCharge`), or a ZUGFeRD 1.0
/// logistics charge (`ram:SpecifiedLogisticsServiceCharge`).
fn cii_allowance_charge(
    ac: &mut AllowanceChargeSoFar,
    path: &[&str],
    v: &str,
) -> Result<(), String> {
    match path {
        ["ChargeIndicator", "Indicator"] => ac.charge = Some(boolean(v)?),
        ["CalculationPercent"] => ac.percent = Some(decimal(v)?),
        ["BasisAmount"] => ac.base = Some(decimal(v)?),
        ["ActualAmount" | "AppliedAmount"] => ac.amount = decimal(v)?,
        ["ReasonCode"] => fill(&mut ac.reason_code, v),
        ["Reason" | "Description"] => fill(&mut ac.reason, v),
        ["CategoryTradeTax" | "AppliedTradeTax", "CategoryCode"] => {
            ac.category = Some(category(v)?);
        }
        [
            "CategoryTradeTax" | "AppliedTradeTax",
            "RateApplicablePercent",
        ] => {
            ac.rate = decimal(v)?;
        }
        _ => {}
    }
    Ok(())
}

/// BG-4 (`seller`) or BG-7 below `ram:SellerTradeParty` or `ram:BuyerTradeParty`.
fn cii_party(p: &mut Party, seller: bool, path: &[&str], v: &str, a: &Attrs) {
    match path {
        // `ram:ID` comes before `ram:GlobalID`, and wins.
        ["ID" | "GlobalID"] => fill(&mut p.identifier, v),
        ["Name"] => fill(&mut p.name, v),
        ["SpecifiedLegalOrganization", "ID"] => fill(&mut p.legal_registration, v),
        ["DefinedTradeContact", "PersonName" | "DepartmentName"] => {
            fill(&mut p.contact.name, v);
        }
        [
            "DefinedTradeContact",
            "TelephoneUniversalCommunication",
            "CompleteNumber",
        ] => fill(&mut p.contact.phone, v),
        [
            "DefinedTradeContact",
            "EmailURIUniversalCommunication",
            "URIID",
        ] => {
            fill(&mut p.contact.email, v);
        }
        ["PostalTradeAddress", field] => cii_address(&mut p.address, field, v),
        ["URIUniversalCommunication", "URIID"] if email_scheme(a) => {
            fill(&mut p.electronic_address, v);
        }
        ["SpecifiedTaxRegistration", "ID"] => match a.scheme() {
            Some("VA") => fill(&mut p.vat_id, v),
            Some("FC") if seller => fill(&mut p.tax_number, v),
            _ => {}
        },
        _ => {}
    }
}

/// BG-5, BG-8 or BG-15: a child of `ram:PostalTradeAddress`.
fn cii_address(address: &mut Address, field: &str, v: &str) {
    let term = match field {
        "PostcodeCode" => &mut address.post_code,
        "LineOne" => &mut address.line1,
        "LineTwo" => &mut address.line2,
        "CityName" => &mut address.city,
        "CountryID" => &mut address.country,
        "CountrySubDivisionName" => &mut address.subdivision,
        _ => return,
    };
    fill(term, v);
}

/// BG-25 below `cac:InvoiceLine` or `cac:CreditNoteLine`.
fn ubl_line(line: &mut LineSoFar, path: &[&str], v: &str, a: &Attrs) -> Result<(), String> {
    match path {
        ["ID"] => fill(&mut line.id, v),
        ["Note"] => append(&mut line.note, v),
        ["InvoicedQuantity" | "CreditedQuantity"] => {
            line.quantity = decimal(v)?;
            fill(&mut line.unit_code, a.unit_code.as_deref().map_or("", trim));
        }
        ["LineExtensionAmount"] => line.net_amount = decimal(v)?,
        ["AllowanceCharge"] => line.settle()?,
        ["AllowanceCharge", rest @ ..] => {
            if let Some(ac) = &mut line.pending {
                ubl_allowance_charge(ac, rest, v)?;
            }
        }
        ["Item", "Description"] => fill(&mut line.description, v),
        ["Item", "Name"] => fill(&mut line.name, v),
        ["Item", "SellersItemIdentification", "ID"] => fill(&mut line.seller_id, v),
        ["Item", "ClassifiedTaxCategory", "ID"] => line.category = Some(category(v)?),
        ["Item", "ClassifiedTaxCategory", "Percent"] => line.rate = decimal(v)?,
        ["Price", "PriceAmount"] => line.net_price = decimal(v)?,
        _ => {}
    }
    Ok(())
}

/// BG-20, BG-21 or BG-27 below `cac:AllowanceCharge`.
fn ubl_allowance_charge(
    ac: &mut AllowanceChargeSoFar,
    path: &[&str],
    v: &str,
) -> Result<(), String> {
    match path {
        ["ChargeIndicator"] => ac.charge = Some(boolean(v)?),
        ["AllowanceChargeReasonCode"] => fill(&mut ac.reason_code, v),
        ["AllowanceChargeReason"] => fill(&mut ac.reason, v),
        ["MultiplierFactorNumeric"] => ac.percent = Some(decimal(v)?),
        ["Amount"] => ac.amount = decimal(v)?,
        ["BaseAmount"] => ac.base = Some(decimal(v)?),
        ["TaxCategory", "ID"] => ac.category = Some(category(v)?),
        ["TaxCategory", "Percent"] => ac.rate = decimal(v)?,
        _ => {}
    }
    Ok(())
}

/// BG-4 (with `creditor_id`, BT-90 as the seller's `SEPA` identifier) or BG-7, below
/// `cac:Party`. `tax_scheme` gathers a `cac:PartyTaxScheme`: `VAT` is BT-31 / BT-48, any
/// other scheme the seller's BT-32.
fn ubl_party(
    p: &mut Party,
    creditor_id: Option<&mut String>,
    tax_scheme: &mut (String, String),
    path: &[&str],
    v: &str,
    a: &Attrs,
) {
    match path {
        ["EndpointID"] if email_scheme(a) => fill(&mut p.electronic_address, v),
        ["PartyIdentification", "ID"] => match (a.scheme(), creditor_id) {
            (Some("SEPA"), Some(creditor_id)) => fill(creditor_id, v),
            (Some("SEPA"), None) => {}
            _ => fill(&mut p.identifier, v),
        },
        ["PostalAddress", rest @ ..] => ubl_address(&mut p.address, rest, v),
        ["PartyTaxScheme", "CompanyID"] => fill(&mut tax_scheme.0, v),
        ["PartyTaxScheme", "TaxScheme", "ID"] => fill(&mut tax_scheme.1, v),
        ["PartyTaxScheme"] => {
            let (id, scheme) = std::mem::take(tax_scheme);
            if scheme == "VAT" {
                fill(&mut p.vat_id, &id);
            } else if creditor_id.is_some() {
                fill(&mut p.tax_number, &id);
            }
        }
        ["PartyLegalEntity", "RegistrationName"] => fill(&mut p.name, v),
        ["PartyLegalEntity", "CompanyID"] => fill(&mut p.legal_registration, v),
        ["Contact", "Name"] => fill(&mut p.contact.name, v),
        ["Contact", "Telephone"] => fill(&mut p.contact.phone, v),
        ["Contact", "ElectronicMail"] => fill(&mut p.contact.email, v),
        _ => {}
    }
}

/// BG-5, BG-8 or BG-15 below `cac:PostalAddress` or `cac:Address`.
fn ubl_address(address: &mut Address, path: &[&str], v: &str) {
    let term = match path {
        ["StreetName"] => &mut address.line1,
        ["AdditionalStreetName"] => &mut address.line2,
        ["CityName"] => &mut address.city,
        ["PostalZone"] => &mut address.post_code,
        ["CountrySubentity"] => &mut address.subdivision,
        ["Country", "IdentificationCode"] => &mut address.country,
        _ => return,
    };
    fill(term, v);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::cii::{self, samples, samples::dec};
    use super::super::model::{Contact, Profile};
    use super::super::ubl;
    use super::*;

    const CII_01_01A: &[u8] =
        include_bytes!("../../../../tests/einvoice/samples/01.01a-INVOICE_uncefact.xml");
    const CII_01_18A: &[u8] =
        include_bytes!("../../../../tests/einvoice/samples/01.18a-INVOICE_uncefact.xml");
    const UBL_01_01A: &[u8] =
        include_bytes!("../../../../tests/einvoice/samples/01.01a-INVOICE_ubl.xml");
    const UBL_01_21A: &[u8] =
        include_bytes!("../../../../tests/einvoice/samples/01.21a-INVOICE_ubl.xml");

    fn read_ok(xml: &[u8]) -> Read {
        read(xml).unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(xml)))
    }

    fn date(s: &str) -> Date {
        Date::parse(s).expect("a date")
    }

    /// `f`, which must not take long: hostile input is refused in time linear in its size.
    #[expect(
        clippy::disallowed_methods,
        reason = "a test measuring that hostile input is dealt with quickly; the reader itself never reads the clock"
    )]
    fn quickly<T>(f: impl FnOnce() -> T) -> T {
        let start = std::time::Instant::now();
        let out = f();
        let took = start.elapsed();
        assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
        out
    }

    /// Every term of the model set, beyond what the shared samples set: the seller's
    /// identifier, the buyer's registration and contact, a deliver-to address with every
    /// line, a preceding invoice without a date, credit transfer and direct debit together,
    /// a percentage allowance, prepaid and rounding amounts, and the categories the
    /// service only reads (L, M, B) besides Z, E and G.
    fn everything() -> Invoice {
        let mut inv = samples::standard();
        inv.seller.identifier = "LIEF-7".into();
        inv.buyer.legal_registration = "HRB 999 B".into();
        inv.buyer.tax_number = "30/123/45678".into();
        inv.buyer.contact = Contact {
            name: "Eva Einkauf".into(),
            phone: "+49 30 123".into(),
            email: "eva@beispiel.de".into(),
        };
        inv.buyer.address.line2 = "Aufgang B".into();
        inv.buyer.address.subdivision = "Berlin".into();
        inv.deliver_to = Some(Address {
            line1: "Lagerweg 1".into(),
            line2: "Tor 3".into(),
            city: "Potsdam".into(),
            post_code: "14467".into(),
            subdivision: "Brandenburg".into(),
            country: "DE".into(),
        });
        inv.preceding = Some(("RE-2025-0099".into(), None));
        inv.payment.direct_debit = Some(DirectDebit {
            mandate: "M-1".into(),
            creditor_id: "DE98ZZZ09999999999".into(),
            debited_iban: "DE89370400440532013000".into(),
        });
        inv.allowances[0].base = Some(dec("500.00"));
        inv.allowances[0].percent = Some(dec("2"));
        inv.charges[0].category = Category::Z;
        inv.charges[0].rate = Decimal::ZERO;
        inv.totals.paid = dec("100.00");
        inv.totals.rounding = dec("0.04");
        inv.totals.payable = dec("1240.00");
        for (line, category) in inv
            .lines
            .iter_mut()
            .zip([Category::L, Category::M, Category::B])
        {
            line.category = category;
        }
        for (category, reason, code) in [
            (Category::E, "Steuerbefreit", "VATEX-EU-132"),
            (Category::G, "Ausfuhr", "VATEX-EU-G"),
        ] {
            inv.vat.push(VatBreakdown {
                taxable: dec("1.00"),
                tax: Decimal::ZERO,
                category,
                rate: Decimal::ZERO,
                exemption_reason: reason.into(),
                exemption_code: code.into(),
            });
        }
        inv
    }

    /// `inv` as the writers write it: BT-32 is the seller's only, so neither syntax writes
    /// a buyer's tax number.
    fn as_written(inv: &Invoice) -> Invoice {
        let mut inv = inv.clone();
        inv.buyer.tax_number.clear();
        inv
    }

    #[test]
    fn what_the_writers_write_reads_back_unchanged() {
        let mut invoices = samples::all().to_vec();
        invoices.push(("everything", everything()));
        for (name, inv) in invoices {
            for (profile, syntax) in [
                (Profile::XrechnungCii, Syntax::Cii),
                (Profile::FacturX, Syntax::Cii),
                (Profile::XrechnungUbl, Syntax::Ubl),
            ] {
                let xml = match syntax {
                    Syntax::Cii => cii::write(&inv, profile),
                    Syntax::Ubl => ubl::write(&inv, profile),
                };
                let read = read_ok(&xml);
                assert_eq!(read.syntax, syntax, "{name}");
                assert_eq!(read.specification, profile.specification(), "{name}");
                assert_eq!(
                    read.invoice,
                    as_written(&inv),
                    "{name} in {}",
                    profile.name()
                );
            }
        }
    }

    #[test]
    fn prefixes_do_not_matter_but_namespaces_do() {
        let inv = samples::reverse_charge();
        let xml = String::from_utf8(cii::write(&inv, Profile::XrechnungCii)).expect("UTF-8");
        // rsm as `x:`, ram as the default namespace, udt as `u:`, qdt as `q:`.
        let renamed = xml
            .replace("xmlns:rsm=", "xmlns:x=")
            .replace("<rsm:", "<x:")
            .replace("</rsm:", "</x:")
            .replace("xmlns:ram=", "xmlns=")
            .replace("<ram:", "<")
            .replace("</ram:", "</")
            .replace("xmlns:udt=", "xmlns:u=")
            .replace("<udt:", "<u:")
            .replace("</udt:", "</u:")
            .replace("xmlns:qdt=", "xmlns:q=");
        assert!(renamed.contains("<x:ExchangedDocument>\n    <ID>"));
        assert_eq!(read_ok(renamed.as_bytes()).invoice, inv);

        // The same names in another namespace are not the terms.
        let foreign = xml.replace(
            "ReusableAggregateBusinessInformationEntity:100",
            "ReusableAggregateBusinessInformationEntity:99",
        );
        assert_eq!(
            read(foreign.as_bytes()),
            Err(ReadError::Malformed(
                "ExchangedDocument/IssueDateTime: no issue date (BT-2)".into()
            ))
        );
        // A UBL invoice's root in the credit note's namespace is no invoice.
        let ubl = String::from_utf8(ubl::write(&inv, Profile::XrechnungUbl)).expect("UTF-8");
        let swapped = ubl.replace("xsd:Invoice-2", "xsd:CreditNote-2");
        assert_eq!(
            read(swapped.as_bytes()),
            Err(ReadError::NotAnInvoice(format!(
                "{{{UBL_CREDIT_NOTE}}}Invoice"
            )))
        );
    }

    #[test]
    fn a_byte_order_mark_and_crlf_line_ends_change_nothing() {
        let inv = samples::intra_community();
        for xml in [
            cii::write(&inv, Profile::FacturX),
            ubl::write(&inv, Profile::XrechnungUbl),
        ] {
            let text = String::from_utf8(xml).expect("UTF-8");
            let dos = format!("\u{feff}{}", text.replace('\n', "\r\n"));
            assert_eq!(read_ok(dos.as_bytes()).invoice, inv);
        }
    }

    #[test]
    fn the_official_test_suite_documents_read_as_they_say() {
        struct Expected {
            number: &'static str,
            issue: &'static str,
            type_code: &'static str,
            without_vat: &'static str,
            vat: &'static str,
            with_vat: &'static str,
            payable: &'static str,
            lines: usize,
        }
        let cases = [
            (
                CII_01_01A,
                Syntax::Cii,
                Expected {
                    number: "123456XX",
                    issue: "2016-04-04",
                    type_code: "380",
                    without_vat: "314.86",
                    vat: "22.04",
                    with_vat: "336.9",
                    payable: "336.9",
                    lines: 2,
                },
            ),
            (
                CII_01_18A,
                Syntax::Cii,
                Expected {
                    number: "PRG1502112",
                    issue: "2015-04-24",
                    type_code: "384",
                    without_vat: "8870",
                    vat: "1685.3",
                    with_vat: "10555.3",
                    payable: "10555.3",
                    lines: 4,
                },
            ),
            (
                UBL_01_01A,
                Syntax::Ubl,
                Expected {
                    number: "123456XX",
                    issue: "2016-04-04",
                    type_code: "380",
                    without_vat: "314.86",
                    vat: "22.04",
                    with_vat: "336.9",
                    payable: "336.9",
                    lines: 2,
                },
            ),
            (
                UBL_01_21A,
                Syntax::Ubl,
                Expected {
                    number: "18383",
                    issue: "2020-11-27",
                    type_code: "380",
                    without_vat: "233.00",
                    vat: "0.00",
                    with_vat: "233.00",
                    payable: "233.00",
                    lines: 1,
                },
            ),
        ];
        for (xml, syntax, e) in cases {
            let read = read_ok(xml);
            let inv = &read.invoice;
            assert_eq!(read.syntax, syntax);
            assert_eq!(
                read.specification,
                "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0"
            );
            assert_eq!(inv.number, e.number);
            assert_eq!(inv.issue_date, date(e.issue));
            assert_eq!(inv.type_code, e.type_code);
            assert_eq!(inv.currency, "EUR");
            assert_eq!(inv.totals.without_vat, dec(e.without_vat), "{}", e.number);
            assert_eq!(inv.totals.vat, dec(e.vat), "{}", e.number);
            assert_eq!(inv.totals.with_vat, dec(e.with_vat), "{}", e.number);
            assert_eq!(inv.totals.payable, dec(e.payable), "{}", e.number);
            assert_eq!(inv.lines.len(), e.lines, "{}", e.number);
        }

        // 01.01a is one invoice in both syntaxes: both read the same, but for the note,
        // which UBL prefixes with its subject code.
        let (cii, ubl) = (read_ok(CII_01_01A).invoice, read_ok(UBL_01_01A).invoice);
        assert_eq!(cii.notes.len(), 1);
        assert_eq!(ubl.notes, [format!("#ADU#{}", cii.notes[0])]);
        assert_eq!(
            Invoice {
                notes: Vec::new(),
                ..cii
            },
            Invoice {
                notes: Vec::new(),
                ..ubl.clone()
            }
        );
        assert_eq!(ubl.due_date, None);
        assert_eq!(ubl.seller.name, "[Seller name]");
        assert_eq!(ubl.seller.legal_registration, "[HRA-Eintrag]");
        assert_eq!(ubl.seller.vat_id, "DE 123456789");
        assert_eq!(ubl.seller.electronic_address, "seller@email.de");
        assert_eq!(ubl.buyer.identifier, "[Buyer identifier]");
        assert_eq!(ubl.payment.means_code, "58");
        assert_eq!(
            ubl.payment.credit_transfer,
            Some(CreditTransfer {
                iban: "DE79000000001234567890".into(),
                ..CreditTransfer::default()
            })
        );
        assert_eq!(ubl.payment_terms, "Zahlbar sofort ohne Abzug.");
        assert_eq!(
            (
                ubl.lines[0].seller_id.as_str(),
                ubl.lines[0].description.as_str(),
                ubl.lines[0].unit_code.as_str(),
                ubl.lines[0].category,
                ubl.lines[0].rate,
                ubl.lines[0].net_price,
            ),
            (
                "246",
                "Zeitschrift Inland",
                "XPP",
                Category::S,
                dec("7"),
                dec("288.79")
            )
        );

        // 01.18a: a corrected invoice with a deliver-to address and two payment means.
        let corrected = read_ok(CII_01_18A).invoice;
        assert_eq!(corrected.preceding, Some(("PRG1502168".into(), None)));
        assert_eq!(
            corrected.deliver_to,
            Some(Address {
                city: "Schulungsort".into(),
                post_code: "12345".into(),
                country: "DE".into(),
                ..Address::default()
            })
        );
        assert_eq!(
            corrected.payment.credit_transfer.map(|t| t.iban),
            Some("DE79000000001234567890".into()),
            "the first payment means is BG-16"
        );
        assert_eq!(corrected.buyer.identifier, "BI123456");
        assert_eq!(corrected.seller.legal_registration, "HRB 123456");
        assert_eq!(corrected.payment_terms, "14 Tage");
        assert_eq!(
            corrected
                .lines
                .iter()
                .map(|l| l.net_amount)
                .sum::<Decimal>(),
            dec("8870")
        );

        // 01.21a: reverse charge with a document level charge and a price discount.
        let reverse = read_ok(UBL_01_21A).invoice;
        assert_eq!(reverse.due_date, Some(date("2020-12-27")));
        assert_eq!(reverse.delivery_date, Some(date("2020-11-23")));
        assert_eq!(reverse.buyer_reference, "04011000-12349-88");
        assert_eq!(reverse.seller.identifier, "116078");
        assert_eq!(reverse.seller.vat_id, "DE 123456789");
        assert_eq!(reverse.seller.tax_number, "04523149435");
        assert_eq!(reverse.buyer.vat_id, "DE152138634");
        assert_eq!(reverse.buyer.tax_number, "", "BT-32 is the seller's only");
        assert_eq!(reverse.buyer.name, "DB Station&Service AG RB Mitte");
        assert_eq!(reverse.seller.contact.phone, "069-12335");
        assert_eq!(reverse.payment.means_text, "Information");
        assert_eq!(
            reverse.payment.credit_transfer,
            Some(CreditTransfer {
                iban: "DE79000000001234567890".into(),
                account_name: "Mustermann GmbH".into(),
                bic: "DRESDEFFXXX".into(),
            })
        );
        assert_eq!(reverse.allowances, []);
        assert_eq!(
            reverse.charges,
            [AllowanceCharge {
                amount: dec("25.00"),
                base: None,
                percent: None,
                category: Category::AE,
                rate: Decimal::ZERO,
                reason: "Lieferpauschale".into(),
                reason_code: String::new(),
            }]
        );
        assert_eq!(reverse.totals.charges, dec("25.00"));
        assert_eq!(reverse.vat[0].category, Category::AE);
        assert_eq!(
            reverse.vat[0].exemption_reason,
            "Umkehrung der Steuerschuldnerschaft"
        );
        let line = &reverse.lines[0];
        assert_eq!(
            line.allowance, None,
            "a price discount is no line allowance"
        );
        assert_eq!(line.net_price, dec("52.00"));
        assert_eq!((line.quantity, line.unit_code.as_str()), (dec("4"), "HUR"));
        assert_eq!(line.name, "Tür Instandsetzung");
        assert_eq!(line.category, Category::AE);
    }

    #[test]
    fn zugferd_1_reads_what_maps() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12" xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:15">
  <rsm:SpecifiedExchangedDocumentContext>
    <ram:TestIndicator><udt:Indicator>false</udt:Indicator></ram:TestIndicator>
    <ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>urn:ferd:CrossIndustryDocument:invoice:1p0:comfort</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter>
  </rsm:SpecifiedExchangedDocumentContext>
  <rsm:HeaderExchangedDocument>
    <ram:ID>ZF1-42</ram:ID>
    <ram:Name>RECHNUNG</ram:Name>
    <ram:TypeCode>380</ram:TypeCode>
    <ram:IssueDateTime><udt:DateTimeString format="102">20130305</udt:DateTimeString></ram:IssueDateTime>
    <ram:IncludedNote><ram:Content>Erste Notiz</ram:Content></ram:IncludedNote>
  </rsm:HeaderExchangedDocument>
  <rsm:SpecifiedSupplyChainTradeTransaction>
    <ram:ApplicableSupplyChainTradeAgreement>
      <ram:SellerTradeParty>
        <ram:Name>Lieferant GmbH</ram:Name>
        <ram:PostalTradeAddress><ram:PostcodeCode>80333</ram:PostcodeCode><ram:LineOne>Lieferantenstraße 20</ram:LineOne><ram:CityName>München</ram:CityName><ram:CountryID>DE</ram:CountryID></ram:PostalTradeAddress>
        <ram:SpecifiedTaxRegistration><ram:ID schemeID="FC">201/113/40209</ram:ID></ram:SpecifiedTaxRegistration>
        <ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">DE123456789</ram:ID></ram:SpecifiedTaxRegistration>
      </ram:SellerTradeParty>
      <ram:BuyerTradeParty><ram:ID>K-77</ram:ID><ram:Name>Kunden AG</ram:Name></ram:BuyerTradeParty>
      <ram:BuyerOrderReferencedDocument><ram:ID>B-2013-1</ram:ID></ram:BuyerOrderReferencedDocument>
    </ram:ApplicableSupplyChainTradeAgreement>
    <ram:ApplicableSupplyChainTradeDelivery>
      <ram:ActualDeliverySupplyChainEvent><ram:OccurrenceDateTime><udt:DateTimeString format="102">20130304</udt:DateTimeString></ram:OccurrenceDateTime></ram:ActualDeliverySupplyChainEvent>
    </ram:ApplicableSupplyChainTradeDelivery>
    <ram:ApplicableSupplyChainTradeSettlement>
      <ram:PaymentReference>ZF1-42</ram:PaymentReference>
      <ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>
      <ram:SpecifiedTradeSettlementPaymentMeans>
        <ram:TypeCode>31</ram:TypeCode>
        <ram:Information>Überweisung</ram:Information>
        <ram:PayeePartyCreditorFinancialAccount><ram:IBANID>DE08700901001234567890</ram:IBANID></ram:PayeePartyCreditorFinancialAccount>
        <ram:PayeeSpecifiedCreditorFinancialInstitution><ram:BICID>GENODEF1M04</ram:BICID></ram:PayeeSpecifiedCreditorFinancialInstitution>
      </ram:SpecifiedTradeSettlementPaymentMeans>
      <ram:ApplicableTradeTax><ram:CalculatedAmount currencyID="EUR">38.57</ram:CalculatedAmount><ram:TypeCode>VAT</ram:TypeCode><ram:BasisAmount currencyID="EUR">203.00</ram:BasisAmount><ram:ApplicablePercent>19.00</ram:ApplicablePercent></ram:ApplicableTradeTax>
      <ram:SpecifiedLogisticsServiceCharge><ram:Description>Versand</ram:Description><ram:AppliedAmount currencyID="EUR">5.00</ram:AppliedAmount><ram:AppliedTradeTax><ram:TypeCode>VAT</ram:TypeCode><ram:CategoryCode>S</ram:CategoryCode><ram:ApplicablePercent>19</ram:ApplicablePercent></ram:AppliedTradeTax></ram:SpecifiedLogisticsServiceCharge>
      <ram:SpecifiedTradePaymentTerms><ram:Description>Zahlbar in 30 Tagen</ram:Description><ram:DueDateDateTime><udt:DateTimeString format="102">20130404</udt:DateTimeString></ram:DueDateDateTime></ram:SpecifiedTradePaymentTerms>
      <ram:SpecifiedTradeSettlementMonetarySummation>
        <ram:LineTotalAmount currencyID="EUR">198.00</ram:LineTotalAmount>
        <ram:ChargeTotalAmount currencyID="EUR">5.00</ram:ChargeTotalAmount>
        <ram:AllowanceTotalAmount currencyID="EUR">0.00</ram:AllowanceTotalAmount>
        <ram:TaxBasisTotalAmount currencyID="EUR">203.00</ram:TaxBasisTotalAmount>
        <ram:TaxTotalAmount currencyID="EUR">38.57</ram:TaxTotalAmount>
        <ram:GrandTotalAmount currencyID="EUR">241.57</ram:GrandTotalAmount>
        <ram:DuePayableAmount currencyID="EUR">241.57</ram:DuePayableAmount>
      </ram:SpecifiedTradeSettlementMonetarySummation>
    </ram:ApplicableSupplyChainTradeSettlement>
    <ram:IncludedSupplyChainTradeLineItem>
      <ram:AssociatedDocumentLineDocument><ram:LineID>1</ram:LineID></ram:AssociatedDocumentLineDocument>
      <ram:SpecifiedSupplyChainTradeAgreement>
        <ram:GrossPriceProductTradePrice><ram:ChargeAmount currencyID="EUR">11.70</ram:ChargeAmount><ram:AppliedTradeAllowanceCharge><ram:ChargeIndicator><udt:Indicator>false</udt:Indicator></ram:ChargeIndicator><ram:ActualAmount currencyID="EUR">1.80</ram:ActualAmount></ram:AppliedTradeAllowanceCharge></ram:GrossPriceProductTradePrice>
        <ram:NetPriceProductTradePrice><ram:ChargeAmount currencyID="EUR">9.90</ram:ChargeAmount></ram:NetPriceProductTradePrice>
      </ram:SpecifiedSupplyChainTradeAgreement>
      <ram:SpecifiedSupplyChainTradeDelivery><ram:BilledQuantity unitCode="C62">20.0000</ram:BilledQuantity></ram:SpecifiedSupplyChainTradeDelivery>
      <ram:SpecifiedSupplyChainTradeSettlement>
        <ram:SpecifiedTradeSettlementMonetarySummation><ram:LineTotalAmount currencyID="EUR">198.00</ram:LineTotalAmount></ram:SpecifiedTradeSettlementMonetarySummation>
      </ram:SpecifiedSupplyChainTradeSettlement>
      <ram:SpecifiedTradeProduct><ram:SellerAssignedID>TB100A4</ram:SellerAssignedID><ram:Name>Trennblätter A4</ram:Name></ram:SpecifiedTradeProduct>
    </ram:IncludedSupplyChainTradeLineItem>
  </rsm:SpecifiedSupplyChainTradeTransaction>
</rsm:CrossIndustryDocument>
"#;
        let read = read_ok(xml.as_bytes());
        assert_eq!(read.syntax, Syntax::Cii);
        assert_eq!(
            read.specification,
            "urn:ferd:CrossIndustryDocument:invoice:1p0:comfort"
        );
        let inv = read.invoice;
        assert_eq!(inv.number, "ZF1-42");
        assert_eq!(inv.issue_date, date("2013-03-05"));
        assert_eq!(inv.due_date, Some(date("2013-04-04")));
        assert_eq!(inv.delivery_date, Some(date("2013-03-04")));
        assert_eq!(inv.notes, ["Erste Notiz"]);
        assert_eq!(inv.order_reference, "B-2013-1");
        assert_eq!(inv.seller.vat_id, "DE123456789");
        assert_eq!(inv.seller.tax_number, "201/113/40209");
        assert_eq!(inv.seller.address.city, "München");
        assert_eq!(inv.buyer.identifier, "K-77");
        assert_eq!(inv.payment.means_code, "31");
        assert_eq!(inv.payment.remittance, "ZF1-42");
        assert_eq!(
            inv.payment.credit_transfer.map(|t| (t.iban, t.bic)),
            Some(("DE08700901001234567890".into(), "GENODEF1M04".into()))
        );
        assert_eq!(inv.payment_terms, "Zahlbar in 30 Tagen");
        assert_eq!(
            inv.vat,
            [VatBreakdown {
                taxable: dec("203.00"),
                tax: dec("38.57"),
                category: Category::S,
                rate: dec("19"),
                exemption_reason: String::new(),
                exemption_code: String::new(),
            }],
            "a rated breakdown without a category is standard rated"
        );
        assert_eq!(inv.charges.len(), 1);
        assert_eq!(
            (inv.charges[0].amount, inv.charges[0].reason.as_str()),
            (dec("5.00"), "Versand")
        );
        assert_eq!(inv.totals.line_net, dec("198.00"));
        assert_eq!(inv.totals.vat, dec("38.57"));
        assert_eq!(inv.totals.payable, dec("241.57"));
        let line = &inv.lines[0];
        assert_eq!(line.net_price, dec("9.90"));
        assert_eq!(
            line.allowance, None,
            "a gross price discount is no line allowance"
        );
        assert_eq!((line.quantity, line.unit_code.as_str()), (dec("20"), "C62"));
        assert_eq!(line.net_amount, dec("198.00"));
        assert_eq!(
            (line.category, line.rate),
            (Category::S, dec("19")),
            "a line without tax has the only breakdown's"
        );
        assert_eq!(line.seller_id, "TB100A4");
    }

    #[test]
    fn a_factur_x_minimum_document_reads_its_few_terms() {
        let xml = r#"<?xml version='1.0' encoding='UTF-8'?>
<rsm:CrossIndustryInvoice xmlns:qdt="urn:un:unece:uncefact:data:standard:QualifiedDataType:100" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100" xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100">
<rsm:ExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>urn:factur-x.eu:1p0:minimum</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter></rsm:ExchangedDocumentContext>
<rsm:ExchangedDocument><ram:ID>FX-1</ram:ID><ram:TypeCode>380</ram:TypeCode><ram:IssueDateTime><udt:DateTimeString format="102">20240131</udt:DateTimeString></ram:IssueDateTime></rsm:ExchangedDocument>
<rsm:SupplyChainTradeTransaction>
<ram:ApplicableHeaderTradeAgreement><ram:BuyerReference>R-1</ram:BuyerReference>
<ram:SellerTradeParty><ram:Name>Verkäufer</ram:Name><ram:PostalTradeAddress><ram:CountryID>FR</ram:CountryID></ram:PostalTradeAddress><ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">FR11123456782</ram:ID></ram:SpecifiedTaxRegistration></ram:SellerTradeParty>
<ram:BuyerTradeParty><ram:Name>Käufer</ram:Name></ram:BuyerTradeParty></ram:ApplicableHeaderTradeAgreement>
<ram:ApplicableHeaderTradeDelivery/>
<ram:ApplicableHeaderTradeSettlement><ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>
<ram:SpecifiedTradeSettlementHeaderMonetarySummation><ram:TaxBasisTotalAmount>100.00</ram:TaxBasisTotalAmount><ram:TaxTotalAmount currencyID="USD">21.50</ram:TaxTotalAmount><ram:TaxTotalAmount currencyID="EUR">20.00</ram:TaxTotalAmount><ram:GrandTotalAmount>120.00</ram:GrandTotalAmount><ram:DuePayableAmount>120.00</ram:DuePayableAmount></ram:SpecifiedTradeSettlementHeaderMonetarySummation>
</ram:ApplicableHeaderTradeSettlement></rsm:SupplyChainTradeTransaction></rsm:CrossIndustryInvoice>"#;
        let read = read_ok(xml.as_bytes());
        assert_eq!(read.specification, "urn:factur-x.eu:1p0:minimum");
        let inv = read.invoice;
        assert_eq!(inv.number, "FX-1");
        assert_eq!(inv.issue_date, date("2024-01-31"));
        assert_eq!(inv.seller.vat_id, "FR11123456782");
        assert_eq!(inv.buyer.name, "Käufer");
        assert_eq!(
            inv.totals,
            Totals {
                without_vat: dec("100.00"),
                vat: dec("20.00"),
                with_vat: dec("120.00"),
                payable: dec("120.00"),
                ..Totals::default()
            },
            "BT-110 is the tax total in the invoice currency, not BT-111"
        );
        assert!(inv.lines.is_empty() && inv.vat.is_empty() && inv.payment == Payment::default());
    }

    #[test]
    fn an_amount_due_left_out_is_what_the_totals_make_it() {
        let xml = std::str::from_utf8(CII_01_01A).unwrap();
        let at = xml.find("<ram:DuePayableAmount").unwrap();
        let end = xml[at..].find("</ram:DuePayableAmount>").unwrap() + at;
        let without = format!(
            "{}{}",
            &xml[..at],
            &xml[end + "</ram:DuePayableAmount>".len()..]
        );
        let read = read_ok(without.as_bytes()).invoice;
        let t = &read.totals;
        assert_eq!(t.payable, t.with_vat - t.paid + t.rounding);
        assert_eq!(t.payable, read_ok(CII_01_01A).invoice.totals.payable);
    }

    #[test]
    fn a_line_of_text_alone_is_a_note_not_a_line() {
        let xml = std::str::from_utf8(CII_01_01A).unwrap();
        let text_line = "<ram:IncludedSupplyChainTradeLineItem><ram:AssociatedDocumentLineDocument>\
            <ram:IncludedNote><ram:Content>Lieferung bis 23.12. garantiert</ram:Content></ram:IncludedNote>\
            </ram:AssociatedDocumentLineDocument><ram:SpecifiedLineTradeSettlement/>\
            </ram:IncludedSupplyChainTradeLineItem>";
        let with_text = xml.replacen(
            "<ram:IncludedSupplyChainTradeLineItem>",
            &format!("{text_line}<ram:IncludedSupplyChainTradeLineItem>"),
            1,
        );
        assert_ne!(with_text, xml);
        let plain = read_ok(xml.as_bytes()).invoice;
        let with = read_ok(with_text.as_bytes()).invoice;
        assert_eq!(with.lines, plain.lines, "the same lines");
        assert_eq!(
            with.notes.last().map(String::as_str),
            Some("Lieferung bis 23.12. garantiert")
        );
    }

    #[test]
    fn numbers_are_read_strictly() {
        for (text, value) in [
            ("12.50", "12.5"),
            ("-3", "-3"),
            ("+3", "3"),
            (".5", "0.5"),
            ("5.", "5"),
            ("007.10", "7.1"),
            (
                "0.0000000000000000000000000001",
                "0.0000000000000000000000000001",
            ),
            (
                "79228162514264337593543950335",
                "79228162514264337593543950335",
            ),
        ] {
            assert_eq!(decimal(text), Ok(dec(value)), "{text}");
        }
        for text in [
            "",
            "+",
            "-",
            ".",
            "1e3",
            "1E3",
            "1,5",
            "1 000",
            "0x10",
            "NaN",
            "inf",
            "1_000",
            "１２",
            "--1",
            "+-1",
            "1.2.3",
            "1.-2",
            "79228162514264337593543950336",
            "0.00000000000000000000000000001",
        ] {
            assert!(decimal(text).is_err(), "{text}");
        }
        assert!(decimal(&"1".repeat(65)).is_err());
        assert_eq!(
            decimal(&"9".repeat(5000)),
            Err(format!("'{}' is not a decimal number", "9".repeat(SHOWN)))
        );
        for (text, value) in [("true", true), ("1", true), ("false", false), ("0", false)] {
            assert_eq!(boolean(text), Ok(value));
        }
        assert!(boolean("yes").is_err() && boolean("TRUE").is_err());
    }

    #[test]
    fn dates_are_read_in_their_formats() {
        let attrs = |format: Option<&str>| Attrs {
            format: format.map(str::to_owned),
            ..Attrs::default()
        };
        assert_eq!(
            cii_date("20160404", &attrs(None)),
            Ok(Some(date("2016-04-04")))
        );
        assert_eq!(
            cii_date("20160404", &attrs(Some("102"))),
            Ok(Some(date("2016-04-04")))
        );
        assert_eq!(
            cii_date("201604", &attrs(Some("610"))),
            Ok(Some(date("2016-04-01")))
        );
        assert_eq!(cii_date("201614", &attrs(Some("616"))), Ok(None));
        for (text, format) in [
            ("20160231", Some("102")),
            ("2016-04-04", Some("102")),
            ("2016044", None),
            ("", Some("102")),
            ("201613", Some("610")),
            ("20160404", Some("610")),
            ("20160404", Some("203")),
            ("٢٠١٦٠٤٠٤", None),
        ] {
            assert!(cii_date(text, &attrs(format)).is_err(), "{text} {format:?}");
        }
        for (text, value) in [
            ("2016-04-04", "2016-04-04"),
            ("2016-04-04Z", "2016-04-04"),
            ("2016-04-04+01:00", "2016-04-04"),
            ("2016-04-04-05:30", "2016-04-04"),
        ] {
            assert_eq!(ubl_date(text), Ok(Some(date(value))), "{text}");
        }
        for text in [
            "2016-4-4",
            "04.04.2016",
            "20160404",
            "2016-04-04T10:00:00",
            "2016-04-04+0100",
            "2016-02-30",
            "2016-04-04é",
            "",
        ] {
            assert!(ubl_date(text).is_err(), "{text}");
        }
    }

    #[test]
    fn what_cannot_be_read_is_malformed_naming_the_element() {
        let xml =
            String::from_utf8(cii::write(&samples::standard(), Profile::FacturX)).expect("UTF-8");
        let cases = [
            (
                "<ram:LineTotalAmount>1136.05<",
                "<ram:LineTotalAmount>1.13605e3<",
                "SupplyChainTradeTransaction/ApplicableHeaderTradeSettlement/SpecifiedTradeSettlementHeaderMonetarySummation/LineTotalAmount: '1.13605e3' is not a decimal number",
            ),
            (
                "<ram:CategoryCode>S</ram:CategoryCode>\n        <ram:RateApplicablePercent>19",
                "<ram:CategoryCode>X</ram:CategoryCode>\n        <ram:RateApplicablePercent>19",
                "SupplyChainTradeTransaction/ApplicableHeaderTradeSettlement/ApplicableTradeTax/CategoryCode: 'X' is no VAT category code",
            ),
            (
                "<udt:Indicator>false</udt:Indicator>",
                "<udt:Indicator>nein</udt:Indicator>",
                "SupplyChainTradeTransaction/IncludedSupplyChainTradeLineItem/SpecifiedLineTradeSettlement/SpecifiedTradeAllowanceCharge/ChargeIndicator/Indicator: 'nein' is neither true nor false",
            ),
            (
                ">20260301<",
                ">20260230<",
                "ExchangedDocument/IssueDateTime/DateTimeString: '20260230' is no date in format 102",
            ),
        ];
        for (from, to, message) in cases {
            assert!(xml.contains(from), "{from}");
            let broken = xml.replacen(from, to, 1);
            assert_eq!(
                read(broken.as_bytes()),
                Err(ReadError::Malformed(message.into()))
            );
        }
        let ubl = String::from_utf8(ubl::write(&samples::standard(), Profile::XrechnungUbl))
            .expect("UTF-8");
        let broken = ubl.replacen("<cbc:ChargeIndicator>true</cbc:ChargeIndicator>", "", 1);
        assert_eq!(
            read(broken.as_bytes()),
            Err(ReadError::Malformed(
                "document level allowance or charge 2: no ChargeIndicator".into()
            ))
        );
        let broken = ubl.replacen("<cbc:IssueDate>2026-03-01", "<cbc:IssueDate>01.03.2026", 1);
        assert_eq!(
            read(broken.as_bytes()),
            Err(ReadError::Malformed(
                "IssueDate: '01.03.2026' is no date (YYYY-MM-DD)".into()
            ))
        );
        let broken = ubl.replacen("<cbc:ID>S</cbc:ID>", "", 1);
        assert!(
            matches!(read(broken.as_bytes()), Err(ReadError::Malformed(m)) if m.contains("no VAT category"))
        );
    }

    #[test]
    fn other_documents_are_no_invoices() {
        for (xml, root) in [
            (
                r#"<Order xmlns="urn:oasis:names:specification:ubl:schema:xsd:Order-2"><cbc:ID xmlns:cbc="x">1</cbc:ID></Order>"#,
                "{urn:oasis:names:specification:ubl:schema:xsd:Order-2}Order",
            ),
            ("<?xml version=\"1.0\"?>\n<html><body/></html>", "html"),
            ("<Invoice><ID>1</ID></Invoice>", "Invoice"),
            (
                "<a:Invoice xmlns:a=\"urn:example\"/>",
                "{urn:example}Invoice",
            ),
            ("<x:CrossIndustryInvoice/>", "x:CrossIndustryInvoice"),
        ] {
            assert_eq!(
                read(xml.as_bytes()),
                Err(ReadError::NotAnInvoice(root.into())),
                "{xml}"
            );
        }
    }

    #[test]
    fn what_is_not_xml_says_so() {
        let cii = cii::write(&samples::standard(), Profile::XrechnungCii);
        let mut two_roots = cii.clone();
        two_roots.extend_from_slice(b"<rsm:CrossIndustryInvoice/>");
        let mut text_after = cii.clone();
        text_after.extend_from_slice(b"trailing");
        let mut utf16 = vec![0xff, 0xfe];
        utf16.extend(
            "<?xml version=\"1.0\"?><a/>"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        );
        for xml in [
            b"".as_slice(),
            b"   \n",
            b"Rechnung 4711",
            b"%PDF-1.7\n%\xe2\xe3\xcf\xd3",
            b"\xff\xfe\x00<",
            &utf16,
            b"<!-- nothing else -->",
            &two_roots,
            &text_after,
        ]
        .into_iter()
        .map(<[u8]>::to_vec)
        .chain(
            [
                ">",
                "></b>",
                "><a x='1' x='2'/><b/>",
                ">&undefined;",
                ">&#0;",
                ">&#xD800;",
                "><a b=\"&ext;\"/>",
                "><a b=\"x</a>",
                "><![CDATA[x",
                "></rsm:CrossIndustryInvoice></rsm:CrossIndustryInvoice>",
            ]
            .map(|rest| {
                format!("<rsm:CrossIndustryInvoice xmlns:rsm=\"{CII}\"{rest}").into_bytes()
            }),
        ) {
            let xml = xml.as_slice();
            assert!(
                matches!(read(xml), Err(ReadError::NotXml(_))),
                "{:?}: {:?}",
                String::from_utf8_lossy(xml),
                read(xml)
            );
        }
    }

    #[test]
    fn a_document_type_declaration_is_refused_before_anything_else() {
        const LAUGHS: &str = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"><rsm:ExchangedDocument>&lol9;</rsm:ExchangedDocument></rsm:CrossIndustryInvoice>"#;
        const EXTERNAL: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"><cbc:ID>&xxe;</cbc:ID></Invoice>"#;
        const PUBLIC: &str = "\u{feff}<?xml version=\"1.0\"?>\n<!-- a comment -->\n<?pi x?>\n<!DOCTYPE Invoice PUBLIC \"-//x//y\" \"http://example.com/x.dtd\"><Invoice/>";
        for xml in [
            LAUGHS,
            EXTERNAL,
            PUBLIC,
            "<!doctype html><html/>",
            // Broken after the declaration: refused all the same.
            "<!DOCTYPE x [ <!ENTITY a \"",
            "<!DOCTYPE",
        ] {
            assert_eq!(
                quickly(|| read(xml.as_bytes())),
                Err(ReadError::Dtd),
                "{xml}"
            );
        }
        // Not where a DOCTYPE may be: refused by the parser or as a DOCTYPE.
        let inside = "<Invoice xmlns=\"urn:oasis:names:specification:ubl:schema:xsd:Invoice-2\"><!DOCTYPE x></Invoice>";
        assert!(matches!(
            read(inside.as_bytes()),
            Err(ReadError::Dtd | ReadError::NotXml(_))
        ));
        // An entity referenced without any declaration is not expanded either.
        let undeclared = EXTERNAL.replace(
            "<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>\n",
            "",
        );
        assert!(matches!(
            read(undeclared.as_bytes()),
            Err(ReadError::NotXml(m)) if m.contains("&xxe;")
        ));
    }

    fn nested(depth: usize) -> String {
        let mut xml = format!("<rsm:CrossIndustryInvoice xmlns:rsm=\"{CII}\">");
        xml.push_str(&"<a>".repeat(depth - 1));
        xml.push_str(&"</a>".repeat(depth - 1));
        xml.push_str("</rsm:CrossIndustryInvoice>");
        xml
    }

    #[test]
    fn nesting_is_bounded() {
        assert_eq!(
            quickly(|| read(nested(10_000).as_bytes())),
            Err(ReadError::TooDeep)
        );
        assert_eq!(
            read(nested(MAX_DEPTH + 1).as_bytes()),
            Err(ReadError::TooDeep)
        );
        // As deep as allowed: read, and refused for what it lacks.
        assert!(matches!(
            read(nested(MAX_DEPTH).as_bytes()),
            Err(ReadError::Malformed(_))
        ));
        // Unclosed, too.
        let open = format!(
            "<rsm:CrossIndustryInvoice xmlns:rsm=\"{CII}\">{}",
            "<a>".repeat(10_000)
        );
        assert_eq!(quickly(|| read(open.as_bytes())), Err(ReadError::TooDeep));
    }

    #[test]
    fn a_truncated_document_is_no_xml() {
        for xml in [
            cii::write(&samples::standard(), Profile::XrechnungCii),
            ubl::write(&samples::credit_note(), Profile::XrechnungUbl),
        ] {
            let end = xml.iter().rposition(|&b| b == b'>').expect("a tag") + 1;
            assert!(read(&xml[..end]).is_ok());
            for cut in 0..end {
                let result = read(&xml[..cut]);
                assert!(
                    matches!(result, Err(ReadError::NotXml(_))),
                    "cut at {cut}: {result:?}"
                );
            }
        }
    }

    #[test]
    fn large_input_is_read_in_linear_time() {
        const MB5: usize = 5 * 1024 * 1024;
        let xml = String::from_utf8(cii::write(&samples::standard(), Profile::XrechnungCii))
            .expect("UTF-8");

        // A 5 MB note is read, whole.
        let big_note = xml.replacen("Zweite Notiz", &"x".repeat(MB5), 1);
        let read_back = quickly(|| read_ok(big_note.as_bytes()));
        assert_eq!(read_back.invoice.notes[1].len(), MB5);

        // A 5 MB note of references.
        let references = xml.replacen("Zweite Notiz", &"&amp;&#x41;".repeat(MB5 / 11), 1);
        let read_back = quickly(|| read_ok(references.as_bytes()));
        assert_eq!(read_back.invoice.notes[1].len(), 2 * (MB5 / 11));

        // A 5 MB amount is refused, with a short message.
        let big_amount = xml.replacen(">1136.05<", &format!(">{}<", "9".repeat(MB5)), 1);
        match quickly(|| read(big_amount.as_bytes())) {
            Err(ReadError::Malformed(m)) => assert!(m.len() < 300, "{m}"),
            other => panic!("{other:?}"),
        }

        // 5 MB of text outside the root, of an unclosed comment, of an unclosed tag.
        for hostile in [
            format!("{xml}{}", "x".repeat(MB5)),
            format!("<!--{}", "-".repeat(MB5)),
            format!("<rsm:CrossIndustryInvoice a=\"{}", ">".repeat(MB5)),
            format!("<{}", "a".repeat(MB5)),
        ] {
            assert!(
                matches!(
                    quickly(|| read(hostile.as_bytes())),
                    Err(ReadError::NotXml(_))
                ),
                "{}",
                &hostile[..40]
            );
        }

        // Many attributes, many siblings, many namespace declarations.
        let root = format!("<rsm:CrossIndustryInvoice xmlns:rsm=\"{CII}\"");
        let attributes: String = (0..300_000).map(|i| format!(" a{i}=\"{i}\"")).collect();
        let siblings = format!(
            "{root}>{}</rsm:CrossIndustryInvoice>",
            "<x/>".repeat(1_000_000)
        );
        let wide = format!("{root}{attributes}/>");
        for hostile in [wide, siblings] {
            assert!(matches!(
                quickly(|| read(hostile.as_bytes())),
                Err(ReadError::Malformed(_))
            ));
        }
        let declarations: String = (0..100_000)
            .map(|i| format!(" xmlns:p{i}=\"u{i}\""))
            .collect();
        let namespaces = format!("{root}{declarations}><p1:a/></rsm:CrossIndustryInvoice>");
        assert!(matches!(
            quickly(|| read(namespaces.as_bytes())),
            Err(ReadError::NotXml(_))
        ));
        // 100 000 lines: linear, too.
        let line = xml
            .split("<ram:IncludedSupplyChainTradeLineItem>")
            .nth(1)
            .and_then(|l| l.split("</ram:IncludedSupplyChainTradeLineItem>").next())
            .expect("a line");
        let line = format!(
            "<ram:IncludedSupplyChainTradeLineItem>{line}</ram:IncludedSupplyChainTradeLineItem>"
        );
        let many = xml.replacen(
            "<ram:ApplicableHeaderTradeAgreement>",
            &format!(
                "{}<ram:ApplicableHeaderTradeAgreement>",
                line.repeat(10_000)
            ),
            1,
        );
        let read_back = quickly(|| read_ok(many.as_bytes()));
        assert_eq!(read_back.invoice.lines.len(), 10_003);
    }

    #[test]
    fn the_vocabularies_are_sorted_and_aliases_name_known_names() {
        for names in [RSM, RAM, DATA_TYPES, CAC, CBC] {
            assert!(names.windows(2).all(|w| w[0] < w[1]), "{names:?}");
        }
        for (aliases, names) in [(RSM_ALIASES, RSM), (RAM_ALIASES, RAM)] {
            for (alias, name) in aliases {
                assert!(names.binary_search(name).is_ok(), "{name}");
                assert!(names.binary_search(alias).is_err(), "{alias}");
            }
        }
    }

    /// Valid documents to mutate.
    fn seeds() -> [Vec<u8>; 6] {
        [
            cii::write(&everything(), Profile::XrechnungCii),
            ubl::write(&everything(), Profile::XrechnungUbl),
            ubl::write(&samples::credit_note(), Profile::XrechnungUbl),
            CII_01_18A.to_vec(),
            UBL_01_21A.to_vec(),
            CII_01_01A.to_vec(),
        ]
    }

    /// What mutations insert: markup, references, bad bytes, and terms out of place.
    const TOKENS: &[&[u8]] = &[
        b"<",
        b">",
        b"/>",
        b"</",
        b"&",
        b"&amp;",
        b"&#0;",
        b"&#x110000;",
        b"&#65;",
        b"<!DOCTYPE a>",
        b"<![CDATA[",
        b"]]>",
        b"<!--",
        b"-->",
        b"<?",
        b"?>",
        b" xmlns:ram=\"x\"",
        b" xmlns=\"\"",
        b"\xff",
        b"\xc3",
        b"1e5",
        b"\"",
        b"<ram:CategoryCode>Q</ram:CategoryCode>",
        b"<cbc:ChargeIndicator>x</cbc:ChargeIndicator>",
        b"<ram:IncludedSupplyChainTradeLineItem>",
        b"<cac:InvoiceLine>",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let _ = read(&bytes);
        }

        #[test]
        fn markup_soup_never_panics(text in "[<>/a-zA-Z:=\"' &;#!?\\[\\]-]{0,400}") {
            let _ = read(text.as_bytes());
            let _ = read(format!("<rsm:CrossIndustryInvoice xmlns:rsm=\"{CII}\">{text}").as_bytes());
        }

        #[test]
        fn mutated_documents_never_panic(
            seed in 0usize..6,
            edits in proptest::collection::vec(
                (any::<proptest::sample::Index>(), 0u8..6, any::<u8>()),
                1..12,
            ),
        ) {
            let mut doc = seeds()[seed].clone();
            for (at, kind, byte) in edits {
                if doc.is_empty() {
                    break;
                }
                let i = at.index(doc.len());
                match kind {
                    0 => doc[i] = byte,
                    1 => {
                        doc.remove(i);
                    }
                    2 => doc.insert(i, byte),
                    3 => doc.truncate(i),
                    4 => {
                        let token = TOKENS[usize::from(byte) % TOKENS.len()];
                        doc.splice(i..i, token.iter().copied());
                    }
                    _ => {
                        let end = (i + usize::from(byte)).min(doc.len());
                        let copy = doc[i..end].to_vec();
                        doc.splice(i..i, copy);
                    }
                }
            }
            let _ = read(&doc);
        }
    }
}
