//! The UN/CEFACT Cross Industry Invoice (CII D16B, `rsm:CrossIndustryInvoice`) of a
//! completed document, as XRechnung 3.0 (CII) and Factur-X 1.0 / ZUGFeRD 2 in the profile
//! EN 16931 use it; and `Xml`, the small writer both syntaxes (`ubl`) write with.
//!
//! Elements follow the order of the CII schema; an absent term (an empty string, `None`)
//! writes no element, and a container left without children vanishes with it.

use std::io::Write as _;

use rust_decimal::{Decimal, RoundingStrategy};

use time::Date;

use crate::model::{
    Address, AllowanceCharge, Category, Invoice, Line, LineAllowance, Party, Profile, VatBreakdown,
};

const NAMESPACES: &[(&str, &str)] = &[
    (
        "xmlns:rsm",
        "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
    ),
    (
        "xmlns:ram",
        "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100",
    ),
    (
        "xmlns:qdt",
        "urn:un:unece:uncefact:data:standard:QualifiedDataType:100",
    ),
    (
        "xmlns:udt",
        "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100",
    ),
];

/// BT-23 of XRechnung (PEPPOL-EN16931-R001 wants one): the Peppol billing process.
pub(crate) const BILLING_PROCESS: &str = "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0";

/// The CII document of `inv` in `profile` (BT-24 is `profile.specification()`).
pub fn write(inv: &Invoice, profile: Profile) -> Vec<u8> {
    let mut x = Xml::new(6 * 1024 + 1536 * inv.lines.len());
    x.open_with("rsm:CrossIndustryInvoice", NAMESPACES);

    x.open("rsm:ExchangedDocumentContext");
    if profile.is_xrechnung() {
        x.open("ram:BusinessProcessSpecifiedDocumentContextParameter");
        x.text("ram:ID", BILLING_PROCESS);
        x.close();
    }
    x.open("ram:GuidelineSpecifiedDocumentContextParameter");
    x.text("ram:ID", profile.specification());
    x.close();
    x.close();

    x.open("rsm:ExchangedDocument");
    x.text("ram:ID", &inv.number);
    x.text("ram:TypeCode", &inv.type_code);
    date(
        &mut x,
        "ram:IssueDateTime",
        "udt:DateTimeString",
        inv.issue_date,
    );
    for note in &inv.notes {
        x.open("ram:IncludedNote");
        x.text("ram:Content", note);
        x.close();
    }
    x.close();

    x.open("rsm:SupplyChainTradeTransaction");
    for line in &inv.lines {
        line_item(&mut x, line);
    }
    agreement(&mut x, inv);
    if inv.delivery_date.is_none() && inv.deliver_to.is_none() {
        // Mandatory in the schema, even with nothing to say.
        x.empty("ram:ApplicableHeaderTradeDelivery");
    } else {
        x.open("ram:ApplicableHeaderTradeDelivery");
        if let Some(a) = &inv.deliver_to {
            x.open("ram:ShipToTradeParty");
            address(&mut x, a);
            x.close();
        }
        if let Some(d) = inv.delivery_date {
            x.open("ram:ActualDeliverySupplyChainEvent");
            date(&mut x, "ram:OccurrenceDateTime", "udt:DateTimeString", d);
            x.close();
        }
        x.close();
    }
    settlement(&mut x, inv);
    x.close();
    x.finish()
}

/// BG-25.
fn line_item(x: &mut Xml, line: &Line) {
    x.open("ram:IncludedSupplyChainTradeLineItem");
    x.open("ram:AssociatedDocumentLineDocument");
    x.text("ram:LineID", &line.id);
    x.open("ram:IncludedNote");
    x.text("ram:Content", &line.note);
    x.close();
    x.close();

    x.open("ram:SpecifiedTradeProduct");
    x.text("ram:SellerAssignedID", &line.seller_id);
    x.text("ram:Name", &line.name);
    x.text("ram:Description", &line.description);
    x.close();

    x.open("ram:SpecifiedLineTradeAgreement");
    x.open("ram:NetPriceProductTradePrice");
    x.number("ram:ChargeAmount", &[], line.net_price);
    x.close();
    x.close();

    x.open("ram:SpecifiedLineTradeDelivery");
    x.number(
        "ram:BilledQuantity",
        &[("unitCode", &line.unit_code)],
        line.quantity,
    );
    x.close();

    x.open("ram:SpecifiedLineTradeSettlement");
    trade_tax(x, "ram:ApplicableTradeTax", line.category, line.rate);
    if let Some(a) = &line.allowance {
        line_allowance(x, a);
    }
    x.open("ram:SpecifiedTradeSettlementLineMonetarySummation");
    x.amount("ram:LineTotalAmount", &[], line.net_amount);
    x.close();
    x.close();
    x.close();
}

/// BG-27.
fn line_allowance(x: &mut Xml, a: &LineAllowance) {
    x.open("ram:SpecifiedTradeAllowanceCharge");
    indicator(x, false);
    if let Some(p) = a.percent {
        x.number("ram:CalculationPercent", &[], p);
    }
    if let Some(b) = a.base {
        x.amount("ram:BasisAmount", &[], b);
    }
    x.amount("ram:ActualAmount", &[], a.amount);
    x.text("ram:ReasonCode", &a.reason_code);
    x.text("ram:Reason", &a.reason);
    x.close();
}

fn agreement(x: &mut Xml, inv: &Invoice) {
    x.open("ram:ApplicableHeaderTradeAgreement");
    x.text("ram:BuyerReference", &inv.buyer_reference);
    party(x, "ram:SellerTradeParty", &inv.seller, true);
    party(x, "ram:BuyerTradeParty", &inv.buyer, false);
    x.open("ram:BuyerOrderReferencedDocument");
    x.text("ram:IssuerAssignedID", &inv.order_reference);
    x.close();
    x.open("ram:ContractReferencedDocument");
    x.text("ram:IssuerAssignedID", &inv.contract_reference);
    x.close();
    x.close();
}

/// BG-4 (`seller`) or BG-7.
fn party(x: &mut Xml, name: &'static str, p: &Party, seller: bool) {
    x.open(name);
    x.text("ram:ID", &p.identifier);
    x.text("ram:Name", &p.name);
    x.open("ram:SpecifiedLegalOrganization");
    x.text("ram:ID", &p.legal_registration);
    x.close();

    x.open("ram:DefinedTradeContact");
    x.text("ram:PersonName", &p.contact.name);
    x.open("ram:TelephoneUniversalCommunication");
    x.text("ram:CompleteNumber", &p.contact.phone);
    x.close();
    x.open("ram:EmailURIUniversalCommunication");
    x.text("ram:URIID", &p.contact.email);
    x.close();
    x.close();

    address(x, &p.address);
    x.open("ram:URIUniversalCommunication");
    x.text_with("ram:URIID", &[("schemeID", "EM")], &p.electronic_address);
    x.close();

    x.open("ram:SpecifiedTaxRegistration");
    x.text_with("ram:ID", &[("schemeID", "VA")], &p.vat_id);
    x.close();
    if seller {
        x.open("ram:SpecifiedTaxRegistration");
        x.text_with("ram:ID", &[("schemeID", "FC")], &p.tax_number);
        x.close();
    }
    x.close();
}

/// BG-5, BG-8 or BG-15.
fn address(x: &mut Xml, a: &Address) {
    x.open("ram:PostalTradeAddress");
    x.text("ram:PostcodeCode", &a.post_code);
    x.text("ram:LineOne", &a.line1);
    x.text("ram:LineTwo", &a.line2);
    x.text("ram:CityName", &a.city);
    x.text("ram:CountryID", &a.country);
    x.text("ram:CountrySubDivisionName", &a.subdivision);
    x.close();
}

