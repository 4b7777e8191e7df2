//! The OASIS UBL 2.1 `Invoice` or `CreditNote` of a completed document, as XRechnung 3.0
//! (UBL) uses it.
//!
//! Elements follow the order of the Invoice-2 and CreditNote-2 schemas (they differ in
//! the type code, the due date and the lines); every amount carries its `currencyID`. An
//! absent term writes no element (`cii::Xml`).

use std::io::Write as _;

use rust_decimal::Decimal;

use time::Date;

use crate::cii::{BILLING_PROCESS, Xml, has_rate, present};
use crate::model::{
    Address, AllowanceCharge, Category, Invoice, Line, LineAllowance, Party, Profile, VatBreakdown,
};

const NS_CAC: (&str, &str) = (
    "xmlns:cac",
    "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
);
const NS_CBC: (&str, &str) = (
    "xmlns:cbc",
    "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
);

/// What differs between the two document types.
struct Kind {
    root: &'static str,
    namespace: &'static str,
    type_code: &'static str,
    line: &'static str,
    quantity: &'static str,
    /// Whether BT-9 is `cbc:DueDate` of the document (an invoice) or `cbc:PaymentDueDate`
    /// of the payment means (a credit note).
    header_due_date: bool,
}

const INVOICE: Kind = Kind {
    root: "Invoice",
    namespace: "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2",
    type_code: "cbc:InvoiceTypeCode",
    line: "cac:InvoiceLine",
    quantity: "cbc:InvoicedQuantity",
    header_due_date: true,
};

const CREDIT_NOTE: Kind = Kind {
    root: "CreditNote",
    namespace: "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2",
    type_code: "cbc:CreditNoteTypeCode",
    line: "cac:CreditNoteLine",
    quantity: "cbc:CreditedQuantity",
    header_due_date: false,
};

/// Whether BT-3 is a credit note (UNTDID 1001, the codes EN 16931 allows), which UBL
/// writes as a `CreditNote`.
fn is_credit_note(type_code: &str) -> bool {
    matches!(
        type_code,
        "81" | "83" | "261" | "262" | "296" | "308" | "381" | "396" | "420" | "458" | "532"
    )
}

/// The UBL document of `inv` (BT-24 is `profile.specification()`).
pub fn write(inv: &Invoice, profile: Profile) -> Vec<u8> {
    let kind = if is_credit_note(&inv.type_code) {
        &CREDIT_NOTE
    } else {
        &INVOICE
    };
    let cur = inv.currency.as_str();
    let mut x = Xml::new(6 * 1024 + 1536 * inv.lines.len());
    x.open_with(kind.root, &[("xmlns", kind.namespace), NS_CAC, NS_CBC]);

    header(&mut x, inv, profile, kind);
    preceding_invoice(&mut x, inv);

    x.open("cac:ContractDocumentReference");
    x.text("cbc:ID", &inv.contract_reference);
    x.close();

    let creditor_id = match &inv.payment.direct_debit {
        Some(d) => d.creditor_id.as_str(),
        None => "",
    };
    party(
        &mut x,
        "cac:AccountingSupplierParty",
        &inv.seller,
        creditor_id,
        true,
    );
    party(&mut x, "cac:AccountingCustomerParty", &inv.buyer, "", false);
    delivery(&mut x, inv);

    payment_means(&mut x, inv, kind);
    x.open("cac:PaymentTerms");
    x.text("cbc:Note", &inv.payment_terms);
    x.close();

    for a in &inv.allowances {
        allowance_charge(&mut x, cur, a, false);
    }
    for c in &inv.charges {
        allowance_charge(&mut x, cur, c, true);
    }

    x.open("cac:TaxTotal");
    x.amount("cbc:TaxAmount", &[("currencyID", cur)], inv.totals.vat);
    for v in &inv.vat {
        subtotal(&mut x, cur, v);
    }
    x.close();
    monetary_total(&mut x, inv);

    for line in &inv.lines {
        invoice_line(&mut x, cur, kind, line);
    }
    x.finish()
}

