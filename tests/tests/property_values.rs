//! Values of custom properties on incoming invoices, clients and users: one per record and
//! property, the property's default where none is given and `is_nvl` is 1, the type's
//! form, and gone with their record or their property.

use base64::Engine as _;
use faktura_tests::App;

async fn property(app: &App, kind: &str, body: &str) -> u64 {
    app.create(
        &format!("/api/{kind}-properties"),
        &format!("<{kind}-property>{body}</{kind}-property>"),
    )
    .await
    .id()
}

fn value(kind: &str, owner: u64, property: u64, value: Option<&str>) -> String {
    let value = value
        .map(|v| format!("<value>{v}</value>"))
        .unwrap_or_default();
    format!(
        "<{kind}-property-value><{kind}_id>{owner}</{kind}_id>\
         <{kind}_property_id>{property}</{kind}_property_id>{value}</{kind}-property-value>"
    )
}

async fn incoming(app: &App) -> u64 {
    let sample = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("einvoice/samples/01.01a-INVOICE_uncefact.xml"),
    )
    .unwrap();
    let body = format!(
        "<incoming><base64file>{}</base64file></incoming>",
        base64::engine::general_purpose::STANDARD.encode(sample)
    );
    app.create("/api/incomings", &body).await.id()
}

#[tokio::test]
async fn incoming_values_take_defaults_and_the_form_of_their_type() {
    let app = App::spawn().await;
    let inc = incoming(&app).await;
    let cost_centre = property(
        &app,
        "incoming",
        "<name>Cost centre</name><type>TEXTFIELD</type><default_value>4711</default_value><is_nvl>1</is_nvl>",
    )
    .await;
    let note = property(
        &app,
        "incoming",
        "<name>Remark</name><type>TEXTAREA</type><default_value>none</default_value><is_nvl>0</is_nvl>",
    )
    .await;
    let approved = property(
        &app,
        "incoming",
        "<name>Approved</name><type>CHECKBOX</type>",
    )
    .await;
    let path = "/api/incoming-property-values";

    // No value given: the default when is_nvl is 1, nothing when it is 0.
    let r = app
        .create(path, &value("incoming", inc, cost_centre, None))
        .await;
    assert_eq!(r.field("value").as_deref(), Some("4711"), "{}", r.body);
    assert_eq!(r.field("incoming_id"), Some(inc.to_string()));
    let defaulted = r.id();
    let r = app.create(path, &value("incoming", inc, note, None)).await;
    assert_eq!(r.field("value").unwrap_or_default(), "", "{}", r.body);
    let remark = r.id();
    // A checkbox holds 1 or 0; anything else is refused.
    let r = app
        .create(path, &value("incoming", inc, approved, Some("true")))
        .await;
    assert_eq!(r.field("value").as_deref(), Some("1"));
    let checked = r.id();

    // One value per incoming and property: the second is 409 naming the first.
    let r = app
        .post(path, &value("incoming", inc, cost_centre, Some("1")))
        .await;
    r.assert_error(409, &format!("incoming property value {defaulted}"));

    // Refusals change nothing.
    for (body, fragment) in [
        (
            value("incoming", inc + 100, cost_centre, Some("x")),
            "incoming_id",
        ),
        (
            value("incoming", inc, approved + 100, Some("x")),
            "incoming_property_id",
        ),
        (
            value("incoming", inc, approved, Some("perhaps")),
            "must be 1 or 0",
        ),
    ] {
        app.post(path, &body).await.assert_error(400, fragment);
    }
    let text_line = property(&app, "incoming", "<name>Ref</name><type>TEXTFIELD</type>").await;
    app.post(
        path,
        &value("incoming", inc, text_line, Some("two&#10;lines")),
    )
    .await
    .assert_error(400, "single line");

    // Updated in place; the owner and the property stay.
    let r = app
        .put(
            &format!("{path}/{remark}"),
            "<incoming-property-value><value>Checked by Anna\nand Ben</value></incoming-property-value>",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.field("value").as_deref(),
        Some("Checked by Anna\nand Ben")
    );
    app.put(
        &format!("{path}/{checked}"),
        &format!(
            "<incoming-property-value><incoming_property_id>{cost_centre}</incoming_property_id></incoming-property-value>"
        ),
    )
    .await
    .assert_error(400, "cannot be changed");

    // Listed by incoming, counted.
    let list = app.get(&format!("{path}?incoming_id={inc}")).await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(list.header("x-total-count"), Some("3"));
    assert_eq!(
        list.fields("value"),
        vec!["4711", "Checked by Anna\nand Ben", "1"]
    );
    let by_property = app
        .get(&format!("{path}?incoming_property_id={approved}"))
        .await;
    assert_eq!(by_property.header("x-total-count"), Some("1"));
    app.get(&format!("{path}?incoming_id={}", inc + 100))
        .await
        .assert_error(404, "does not exist");
    app.get(&format!("{path}?incoming_id=abc"))
        .await
        .assert_error(400, "incoming_id must be a positive integer");
    // The lists of an incoming's own records must name it.
    for list in ["incoming-items", "incoming-payments", "incoming-comments"] {
        app.get(&format!("/api/{list}"))
            .await
            .assert_error(400, "incoming_id is mandatory");
        app.get(&format!("/api/{list}?incoming_id=x"))
            .await
            .assert_error(400, "incoming_id must be a positive integer");
    }

    // A deleted property takes its values with it; a deleted incoming takes the rest.
    assert_eq!(
        app.delete(&format!("/api/incoming-properties/{approved}"))
            .await
            .status,
        200
    );
    assert_eq!(app.get(&format!("{path}/{checked}")).await.status, 404);
    let list = app.get(&format!("{path}?incoming_id={inc}")).await;
    assert_eq!(list.header("x-total-count"), Some("2"));
    assert_eq!(
        app.delete(&format!("/api/incomings/{inc}")).await.status,
        200
    );
    assert_eq!(app.get(&format!("{path}/{defaulted}")).await.status, 404);
    assert_eq!(
        app.get(path).await.header("x-total-count"),
        Some("0"),
        "no value outlives its incoming"
    );
}