/// The header trade settlement: BT-90, BT-83, BT-5, the payment means (BG-16), the VAT
/// breakdowns, the document allowances and charges, the payment terms, the totals
/// (BG-22) and the preceding invoice (BG-3).
fn settlement(x: &mut Xml, inv: &Invoice) {
    let pay = &inv.payment;
    x.open("ram:ApplicableHeaderTradeSettlement");
    if let Some(d) = &pay.direct_debit {
        x.text("ram:CreditorReferenceID", &d.creditor_id);
    }
    x.text("ram:PaymentReference", &pay.remittance);
    x.text("ram:InvoiceCurrencyCode", &inv.currency);
    payment_means(x, inv);

    for v in &inv.vat {
        breakdown(x, v);
    }
    for a in &inv.allowances {
        allowance_charge(x, a, false);
    }
    for c in &inv.charges {
        allowance_charge(x, c, true);
    }

    payment_terms(x, inv);
    monetary_summation(x, inv);

    if let Some((number, issued)) = &inv.preceding {
        x.open("ram:InvoiceReferencedDocument");
        x.text("ram:IssuerAssignedID", number);
        if let Some(d) = issued {
            date(x, "ram:FormattedIssueDateTime", "qdt:DateTimeString", *d);
        }
        x.close();
    }
    x.close();
}

/// The payment instructions (BG-16), when they have a means code: the debited account
/// of a direct debit (BG-19) and the account of a credit transfer (BG-17).
fn payment_means(x: &mut Xml, inv: &Invoice) {
    let pay = &inv.payment;
    if !present(&pay.means_code) {
        return;
    }
    x.open("ram:SpecifiedTradeSettlementPaymentMeans");
    x.text("ram:TypeCode", &pay.means_code);
    x.text("ram:Information", &pay.means_text);
    if let Some(d) = &pay.direct_debit {
        x.open("ram:PayerPartyDebtorFinancialAccount");
        x.text("ram:IBANID", &d.debited_iban);
        x.close();
    }
    if let Some(t) = &pay.credit_transfer {
        x.open("ram:PayeePartyCreditorFinancialAccount");
        x.text("ram:IBANID", &t.iban);
        x.text("ram:AccountName", &t.account_name);
        x.close();
        x.open("ram:PayeeSpecifiedCreditorFinancialInstitution");
        x.text("ram:BICID", &t.bic);
        x.close();
    }
    x.close();
}

/// The payment terms (BT-20), the due date (BT-9) and a direct debit's mandate (BT-89).
fn payment_terms(x: &mut Xml, inv: &Invoice) {
    x.open("ram:SpecifiedTradePaymentTerms");
    x.text("ram:Description", &inv.payment_terms);
    if let Some(d) = inv.due_date {
        date(x, "ram:DueDateDateTime", "udt:DateTimeString", d);
    }
    if let Some(d) = &inv.payment.direct_debit {
        x.text("ram:DirectDebitMandateID", &d.mandate);
    }
    x.close();
}

/// The document totals (BG-22); the sums of charges and allowances when there are any,
/// the rounding and prepaid amounts when they are not zero.
fn monetary_summation(x: &mut Xml, inv: &Invoice) {
    let t = &inv.totals;
    x.open("ram:SpecifiedTradeSettlementHeaderMonetarySummation");
    x.amount("ram:LineTotalAmount", &[], t.line_net);
    if !inv.charges.is_empty() || !t.charges.is_zero() {
        x.amount("ram:ChargeTotalAmount", &[], t.charges);
    }
    if !inv.allowances.is_empty() || !t.allowances.is_zero() {
        x.amount("ram:AllowanceTotalAmount", &[], t.allowances);
    }
    x.amount("ram:TaxBasisTotalAmount", &[], t.without_vat);
    x.amount(
        "ram:TaxTotalAmount",
        &[("currencyID", &inv.currency)],
        t.vat,
    );
    if !t.rounding.is_zero() {
        x.amount("ram:RoundingAmount", &[], t.rounding);
    }
    x.amount("ram:GrandTotalAmount", &[], t.with_vat);
    if !t.paid.is_zero() {
        x.amount("ram:TotalPrepaidAmount", &[], t.paid);
    }
    x.amount("ram:DuePayableAmount", &[], t.payable);
    x.close();
}

/// BG-23.
fn breakdown(x: &mut Xml, v: &VatBreakdown) {
    x.open("ram:ApplicableTradeTax");
    x.amount("ram:CalculatedAmount", &[], v.tax);
    x.text("ram:TypeCode", "VAT");
    x.text("ram:ExemptionReason", &v.exemption_reason);
    x.amount("ram:BasisAmount", &[], v.taxable);
    x.text("ram:CategoryCode", v.category.code());
    x.text("ram:ExemptionReasonCode", &v.exemption_code);
    // Always, "Not subject to VAT" too: XRechnung wants BT-119 (BR-DE-14).
    x.number("ram:RateApplicablePercent", &[], v.rate);
    x.close();
}

/// BG-20 or (`charge`) BG-21.
fn allowance_charge(x: &mut Xml, a: &AllowanceCharge, charge: bool) {
    x.open("ram:SpecifiedTradeAllowanceCharge");
    indicator(x, charge);
    if let Some(p) = a.percent {
        x.number("ram:CalculationPercent", &[], p);
    }
    if let Some(b) = a.base {
        x.amount("ram:BasisAmount", &[], b);
    }
    x.amount("ram:ActualAmount", &[], a.amount);
    x.text("ram:ReasonCode", &a.reason_code);
    x.text("ram:Reason", &a.reason);
    trade_tax(x, "ram:CategoryTradeTax", a.category, a.rate);
    x.close();
}

fn indicator(x: &mut Xml, charge: bool) {
    x.open("ram:ChargeIndicator");
    x.text("udt:Indicator", if charge { "true" } else { "false" });
    x.close();
}

/// The VAT category and rate of a line, an allowance or a charge.
fn trade_tax(x: &mut Xml, name: &'static str, category: Category, rate: Decimal) {
    x.open(name);
    x.text("ram:TypeCode", "VAT");
    x.text("ram:CategoryCode", category.code());
    if has_rate(category) {
        x.number("ram:RateApplicablePercent", &[], rate);
    }
    x.close();
}

/// Whether lines, allowances and charges of the category state a VAT rate: "Not subject
/// to VAT" has none (BR-O-05 to BR-O-07).
pub(crate) fn has_rate(category: Category) -> bool {
    category != Category::O
}

/// `<name><inner format="102">YYYYMMDD</inner></name>`.
fn date(x: &mut Xml, name: &'static str, inner: &'static str, d: Date) {
    x.open(name);
    x.leaf(inner, &[("format", "102")], |out| {
        // Writes into a Vec, which cannot fail.
        let _ = write!(
            out,
            "{:04}{:02}{:02}",
            d.year(),
            u8::from(d.month()),
            d.day()
        );
    });
    x.close();
}

/// Whether a term is present: empty or blank text is an absent term.
pub(crate) fn present(s: &str) -> bool {
    !s.trim().is_empty()
}

/// XML text in one buffer, indented by two spaces per level. An element opened and closed
/// without children leaves nothing behind, so that a group of absent terms writes no empty
/// container; `empty` writes one where the schema demands it.
pub(crate) struct Xml {
    out: Vec<u8>,
    /// The open elements: name, where the start tag begins, and where it ends.
    open: Vec<(&'static str, usize, usize)>,
}

impl Xml {
    pub(crate) fn new(capacity: usize) -> Xml {
        let mut out = Vec::with_capacity(capacity);
        out.extend_from_slice(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        Xml {
            out,
            open: Vec::with_capacity(16),
        }
    }

    pub(crate) fn open(&mut self, name: &'static str) {
        self.open_with(name, &[]);
    }

    pub(crate) fn open_with(&mut self, name: &'static str, attrs: &[(&str, &str)]) {
        let begin = self.out.len();
        self.start_tag(name, attrs);
        self.out.push(b'\n');
        self.open.push((name, begin, self.out.len()));
    }

    /// Ends the element opened last; without children, removes it.
    pub(crate) fn close(&mut self) {
        let Some((name, begin, end)) = self.open.pop() else {
            return;
        };
        if self.out.len() == end {
            self.out.truncate(begin);
        } else {
            self.indent();
            self.out.extend_from_slice(b"</");
            self.out.extend_from_slice(name.as_bytes());
            self.out.extend_from_slice(b">\n");
        }
    }

    /// `<name/>`.
    pub(crate) fn empty(&mut self, name: &'static str) {
        self.indent();
        self.out.push(b'<');
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"/>\n");
    }