/// The document's own terms, up to the order reference: BT-24, BT-23, BT-1, BT-2, BT-9
/// (of an invoice), BT-3, the notes (BG-1), BT-5, BT-10 and BT-13.
fn header(x: &mut Xml, inv: &Invoice, profile: Profile, kind: &Kind) {
    x.text("cbc:CustomizationID", profile.specification());
    x.text("cbc:ProfileID", BILLING_PROCESS);
    x.text("cbc:ID", &inv.number);
    date(x, "cbc:IssueDate", inv.issue_date);
    if kind.header_due_date
        && let Some(d) = inv.due_date
    {
        date(x, "cbc:DueDate", d);
    }
    x.text(kind.type_code, &inv.type_code);
    for note in &inv.notes {
        x.text("cbc:Note", note);
    }
    x.text("cbc:DocumentCurrencyCode", &inv.currency);
    x.text("cbc:BuyerReference", &inv.buyer_reference);

    x.open("cac:OrderReference");
    x.text("cbc:ID", &inv.order_reference);
    x.close();
}

/// The preceding invoice reference (BG-3), when it has a number.
fn preceding_invoice(x: &mut Xml, inv: &Invoice) {
    if let Some((number, issued)) = &inv.preceding
        && present(number)
    {
        x.open("cac:BillingReference");
        x.open("cac:InvoiceDocumentReference");
        x.text("cbc:ID", number);
        if let Some(d) = issued {
            date(x, "cbc:IssueDate", *d);
        }
        x.close();
        x.close();
    }
}

/// The delivery information (BG-13): the actual delivery date (BT-72) and the deliver-to
/// address (BG-15).
fn delivery(x: &mut Xml, inv: &Invoice) {
    x.open("cac:Delivery");
    if let Some(d) = inv.delivery_date {
        date(x, "cbc:ActualDeliveryDate", d);
    }
    if let Some(a) = &inv.deliver_to {
        x.open("cac:DeliveryLocation");
        address(x, "cac:Address", a);
        x.close();
    }
    x.close();
}

/// The document totals (BG-22); the sums of allowances and charges when there are any,
/// the prepaid and rounding amounts when they are not zero.
fn monetary_total(x: &mut Xml, inv: &Invoice) {
    let cur = inv.currency.as_str();
    let t = &inv.totals;
    x.open("cac:LegalMonetaryTotal");
    x.amount(
        "cbc:LineExtensionAmount",
        &[("currencyID", cur)],
        t.line_net,
    );
    x.amount(
        "cbc:TaxExclusiveAmount",
        &[("currencyID", cur)],
        t.without_vat,
    );
    x.amount("cbc:TaxInclusiveAmount", &[("currencyID", cur)], t.with_vat);
    if !inv.allowances.is_empty() || !t.allowances.is_zero() {
        x.amount(
            "cbc:AllowanceTotalAmount",
            &[("currencyID", cur)],
            t.allowances,
        );
    }
    if !inv.charges.is_empty() || !t.charges.is_zero() {
        x.amount("cbc:ChargeTotalAmount", &[("currencyID", cur)], t.charges);
    }
    if !t.paid.is_zero() {
        x.amount("cbc:PrepaidAmount", &[("currencyID", cur)], t.paid);
    }
    if !t.rounding.is_zero() {
        x.amount(
            "cbc:PayableRoundingAmount",
            &[("currencyID", cur)],
            t.rounding,
        );
    }
    x.amount("cbc:PayableAmount", &[("currencyID", cur)], t.payable);
    x.close();
}

/// BG-4 (`seller`, with BT-90 as its `SEPA` identifier) or BG-7.
fn party(x: &mut Xml, name: &'static str, p: &Party, creditor_id: &str, seller: bool) {
    x.open(name);
    x.open("cac:Party");
    x.text_with(
        "cbc:EndpointID",
        &[("schemeID", "EM")],
        &p.electronic_address,
    );
    x.open("cac:PartyIdentification");
    x.text("cbc:ID", &p.identifier);
    x.close();
    x.open("cac:PartyIdentification");
    x.text_with("cbc:ID", &[("schemeID", "SEPA")], creditor_id);
    x.close();

    address(x, "cac:PostalAddress", &p.address);

    if present(&p.vat_id) {
        tax_scheme(x, &p.vat_id, "VAT");
    }
    if seller && present(&p.tax_number) {
        tax_scheme(x, &p.tax_number, "FC");
    }

    x.open("cac:PartyLegalEntity");
    x.text("cbc:RegistrationName", &p.name);
    x.text("cbc:CompanyID", &p.legal_registration);
    x.close();

    x.open("cac:Contact");
    x.text("cbc:Name", &p.contact.name);
    x.text("cbc:Telephone", &p.contact.phone);
    x.text("cbc:ElectronicMail", &p.contact.email);
    x.close();
    x.close();
    x.close();
}

