//! What only invoices have: a cash discount and the accepted payment types, taken from the
//! settings. Everything else invoices do, credit notes do too: both_kinds.rs.

use faktura_tests::App;

use crate::support::{CREDIT_NOTES, INVOICES, client, create, default_settings};

#[tokio::test]
async fn a_new_invoice_takes_its_discount_and_payment_types_from_the_settings() {
    let app = App::spawn().await;
    let settings = app.put("/api/settings", &default_settings(&INVOICES)).await;
    assert_eq!(settings.status, 200, "{}", settings.body);
    let c = client(&app, "<name>Müller AG</name>").await;
    let inv = create(
        &app,
        &INVOICES,
        &format!("<client_id>{c}</client_id><date>2026-03-01</date>"),
    )
    .await;
    assert_eq!(inv.field("discount_date").as_deref(), Some("2026-03-11"));
    assert_eq!(inv.field("discount_rate").as_deref(), Some("2"));
    assert_eq!(
        inv.field("payment_types").as_deref(),
        Some("BANK_TRANSFER,CASH")
    );
    // A credit note has none of these fields.
    let cn = create(
        &app,
        &CREDIT_NOTES,
        &format!("<client_id>{c}</client_id><date>2026-03-01</date>"),
    )
    .await;
    for field in ["discount_date", "discount_rate", "payment_types"] {
        assert_eq!(cn.field(field), None, "{field}: {}", cn.body);
    }
}