#[tokio::test]
async fn clients_and_users_hold_values_too() {
    let app = App::spawn().await;
    let client = app
        .create("/api/clients", "<client><name>Kunde AG</name></client>")
        .await
        .id();
    let vip = property(
        &app,
        "client",
        "<name>VIP</name><type>CHECKBOX</type><default_value>0</default_value><is_nvl>1</is_nvl>",
    )
    .await;
    let r = app
        .create(
            "/api/client-property-values",
            &value("client", client, vip, None),
        )
        .await;
    assert_eq!(r.field("value").as_deref(), Some("0"));
    let list = app
        .get(&format!("/api/client-property-values?client_id={client}"))
        .await;
    assert_eq!(list.header("x-total-count"), Some("1"));

    // The user is the key's own (a comment names it).
    let comment = app
        .create(
            "/api/incoming-comments",
            &format!(
                "<incoming-comment><incoming_id>{}</incoming_id><comment>x</comment></incoming-comment>",
                incoming(&app).await
            ),
        )
        .await;
    let user: u64 = comment.field("user_id").unwrap().parse().unwrap();
    let signature = property(&app, "user", "<name>Signature</name><type>TEXTAREA</type>").await;
    let r = app
        .create(
            "/api/user-property-values",
            &value("user", user, signature, Some("Mit freundlichen Grüßen")),
        )
        .await;
    assert_eq!(r.field("value").as_deref(), Some("Mit freundlichen Grüßen"));
    app.post(
        "/api/user-property-values",
        &value("user", user + 1000, signature, Some("x")),
    )
    .await
    .assert_error(400, "user_id");
    // Another account's user is not one of this account's.
    let other = app.new_account("other").await;
    let theirs = app
        .call_as(
            &other,
            "POST",
            "/api/user-property-values",
            Some(&value("user", user, signature, Some("x"))),
        )
        .await;
    theirs.assert_error(400, "does not exist");

    // A client with values can be deleted; its values go with it.
    let value_id = list.fields("id")[0].clone();
    assert_eq!(
        app.delete(&format!("/api/clients/{client}")).await.status,
        200
    );
    assert_eq!(
        app.get(&format!("/api/client-property-values/{value_id}"))
            .await
            .status,
        404
    );
}