/// BG-5, BG-8 or BG-15.
fn address(x: &mut Xml, name: &'static str, a: &Address) {
    x.open(name);
    x.text("cbc:StreetName", &a.line1);
    x.text("cbc:AdditionalStreetName", &a.line2);
    x.text("cbc:CityName", &a.city);
    x.text("cbc:PostalZone", &a.post_code);
    x.text("cbc:CountrySubentity", &a.subdivision);
    x.open("cac:Country");
    x.text("cbc:IdentificationCode", &a.country);
    x.close();
    x.close();
}

/// BT-31 (`VAT`) or BT-32 (any other scheme).
fn tax_scheme(x: &mut Xml, company_id: &str, scheme: &str) {
    x.open("cac:PartyTaxScheme");
    x.text("cbc:CompanyID", company_id);
    x.open("cac:TaxScheme");
    x.text("cbc:ID", scheme);
    x.close();
    x.close();
}

/// BG-16 with BG-17 or BG-19; for a credit note also BT-9.
fn payment_means(x: &mut Xml, inv: &Invoice, kind: &Kind) {
    let pay = &inv.payment;
    if !present(&pay.means_code) {
        return;
    }
    x.open("cac:PaymentMeans");
    x.text_with(
        "cbc:PaymentMeansCode",
        &[("name", &pay.means_text)],
        &pay.means_code,
    );
    if !kind.header_due_date
        && let Some(d) = inv.due_date
    {
        date(x, "cbc:PaymentDueDate", d);
    }
    x.text("cbc:PaymentID", &pay.remittance);
    if let Some(t) = &pay.credit_transfer {
        x.open("cac:PayeeFinancialAccount");
        x.text("cbc:ID", &t.iban);
        x.text("cbc:Name", &t.account_name);
        x.open("cac:FinancialInstitutionBranch");
        x.text("cbc:ID", &t.bic);
        x.close();
        x.close();
    }
    if let Some(d) = &pay.direct_debit {
        x.open("cac:PaymentMandate");
        x.text("cbc:ID", &d.mandate);
        x.open("cac:PayerFinancialAccount");
        x.text("cbc:ID", &d.debited_iban);
        x.close();
        x.close();
    }
    x.close();
}

/// BG-20 or (`charge`) BG-21.
fn allowance_charge(x: &mut Xml, cur: &str, a: &AllowanceCharge, charge: bool) {
    x.open("cac:AllowanceCharge");
    x.text("cbc:ChargeIndicator", if charge { "true" } else { "false" });
    x.text("cbc:AllowanceChargeReasonCode", &a.reason_code);
    x.text("cbc:AllowanceChargeReason", &a.reason);
    if let Some(p) = a.percent {
        x.number("cbc:MultiplierFactorNumeric", &[], p);
    }
    x.amount("cbc:Amount", &[("currencyID", cur)], a.amount);
    if let Some(b) = a.base {
        x.amount("cbc:BaseAmount", &[("currencyID", cur)], b);
    }
    tax_category(x, "cac:TaxCategory", a.category, a.rate);
    x.close();
}

/// BG-27.
fn line_allowance(x: &mut Xml, cur: &str, a: &LineAllowance) {
    x.open("cac:AllowanceCharge");
    x.text("cbc:ChargeIndicator", "false");
    x.text("cbc:AllowanceChargeReasonCode", &a.reason_code);
    x.text("cbc:AllowanceChargeReason", &a.reason);
    if let Some(p) = a.percent {
        x.number("cbc:MultiplierFactorNumeric", &[], p);
    }
    x.amount("cbc:Amount", &[("currencyID", cur)], a.amount);
    if let Some(b) = a.base {
        x.amount("cbc:BaseAmount", &[("currencyID", cur)], b);
    }
    x.close();
}

