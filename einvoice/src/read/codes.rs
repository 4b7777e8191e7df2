//! Where the code lists of EN 16931 bind a document, element by element as it is read:
//! every value a code-list rule of the CEN rules (BR-CL) checks, wherever it stands, also
//! where the model keeps nothing (a payee's identifier, an attachment, a line's charge),
//! is held against the list its rule names (`codes::List`); those it is not in are kept
//! (`Coded`, at most `UNLISTED_MAX`) for `rules::code_lists` to report.
//!
//! The contexts are those of the CEN schematron, rule by rule (`EN16931-CII-validation.xsl`,
//! `EN16931-UBL-validation.xsl`), and as there, a value that the contexts of several rules
//! take is checked by the first rule only. A value whose rule depends on a sibling that may
//! come after it (the reason code of an allowance or a charge, the scheme of an invoiced
//! object's identifier) waits for its parent to end. Not checked: BR-CL-08 of UBL, which
//! reads a subject code out of the text of a note.
//!
//! It sees the names, attributes and text the reader hands it and never fails: a document
//! it cannot make sense of is the reader's to refuse.

use super::{Ns, Syntax, trim};
use crate::codes::{Coded, List};
use crate::limits::UNLISTED_MAX;

/// The attributes code-list rules read, as the document gives them (values normalized as
/// XML normalizes attribute values).
#[derive(Debug, Default, Clone)]
pub(super) struct CodeAttrs {
    pub(super) scheme_id: Option<String>,
    pub(super) unit_code: Option<String>,
    pub(super) currency_id: Option<String>,
    pub(super) mime_code: Option<String>,
    pub(super) list_id: Option<String>,
}

/// An open element.
#[derive(Debug)]
struct Frame {
    ns: Ns,
    local: String,
    attrs: CodeAttrs,
    /// Its text, kept where a rule checks it (with its descendants' text, as XPath's
    /// string value).
    text: Option<String>,
    /// Of an allowance or charge: the values of its charge indicator; of a UBL document
    /// reference: whether its type code is 130 (an invoiced object).
    marks: Vec<bool>,
    /// Values waiting for this element to end (the checks of `waiting`).
    waiting: Vec<(String, String)>,
}

/// The scan of one document.
#[derive(Debug)]
pub(super) struct Scan {
    syntax: Syntax,
    frames: Vec<Frame>,
    /// The frames that keep text, innermost last.
    texts: Vec<usize>,
    unlisted: Vec<Coded>,
}

