//! The reader on what the writers write, on the official test suites' documents, on
//! ZUGFeRD 1.0 and Factur-X MINIMUM, on every way a term can be malformed, and on hostile
//! input: document type declarations, deep nesting, truncation, size, and mutations of
//! valid documents, none of which may panic.

use proptest::prelude::*;

use super::cii::{DATA_TYPES, RAM, RAM_ALIASES, RSM, RSM_ALIASES, cii_date};
use super::ubl::{CAC, CBC, ubl_date};
use super::*;
use crate::cii::{self, samples, samples::dec};
use crate::model::{Contact, Profile};
use crate::ubl;

const CII_01_01A: &[u8] =
    include_bytes!("../../../tests/einvoice/samples/01.01a-INVOICE_uncefact.xml");
const CII_01_18A: &[u8] =
    include_bytes!("../../../tests/einvoice/samples/01.18a-INVOICE_uncefact.xml");
const UBL_01_01A: &[u8] = include_bytes!("../../../tests/einvoice/samples/01.01a-INVOICE_ubl.xml");
const UBL_01_21A: &[u8] = include_bytes!("../../../tests/einvoice/samples/01.21a-INVOICE_ubl.xml");

fn read_ok(xml: &[u8]) -> Read {
    read(xml).unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(xml)))
}

fn date(s: &str) -> Date {
    iso_date(s).expect("a date")
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
    let xml = String::from_utf8(cii::write(&samples::standard(), Profile::FacturX)).expect("UTF-8");
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
    let ubl =
        String::from_utf8(ubl::write(&samples::standard(), Profile::XrechnungUbl)).expect("UTF-8");
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
        .map(|rest| format!("<rsm:CrossIndustryInvoice xmlns:rsm=\"{CII}\"{rest}").into_bytes()),
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
        read(nested(XML_DEPTH_MAX + 1).as_bytes()),
        Err(ReadError::TooDeep)
    );
    // As deep as allowed: read, and refused for what it lacks.
    assert!(matches!(
        read(nested(XML_DEPTH_MAX).as_bytes()),
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
    let xml =
        String::from_utf8(cii::write(&samples::standard(), Profile::XrechnungCii)).expect("UTF-8");

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