/// The VAT category of a line, an allowance or a charge: "Not subject to VAT" without a
/// rate (BR-O-05 to BR-O-07).
fn tax_category(x: &mut Xml, name: &'static str, category: Category, rate: Decimal) {
    x.open(name);
    x.text("cbc:ID", category.code());
    if has_rate(category) {
        x.number("cbc:Percent", &[], rate);
    }
    x.open("cac:TaxScheme");
    x.text("cbc:ID", "VAT");
    x.close();
    x.close();
}

/// BG-23.
fn subtotal(x: &mut Xml, cur: &str, v: &VatBreakdown) {
    x.open("cac:TaxSubtotal");
    x.amount("cbc:TaxableAmount", &[("currencyID", cur)], v.taxable);
    x.amount("cbc:TaxAmount", &[("currencyID", cur)], v.tax);
    x.open("cac:TaxCategory");
    x.text("cbc:ID", v.category.code());
    // Always, "Not subject to VAT" too: XRechnung wants BT-119 (BR-DE-14).
    x.number("cbc:Percent", &[], v.rate);
    x.text("cbc:TaxExemptionReasonCode", &v.exemption_code);
    x.text("cbc:TaxExemptionReason", &v.exemption_reason);
    x.open("cac:TaxScheme");
    x.text("cbc:ID", "VAT");
    x.close();
    x.close();
    x.close();
}

/// BG-25.
fn invoice_line(x: &mut Xml, cur: &str, kind: &Kind, line: &Line) {
    x.open(kind.line);
    x.text("cbc:ID", &line.id);
    x.text("cbc:Note", &line.note);
    x.number(
        kind.quantity,
        &[("unitCode", &line.unit_code)],
        line.quantity,
    );
    x.amount(
        "cbc:LineExtensionAmount",
        &[("currencyID", cur)],
        line.net_amount,
    );
    if let Some(a) = &line.allowance {
        line_allowance(x, cur, a);
    }
    x.open("cac:Item");
    x.text("cbc:Description", &line.description);
    x.text("cbc:Name", &line.name);
    x.open("cac:SellersItemIdentification");
    x.text("cbc:ID", &line.seller_id);
    x.close();
    tax_category(x, "cac:ClassifiedTaxCategory", line.category, line.rate);
    x.close();
    x.open("cac:Price");
    x.number("cbc:PriceAmount", &[("currencyID", cur)], line.net_price);
    x.close();
    x.close();
}