    /// An element with the text `content` writes (escaped as it needs).
    pub(crate) fn leaf(
        &mut self,
        name: &'static str,
        attrs: &[(&str, &str)],
        content: impl FnOnce(&mut Vec<u8>),
    ) {
        self.start_tag(name, attrs);
        content(&mut self.out);
        self.out.extend_from_slice(b"</");
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b">\n");
    }

    /// Text, escaped; nothing for an absent term.
    pub(crate) fn text(&mut self, name: &'static str, text: &str) {
        self.text_with(name, &[], text);
    }

    pub(crate) fn text_with(&mut self, name: &'static str, attrs: &[(&str, &str)], text: &str) {
        if present(text) {
            self.leaf(name, attrs, |out| escape(out, text, false));
        }
    }

    /// An amount, with exactly two decimals.
    pub(crate) fn amount(&mut self, name: &'static str, attrs: &[(&str, &str)], value: Decimal) {
        self.leaf(name, attrs, |out| push_amount(out, value));
    }

    /// A quantity, price or percentage, with the decimals it needs.
    pub(crate) fn number(&mut self, name: &'static str, attrs: &[(&str, &str)], value: Decimal) {
        self.leaf(name, attrs, |out| push_number(out, value));
    }

    /// The document, every element closed.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        while !self.open.is_empty() {
            self.close();
        }
        self.out
    }

    /// Indentation and `<name attr="value"…>`; attributes with absent values are left out.
    fn start_tag(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.indent();
        self.out.push(b'<');
        self.out.extend_from_slice(name.as_bytes());
        for (key, value) in attrs {
            if present(value) {
                self.out.push(b' ');
                self.out.extend_from_slice(key.as_bytes());
                self.out.extend_from_slice(b"=\"");
                escape(&mut self.out, value, true);
                self.out.push(b'"');
            }
        }
        self.out.push(b'>');
    }

    fn indent(&mut self) {
        for _ in 0..self.open.len() {
            self.out.extend_from_slice(b"  ");
        }
    }
}

/// Appends `value` rounded half away from zero to exactly two decimals: `1080.00`.
pub(crate) fn push_amount(out: &mut Vec<u8>, value: Decimal) {
    let mut v = value.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
    if v.is_zero() {
        // No "-0.00".
        v = Decimal::ZERO;
    }
    v.rescale(2);
    // Writes into a Vec, which cannot fail.
    let _ = write!(out, "{v}");
}

/// Appends `value` without trailing zeros and never in exponent notation: `19`, `7.5`,
/// `0.125`.
pub(crate) fn push_number(out: &mut Vec<u8>, value: Decimal) {
    // Writes into a Vec, which cannot fail.
    let _ = write!(out, "{}", value.normalize());
}

/// Appends `s` escaped for element text or (`attr`) a quoted attribute value. Characters
/// XML 1.0 does not allow (C0 controls but tab, line feed and carriage return; U+FFFE,
/// U+FFFF) are left out; a carriage return is kept as a reference, which parsers do not
/// normalize away.
pub(crate) fn escape(out: &mut Vec<u8>, s: &str, attr: bool) {
    let bytes = s.as_bytes();
    let mut from = 0;
    let mut i = 0;
    while i < bytes.len() {
        let (replacement, len): (&[u8], usize) = match bytes[i] {
            b'&' => (b"&amp;", 1),
            b'<' => (b"&lt;", 1),
            b'>' => (b"&gt;", 1),
            b'"' if attr => (b"&quot;", 1),
            b'\t' if attr => (b"&#9;", 1),
            b'\n' if attr => (b"&#10;", 1),
            b'\r' => (b"&#13;", 1),
            b'\t' | b'\n' => {
                i += 1;
                continue;
            }
            0..=0x1f => (b"", 1),
            0xef if matches!(bytes.get(i + 1..i + 3), Some([0xbf, 0xbe | 0xbf])) => (b"", 3),
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[from..i]);
        out.extend_from_slice(replacement);
        i += len;
        from = i;
    }
    out.extend_from_slice(&bytes[from..]);
}

/// Sample documents for the tests of both syntaxes, consistent in every sum.
#[cfg(test)]
pub(crate) mod samples {
    use std::str::FromStr as _;

    use rust_decimal::Decimal;

    use time::Date;

    use crate::model::{
        Address, AllowanceCharge, Category, Contact, CreditTransfer, DirectDebit, Invoice, Line,
        LineAllowance, Party, Payment, Totals, VatBreakdown,
    };

