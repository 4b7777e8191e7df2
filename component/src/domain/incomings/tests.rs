//! Incoming invoices in the store's fake: what an incoming entered by hand is measured
//! against, how payments settle it, the actionkeys of comments, the words of payment
//! types; and what an import refuses and finds.

use rust_decimal::Decimal;

use super::super::records;
use super::super::schema::{Changes, Record, Scalar};
use super::super::suppliers::SUPPLIERS;
use super::super::{Ctx, Error};
use super::{INCOMING_COMMENTS, INCOMING_PAYMENTS, INCOMINGS, children, parse, shown};
use crate::caps::mem::MemStore;
use crate::caps::{Store, Write};

fn ctx() -> Ctx {
    Ctx {
        account_id: 1,
        user_id: 1,
        is_admin: true,
        now: 1_780_000_000,
        utc_offset: 0,
    }
}

fn changes(values: &[(&'static str, Scalar)]) -> Changes {
    Changes {
        values: values.iter().map(|(n, v)| (*n, Some(v.clone()))).collect(),
        ..Changes::default()
    }
}

fn dec(s: &str) -> Scalar {
    Scalar::Dec(s.parse().expect("a decimal"))
}

/// An incoming entered by hand with `amounts` (total_gross, payable_amount, ...).
fn incoming(txn: &mut dyn Write, amounts: &[(&'static str, &str)]) -> Record {
    let supplier = records::create(
        &ctx(),
        txn,
        &SUPPLIERS,
        &changes(&[("name", Scalar::Text("Lieferant GmbH".into()))]),
    )
    .expect("a supplier");
    let mut values = vec![
        ("supplier_id", Scalar::Int(supplier.id() as i64)),
        ("number", Scalar::Text("R-1".into())),
        ("date", Scalar::Date(ctx().today())),
    ];
    values.extend(amounts.iter().map(|(n, v)| (*n, dec(v))));
    records::create(&ctx(), txn, &INCOMINGS, &changes(&values)).expect("an incoming")
}

fn pay(txn: &mut dyn Write, incoming: u64, amount: &str, marked: bool) -> Result<Record, Error> {
    records::create(
        &ctx(),
        txn,
        &INCOMING_PAYMENTS,
        &changes(&[
            ("incoming_id", Scalar::Int(incoming as i64)),
            ("amount", dec(amount)),
            ("mark_incoming_as_paid", Scalar::Bool(marked)),
        ]),
    )
}

/// Status and open amount of incoming `id` as the API shows it today.
fn status(txn: &dyn crate::caps::Read, id: u64) -> (String, String) {
    let r = shown(
        records::load(txn, &INCOMINGS, 1, id).expect("the incoming"),
        ctx().today(),
    );
    (
        r.text("status").to_owned(),
        r.get("open_amount").unwrap().to_wire(),
    )
}

#[test]
fn an_incoming_entered_without_a_payable_amount_is_measured_against_its_total() {
    let store = MemStore::default();
    let mut w = store.begin_write().unwrap();
    let r = incoming(w.as_mut(), &[("total_gross", "119.00")]);
    assert_eq!(status(w.as_read(), r.id()), ("OPEN".into(), "119".into()));
    pay(w.as_mut(), r.id(), "19", false).unwrap();
    assert_eq!(status(w.as_read(), r.id()), ("OPEN".into(), "100".into()));
    pay(w.as_mut(), r.id(), "100", false).unwrap();
    assert_eq!(status(w.as_read(), r.id()), ("PAID".into(), "0".into()));
    // A payable amount, where there is one, is what is due.
    let mut w = store.begin_write().unwrap();
    let r = incoming(
        w.as_mut(),
        &[("total_gross", "119.00"), ("payable_amount", "100.00")],
    );
    pay(w.as_mut(), r.id(), "100", false).unwrap();
    assert_eq!(status(w.as_read(), r.id()), ("PAID".into(), "0".into()));
}

#[test]
fn a_payment_marked_as_paying_all_pays_what_is_due_also_after_the_total_changed() {
    let store = MemStore::default();
    let mut w = store.begin_write().unwrap();
    let r = incoming(w.as_mut(), &[("total_gross", "50")]);
    pay(w.as_mut(), r.id(), "10", true).unwrap();
    let paid = |txn: &dyn crate::caps::Read| {
        records::load(txn, &INCOMINGS, 1, r.id())
            .unwrap()
            .get("paid_amount")
            .and_then(Scalar::as_dec)
    };
    assert_eq!(paid(w.as_read()), Some(Decimal::from(50)));
    assert_eq!(status(w.as_read(), r.id()), ("PAID".into(), "0".into()));
    records::update(
        &ctx(),
        w.as_mut(),
        &INCOMINGS,
        r.id(),
        &changes(&[("total_gross", dec("80"))]),
    )
    .unwrap();
    assert_eq!(paid(w.as_read()), Some(Decimal::from(80)));
    assert_eq!(status(w.as_read(), r.id()), ("PAID".into(), "0".into()));
}

#[test]
fn a_users_comment_is_a_comment_and_the_services_comments_name_their_action() {
    let store = MemStore::default();
    let mut w = store.begin_write().unwrap();
    let r = incoming(w.as_mut(), &[("total_gross", "10")]);
    records::create(
        &ctx(),
        w.as_mut(),
        &INCOMING_COMMENTS,
        &changes(&[
            ("incoming_id", Scalar::Int(r.id() as i64)),
            ("comment", Scalar::Text("Checked".into())),
        ]),
    )
    .unwrap();
    pay(w.as_mut(), r.id(), "10", false).unwrap();
    let keys: Vec<String> = children(w.as_read(), &INCOMING_COMMENTS, 1, r.id())
        .unwrap()
        .iter()
        .map(|c| c.text("actionkey").to_owned())
        .collect();
    assert_eq!(keys, ["COMMENT", "PAYMENT", "STATUS"]);
    // One kept before users' comments were marked shows as one.
    let mut old = Record::default();
    old.set("comment", Some(Scalar::Text("Old".into())));
    let shown = INCOMING_COMMENTS.rules.shown(w.as_read(), 1, old).unwrap();
    assert_eq!(shown.text("actionkey"), "COMMENT");
}

#[test]
fn payment_types_are_the_words_of_documents_payments_in_any_case() {
    let field = INCOMING_PAYMENTS
        .field("payment_type")
        .expect("a payment type");
    let parsed = |s: &str| field.parse(s).map(|v| v.map(|v| v.to_wire()));
    assert_eq!(parsed("bank_transfer"), Ok(Some("BANK_TRANSFER".into())));
    assert_eq!(parsed("Cash"), Ok(Some("CASH".into())));
    assert!(
        parsed("by wire")
            .unwrap_err()
            .contains("must be one of CREDIT_NOTE, BANK_CARD, BANK_TRANSFER")
    );
}

const SAMPLE: &[u8] =
    include_bytes!("../../../../tests/einvoice/samples/01.01a-INVOICE_uncefact.xml");

/// What `parse` refuses `file` for.
fn refusal(file: Vec<u8>) -> String {
    match parse(file) {
        Err(Error::Invalid(messages)) => messages.join("; "),
        other => panic!("a refusal expected, got {other:?}"),
    }
}

#[test]
fn an_upload_without_a_currency_the_service_knows_is_refused_naming_it() {
    let sample = String::from_utf8(SAMPLE.to_vec()).unwrap();
    let with = |currency: &str| {
        sample
            .replace(
                "<ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>",
                &format!("<ram:InvoiceCurrencyCode>{currency}</ram:InvoiceCurrencyCode>"),
            )
            .into_bytes()
    };
    assert!(parse(with("EUR")).is_ok());
    let none = refusal(with(""));
    assert!(
        none.starts_with("base64file: ") && none.contains("no invoice currency (BT-5"),
        "{none}"
    );
    let unknown = refusal(with("XEU"));
    assert!(
        unknown.starts_with("base64file: ") && unknown.contains("'XEU'"),
        "{unknown}"
    );
}

#[test]
fn codes_outside_the_code_lists_of_en_16931_are_findings_of_an_import() {
    // The official CEN rules refuse the KoSIT extension sample 04.05a for its identifier
    // schemes: BR-CL-10 three times, BR-CL-21 once.
    let file =
        include_bytes!("../../../../tests/einvoice/samples/extension/04.05a-INVOICE_uncefact.xml");
    let parsed = parse(file.to_vec()).expect("an e-invoice");
    let mut rules: Vec<&str> = parsed
        .findings
        .iter()
        .filter(|(rule, _, _)| rule.starts_with("BR-CL-"))
        .map(|(rule, severity, _)| {
            assert_eq!(severity, "error");
            rule.as_str()
        })
        .collect();
    rules.sort();
    assert_eq!(rules, ["BR-CL-10", "BR-CL-10", "BR-CL-10", "BR-CL-21"]);
    assert!(
        parsed.findings.iter().any(|(_, _, message)| message
            == "PayeeTradeParty/GlobalID/@schemeID: 'XR03' is not in the ISO 6523 ICD list"),
        "{:?}",
        parsed.findings
    );
    assert!(parse(SAMPLE.to_vec()).unwrap().findings.is_empty());
}