/// `YYYY-MM-DD`.
fn date(x: &mut Xml, name: &'static str, d: Date) {
    x.leaf(name, &[], |out| {
        // Writes into a Vec, which cannot fail.
        let _ = write!(
            out,
            "{:04}-{:02}-{:02}",
            d.year(),
            u8::from(d.month()),
            d.day()
        );
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cii::samples::{self, Node, children, empty_elements, parse, text_at, texts_at};

    fn written(inv: &Invoice) -> (String, Vec<Node>) {
        let xml = write(inv, Profile::XrechnungUbl);
        let nodes = parse(&xml);
        (String::from_utf8(xml).expect("UTF-8"), nodes)
    }

    fn attr<'a>(node: &'a Node, name: &str) -> Option<&'a str> {
        node.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn an_invoice_follows_the_schema_order() {
        let (_, nodes) = written(&samples::standard());
        assert_eq!(
            children(&nodes, "Invoice"),
            [
                "cbc:CustomizationID",
                "cbc:ProfileID",
                "cbc:ID",
                "cbc:IssueDate",
                "cbc:DueDate",
                "cbc:InvoiceTypeCode",
                "cbc:Note",
                "cbc:Note",
                "cbc:DocumentCurrencyCode",
                "cbc:BuyerReference",
                "cac:OrderReference",
                "cac:ContractDocumentReference",
                "cac:AccountingSupplierParty",
                "cac:AccountingCustomerParty",
                "cac:Delivery",
                "cac:PaymentMeans",
                "cac:PaymentTerms",
                "cac:AllowanceCharge",
                "cac:AllowanceCharge",
                "cac:TaxTotal",
                "cac:LegalMonetaryTotal",
                "cac:InvoiceLine",
                "cac:InvoiceLine",
                "cac:InvoiceLine"
            ]
        );
        assert_eq!(
            text_at(&nodes, "Invoice/cbc:CustomizationID"),
            "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0"
        );
        assert_eq!(
            text_at(&nodes, "Invoice/cbc:ProfileID"),
            "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"
        );
        let seller = "Invoice/cac:AccountingSupplierParty/cac:Party";
        assert_eq!(
            children(&nodes, seller),
            [
                "cbc:EndpointID",
                "cac:PostalAddress",
                "cac:PartyTaxScheme",
                "cac:PartyTaxScheme",
                "cac:PartyLegalEntity",
                "cac:Contact"
            ]
        );
        assert_eq!(
            texts_at(
                &nodes,
                &format!("{seller}/cac:PartyTaxScheme/cac:TaxScheme/cbc:ID")
            ),
            ["VAT", "FC"]
        );
        assert_eq!(
            texts_at(
                &nodes,
                &format!("{seller}/cac:PartyTaxScheme/cbc:CompanyID")
            ),
            ["DE123456789", "201/113/40209"]
        );
        assert_eq!(
            children(&nodes, &format!("{seller}/cac:PartyLegalEntity")),
            ["cbc:RegistrationName", "cbc:CompanyID"]
        );
        assert_eq!(
            children(&nodes, &format!("{seller}/cac:PostalAddress")),
            [
                "cbc:StreetName",
                "cbc:AdditionalStreetName",
                "cbc:CityName",
                "cbc:PostalZone",
                "cbc:CountrySubentity",
                "cac:Country"
            ]
        );
        assert_eq!(
            children(&nodes, "Invoice/cac:AccountingCustomerParty/cac:Party"),
            [
                "cbc:EndpointID",
                "cac:PartyIdentification",
                "cac:PostalAddress",
                "cac:PartyTaxScheme",
                "cac:PartyLegalEntity"
            ]
        );
        assert_eq!(
            children(&nodes, "Invoice/cac:PaymentMeans"),
            [
                "cbc:PaymentMeansCode",
                "cbc:PaymentID",
                "cac:PayeeFinancialAccount"
            ]
        );
        assert_eq!(
            children(&nodes, "Invoice/cac:PaymentMeans/cac:PayeeFinancialAccount"),
            ["cbc:ID", "cbc:Name", "cac:FinancialInstitutionBranch"]
        );
        assert_eq!(
            children(&nodes, "Invoice/cac:LegalMonetaryTotal"),
            [
                "cbc:LineExtensionAmount",
                "cbc:TaxExclusiveAmount",
                "cbc:TaxInclusiveAmount",
                "cbc:AllowanceTotalAmount",
                "cbc:ChargeTotalAmount",
                "cbc:PayableAmount"
            ]
        );
        let first_line = nodes
            .iter()
            .position(|n| n.path == "Invoice/cac:InvoiceLine")
            .expect("a line");
        let line: Vec<&str> = nodes[first_line + 1..]
            .iter()
            .map_while(|n| n.path.strip_prefix("Invoice/cac:InvoiceLine/"))
            .collect();
        assert_eq!(
            line,
            [
                "cbc:ID",
                "cbc:Note",
                "cbc:InvoicedQuantity",
                "cbc:LineExtensionAmount",
                "cac:AllowanceCharge",
                "cac:AllowanceCharge/cbc:ChargeIndicator",
                "cac:AllowanceCharge/cbc:AllowanceChargeReasonCode",
                "cac:AllowanceCharge/cbc:AllowanceChargeReason",
                "cac:AllowanceCharge/cbc:MultiplierFactorNumeric",
                "cac:AllowanceCharge/cbc:Amount",
                "cac:AllowanceCharge/cbc:BaseAmount",
                "cac:Item",
                "cac:Item/cbc:Description",
                "cac:Item/cbc:Name",
                "cac:Item/cac:SellersItemIdentification",
                "cac:Item/cac:SellersItemIdentification/cbc:ID",
                "cac:Item/cac:ClassifiedTaxCategory",
                "cac:Item/cac:ClassifiedTaxCategory/cbc:ID",
                "cac:Item/cac:ClassifiedTaxCategory/cbc:Percent",
                "cac:Item/cac:ClassifiedTaxCategory/cac:TaxScheme",
                "cac:Item/cac:ClassifiedTaxCategory/cac:TaxScheme/cbc:ID",
                "cac:Price",
                "cac:Price/cbc:PriceAmount",
            ]
        );
    }

    #[test]
    fn every_amount_states_its_currency() {
        for (name, inv) in samples::all() {
            let (_, nodes) = written(&inv);
            let amounts: Vec<&Node> = nodes
                .iter()
                .filter(|n| n.path.ends_with("Amount"))
                .collect();
            assert!(amounts.len() > 8, "{name}");
            for n in amounts {
                assert_eq!(attr(n, "currencyID"), Some("EUR"), "{name}: {}", n.path);
            }
        }
    }

    #[test]
    fn amounts_quantities_prices_and_dates_are_formatted() {
        let (xml, nodes) = written(&samples::standard());
        assert_eq!(
            texts_at(&nodes, "Invoice/cac:InvoiceLine/cbc:InvoicedQuantity"),
            ["10", "2", "1.5"]
        );
        assert!(xml.contains("<cbc:InvoicedQuantity unitCode=\"HUR\">10</cbc:InvoicedQuantity>"));
        assert_eq!(
            texts_at(&nodes, "Invoice/cac:InvoiceLine/cac:Price/cbc:PriceAmount"),
            ["120", "24.95", "4.1"]
        );
        assert_eq!(
            texts_at(&nodes, "Invoice/cac:InvoiceLine/cbc:LineExtensionAmount"),
            ["1080.00", "49.90", "6.15"]
        );
        assert_eq!(
            texts_at(
                &nodes,
                "Invoice/cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory/cbc:Percent"
            ),
            ["19", "7"]
        );
        assert_eq!(
            text_at(
                &nodes,
                "Invoice/cac:InvoiceLine/cac:AllowanceCharge/cbc:MultiplierFactorNumeric"
            ),
            "10"
        );
        assert_eq!(
            text_at(
                &nodes,
                "Invoice/cac:InvoiceLine/cac:AllowanceCharge/cbc:BaseAmount"
            ),
            "1200.00"
        );
        assert_eq!(
            text_at(&nodes, "Invoice/cac:TaxTotal/cbc:TaxAmount"),
            "208.91"
        );
        assert_eq!(text_at(&nodes, "Invoice/cbc:IssueDate"), "2026-03-01");
        assert_eq!(text_at(&nodes, "Invoice/cbc:DueDate"), "2026-03-15");
        assert_eq!(
            text_at(&nodes, "Invoice/cac:Delivery/cbc:ActualDeliveryDate"),
            "2026-02-27"
        );
    }

    #[test]
    fn text_is_escaped_and_unicode_kept() {
        let mut inv = samples::standard();
        inv.payment.means_text = "\"SEPA\" <&>".into();
        let (xml, nodes) = written(&inv);
        assert!(xml.contains(
            "<cbc:RegistrationName>Müller &amp; Söhne &lt;Technik&gt; GmbH</cbc:RegistrationName>"
        ));
        assert!(xml.contains("name=\"&quot;SEPA&quot; &lt;&amp;&gt;\""));
        let code = nodes
            .iter()
            .find(|n| n.path == "Invoice/cac:PaymentMeans/cbc:PaymentMeansCode")
            .expect("a payment means code");
        assert_eq!(attr(code, "name"), Some("\"SEPA\" <&>"));
        assert_eq!(
            texts_at(&nodes, "Invoice/cbc:Note"),
            [
                "Vielen Dank für Ihren Auftrag – 5 € Rabatt <sofort> & mehr 🚀",
                "Zweite Notiz"
            ]
        );
        assert_eq!(
            texts_at(&nodes, "Invoice/cac:InvoiceLine/cac:Item/cbc:Description"),
            ["Anforderungsanalyse – \"Kick-off\" 東京"]
        );
    }

    #[test]
    fn direct_debit_and_reverse_charge() {
        let (_, nodes) = written(&samples::reverse_charge());
        let seller = "Invoice/cac:AccountingSupplierParty/cac:Party";
        let ids: Vec<(&str, Option<&str>)> = nodes
            .iter()
            .filter(|n| n.path == format!("{seller}/cac:PartyIdentification/cbc:ID"))
            .map(|n| (n.text.as_str(), attr(n, "schemeID")))
            .collect();
        assert_eq!(ids, [("DE98ZZZ09999999999", Some("SEPA"))]);
        assert_eq!(
            children(&nodes, "Invoice/cac:PaymentMeans"),
            [
                "cbc:PaymentMeansCode",
                "cbc:PaymentID",
                "cac:PaymentMandate"
            ]
        );
        assert_eq!(
            text_at(&nodes, "Invoice/cac:PaymentMeans/cac:PaymentMandate/cbc:ID"),
            "MANDAT-42"
        );
        assert_eq!(
            text_at(
                &nodes,
                "Invoice/cac:PaymentMeans/cac:PaymentMandate/cac:PayerFinancialAccount/cbc:ID"
            ),
            "DE89370400440532013000"
        );
        let category = "Invoice/cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory";
        assert_eq!(
            children(&nodes, category),
            [
                "cbc:ID",
                "cbc:Percent",
                "cbc:TaxExemptionReasonCode",
                "cbc:TaxExemptionReason",
                "cac:TaxScheme"
            ]
        );
        assert_eq!(text_at(&nodes, &format!("{category}/cbc:ID")), "AE");
        assert_eq!(text_at(&nodes, &format!("{category}/cbc:Percent")), "0");
        assert_eq!(
            text_at(&nodes, &format!("{category}/cbc:TaxExemptionReasonCode")),
            "VATEX-EU-AE"
        );
        assert_eq!(
            text_at(&nodes, "Invoice/cac:LegalMonetaryTotal/cbc:PrepaidAmount"),
            "100.00"
        );
        assert_eq!(
            text_at(&nodes, "Invoice/cac:LegalMonetaryTotal/cbc:PayableAmount"),
            "590.00"
        );
        assert!(!nodes.iter().any(|n| n.path == "Invoice/cac:Delivery"));
    }

    #[test]
    fn a_credit_note_has_its_own_names() {
        let (xml, nodes) = written(&samples::credit_note());
        assert!(xml.contains(
            "<CreditNote xmlns=\"urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2\""
        ));
        assert_eq!(
            children(&nodes, "CreditNote"),
            [
                "cbc:CustomizationID",
                "cbc:ProfileID",
                "cbc:ID",
                "cbc:IssueDate",
                "cbc:CreditNoteTypeCode",
                "cbc:Note",
                "cbc:DocumentCurrencyCode",
                "cbc:BuyerReference",
                "cac:BillingReference",
                "cac:AccountingSupplierParty",
                "cac:AccountingCustomerParty",
                "cac:PaymentMeans",
                "cac:PaymentTerms",
                "cac:TaxTotal",
                "cac:LegalMonetaryTotal",
                "cac:CreditNoteLine"
            ]
        );
        assert_eq!(text_at(&nodes, "CreditNote/cbc:CreditNoteTypeCode"), "381");
        assert_eq!(
            text_at(
                &nodes,
                "CreditNote/cac:BillingReference/cac:InvoiceDocumentReference/cbc:ID"
            ),
            "RE-2026-0001"
        );
        assert_eq!(
            text_at(
                &nodes,
                "CreditNote/cac:BillingReference/cac:InvoiceDocumentReference/cbc:IssueDate"
            ),
            "2026-03-01"
        );
        // BT-9 of a credit note belongs to the payment means.
        assert_eq!(
            children(&nodes, "CreditNote/cac:PaymentMeans")[..3],
            [
                "cbc:PaymentMeansCode",
                "cbc:PaymentDueDate",
                "cbc:PaymentID"
            ]
        );
        assert_eq!(
            text_at(&nodes, "CreditNote/cac:PaymentMeans/cbc:PaymentDueDate"),
            "2026-03-24"
        );
        assert_eq!(
            text_at(&nodes, "CreditNote/cac:CreditNoteLine/cbc:CreditedQuantity"),
            "2"
        );
        assert_eq!(
            children(&nodes, "CreditNote/cac:LegalMonetaryTotal"),
            [
                "cbc:LineExtensionAmount",
                "cbc:TaxExclusiveAmount",
                "cbc:TaxInclusiveAmount",
                "cbc:PayableRoundingAmount",
                "cbc:PayableAmount"
            ]
        );
        assert_eq!(
            text_at(
                &nodes,
                "CreditNote/cac:LegalMonetaryTotal/cbc:PayableRoundingAmount"
            ),
            "0.40"
        );
        for name in [
            "<Invoice",
            "InvoiceTypeCode",
            "InvoiceLine",
            "InvoicedQuantity",
        ] {
            assert!(!xml.contains(name), "{name}");
        }
    }

    #[test]
    fn deliver_to_address_and_percentage_allowance() {
        let (_, nodes) = written(&samples::intra_community());
        assert_eq!(
            children(&nodes, "Invoice/cac:Delivery"),
            ["cbc:ActualDeliveryDate", "cac:DeliveryLocation"]
        );
        let address = "Invoice/cac:Delivery/cac:DeliveryLocation/cac:Address";
        assert_eq!(
            children(&nodes, address),
            [
                "cbc:StreetName",
                "cbc:CityName",
                "cbc:PostalZone",
                "cac:Country"
            ]
        );
        assert_eq!(
            text_at(
                &nodes,
                &format!("{address}/cac:Country/cbc:IdentificationCode")
            ),
            "AT"
        );
        assert_eq!(
            children(&nodes, "Invoice/cac:AllowanceCharge"),
            [
                "cbc:ChargeIndicator",
                "cbc:AllowanceChargeReasonCode",
                "cbc:AllowanceChargeReason",
                "cbc:MultiplierFactorNumeric",
                "cbc:Amount",
                "cbc:BaseAmount",
                "cac:TaxCategory"
            ]
        );
        assert_eq!(
            text_at(
                &nodes,
                "Invoice/cac:AccountingCustomerParty/cac:Party/cac:PartyLegalEntity/cbc:CompanyID"
            ),
            "FN 123456a"
        );
    }

    #[test]
    fn not_subject_to_vat_states_no_rate_but_in_the_breakdown() {
        let (_, nodes) = written(&samples::not_subject());
        assert_eq!(
            children(
                &nodes,
                "Invoice/cac:InvoiceLine/cac:Item/cac:ClassifiedTaxCategory"
            ),
            ["cbc:ID", "cac:TaxScheme"]
        );
        assert_eq!(
            children(&nodes, "Invoice/cac:AllowanceCharge/cac:TaxCategory"),
            ["cbc:ID", "cac:TaxScheme"]
        );
        assert_eq!(
            text_at(
                &nodes,
                "Invoice/cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory/cbc:Percent"
            ),
            "0"
        );
        assert!(!nodes.iter().any(
            |n| n.path.ends_with("cac:PartyTaxScheme/cac:TaxScheme/cbc:ID") && n.text == "VAT"
        ));
    }

    #[test]
    fn absent_terms_write_no_elements() {
        for (name, inv) in samples::all() {
            let (_, nodes) = written(&inv);
            assert_eq!(empty_elements(&nodes, &[]), Vec::<&str>::new(), "{name}");
        }
        let mut inv = samples::reverse_charge();
        inv.buyer.contact = Default::default();
        inv.buyer.address.country = String::new();
        inv.payment.remittance = " ".into();
        let (xml, nodes) = written(&inv);
        assert_eq!(empty_elements(&nodes, &[]), Vec::<&str>::new());
        assert!(!xml.contains("cac:OrderReference"));
        assert!(!xml.contains("cbc:PaymentID"));
        assert_eq!(
            children(
                &nodes,
                "Invoice/cac:AccountingCustomerParty/cac:Party/cac:PostalAddress"
            ),
            ["cbc:StreetName", "cbc:CityName", "cbc:PostalZone"]
        );
        assert_eq!(
            children(&nodes, "Invoice/cac:AccountingCustomerParty/cac:Party"),
            [
                "cbc:EndpointID",
                "cac:PostalAddress",
                "cac:PartyTaxScheme",
                "cac:PartyLegalEntity"
            ]
        );
    }

    #[test]
    fn output_is_deterministic() {
        let inv = samples::credit_note();
        assert_eq!(
            write(&inv, Profile::XrechnungUbl),
            write(&inv, Profile::XrechnungUbl)
        );
    }
}