    pub(crate) fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).expect("a decimal")
    }

    fn date(s: &str) -> Date {
        crate::read::iso_date(s).expect("a date")
    }

    fn seller() -> Party {
        Party {
            name: "Müller & Söhne <Technik> GmbH".into(),
            identifier: String::new(),
            legal_registration: "HRB 123456".into(),
            vat_id: "DE123456789".into(),
            tax_number: "201/113/40209".into(),
            electronic_address: "rechnung@mueller-soehne.de".into(),
            address: Address {
                line1: "Hauptstraße 5".into(),
                line2: "Hinterhaus".into(),
                city: "München".into(),
                post_code: "80331".into(),
                subdivision: "Bayern".into(),
                country: "DE".into(),
            },
            contact: Contact {
                name: "Anna Müller".into(),
                phone: "+49 89 1234567".into(),
                email: "anna@mueller-soehne.de".into(),
            },
        }
    }

    fn buyer_de() -> Party {
        Party {
            name: "Beispiel AG".into(),
            identifier: "K-1001".into(),
            legal_registration: String::new(),
            vat_id: "DE987654321".into(),
            tax_number: String::new(),
            electronic_address: "einkauf@beispiel.de".into(),
            address: Address {
                line1: "Ringstraße 1".into(),
                city: "Berlin".into(),
                post_code: "10115".into(),
                country: "DE".into(),
                ..Address::default()
            },
            contact: Contact::default(),
        }
    }

    fn line(id: &str, name: &str, qty: &str, unit: &str, price: &str, net: &str) -> Line {
        Line {
            id: id.into(),
            note: String::new(),
            quantity: dec(qty),
            unit_code: unit.into(),
            net_amount: dec(net),
            allowance: None,
            net_price: dec(price),
            category: Category::S,
            rate: dec("19"),
            name: name.into(),
            description: String::new(),
            seller_id: String::new(),
        }
    }

    fn transfer(remittance: &str) -> Payment {
        Payment {
            means_code: "58".into(),
            means_text: "SEPA-Überweisung".into(),
            remittance: remittance.into(),
            credit_transfer: Some(CreditTransfer {
                iban: "DE02120300000000202051".into(),
                account_name: "Müller & Söhne".into(),
                bic: "BYLADEM1001".into(),
            }),
            direct_debit: None,
        }
    }

    /// An invoice with two VAT rates, a line allowance as a percentage, a document
    /// allowance and charge, a credit transfer, and text that needs escaping.
    pub(crate) fn standard() -> Invoice {
        let mut consulting = line("1", "Beratung", "10", "HUR", "120.00", "1080.00");
        consulting.note = "Phase 1 & 2 <vor Ort>".into();
        consulting.description = "Anforderungsanalyse – \"Kick-off\" 東京".into();
        consulting.seller_id = "B-01".into();
        consulting.allowance = Some(LineAllowance {
            amount: dec("120.00"),
            base: Some(dec("1200.00")),
            percent: Some(dec("10")),
            reason: "Mengenrabatt".into(),
            reason_code: "95".into(),
        });
        let mut book = line("2", "Fachbuch", "2", "H87", "24.95", "49.90");
        book.rate = dec("7");
        let shipping = line("3", "Versand", "1.5", "KGM", "4.10", "6.15");
        Invoice {
            number: "RE-2026-0001".into(),
            issue_date: date("2026-03-01"),
            type_code: "380".into(),
            currency: "EUR".into(),
            due_date: Some(date("2026-03-15")),
            buyer_reference: "04011000-12345-67".into(),
            order_reference: "PO-4711".into(),
            contract_reference: "K-2026-17".into(),
            preceding: None,
            notes: vec![
                "Vielen Dank für Ihren Auftrag – 5 € Rabatt <sofort> & mehr 🚀".into(),
                "Zweite Notiz".into(),
            ],
            payment_terms: "Zahlbar bis 15.03.2026 ohne Abzug.".into(),
            delivery_date: Some(date("2026-02-27")),
            deliver_to: None,
            seller: seller(),
            buyer: buyer_de(),
            payment: transfer("RE-2026-0001"),
            allowances: vec![AllowanceCharge {
                amount: dec("10.00"),
                base: None,
                percent: None,
                category: Category::S,
                rate: dec("19"),
                reason: "Treuerabatt".into(),
                reason_code: "95".into(),
            }],
            charges: vec![AllowanceCharge {
                amount: dec("5.00"),
                base: None,
                percent: None,
                category: Category::S,
                rate: dec("19"),
                reason: "Verpackung".into(),
                reason_code: "ABL".into(),
            }],
            totals: Totals {
                line_net: dec("1136.05"),
                allowances: dec("10.00"),
                charges: dec("5.00"),
                without_vat: dec("1131.05"),
                vat: dec("208.91"),
                with_vat: dec("1339.96"),
                paid: Decimal::ZERO,
                rounding: Decimal::ZERO,
                payable: dec("1339.96"),
            },
            vat: vec![
                VatBreakdown {
                    taxable: dec("1081.15"),
                    tax: dec("205.42"),
                    category: Category::S,
                    rate: dec("19"),
                    exemption_reason: String::new(),
                    exemption_code: "".into(),
                },
                VatBreakdown {
                    taxable: dec("49.90"),
                    tax: dec("3.49"),
                    category: Category::S,
                    rate: dec("7"),
                    exemption_reason: String::new(),
                    exemption_code: "".into(),
                },
            ],
            lines: vec![consulting, book, shipping],
        }
    }

    /// A reverse charge invoice (AE) to a buyer in the Netherlands, paid by direct debit
    /// after a prepayment, without a delivery date.
    pub(crate) fn reverse_charge() -> Invoice {
        let mut maintenance = line("1", "Wartung", "3", "HUR", "80", "240.00");
        maintenance.category = Category::AE;
        maintenance.rate = Decimal::ZERO;
        let mut licence = line("2", "Lizenz", "1", "C62", "500.00", "450.00");
        licence.category = Category::AE;
        licence.rate = Decimal::ZERO;
        licence.allowance = Some(LineAllowance {
            amount: dec("50.00"),
            base: None,
            percent: None,
            reason: "Rabatt".into(),
            reason_code: "".into(),
        });
        Invoice {
            number: "RE-2026-0002".into(),
            issue_date: date("2026-03-02"),
            type_code: "380".into(),
            currency: "EUR".into(),
            due_date: Some(date("2026-03-20")),
            buyer_reference: "ACME-7".into(),
            order_reference: String::new(),
            contract_reference: String::new(),
            preceding: None,
            notes: Vec::new(),
            payment_terms: "Der Betrag wird am 20.03.2026 per Lastschrift eingezogen.".into(),
            delivery_date: None,
            deliver_to: None,
            seller: seller(),
            buyer: Party {
                name: "Acme B.V.".into(),
                identifier: String::new(),
                legal_registration: String::new(),
                vat_id: "NL123456789B01".into(),
                tax_number: String::new(),
                electronic_address: "ap@acme.nl".into(),
                address: Address {
                    line1: "Keizersgracht 1".into(),
                    city: "Amsterdam".into(),
                    post_code: "1015 CJ".into(),
                    country: "NL".into(),
                    ..Address::default()
                },
                contact: Contact {
                    name: "Jan de Vries".into(),
                    phone: String::new(),
                    email: "jan@acme.nl".into(),
                },
            },
            payment: Payment {
                means_code: "59".into(),
                means_text: "SEPA-Lastschrift".into(),
                remittance: "RE-2026-0002".into(),
                credit_transfer: None,
                direct_debit: Some(DirectDebit {
                    mandate: "MANDAT-42".into(),
                    creditor_id: "DE98ZZZ09999999999".into(),
                    debited_iban: "DE89370400440532013000".into(),
                }),
            },
            allowances: Vec::new(),
            charges: Vec::new(),
            totals: Totals {
                line_net: dec("690.00"),
                allowances: Decimal::ZERO,
                charges: Decimal::ZERO,
                without_vat: dec("690.00"),
                vat: dec("0.00"),
                with_vat: dec("690.00"),
                paid: dec("100.00"),
                rounding: Decimal::ZERO,
                payable: dec("590.00"),
            },
            vat: vec![VatBreakdown {
                taxable: dec("690.00"),
                tax: dec("0.00"),
                category: Category::AE,
                rate: Decimal::ZERO,
                exemption_reason: "Steuerschuldnerschaft des Leistungsempfängers".into(),
                exemption_code: "VATEX-EU-AE".into(),
            }],
            lines: vec![maintenance, licence],
        }
    }

    /// A credit note for part of `standard`, with a rounding amount.
    pub(crate) fn credit_note() -> Invoice {
        Invoice {
            number: "GS-2026-0001".into(),
            issue_date: date("2026-03-10"),
            type_code: "381".into(),
            currency: "EUR".into(),
            due_date: Some(date("2026-03-24")),
            buyer_reference: "04011000-12345-67".into(),
            order_reference: String::new(),
            contract_reference: String::new(),
            preceding: Some(("RE-2026-0001".into(), Some(date("2026-03-01")))),
            notes: vec!["Gutschrift zu RE-2026-0001".into()],
            payment_terms: "Wir erstatten den Betrag bis 24.03.2026.".into(),
            delivery_date: None,
            deliver_to: None,
            seller: seller(),
            buyer: buyer_de(),
            payment: transfer("GS-2026-0001"),
            allowances: Vec::new(),
            charges: Vec::new(),
            totals: Totals {
                line_net: dec("240.00"),
                allowances: Decimal::ZERO,
                charges: Decimal::ZERO,
                without_vat: dec("240.00"),
                vat: dec("45.60"),
                with_vat: dec("285.60"),
                paid: Decimal::ZERO,
                rounding: dec("0.40"),
                payable: dec("286.00"),
            },
            vat: vec![VatBreakdown {
                taxable: dec("240.00"),
                tax: dec("45.60"),
                category: Category::S,
                rate: dec("19"),
                exemption_reason: String::new(),
                exemption_code: "".into(),
            }],
            lines: vec![line(
                "1",
                "Beratung (Gutschrift)",
                "2",
                "HUR",
                "120",
                "240.00",
            )],
        }
    }

    /// An intra-community supply (K) to Austria with a deliver-to address and a document
    /// allowance given as a percentage.
    pub(crate) fn intra_community() -> Invoice {
        let mut machine = line("1", "Maschine", "1", "C62", "500", "500.00");
        machine.category = Category::K;
        machine.rate = Decimal::ZERO;
        Invoice {
            number: "RE-2026-0003".into(),
            issue_date: date("2026-03-03"),
            type_code: "380".into(),
            currency: "EUR".into(),
            due_date: Some(date("2026-04-02")),
            buyer_reference: "AT-WIEN-1".into(),
            order_reference: String::new(),
            contract_reference: String::new(),
            preceding: None,
            notes: Vec::new(),
            payment_terms: "Zahlbar innerhalb von 30 Tagen.".into(),
            delivery_date: Some(date("2026-03-03")),
            deliver_to: Some(Address {
                line1: "Lagerstraße 9".into(),
                line2: String::new(),
                city: "Wien".into(),
                post_code: "1100".into(),
                subdivision: String::new(),
                country: "AT".into(),
            }),
            seller: seller(),
            buyer: Party {
                name: "Wiener Werkstätten GmbH".into(),
                identifier: String::new(),
                legal_registration: "FN 123456a".into(),
                vat_id: "ATU12345678".into(),
                tax_number: String::new(),
                electronic_address: "office@werkstaetten.at".into(),
                address: Address {
                    line1: "Ringstraße 2".into(),
                    city: "Wien".into(),
                    post_code: "1010".into(),
                    country: "AT".into(),
                    ..Address::default()
                },
                contact: Contact::default(),
            },
            payment: transfer("RE-2026-0003"),
            allowances: vec![AllowanceCharge {
                amount: dec("10.00"),
                base: Some(dec("500.00")),
                percent: Some(dec("2")),
                category: Category::K,
                rate: Decimal::ZERO,
                reason: "Skonto vorab".into(),
                reason_code: "95".into(),
            }],
            charges: Vec::new(),
            totals: Totals {
                line_net: dec("500.00"),
                allowances: dec("10.00"),
                charges: Decimal::ZERO,
                without_vat: dec("490.00"),
                vat: Decimal::ZERO,
                with_vat: dec("490.00"),
                paid: Decimal::ZERO,
                rounding: Decimal::ZERO,
                payable: dec("490.00"),
            },
            vat: vec![VatBreakdown {
                taxable: dec("490.00"),
                tax: Decimal::ZERO,
                category: Category::K,
                rate: Decimal::ZERO,
                exemption_reason: "Steuerfreie innergemeinschaftliche Lieferung".into(),
                exemption_code: "VATEX-EU-IC".into(),
            }],
            lines: vec![machine],
        }
    }

    /// A supply not subject to VAT (O) by a seller without a VAT identifier, with a
    /// document charge.
    pub(crate) fn not_subject() -> Invoice {
        let mut talk = line("1", "Vortrag", "1", "C62", "300", "300.00");
        talk.category = Category::O;
        talk.rate = Decimal::ZERO;
        let mut seller = seller();
        seller.vat_id = String::new();
        let mut buyer = buyer_de();
        buyer.vat_id = String::new();
        Invoice {
            number: "RE-2026-0004".into(),
            issue_date: date("2026-03-04"),
            type_code: "380".into(),
            currency: "EUR".into(),
            due_date: Some(date("2026-03-18")),
            buyer_reference: "04011000-12345-67".into(),
            order_reference: String::new(),
            contract_reference: String::new(),
            preceding: None,
            notes: Vec::new(),
            payment_terms: String::new(),
            delivery_date: Some(date("2026-03-04")),
            deliver_to: None,
            seller,
            buyer,
            payment: transfer("RE-2026-0004"),
            allowances: Vec::new(),
            charges: vec![AllowanceCharge {
                amount: dec("20.00"),
                base: None,
                percent: None,
                category: Category::O,
                rate: Decimal::ZERO,
                reason: "Reisekosten".into(),
                reason_code: "".into(),
            }],
            totals: Totals {
                line_net: dec("300.00"),
                allowances: Decimal::ZERO,
                charges: dec("20.00"),
                without_vat: dec("320.00"),
                vat: Decimal::ZERO,
                with_vat: dec("320.00"),
                paid: Decimal::ZERO,
                rounding: Decimal::ZERO,
                payable: dec("320.00"),
            },
            vat: vec![VatBreakdown {
                taxable: dec("320.00"),
                tax: Decimal::ZERO,
                category: Category::O,
                rate: Decimal::ZERO,
                exemption_reason: "Nicht steuerbar".into(),
                exemption_code: "VATEX-EU-O".into(),
            }],
            lines: vec![talk],
        }
    }

    /// An element as `parse` reads it back.
    #[derive(Debug)]
    pub(crate) struct Node {
        /// The names from the root to the element: `a/b/c`.
        pub(crate) path: String,
        pub(crate) attrs: Vec<(String, String)>,
        /// Its text, unescaped (empty for a container).
        pub(crate) text: String,
    }

    /// Every element of `xml` in document order; panics unless `xml` is well-formed UTF-8
    /// XML with its declaration.
    pub(crate) fn parse(xml: &[u8]) -> Vec<Node> {
        use quick_xml::events::Event;
        let text = std::str::from_utf8(xml).expect("UTF-8");
        assert!(text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
        let mut reader = quick_xml::Reader::from_str(text);
        let mut nodes: Vec<Node> = Vec::new();
        let mut open: Vec<(String, usize)> = Vec::new();
        let mut roots = 0;
        loop {
            let event = reader.read_event().expect("well-formed XML");
            match event {
                Event::Start(ref e) | Event::Empty(ref e) => {
                    let name = e.name().as_ref().to_owned();
                    let path = match open.last() {
                        Some((parent, _)) => format!("{parent}/{name}"),
                        None => {
                            roots += 1;
                            name
                        }
                    };
                    let attrs = e
                        .attributes()
                        .map(|a| {
                            let a = a.expect("an attribute");
                            let value = a
                                .normalized_value(quick_xml::XmlVersion::Explicit1_0)
                                .expect("an attribute value");
                            (a.key.as_ref().to_owned(), value.into_owned())
                        })
                        .collect();
                    nodes.push(Node {
                        path: path.clone(),
                        attrs,
                        text: String::new(),
                    });
                    if matches!(event, Event::Start(_)) {
                        open.push((path, nodes.len() - 1));
                    }
                }
                Event::End(_) => {
                    open.pop().expect("a start tag");
                }
                Event::Text(t) => match open.last() {
                    Some((_, i)) => nodes[*i].text.push_str(&t.xml10_content()),
                    None => assert!(t.xml10_content().trim().is_empty(), "text outside the root"),
                },
                Event::GeneralRef(r) => {
                    let (_, i) = open.last().expect("a reference inside the root");
                    let c = match &*r.xml10_content() {
                        "amp" => Some('&'),
                        "lt" => Some('<'),
                        "gt" => Some('>'),
                        "quot" => Some('"'),
                        "apos" => Some('\''),
                        _ => r.resolve_char_ref().expect("a character reference"),
                    };
                    nodes[*i].text.push(c.expect("a known entity"));
                }
                Event::Eof => break,
                _ => {}
            }
        }
        assert!(open.is_empty(), "unclosed elements: {open:?}");
        assert_eq!(roots, 1);
        // The text of a container is the indentation between its children.
        for i in 0..nodes.len() {
            let parent = format!("{}/", nodes[i].path);
            if nodes
                .get(i + 1)
                .is_some_and(|n| n.path.starts_with(&parent))
            {
                assert!(nodes[i].text.trim().is_empty(), "mixed content: {parent}");
                nodes[i].text.clear();
            }
        }
        nodes
    }

    /// The text of the only element at `path`.
    pub(crate) fn text_at<'a>(nodes: &'a [Node], path: &str) -> &'a str {
        let found: Vec<&Node> = nodes.iter().filter(|n| n.path == path).collect();
        assert_eq!(found.len(), 1, "{path}: {found:?}");
        &found[0].text
    }

    /// The texts of every element at `path`, in order.
    pub(crate) fn texts_at<'a>(nodes: &'a [Node], path: &str) -> Vec<&'a str> {
        nodes
            .iter()
            .filter(|n| n.path == path)
            .map(|n| n.text.as_str())
            .collect()
    }

    /// The names of the children of the only element at `path`, in order.
    pub(crate) fn children<'a>(nodes: &'a [Node], path: &str) -> Vec<&'a str> {
        let prefix = format!("{path}/");
        assert_eq!(nodes.iter().filter(|n| n.path == path).count(), 1, "{path}");
        nodes
            .iter()
            .filter_map(|n| n.path.strip_prefix(&prefix))
            .filter(|rest| !rest.contains('/'))
            .collect()
    }

    /// The paths of the elements with neither text nor children, but those ending in one of
    /// `allowed`.
    pub(crate) fn empty_elements<'a>(nodes: &'a [Node], allowed: &[&str]) -> Vec<&'a str> {
        nodes
            .iter()
            .enumerate()
            .filter(|(i, n)| {
                n.text.trim().is_empty()
                    && !nodes
                        .get(i + 1)
                        .is_some_and(|next| next.path.starts_with(&format!("{}/", n.path)))
            })
            .map(|(_, n)| n.path.as_str())
            .filter(|p| !allowed.iter().any(|a| p.ends_with(a)))
            .collect()
    }

    /// Every sample under its name.
    pub(crate) fn all() -> [(&'static str, Invoice); 5] {
        [
            ("standard", standard()),
            ("reverse-charge", reverse_charge()),
            ("credit-note", credit_note()),
            ("intra-community", intra_community()),
            ("not-subject", not_subject()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::samples::{self, Node, children, dec, empty_elements, parse, text_at, texts_at};
    use super::*;

    const ROOT: &str = "rsm:CrossIndustryInvoice";
    const TRANSACTION: &str = "rsm:CrossIndustryInvoice/rsm:SupplyChainTradeTransaction";
    const SETTLEMENT: &str = "rsm:CrossIndustryInvoice/rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeSettlement";
    const AGREEMENT: &str = "rsm:CrossIndustryInvoice/rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeAgreement";

    fn written(inv: &Invoice, profile: Profile) -> (String, Vec<Node>) {
        let xml = write(inv, profile);
        let nodes = parse(&xml);
        (String::from_utf8(xml).expect("UTF-8"), nodes)
    }

    fn attr<'a>(nodes: &'a [Node], path: &str, name: &str) -> &'a str {
        let node = nodes
            .iter()
            .find(|n| n.path == path)
            .unwrap_or_else(|| panic!("no {path}"));
        node.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("no {name} on {path}"))
    }

    #[test]
    fn the_document_follows_the_schema_order() {
        let (_, nodes) = written(&samples::standard(), Profile::XrechnungCii);
        assert_eq!(
            children(&nodes, ROOT),
            [
                "rsm:ExchangedDocumentContext",
                "rsm:ExchangedDocument",
                "rsm:SupplyChainTradeTransaction"
            ]
        );
        assert_eq!(
            children(&nodes, &format!("{ROOT}/rsm:ExchangedDocument")),
            [
                "ram:ID",
                "ram:TypeCode",
                "ram:IssueDateTime",
                "ram:IncludedNote",
                "ram:IncludedNote"
            ]
        );
        assert_eq!(
            children(&nodes, TRANSACTION),
            [
                "ram:IncludedSupplyChainTradeLineItem",
                "ram:IncludedSupplyChainTradeLineItem",
                "ram:IncludedSupplyChainTradeLineItem",
                "ram:ApplicableHeaderTradeAgreement",
                "ram:ApplicableHeaderTradeDelivery",
                "ram:ApplicableHeaderTradeSettlement"
            ]
        );
        assert_eq!(
            children(&nodes, AGREEMENT),
            [
                "ram:BuyerReference",
                "ram:SellerTradeParty",
                "ram:BuyerTradeParty",
                "ram:BuyerOrderReferencedDocument",
                "ram:ContractReferencedDocument"
            ]
        );
        assert_eq!(
            children(&nodes, &format!("{AGREEMENT}/ram:SellerTradeParty")),
            [
                "ram:Name",
                "ram:SpecifiedLegalOrganization",
                "ram:DefinedTradeContact",
                "ram:PostalTradeAddress",
                "ram:URIUniversalCommunication",
                "ram:SpecifiedTaxRegistration",
                "ram:SpecifiedTaxRegistration"
            ]
        );
        assert_eq!(
            children(
                &nodes,
                &format!("{AGREEMENT}/ram:SellerTradeParty/ram:PostalTradeAddress")
            ),
            [
                "ram:PostcodeCode",
                "ram:LineOne",
                "ram:LineTwo",
                "ram:CityName",
                "ram:CountryID",
                "ram:CountrySubDivisionName"
            ]
        );
        assert_eq!(
            children(&nodes, &format!("{AGREEMENT}/ram:BuyerTradeParty")),
            [
                "ram:ID",
                "ram:Name",
                "ram:PostalTradeAddress",
                "ram:URIUniversalCommunication",
                "ram:SpecifiedTaxRegistration"
            ]
        );
        assert_eq!(
            children(&nodes, SETTLEMENT),
            [
                "ram:PaymentReference",
                "ram:InvoiceCurrencyCode",
                "ram:SpecifiedTradeSettlementPaymentMeans",
                "ram:ApplicableTradeTax",
                "ram:ApplicableTradeTax",
                "ram:SpecifiedTradeAllowanceCharge",
                "ram:SpecifiedTradeAllowanceCharge",
                "ram:SpecifiedTradePaymentTerms",
                "ram:SpecifiedTradeSettlementHeaderMonetarySummation"
            ]
        );
        assert_eq!(
            children(
                &nodes,
                &format!("{SETTLEMENT}/ram:SpecifiedTradeSettlementHeaderMonetarySummation")
            ),
            [
                "ram:LineTotalAmount",
                "ram:ChargeTotalAmount",
                "ram:AllowanceTotalAmount",
                "ram:TaxBasisTotalAmount",
                "ram:TaxTotalAmount",
                "ram:GrandTotalAmount",
                "ram:DuePayableAmount"
            ]
        );
        let first_line = nodes
            .iter()
            .position(|n| n.path == format!("{TRANSACTION}/ram:IncludedSupplyChainTradeLineItem"))
            .expect("a line");
        let prefix = format!("{}/", nodes[first_line].path);
        let line_children: Vec<&str> = nodes[first_line + 1..]
            .iter()
            .map_while(|n| n.path.strip_prefix(&prefix))
            .collect();
        assert_eq!(
            line_children,
            [
                "ram:AssociatedDocumentLineDocument",
                "ram:AssociatedDocumentLineDocument/ram:LineID",
                "ram:AssociatedDocumentLineDocument/ram:IncludedNote",
                "ram:AssociatedDocumentLineDocument/ram:IncludedNote/ram:Content",
                "ram:SpecifiedTradeProduct",
                "ram:SpecifiedTradeProduct/ram:SellerAssignedID",
                "ram:SpecifiedTradeProduct/ram:Name",
                "ram:SpecifiedTradeProduct/ram:Description",
                "ram:SpecifiedLineTradeAgreement",
                "ram:SpecifiedLineTradeAgreement/ram:NetPriceProductTradePrice",
                "ram:SpecifiedLineTradeAgreement/ram:NetPriceProductTradePrice/ram:ChargeAmount",
                "ram:SpecifiedLineTradeDelivery",
                "ram:SpecifiedLineTradeDelivery/ram:BilledQuantity",
                "ram:SpecifiedLineTradeSettlement",
                "ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax",
                "ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax/ram:TypeCode",
                "ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax/ram:CategoryCode",
                "ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax/ram:RateApplicablePercent",
                "ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeAllowanceCharge",
                "ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeAllowanceCharge/ram:ChargeIndicator",
                "ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeAllowanceCharge/ram:ChargeIndicator/udt:Indicator",
                "ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeAllowanceCharge/ram:CalculationPercent",
                "ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeAllowanceCharge/ram:BasisAmount",
                "ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeAllowanceCharge/ram:ActualAmount",
                "ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeAllowanceCharge/ram:ReasonCode",
                "ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeAllowanceCharge/ram:Reason",
                "ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeSettlementLineMonetarySummation",
                "ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeSettlementLineMonetarySummation/ram:LineTotalAmount",
            ]
        );
    }

    #[test]
    fn context_names_the_profile() {
        let inv = samples::standard();
        let (_, nodes) = written(&inv, Profile::XrechnungCii);
        let context = format!("{ROOT}/rsm:ExchangedDocumentContext");
        assert_eq!(
            text_at(
                &nodes,
                &format!("{context}/ram:BusinessProcessSpecifiedDocumentContextParameter/ram:ID")
            ),
            BILLING_PROCESS
        );
        assert_eq!(
            text_at(
                &nodes,
                &format!("{context}/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID")
            ),
            "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0"
        );

        let (_, nodes) = written(&inv, Profile::FacturX);
        assert_eq!(
            children(&nodes, &context),
            ["ram:GuidelineSpecifiedDocumentContextParameter"]
        );
        assert_eq!(
            text_at(
                &nodes,
                &format!("{context}/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID")
            ),
            "urn:cen.eu:en16931:2017"
        );
    }

    #[test]
    fn amounts_quantities_prices_and_dates_are_formatted() {
        let (xml, nodes) = written(&samples::standard(), Profile::FacturX);
        let line = format!("{TRANSACTION}/ram:IncludedSupplyChainTradeLineItem");
        assert_eq!(
            texts_at(
                &nodes,
                &format!(
                    "{line}/ram:SpecifiedLineTradeAgreement/ram:NetPriceProductTradePrice/ram:ChargeAmount"
                )
            ),
            ["120", "24.95", "4.1"]
        );
        assert_eq!(
            texts_at(
                &nodes,
                &format!("{line}/ram:SpecifiedLineTradeDelivery/ram:BilledQuantity")
            ),
            ["10", "2", "1.5"]
        );
        assert!(xml.contains("<ram:BilledQuantity unitCode=\"KGM\">1.5</ram:BilledQuantity>"));
        assert_eq!(
            texts_at(
                &nodes,
                &format!(
                    "{line}/ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax/ram:RateApplicablePercent"
                )
            ),
            ["19", "7", "19"]
        );
        let sums = format!("{SETTLEMENT}/ram:SpecifiedTradeSettlementHeaderMonetarySummation");
        assert_eq!(
            text_at(&nodes, &format!("{sums}/ram:LineTotalAmount")),
            "1136.05"
        );
        assert_eq!(
            text_at(&nodes, &format!("{sums}/ram:ChargeTotalAmount")),
            "5.00"
        );
        assert_eq!(
            text_at(&nodes, &format!("{sums}/ram:AllowanceTotalAmount")),
            "10.00"
        );
        assert!(xml.contains("<ram:TaxTotalAmount currencyID=\"EUR\">208.91</ram:TaxTotalAmount>"));
        assert_eq!(
            xml.matches("currencyID=").count(),
            1,
            "CII states the currency only on BT-110"
        );
        assert_eq!(
            texts_at(
                &nodes,
                &format!(
                    "{line}/ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeSettlementLineMonetarySummation/ram:LineTotalAmount"
                )
            ),
            ["1080.00", "49.90", "6.15"]
        );
        assert!(xml.contains(
            "<ram:IssueDateTime>\n      <udt:DateTimeString format=\"102\">20260301</udt:DateTimeString>"
        ));
        assert_eq!(
            text_at(
                &nodes,
                &format!(
                    "{SETTLEMENT}/ram:SpecifiedTradePaymentTerms/ram:DueDateDateTime/udt:DateTimeString"
                )
            ),
            "20260315"
        );
        assert_eq!(
            text_at(
                &nodes,
                &format!(
                    "{TRANSACTION}/ram:ApplicableHeaderTradeDelivery/ram:ActualDeliverySupplyChainEvent/ram:OccurrenceDateTime/udt:DateTimeString"
                )
            ),
            "20260227"
        );
    }

    #[test]
    fn number_formats() {
        let amount = |s: &str| {
            let mut out = Vec::new();
            push_amount(&mut out, dec(s));
            String::from_utf8(out).expect("UTF-8")
        };
        let number = |s: &str| {
            let mut out = Vec::new();
            push_number(&mut out, dec(s));
            String::from_utf8(out).expect("UTF-8")
        };
        assert_eq!(amount("1080"), "1080.00");
        assert_eq!(amount("3.5"), "3.50");
        assert_eq!(amount("0.005"), "0.01");
        assert_eq!(amount("-0.004"), "0.00");
        assert_eq!(amount("-12.345"), "-12.35");
        assert_eq!(amount("1234567.891"), "1234567.89");
        assert_eq!(number("19.00"), "19");
        assert_eq!(number("7.50"), "7.5");
        assert_eq!(number("0.000"), "0");
        assert_eq!(number("100"), "100");
        assert_eq!(number("0.0001250"), "0.000125");
        assert_eq!(number("1000000000000"), "1000000000000");
    }

    #[test]
    fn text_is_escaped_and_unicode_kept() {
        let mut inv = samples::standard();
        inv.notes
            .push("Steuer\u{1}zeichen\u{fffe} und \"Zitat\"\r\nZeile".into());
        inv.payment.means_text = "Tab\there \"quoted\" <&>".into();
        let (xml, nodes) = written(&inv, Profile::XrechnungCii);
        assert!(xml.contains("<ram:Name>Müller &amp; Söhne &lt;Technik&gt; GmbH</ram:Name>"));
        assert_eq!(
            texts_at(
                &nodes,
                &format!("{ROOT}/rsm:ExchangedDocument/ram:IncludedNote/ram:Content")
            ),
            [
                "Vielen Dank für Ihren Auftrag – 5 € Rabatt <sofort> & mehr 🚀",
                "Zweite Notiz",
                "Steuerzeichen und \"Zitat\"\r\nZeile"
            ]
        );
        assert_eq!(
            text_at(
                &nodes,
                &format!("{AGREEMENT}/ram:SellerTradeParty/ram:Name")
            ),
            "Müller & Söhne <Technik> GmbH"
        );
        assert_eq!(
            text_at(
                &nodes,
                &format!("{SETTLEMENT}/ram:SpecifiedTradeSettlementPaymentMeans/ram:Information")
            ),
            "Tab\there \"quoted\" <&>"
        );
        assert!(xml.contains("Anforderungsanalyse – \"Kick-off\" 東京"));

        let mut out = Vec::new();
        escape(&mut out, "a\"b\tc\nd<&>", true);
        assert_eq!(out, b"a&quot;b&#9;c&#10;d&lt;&amp;&gt;");
    }

    #[test]
    fn absent_terms_write_no_elements() {
        for (name, inv) in samples::all() {
            for profile in [Profile::XrechnungCii, Profile::FacturX] {
                let (_, nodes) = written(&inv, profile);
                assert_eq!(
                    empty_elements(&nodes, &["ram:ApplicableHeaderTradeDelivery"]),
                    Vec::<&str>::new(),
                    "{name}"
                );
            }
        }
        let (xml, nodes) = written(&samples::reverse_charge(), Profile::XrechnungCii);
        assert!(xml.contains("<ram:ApplicableHeaderTradeDelivery/>"));
        assert!(!xml.contains("BuyerOrderReferencedDocument"));
        assert!(!xml.contains("ram:IncludedNote"));
        assert!(!xml.contains("ram:ChargeTotalAmount"));
        assert!(!xml.contains("ram:RoundingAmount"));
        assert!(!xml.contains("ram:InvoiceReferencedDocument"));
        assert_eq!(
            children(
                &nodes,
                &format!("{AGREEMENT}/ram:BuyerTradeParty/ram:DefinedTradeContact")
            ),
            ["ram:PersonName", "ram:EmailURIUniversalCommunication"]
        );
    }

    #[test]
    fn reverse_charge_and_direct_debit() {
        let (_, nodes) = written(&samples::reverse_charge(), Profile::XrechnungCii);
        assert_eq!(
            children(&nodes, SETTLEMENT),
            [
                "ram:CreditorReferenceID",
                "ram:PaymentReference",
                "ram:InvoiceCurrencyCode",
                "ram:SpecifiedTradeSettlementPaymentMeans",
                "ram:ApplicableTradeTax",
                "ram:SpecifiedTradePaymentTerms",
                "ram:SpecifiedTradeSettlementHeaderMonetarySummation"
            ]
        );
        assert_eq!(
            text_at(&nodes, &format!("{SETTLEMENT}/ram:CreditorReferenceID")),
            "DE98ZZZ09999999999"
        );
        let means = format!("{SETTLEMENT}/ram:SpecifiedTradeSettlementPaymentMeans");
        assert_eq!(
            children(&nodes, &means),
            [
                "ram:TypeCode",
                "ram:Information",
                "ram:PayerPartyDebtorFinancialAccount"
            ]
        );
        assert_eq!(
            text_at(
                &nodes,
                &format!("{means}/ram:PayerPartyDebtorFinancialAccount/ram:IBANID")
            ),
            "DE89370400440532013000"
        );
        let tax = format!("{SETTLEMENT}/ram:ApplicableTradeTax");
        assert_eq!(
            children(&nodes, &tax),
            [
                "ram:CalculatedAmount",
                "ram:TypeCode",
                "ram:ExemptionReason",
                "ram:BasisAmount",
                "ram:CategoryCode",
                "ram:ExemptionReasonCode",
                "ram:RateApplicablePercent"
            ]
        );
        assert_eq!(text_at(&nodes, &format!("{tax}/ram:CategoryCode")), "AE");
        assert_eq!(
            text_at(&nodes, &format!("{tax}/ram:ExemptionReasonCode")),
            "VATEX-EU-AE"
        );
        assert_eq!(
            text_at(&nodes, &format!("{tax}/ram:RateApplicablePercent")),
            "0"
        );
        assert_eq!(
            text_at(&nodes, &format!("{tax}/ram:CalculatedAmount")),
            "0.00"
        );
        let terms = format!("{SETTLEMENT}/ram:SpecifiedTradePaymentTerms");
        assert_eq!(
            children(&nodes, &terms),
            [
                "ram:Description",
                "ram:DueDateDateTime",
                "ram:DirectDebitMandateID"
            ]
        );
        assert_eq!(
            text_at(&nodes, &format!("{terms}/ram:DirectDebitMandateID")),
            "MANDAT-42"
        );
        let sums = format!("{SETTLEMENT}/ram:SpecifiedTradeSettlementHeaderMonetarySummation");
        assert_eq!(
            text_at(&nodes, &format!("{sums}/ram:TotalPrepaidAmount")),
            "100.00"
        );
        assert_eq!(
            text_at(&nodes, &format!("{sums}/ram:DuePayableAmount")),
            "590.00"
        );
        assert_eq!(
            attr(
                &nodes,
                &format!("{AGREEMENT}/ram:BuyerTradeParty/ram:SpecifiedTaxRegistration/ram:ID"),
                "schemeID"
            ),
            "VA"
        );
        assert_eq!(
            attr(
                &nodes,
                &format!(
                    "{AGREEMENT}/ram:SellerTradeParty/ram:URIUniversalCommunication/ram:URIID"
                ),
                "schemeID"
            ),
            "EM"
        );
    }

    #[test]
    fn credit_note_refers_to_its_invoice() {
        let (_, nodes) = written(&samples::credit_note(), Profile::XrechnungCii);
        assert_eq!(
            text_at(
                &nodes,
                &format!("{ROOT}/rsm:ExchangedDocument/ram:TypeCode")
            ),
            "381"
        );
        let children = children(&nodes, SETTLEMENT);
        assert_eq!(children.last(), Some(&"ram:InvoiceReferencedDocument"));
        let reference = format!("{SETTLEMENT}/ram:InvoiceReferencedDocument");
        assert_eq!(
            text_at(&nodes, &format!("{reference}/ram:IssuerAssignedID")),
            "RE-2026-0001"
        );
        assert_eq!(
            text_at(
                &nodes,
                &format!("{reference}/ram:FormattedIssueDateTime/qdt:DateTimeString")
            ),
            "20260301"
        );
        assert_eq!(
            attr(
                &nodes,
                &format!("{reference}/ram:FormattedIssueDateTime/qdt:DateTimeString"),
                "format"
            ),
            "102"
        );
        let sums = format!("{SETTLEMENT}/ram:SpecifiedTradeSettlementHeaderMonetarySummation");
        assert_eq!(
            text_at(&nodes, &format!("{sums}/ram:RoundingAmount")),
            "0.40"
        );
        assert_eq!(
            text_at(&nodes, &format!("{sums}/ram:DuePayableAmount")),
            "286.00"
        );
    }

    #[test]
    fn not_subject_to_vat_states_no_rate_on_lines() {
        let mut inv = samples::reverse_charge();
        for line in &mut inv.lines {
            line.category = Category::O;
        }
        inv.vat[0].category = Category::O;
        let (_, nodes) = written(&inv, Profile::XrechnungCii);
        let line = format!(
            "{TRANSACTION}/ram:IncludedSupplyChainTradeLineItem/ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax"
        );
        assert_eq!(
            texts_at(&nodes, &format!("{line}/ram:RateApplicablePercent")).len(),
            0
        );
        assert_eq!(
            text_at(
                &nodes,
                &format!("{SETTLEMENT}/ram:ApplicableTradeTax/ram:RateApplicablePercent")
            ),
            "0"
        );
    }

    #[test]
    fn output_is_deterministic() {
        let inv = samples::standard();
        assert_eq!(write(&inv, Profile::FacturX), write(&inv, Profile::FacturX));
    }
}

