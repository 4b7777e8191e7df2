//! Suppliers: the senders of incoming invoices, a record resource like clients.

use faktura_tests::App;

#[tokio::test]
async fn suppliers_are_created_listed_filtered_changed_and_deleted() {
    let app = App::spawn().await;
    let r = app
        .post(
            "/api/suppliers",
            "<supplier><supplier_number>L-1</supplier_number><name>Bürobedarf Nord GmbH</name>\
             <street>Hafenstraße 3</street><zip>20457</zip><city>Hamburg</city>\
             <country_code>DE</country_code><vat_number>DE222222222</vat_number>\
             <email>rechnung@buero-nord.example</email><bank_iban>DE02120300000000202051</bank_iban></supplier>",
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.id();
    assert_eq!(
        r.field("address").as_deref(),
        Some("Bürobedarf Nord GmbH\nHafenstraße 3\n20457 Hamburg\nDE")
    );
    let other = app
        .post(
            "/api/suppliers",
            "<supplier><name>Druckerei Süd</name></supplier>",
        )
        .await;
    assert_eq!(other.status, 201, "{}", other.body);
    for (query, count) in [
        ("vat_number=DE222222222", "1"),
        ("name=Druckerei%20S%C3%BCd", "1"),
        ("supplier_number=L-1", "1"),
        ("", "2"),
    ] {
        let list = app.get(&format!("/api/suppliers?{query}")).await;
        assert_eq!(list.header("x-total-count"), Some(count), "{query}");
    }
    let changed = app
        .put(
            &format!("/api/suppliers/{id}"),
            "<supplier><city>Bremen</city></supplier>",
        )
        .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    assert_eq!(changed.field("city").as_deref(), Some("Bremen"));
    // Bad input names the field and changes nothing.
    for (body, fragment) in [
        ("<supplier><name></name></supplier>", "name"),
        (
            "<supplier><name>X</name><bank_iban>DE00120300000000202051</bank_iban></supplier>",
            "bank_iban",
        ),
        (
            "<supplier><name>X</name><email>kein-mail</email></supplier>",
            "email",
        ),
    ] {
        app.post("/api/suppliers", body)
            .await
            .assert_error(400, fragment);
    }
    assert_eq!(
        app.get("/api/suppliers").await.header("x-total-count"),
        Some("2")
    );
    // A supplier with an incoming invoice stays until the invoice moves to another one.
    let incoming = app
        .post(
            "/api/incomings",
            &format!(
                "<incoming><supplier_id>{id}</supplier_id><number>R-1</number><date>2026-11-02</date>\
                 <total_gross>119</total_gross><payable_amount>119</payable_amount></incoming>"
            ),
        )
        .await;
    assert_eq!(incoming.status, 201, "{}", incoming.body);
    app.delete(&format!("/api/suppliers/{id}"))
        .await
        .assert_error(400, "has incoming invoices");
    let moved = app
        .put(
            &format!("/api/incomings/{}", incoming.id()),
            &format!(
                "<incoming><supplier_id>{}</supplier_id></incoming>",
                other.id()
            ),
        )
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);
    app.delete(&format!("/api/suppliers/{}", other.id()))
        .await
        .assert_error(400, "has incoming invoices");
    let gone = app.delete(&format!("/api/suppliers/{id}")).await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    app.get(&format!("/api/suppliers/{id}"))
        .await
        .assert_error(404, "supplier");
}