/// XPath's `normalize-space`: XML white space runs as one space, none at either end.
fn normalize_space(s: &str) -> String {
    s.split([' ', '\t', '\r', '\n'])
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// An XPath cast of an untyped value to `xs:boolean`, as the rules compare charge
/// indicators with `false()` and `true()`.
fn boolean(s: &str) -> Option<bool> {
    match trim(s) {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// The UBL amounts whose `currencyID` BR-CL-03 checks.
const UBL_AMOUNTS: &[&str] = &[
    "AllowanceTotalAmount",
    "Amount",
    "BaseAmount",
    "ChargeTotalAmount",
    "LineExtensionAmount",
    "PayableAmount",
    "PayableRoundingAmount",
    "PrepaidAmount",
    "PriceAmount",
    "TaxAmount",
    "TaxExclusiveAmount",
    "TaxInclusiveAmount",
    "TaxableAmount",
];

/// Whether a rule checks the text of element `local` of namespace `ns`.
fn checks_text(syntax: Syntax, ns: Ns, local: &str) -> bool {
    match (syntax, ns) {
        (Syntax::Cii, Ns::Ram) => matches!(
            local,
            "TypeCode"
                | "InvoiceCurrencyCode"
                | "TaxCurrencyCode"
                | "DueDateTypeCode"
                | "ReferenceTypeCode"
                | "SubjectCode"
                | "ID"
                | "CountryID"
                | "CategoryCode"
                | "ReasonCode"
                | "ExemptionReasonCode"
        ),
        (Syntax::Cii, Ns::DataType) => local == "Indicator",
        (Syntax::Ubl, Ns::Cbc) => matches!(
            local,
            "InvoiceTypeCode"
                | "CreditNoteTypeCode"
                | "DocumentCurrencyCode"
                | "TaxCurrencyCode"
                | "DescriptionCode"
                | "ID"
                | "IdentificationCode"
                | "PaymentMeansCode"
                | "AllowanceChargeReasonCode"
                | "ChargeIndicator"
                | "DocumentTypeCode"
                | "TaxExemptionReasonCode"
        ),
        _ => false,
    }
}

/// What is checked of an element: its text (normalized) or an attribute's value.
enum Value<'a> {
    Text,
    Attr(&'static str, Option<&'a str>),
    /// An attribute compared as written (BR-CL-24).
    Exact(&'static str, &'a str),
}

impl Scan {
    pub(super) fn new(syntax: Syntax) -> Scan {
        Scan {
            syntax,
            frames: Vec::new(),
            texts: Vec::new(),
            unlisted: Vec::new(),
        }
    }

    /// An element opens.
    pub(super) fn open(&mut self, ns: Ns, local: &str, attrs: CodeAttrs) {
        let keeps = checks_text(self.syntax, ns, local);
        if keeps {
            self.texts.push(self.frames.len());
        }
        self.frames.push(Frame {
            ns,
            local: local.to_owned(),
            attrs,
            text: keeps.then(String::new),
            marks: Vec::new(),
            waiting: Vec::new(),
        });
    }

    /// Text of the element opened last (or of one inside it).
    pub(super) fn text(&mut self, s: &str) {
        if let Some(&at) = self.texts.last()
            && let Some(text) = &mut self.frames[at].text
        {
            text.push_str(s);
        }
    }

    /// The element opened last ends.
    pub(super) fn close(&mut self) {
        let Some(frame) = self.frames.pop() else {
            return;
        };
        if frame.text.is_some() {
            self.texts.pop();
            // An ancestor that keeps text takes this one's, as its string value holds it.
            if let (Some(&at), Some(text)) = (self.texts.last(), &frame.text)
                && let Some(outer) = &mut self.frames[at].text
            {
                outer.push_str(text);
            }
        }
        let act = match self.syntax {
            Syntax::Cii => self.cii(&frame),
            Syntax::Ubl => self.ubl(&frame),
        };
        self.apply(&frame, act);
    }

    /// The coded values outside their lists.
    pub(super) fn finish(self) -> Vec<Coded> {
        self.unlisted
    }

    /// The element `n` levels above the one that ended (1: its parent).
    fn above(&self, n: usize) -> Option<(Ns, &str)> {
        let at = self.frames.len().checked_sub(n)?;
        self.frames.get(at).map(|f| (f.ns, f.local.as_str()))
    }

    /// Whether the element `n` levels above the one that ended is `local` of `ns`.
    fn is(&self, n: usize, ns: Ns, local: &str) -> bool {
        self.above(n) == Some((ns, local))
    }

    /// Whether an element of `ns` named `local` is open around the one that ended.
    fn within(&self, ns: Ns, local: &str) -> bool {
        self.frames.iter().any(|f| f.ns == ns && f.local == local)
    }

    /// Does what a rule asks of the element `f` that ended.
    fn apply(&mut self, f: &Frame, act: Act<'_>) {
        let parent = self.frames.len().checked_sub(1);
        match act {
            Act::Nothing => {}
            Act::Check(rule, list, value) => {
                let (path, value) = self.path_and_value(f, value);
                self.report(rule, list, path, value);
            }
            Act::Mark(mark) => {
                if let Some(at) = parent {
                    self.frames[at].marks.push(mark);
                }
            }
            Act::Grandparent(mark) => {
                if let Some(at) = self.frames.len().checked_sub(2) {
                    self.frames[at].marks.push(mark);
                }
            }
            Act::Wait(value) => {
                let waiting = self.path_and_value(f, value);
                if let Some(at) = parent {
                    self.frames[at].waiting.push(waiting);
                }
            }
            Act::Decide(rule, list) => {
                for (path, value) in &f.waiting {
                    self.report(rule, list, path.clone(), value.clone());
                }
            }
        }
    }

    /// Where the value of element `f` stands (below its parent), and the value.
    fn path_and_value(&self, f: &Frame, value: Value<'_>) -> (String, String) {
        let (suffix, value) = match value {
            Value::Text => (
                String::new(),
                normalize_space(f.text.as_deref().unwrap_or_default()),
            ),
            Value::Attr(name, v) => (format!("/@{name}"), normalize_space(v.unwrap_or_default())),
            Value::Exact(name, v) => (format!("/@{name}"), v.to_owned()),
        };
        let parent = self.above(1).map_or("", |(_, local)| local);
        (format!("{parent}/{}{suffix}", f.local), value)
    }

    fn report(&mut self, rule: &'static str, list: List, path: String, value: String) {
        if !list.admits(&value) && self.unlisted.len() < UNLISTED_MAX {
            self.unlisted.push(Coded {
                rule,
                list,
                path,
                value,
            });
        }
    }

    /// The rules of CII (`ram:`, the D16B namespace), in the order of the CEN schematron.
    fn cii<'f>(&self, f: &'f Frame) -> Act<'f> {
        let ram = |n: usize, local: &str| self.is(n, Ns::Ram, local);
        let a = &f.attrs;
        let scheme = a.scheme_id.as_deref();
        if f.ns == Ns::DataType && f.local == "Indicator" {
            // A charge indicator: its allowance or charge decides its reason codes by it.
            return match indicator(f) {
                Some(v) if ram(1, "ChargeIndicator") && ram(2, "SpecifiedTradeAllowanceCharge") => {
                    Act::Grandparent(v)
                }
                _ => Act::Nothing,
            };
        }
        if f.ns != Ns::Ram {
            return Act::Nothing;
        }
        match f.local.as_str() {
            "TypeCode" if self.is(1, Ns::Cii, "ExchangedDocument") => {
                Act::text("BR-CL-01", List::DocumentTypesCii)
            }
            "TaxTotalAmount" if a.currency_id.is_some() => Act::currency(a),
            "InvoiceCurrencyCode" => Act::text("BR-CL-04", List::Currencies),
            "TaxCurrencyCode" => Act::text("BR-CL-05", List::Currencies),
            "DueDateTypeCode" => Act::text("BR-CL-06", List::DueDateTypesCii),
            "ReferenceTypeCode" => Act::text("BR-CL-07", List::ReferenceTypes),
            "SubjectCode" => Act::text("BR-CL-08", List::SubjectsCii),
            "GlobalID" if scheme.is_some() => self.cii_global_id(scheme),
            "ID" if scheme.is_some() && !self.within(Ns::Ram, "SpecifiedTaxRegistration") => {
                Act::scheme("BR-CL-11", List::Icd, scheme)
            }
            "ClassCode" if a.list_id.is_some() => Act::classification(a),
            "CountryID" => Act::text("BR-CL-14", List::CountriesCii),
            "ID" if ram(1, "OriginTradeCountry") => Act::text("BR-CL-15", List::CountriesCii),
            "TypeCode" if ram(1, "SpecifiedTradeSettlementPaymentMeans") => {
                Act::text("BR-CL-16", List::PaymentMeans)
            }
            "CategoryCode" if ram(1, "CategoryTradeTax") => {
                Act::text("BR-CL-17", List::VatCategories)
            }
            "CategoryCode" if ram(1, "ApplicableTradeTax") => {
                Act::text("BR-CL-18", List::VatCategories)
            }
            "ReasonCode" if ram(1, "SpecifiedTradeAllowanceCharge") => Act::Wait(Value::Text),
            "SpecifiedTradeAllowanceCharge" => reasons(f),
            "ExemptionReasonCode" => Act::text("BR-CL-22", List::Vatex),
            "BasisQuantity" | "BilledQuantity" if a.unit_code.is_some() => Act::unit(a),
            "AttachmentBinaryObject" => Act::mime(a),
            "URIID" if scheme.is_some() && ram(1, "URIUniversalCommunication") => {
                Act::scheme("BR-CL-25", List::Eas, scheme)
            }
            _ => Act::Nothing,
        }
    }

    /// The scheme of a CII global identifier: a party's (BR-CL-10), an item's (BR-CL-21)
    /// or a deliver-to location's (BR-CL-26).
    fn cii_global_id<'f>(&self, scheme: Option<&'f str>) -> Act<'f> {
        let ram = |n: usize, local: &str| self.is(n, Ns::Ram, local);
        if !self.within(Ns::Ram, "SpecifiedTradeProduct")
            && !self.within(Ns::Ram, "ShipToTradeParty")
        {
            Act::scheme("BR-CL-10", List::Icd, scheme)
        } else if ram(1, "SpecifiedTradeProduct") {
            Act::scheme("BR-CL-21", List::Icd, scheme)
        } else if ram(1, "ShipToTradeParty") && ram(2, "ApplicableHeaderTradeDelivery") {
            Act::scheme("BR-CL-26", List::Icd, scheme)
        } else {
            Act::Nothing
        }
    }

    /// The rules of UBL, in the order of the CEN schematron.
    fn ubl<'f>(&self, f: &'f Frame) -> Act<'f> {
        if f.ns == Ns::Cac {
            return ubl_aggregate(f);
        }
        if f.ns != Ns::Cbc {
            return Act::Nothing;
        }
        let cac = |n: usize, local: &str| self.is(n, Ns::Cac, local);
        let reference = cac(1, "AdditionalDocumentReference") || cac(1, "DocumentReference");
        let a = &f.attrs;
        let scheme = a.scheme_id.as_deref();
        let local = f.local.as_str();
        match local {
            "InvoiceTypeCode" => Act::text("BR-CL-01", List::InvoiceTypesUbl),
            "CreditNoteTypeCode" => Act::text("BR-CL-01", List::CreditNoteTypesUbl),
            _ if UBL_AMOUNTS.binary_search(&local).is_ok() => Act::currency(a),
            "DocumentCurrencyCode" => Act::text("BR-CL-04", List::Currencies),
            "TaxCurrencyCode" => Act::text("BR-CL-05", List::Currencies),
            "DescriptionCode" if cac(1, "InvoicePeriod") => {
                Act::text("BR-CL-06", List::DueDateTypesUbl)
            }
            // Compared as written: `cbc:DocumentTypeCode = '130'`.
            "DocumentTypeCode" if reference => Act::Mark(f.text.as_deref() == Some("130")),
            "ID" if scheme.is_some() && reference => Act::Wait(Value::Attr("schemeID", scheme)),
            "ID" if scheme.is_some() && cac(1, "PartyIdentification") => {
                Act::scheme("BR-CL-10", self.ubl_party_identifiers(), scheme)
            }
            "CompanyID" if scheme.is_some() && cac(1, "PartyLegalEntity") => {
                Act::scheme("BR-CL-11", List::Icd, scheme)
            }
            "ItemClassificationCode"
                if a.list_id.is_some() && cac(1, "CommodityClassification") =>
            {
                Act::classification(a)
            }
            "IdentificationCode" if cac(1, "Country") => Act::text("BR-CL-14", List::CountriesUbl),
            "IdentificationCode" if cac(1, "OriginCountry") => {
                Act::text("BR-CL-15", List::CountriesUbl)
            }
            "PaymentMeansCode" if cac(1, "PaymentMeans") => {
                Act::text("BR-CL-16", List::PaymentMeans)
            }
            "ID" if cac(1, "TaxCategory") => Act::text("BR-CL-17", List::VatCategories),
            "ID" if cac(1, "ClassifiedTaxCategory") => Act::text("BR-CL-18", List::VatCategories),
            "ChargeIndicator" if cac(1, "AllowanceCharge") => match indicator(f) {
                Some(v) => Act::Mark(v),
                None => Act::Nothing,
            },
            "AllowanceChargeReasonCode" if cac(1, "AllowanceCharge") => Act::Wait(Value::Text),
            "ID" if scheme.is_some() && cac(1, "StandardItemIdentification") => {
                Act::scheme("BR-CL-21", List::Icd, scheme)
            }
            "TaxExemptionReasonCode" => Act::text("BR-CL-22", List::Vatex),
            "InvoicedQuantity" | "BaseQuantity" | "CreditedQuantity" if a.unit_code.is_some() => {
                Act::unit(a)
            }
            "EmbeddedDocumentBinaryObject" => Act::mime(a),
            "EndpointID" if scheme.is_some() => Act::scheme("BR-CL-25", List::Eas, scheme),
            "ID" if scheme.is_some() && cac(1, "DeliveryLocation") => {
                Act::scheme("BR-CL-26", List::Icd, scheme)
            }
            _ => Act::Nothing,
        }
    }

    /// The list of a UBL party identifier's scheme (BR-CL-10): the seller's and the
    /// payee's may also be a SEPA creditor identifier.
    fn ubl_party_identifiers(&self) -> List {
        if self.within(Ns::Cac, "AccountingSupplierParty") || self.within(Ns::Cac, "PayeeParty") {
            List::IcdOrSepa
        } else {
            List::Icd
        }
    }
}