/// The samples through the official rules: `EINVOICE_SAMPLES_DIR=/tmp/x cargo test -p
/// faktura-einvoice --lib cii::validation -- --ignored` writes every sample in
/// every profile there, with `manifest.json`, and runs `tests/einvoice/validate.py` on it
/// (CEN and XRechnung or Factur-X schematron, XSD): no errors allowed.
#[cfg(test)]
mod validation {
    use std::path::{Path, PathBuf};

    use super::samples;
    use crate::model::Profile;
    use crate::ubl;

    #[test]
    #[ignore = "needs EINVOICE_SAMPLES_DIR and the Python validator (make test-deps)"]
    #[expect(
        clippy::disallowed_methods,
        reason = "a test that hands files to an external validator, outside the crate"
    )]
    fn samples_pass_the_official_validators() {
        let Some(dir) = std::env::var_os("EINVOICE_SAMPLES_DIR").map(PathBuf::from) else {
            eprintln!("EINVOICE_SAMPLES_DIR not set: nothing validated");
            return;
        };
        std::fs::create_dir_all(&dir).expect("the samples directory");
        let mut manifest = Vec::new();
        for (name, inv) in samples::all() {
            for profile in Profile::ALL {
                let xml = match profile {
                    Profile::XrechnungUbl => ubl::write(&inv, profile),
                    Profile::XrechnungCii | Profile::FacturX => super::write(&inv, profile),
                };
                let path = dir.join(format!("{name}.{}.xml", profile.name()));
                std::fs::write(&path, xml).expect("a sample file");
                manifest.push(serde_json::json!({
                    "path": path.to_string_lossy(),
                    "profile": profile.name(),
                }));
            }
        }
        let manifest_path = dir.join("manifest.json");
        std::fs::write(
            &manifest_path,
            serde_json::to_vec_pretty(&manifest).expect("JSON"),
        )
        .expect("the manifest");

        let validator = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/einvoice/validate.py");
        let output = std::process::Command::new("python3")
            .arg(&validator)
            .arg(&manifest_path)
            .output()
            .expect("python3");
        assert!(
            output.status.success(),
            "validate.py: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("the validator's JSON");
        std::fs::write(dir.join("report.json"), &output.stdout).expect("the report");
        let mut failures = Vec::new();
        for result in report["results"].as_array().expect("results") {
            for error in result["errors"].as_array().expect("errors") {
                failures.push(format!(
                    "{} ({}): {} {} at {}: {}",
                    result["path"],
                    result["profile"],
                    error["source"],
                    error["id"],
                    error["location"],
                    error["text"]
                ));
            }
            for warning in result["warnings"].as_array().expect("warnings") {
                eprintln!(
                    "warning: {} ({}): {} {}: {}",
                    result["path"],
                    result["profile"],
                    warning["source"],
                    warning["id"],
                    warning["text"]
                );
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