/// What a rule asks of an element that ended.
enum Act<'f> {
    Nothing,
    /// Its value must be in the list.
    Check(&'static str, List, Value<'f>),
    /// A mark for its parent: a charge indicator, whether a reference is to an invoiced
    /// object.
    Mark(bool),
    /// A charge indicator for its grandparent, the allowance or charge (CII).
    Grandparent(bool),
    /// Its value waits for its parent to end.
    Wait(Value<'f>),
    /// The values that waited for it are bound by this rule to this list.
    Decide(&'static str, List),
}

/// An allowance or charge ends: its reason codes are an allowance's (BR-CL-19) when one of
/// its indicators is false, else a charge's (BR-CL-20) when one is true.
fn reasons(f: &Frame) -> Act<'static> {
    if f.marks.contains(&false) {
        Act::Decide("BR-CL-19", List::AllowanceReasons)
    } else if f.marks.contains(&true) {
        Act::Decide("BR-CL-20", List::ChargeReasons)
    } else {
        Act::Nothing
    }
}

/// A UBL aggregate (`cac:`) ends: an allowance or charge decides its reason codes, a
/// reference to an invoiced object the schemes of its identifiers.
fn ubl_aggregate(f: &Frame) -> Act<'static> {
    match f.local.as_str() {
        "AllowanceCharge" => reasons(f),
        // BR-CL-07 takes the schemes of an invoiced object's identifiers.
        "AdditionalDocumentReference" | "DocumentReference" if f.marks.contains(&true) => {
            Act::Decide("BR-CL-07", List::ReferenceTypes)
        }
        _ => Act::Nothing,
    }
}

/// The value of a charge indicator that ended, if it is a boolean.
fn indicator(f: &Frame) -> Option<bool> {
    boolean(f.text.as_deref().unwrap_or_default())
}

impl<'f> Act<'f> {
    /// The element's text must be in `list`.
    fn text(rule: &'static str, list: List) -> Act<'f> {
        Act::Check(rule, list, Value::Text)
    }

    /// The element's `schemeID` must be in `list`.
    fn scheme(rule: &'static str, list: List, scheme: Option<&'f str>) -> Act<'f> {
        Act::Check(rule, list, Value::Attr("schemeID", scheme))
    }

    /// An amount's `currencyID` must be a currency (BR-CL-03).
    fn currency(a: &'f CodeAttrs) -> Act<'f> {
        Act::Check(
            "BR-CL-03",
            List::Currencies,
            Value::Attr("currencyID", a.currency_id.as_deref()),
        )
    }

    /// An item classification's `listID` must be a classification scheme (BR-CL-13).
    fn classification(a: &'f CodeAttrs) -> Act<'f> {
        Act::Check(
            "BR-CL-13",
            List::ItemClassifications,
            Value::Attr("listID", a.list_id.as_deref()),
        )
    }

    /// A quantity's `unitCode` must be a unit of measure (BR-CL-23).
    fn unit(a: &'f CodeAttrs) -> Act<'f> {
        Act::Check(
            "BR-CL-23",
            List::Units,
            Value::Attr("unitCode", a.unit_code.as_deref()),
        )
    }

    /// An attachment's `mimeCode`, when it has one, must be a MIME code as written
    /// (BR-CL-24).
    fn mime(a: &'f CodeAttrs) -> Act<'f> {
        match &a.mime_code {
            Some(mime) => Act::Check("BR-CL-24", List::MimeCodes, Value::Exact("mimeCode", mime)),
            None => Act::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::read;
    use crate::limits::UNLISTED_MAX;

    const CII: &str = include_str!("../../../tests/einvoice/samples/01.01a-INVOICE_uncefact.xml");
    const UBL: &str = include_str!("../../../tests/einvoice/samples/01.01a-INVOICE_ubl.xml");
    /// The KoSIT sample whose identifier schemes the official CEN rules refuse (BR-CL-10
    /// three times, BR-CL-21 once).
    const CII_04_05A: &str =
        include_str!("../../../tests/einvoice/samples/extension/04.05a-INVOICE_uncefact.xml");

    /// `xml` with each `(from, to)` replaced (once, where it first stands), read: the rule
    /// and place of each value outside its list.
    fn check(xml: &str, edits: &[(&str, &str)], expected: &[(&str, &str)]) {
        let mut xml = xml.to_owned();
        for (from, to) in edits {
            assert!(xml.contains(from), "{from} is in the document");
            xml = xml.replacen(from, to, 1);
        }
        let found = read(xml.as_bytes()).expect("a readable e-invoice").unlisted;
        let found: Vec<(&str, &str)> = found.iter().map(|c| (c.rule, c.path.as_str())).collect();
        assert_eq!(found, expected, "{edits:?}");
    }

    #[test]
    fn documents_that_the_official_rules_accept_have_no_codes_outside_their_lists() {
        check(CII, &[], &[]);
        check(UBL, &[], &[]);
    }

    #[test]
    fn identifier_schemes_outside_the_icd_list_are_found_where_the_model_keeps_nothing() {
        check(
            CII_04_05A,
            &[],
            &[
                ("BR-CL-21", "SpecifiedTradeProduct/GlobalID/@schemeID"),
                ("BR-CL-10", "SellerTradeParty/GlobalID/@schemeID"),
                ("BR-CL-10", "BuyerTradeParty/GlobalID/@schemeID"),
                ("BR-CL-10", "PayeeTradeParty/GlobalID/@schemeID"),
            ],
        );
    }

    #[test]
    fn codes_of_cii_are_checked_in_the_contexts_of_their_rules() {
        check(
            CII,
            &[
                ("<ram:TypeCode>380<", "<ram:TypeCode>999<"),
                ("unitCode=\"XPP\"", "unitCode=\"ZZZ\""),
                ("<ram:CountryID>DE<", "<ram:CountryID>XX<"),
                ("schemeID=\"EM\"", "schemeID=\"XX\""),
                ("<ram:TypeCode>58<", "<ram:TypeCode> 5 8 <"),
                (
                    "<ram:InvoiceCurrencyCode>EUR<",
                    "<ram:InvoiceCurrencyCode>EURO<",
                ),
            ],
            &[
                ("BR-CL-01", "ExchangedDocument/TypeCode"),
                (
                    "BR-CL-23",
                    "SpecifiedLineTradeDelivery/BilledQuantity/@unitCode",
                ),
                ("BR-CL-14", "PostalTradeAddress/CountryID"),
                ("BR-CL-25", "URIUniversalCommunication/URIID/@schemeID"),
                (
                    "BR-CL-04",
                    "ApplicableHeaderTradeSettlement/InvoiceCurrencyCode",
                ),
                ("BR-CL-16", "SpecifiedTradeSettlementPaymentMeans/TypeCode"),
            ],
        );
    }

    #[test]
    fn reason_codes_are_an_allowances_or_a_charges_by_its_indicator() {
        let allowance = "<ram:SpecifiedTradeAllowanceCharge><ram:ChargeIndicator>\
            <udt:Indicator>false</udt:Indicator></ram:ChargeIndicator>\
            <ram:ActualAmount>0</ram:ActualAmount><ram:ReasonCode>ZZZ</ram:ReasonCode>\
            <ram:CategoryTradeTax><ram:TypeCode>VAT</ram:TypeCode>\
            <ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>19\
            </ram:RateApplicablePercent></ram:CategoryTradeTax>\
            </ram:SpecifiedTradeAllowanceCharge>";
        let at = "<ram:SpecifiedTradeSettlementHeaderMonetarySummation>";
        // ZZZ is a charge reason (UNTDID 7161), not an allowance reason (UNTDID 5189).
        check(
            CII,
            &[(at, &format!("{allowance}{at}"))],
            &[("BR-CL-19", "SpecifiedTradeAllowanceCharge/ReasonCode")],
        );
        let charge = allowance.replace(">false<", ">true<");
        check(CII, &[(at, &format!("{charge}{at}"))], &[]);
    }

    #[test]
    fn codes_of_ubl_are_checked_in_the_contexts_of_their_rules() {
        check(
            UBL,
            &[
                ("<cbc:InvoiceTypeCode>380<", "<cbc:InvoiceTypeCode>381<"),
                ("schemeID=\"EM\"", "schemeID=\"XX\""),
                ("<cbc:IdentificationCode>DE<", "<cbc:IdentificationCode>AN<"),
                ("<cbc:PaymentMeansCode>58<", "<cbc:PaymentMeansCode>0<"),
                ("unitCode=\"XPP\"", "unitCode=\"C 62\""),
                ("currencyID=\"EUR\"", "currencyID=\"EURO\""),
            ],
            &[
                // 381 is a credit note's type, not an invoice's.
                ("BR-CL-01", "Invoice/InvoiceTypeCode"),
                ("BR-CL-25", "Party/EndpointID/@schemeID"),
                // AN is in CII's list of countries, not in UBL's.
                ("BR-CL-14", "Country/IdentificationCode"),
                ("BR-CL-16", "PaymentMeans/PaymentMeansCode"),
                ("BR-CL-03", "TaxTotal/TaxAmount/@currencyID"),
                ("BR-CL-23", "InvoiceLine/InvoicedQuantity/@unitCode"),
            ],
        );
    }

    #[test]
    fn zugferd_1_is_not_held_to_the_code_lists_of_en_16931() {
        let xml = r#"<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"
    xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12"
    xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:15">
  <rsm:HeaderExchangedDocument><ram:ID>1</ram:ID><ram:TypeCode>999</ram:TypeCode>
    <ram:IssueDateTime><udt:DateTimeString format="102">20130305</udt:DateTimeString></ram:IssueDateTime>
  </rsm:HeaderExchangedDocument>
  <rsm:SpecifiedSupplyChainTradeTransaction><ram:ApplicableSupplyChainTradeSettlement>
    <ram:InvoiceCurrencyCode>EURO</ram:InvoiceCurrencyCode>
  </ram:ApplicableSupplyChainTradeSettlement></rsm:SpecifiedSupplyChainTradeTransaction>
</rsm:CrossIndustryDocument>"#;
        let read = read(xml.as_bytes()).expect("a readable ZUGFeRD 1.0 document");
        assert_eq!(read.invoice.type_code, "999");
        assert!(read.unlisted.is_empty(), "{:?}", read.unlisted);
    }

    #[test]
    fn a_reading_keeps_a_bounded_number_of_codes_outside_their_lists() {
        let line = CII
            .find("<ram:IncludedSupplyChainTradeLineItem>")
            .zip(CII.find("<ram:ApplicableHeaderTradeAgreement>"))
            .map(|(from, to)| &CII[from..to])
            .expect("the sample's lines");
        let bad = line.replace("unitCode=\"XPP\"", "unitCode=\"ZZZ\"");
        let many = bad.repeat(UNLISTED_MAX);
        let xml = CII.replacen(line, &many, 1);
        let found = read(xml.as_bytes()).expect("a readable e-invoice").unlisted;
        assert_eq!(found.len(), UNLISTED_MAX);
    }
}
