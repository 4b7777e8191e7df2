//! Faktura on PostgreSQL (`--store postgres://…`): the same API on a server of its own,
//! writers that collide run again (SERIALIZABLE), numbers stay gapless, a guest that traps
//! inside a transaction leaves nothing behind, and a lost server is a 503 until it is
//! back.

use std::sync::Arc;

use faktura_tests::{App, PostgresServer, check_pdf, send_raw, test_component};

async fn app_on(pg: &PostgresServer) -> Arc<App> {
    app_configured(pg, |_| {}).await
}

/// A host on `pg` with a data directory of its own and its options adjusted.
async fn app_configured(
    pg: &PostgresServer,
    configure: impl FnOnce(&mut faktura_host::Options),
) -> Arc<App> {
    Arc::new(App::spawn_on_store(pg.url(), configure).await)
}

/// Hosts started at once on a new store take turns to make its schema, migrate it and
/// create its first account: every host comes up, and there is one account. Without the
/// turns one of them failed on a collision in most runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_started_at_once_on_a_new_store_all_start_with_one_account() {
    for _ in 0..3 {
        let pg = PostgresServer::start();
        let (a, b, c) = tokio::join!(
            App::spawn_on_store(pg.url(), |_| {}),
            App::spawn_on_store(pg.url(), |_| {}),
            App::spawn_on_store(pg.url(), |_| {}),
        );
        for app in [&a, &b, &c] {
            assert_eq!(app.get("/api/clients").await.status, 200);
        }
        let accounts = pg.query(
            "SELECT count(*) FROM faktura_kv \
             WHERE substring(key from 1 for 9) = 'Gaccount/'::bytea",
        );
        assert_eq!(accounts, "1");
    }
}

#[tokio::test]
async fn a_store_on_postgres_serves_an_invoice_life_and_outlives_its_host() {
    let pg = PostgresServer::start();
    let app = app_on(&pg).await;
    let client = app
        .create("/api/clients", "<client><name>Kunde AG</name></client>")
        .await
        .id();
    let invoice = app
        .create(
            "/api/invoices",
            &format!(
                "<invoice><client_id>{client}</client_id><invoice-items><invoice-item>\
                 <name>Beratung</name><quantity>3</quantity><unit_price>120</unit_price>\
                 </invoice-item></invoice-items></invoice>"
            ),
        )
        .await
        .id();
    let done = app
        .put(&format!("/api/invoices/{invoice}/complete"), "")
        .await;
    assert_eq!(done.status, 200, "{}", done.body);
    let pdf = app
        .get(&format!("/api/invoices/{invoice}/pdf?format=pdf"))
        .await;
    assert_eq!(pdf.status, 200);
    assert!(check_pdf(&pdf.bytes).contains("Kunde AG"));
    let page = app.get("/api/invoices?status=OPEN").await;
    assert_eq!(page.header("x-total-count"), Some("1"));
    let number = page.field("invoice_number").unwrap();

    // Another host with a data directory of its own, on the same server: the same data.
    let other = app_on(&pg).await;
    let seen = other.get(&format!("/api/invoices/{invoice}")).await;
    assert_eq!(seen.status, 200, "{}", seen.body);
    assert_eq!(seen.field("invoice_number"), Some(number));
    assert_eq!(seen.field("status").as_deref(), Some("OPEN"));
    // What one host writes, the other reads at once.
    let c2 = other
        .create("/api/clients", "<client><name>Zweite GmbH</name></client>")
        .await
        .id();
    assert_eq!(
        app.get(&format!("/api/clients/{c2}"))
            .await
            .field("name")
            .as_deref(),
        Some("Zweite GmbH")
    );
}

#[tokio::test]
async fn colliding_writers_run_again_and_numbers_stay_gapless() {
    let pg = PostgresServer::start();
    let a = app_on(&pg).await;
    let b = app_on(&pg).await;
    let client = a
        .create("/api/clients", "<client><name>K</name></client>")
        .await
        .id();
    // Creates from two hosts at once: every one answered 201, every id distinct.
    let body = format!("<invoice><client_id>{client}</client_id></invoice>");
    let (ra, rb) = tokio::join!(
        a.call_concurrently(12, |_| ("POST", "/api/invoices".into(), Some(body.clone()))),
        b.call_concurrently(12, |_| ("POST", "/api/invoices".into(), Some(body.clone()))),
    );
    let mut ids: Vec<u64> = Vec::new();
    for r in ra.iter().chain(&rb) {
        assert_eq!(r.status, 201, "{}", r.body);
        ids.push(r.id());
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 24, "distinct ids");
    // Completions from both hosts at once: numbers 1 to 24, none twice, none missing.
    let half = ids.len() / 2;
    let (ca, cb) = tokio::join!(
        a.call_concurrently(half, |i| (
            "PUT",
            format!("/api/invoices/{}/complete", ids[i]),
            None
        )),
        b.call_concurrently(half, |i| (
            "PUT",
            format!("/api/invoices/{}/complete", ids[half + i]),
            None
        )),
    );
    for r in ca.iter().chain(&cb) {
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let list = a
        .get("/api/invoices?per_page=100&order_by=invoice_number")
        .await;
    let numbers = list.fields("invoice_number");
    let expected: Vec<String> = (1..=24).map(|n| format!("INV-{n:05}")).collect();
    assert_eq!(numbers, expected);
}

#[tokio::test]
async fn a_trap_inside_a_write_keeps_nothing_and_a_lost_server_is_a_clean_503() {
    let pg = PostgresServer::start();
    let app = app_on(&pg).await;
    // Traps inside write transactions, more than the pool has connections: each is rolled
    // back before its connection serves anyone else.
    for i in 0..40 {
        let r = app
            .post(
                "/api/_test/half-written-client",
                &format!("<client><name>Half {i}</name></client>"),
            )
            .await;
        assert_eq!(r.status, 500, "{}", r.body);
        let ok = app
            .post(
                "/api/clients",
                &format!("<client><name>Whole {i}</name></client>"),
            )
            .await;
        assert_eq!(ok.status, 201, "{}", ok.body);
    }
    let clients = app.get("/api/clients?per_page=1000").await;
    assert_eq!(clients.header("x-total-count"), Some("40"));
    assert!(!clients.body.contains("Half"), "no half-written client");

    // The server goes away: requests answer an error with a body, the host stays up; when
    // it is back, the host serves again.
    pg.kill();
    app.get("/api/clients")
        .await
        .assert_error(503, "the store cannot be reached now");
    app.post("/api/clients", "<client><name>Lost</name></client>")
        .await
        .assert_error(503, "nothing was changed");
    pg.start_again();
    let mut back = 0;
    for _ in 0..50 {
        back = app.get("/api/clients").await.status;
        if back == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(back, 200);
    let clients = app.get("/api/clients?per_page=1000").await;
    assert_eq!(
        clients.header("x-total-count"),
        Some("40"),
        "the refused write kept nothing"
    );
}

/// `/readyz` tells a host whose store is gone from one that can serve, with the reason;
/// `/healthz` answers as long as the process does.
#[tokio::test]
async fn readiness_fails_with_the_reason_while_the_store_is_unreachable() {
    let pg = PostgresServer::start();
    let app = app_configured(&pg, |o| o.metrics = Some("127.0.0.1:0".parse().unwrap())).await;
    let metrics = app.metrics_base.clone().expect("a metrics listener");
    let probe = async |path: &str| send_raw(&metrics, "GET", path, None, &[]).await;
    let ready = probe("/readyz").await;
    assert_eq!((ready.status, ready.body.as_str()), (200, "ready\n"));

    pg.kill();
    let lost = probe("/readyz").await;
    assert_eq!(lost.status, 503, "{}", lost.body);
    assert!(
        lost.body.starts_with("the store cannot serve requests: "),
        "{}",
        lost.body
    );
    assert_eq!(probe("/healthz").await.status, 200);

    pg.start_again();
    let mut back = 0;
    for _ in 0..50 {
        back = probe("/readyz").await.status;
        if back == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(back, 200);
}

/// The answers that show a store's records: the lists, an invoice with its PDF and
/// e-invoice, an incoming with its lines and file.
async fn answers(app: &App, invoice: u64, incoming: u64) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for path in [
        "/api/clients".to_owned(),
        "/api/invoices".to_owned(),
        format!("/api/invoices/{invoice}"),
        format!("/api/invoices/{invoice}/pdf?format=pdf"),
        format!("/api/invoices/{invoice}/e-invoice"),
        format!("/api/incomings/{incoming}"),
        format!("/api/incoming-items?incoming_id={incoming}"),
        format!("/api/incomings/{incoming}/file"),
        "/api/settings".to_owned(),
    ] {
        let r = app.get(&path).await;
        // The e-invoice of data that fails its rules is a kept refusal (400): an answer
        // as well.
        assert!(matches!(r.status, 200 | 400), "{path}: {}", r.body);
        out.push((format!("{path} {}", r.status), r.bytes));
    }
    out
}

#[tokio::test]
async fn a_store_moves_from_redb_to_postgres_and_back_unchanged() {
    let pg = PostgresServer::start();
    // A store on redb with an invoice completed and an incoming imported.
    let app = App::spawn().await;
    let client = app
        .create(
            "/api/clients",
            "<client><name>Kunde AG</name><country_code>DE</country_code></client>",
        )
        .await
        .id();
    let invoice = app
        .create(
            "/api/invoices",
            &format!(
                "<invoice><client_id>{client}</client_id><invoice-items><invoice-item>\
                 <name>A</name><unit_price>10</unit_price></invoice-item></invoice-items></invoice>"
            ),
        )
        .await
        .id();
    let done = app
        .put(&format!("/api/invoices/{invoice}/complete"), "")
        .await;
    assert_eq!(done.status, 200, "{}", done.body);
    let sample = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("einvoice/samples/01.01a-INVOICE_uncefact.xml"),
    )
    .unwrap();
    let incoming = app
        .create(
            "/api/incomings",
            &format!(
                "<incoming><base64file>{}</base64file></incoming>",
                base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &sample)
            ),
        )
        .await
        .id();
    let before = answers(&app, invoice, incoming).await;
    let redb = app.stop().await;

    let files = tempfile::tempdir().unwrap();
    let export = files.path().join("store.export");
    let from_redb = faktura_host::Options::new(redb.path(), test_component());
    let moved = faktura_host::export_store(&from_redb, &export)
        .await
        .unwrap();
    assert!(moved.entries > 20, "{moved:?}");

    // Into PostgreSQL: every answer as it was.
    let pg_dir = tempfile::tempdir().unwrap();
    let mut into_pg = faktura_host::Options::new(pg_dir.path(), test_component());
    into_pg.store = Some(pg.url());
    assert_eq!(
        faktura_host::import_store(&into_pg, &export).await.unwrap(),
        moved
    );
    let on_pg = app_on(&pg).await;
    assert_eq!(answers(&on_pg, invoice, incoming).await, before);
    // Not into a store that holds anything.
    let again = faktura_host::import_store(&into_pg, &export)
        .await
        .unwrap_err();
    assert!(again.to_string().contains("not empty"), "{again}");

    // And back into a new redb file, from PostgreSQL's export.
    let back = files.path().join("back.export");
    assert_eq!(
        faktura_host::export_store(&into_pg, &back).await.unwrap(),
        moved
    );
    let fresh = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let into_redb = faktura_host::Options::new(fresh.path(), test_component());
    faktura_host::import_store(&into_redb, &back).await.unwrap();
    let on_redb = App::spawn_with(fresh.clone(), test_component()).await;
    assert_eq!(answers(&on_redb, invoice, incoming).await, before);

    // A damaged export is refused before anything is written.
    let mut bytes = std::fs::read(&back).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    let damaged = files.path().join("damaged.export");
    std::fs::write(&damaged, &bytes).unwrap();
    let empty = tempfile::tempdir().unwrap();
    let into_empty = faktura_host::Options::new(empty.path(), test_component());
    let err = faktura_host::import_store(&into_empty, &damaged)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("damaged"), "{err}");
    let truncated = files.path().join("truncated.export");
    std::fs::write(&truncated, &bytes[..middle]).unwrap();
    let err = faktura_host::import_store(&into_empty, &truncated)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("truncated"), "{err}");
    // The file is checked before the store is opened: not even an empty one was made.
    assert!(
        !empty.path().join("faktura.redb").exists(),
        "nothing was written by the refused imports"
    );
}

/// Ids go on where they were when a store moves: PostgreSQL's sequences start after the
/// id counters of the entries imported, and its export writes the sequences back as the
/// counters' entries.
#[tokio::test]
async fn ids_go_on_where_they_were_when_a_store_moves() {
    let pg = PostgresServer::start();
    let name = "<client><name>A</name></client>";
    let app = App::spawn().await;
    let mut last = 0;
    for _ in 0..3 {
        last = app.create("/api/clients", name).await.id();
    }
    let redb = app.stop().await;
    let files = tempfile::tempdir().unwrap();
    let export = files.path().join("store.export");
    let from_redb = faktura_host::Options::new(redb.path(), test_component());
    faktura_host::export_store(&from_redb, &export)
        .await
        .unwrap();
    let pg_dir = tempfile::tempdir().unwrap();
    let mut on_pg_store = faktura_host::Options::new(pg_dir.path(), test_component());
    on_pg_store.store = Some(pg.url());
    faktura_host::import_store(&on_pg_store, &export)
        .await
        .unwrap();
    let on_pg = app_on(&pg).await;
    let first = on_pg.create("/api/clients", name).await.id();
    assert_eq!(
        first,
        last + 1,
        "the sequence starts after the imported counter"
    );
    let second = on_pg.create("/api/clients", name).await.id();
    assert!(second > first);

    let back = files.path().join("back.export");
    faktura_host::export_store(&on_pg_store, &back)
        .await
        .unwrap();
    let fresh = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let into_redb = faktura_host::Options::new(fresh.path(), test_component());
    faktura_host::import_store(&into_redb, &back).await.unwrap();
    let on_redb = App::spawn_with(fresh.clone(), test_component()).await;
    let third = on_redb.create("/api/clients", name).await.id();
    assert_eq!(
        third,
        second + 1,
        "the export carried the sequence as the counter"
    );
}

/// Hosts on one PostgreSQL store share the rate limit windows: the limit holds for the
/// account across them, not once per host.
#[tokio::test]
async fn hosts_on_one_store_share_the_rate_limit() {
    let pg = PostgresServer::start();
    let a = app_configured(&pg, |o| o.rate_limit = Some(5)).await;
    let b = app_configured(&pg, |o| o.rate_limit = Some(5)).await;
    let mut remaining = Vec::new();
    for i in 0..5 {
        let app = if i % 2 == 0 { &a } else { &b };
        let r = app.get("/api/clients").await;
        assert_eq!(r.status, 200, "{}", r.body);
        remaining.push(r.header("x-rate-limit-remaining").unwrap().to_owned());
    }
    assert_eq!(remaining, ["4", "3", "2", "1", "0"]);
    for app in [&a, &b] {
        app.get("/api/clients")
            .await
            .assert_error(429, "rate limit of 5 requests");
    }
}

/// Two writers at once that each check that nothing clashes and then write, as the
/// component does: `take` runs in transaction `a` and then `b`, both begun before either
/// writes, and the answer says whether each committed.
async fn interleaved(
    url: &str,
    isolation: &str,
    take: impl Fn(&'static str) -> Vec<String>,
) -> (bool, bool) {
    let connect = || async {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
    };
    let (a, b) = (connect().await, connect().await);
    for c in [&a, &b] {
        c.batch_execute(&format!("BEGIN ISOLATION LEVEL {isolation}"))
            .await
            .unwrap();
    }
    // Both look before either writes.
    let (sa, sb) = (take("a"), take("b"));
    for (c, statements) in [(&a, &sa), (&b, &sb)] {
        c.batch_execute(&statements[0]).await.unwrap();
    }
    let mut done = Vec::new();
    for (c, statements) in [(&a, sa), (&b, sb)] {
        let mut ok = true;
        for s in &statements[1..] {
            if ok {
                ok = c.batch_execute(s).await.is_ok();
            }
        }
        ok = ok && c.batch_execute("COMMIT").await.is_ok();
        if !ok {
            let _ = c.batch_execute("ROLLBACK").await;
        }
        done.push(ok);
    }
    (done[0], done[1])
}

/// Why writes run at SERIALIZABLE. A number claim is one key per number, so two writers
/// taking the same next number collide at either level. But a rule checked by reading a
/// range and then writing a key of its own (one incoming invoice per supplier and number:
/// look up the supplier's number index, then add this invoice's entry) holds only at
/// SERIALIZABLE: at REPEATABLE READ both writers see no clash, write different keys and
/// both commit, and the number is there twice.
#[tokio::test]
async fn repeatable_read_would_let_two_writers_break_a_rule_serializable_keeps() {
    let pg = PostgresServer::start();
    let url = pg.url();
    pg.query("CREATE TABLE faktura_kv (key bytea PRIMARY KEY, value bytea NOT NULL)");
    pg.query("INSERT INTO faktura_kv VALUES ('\\x6e0005'::bytea, '\\x01'::bytea)");
    // The next number: the last claim, read backwards, plus one; its claim key written.
    let next_number = |_: &'static str| {
        vec![
            "SELECT key FROM faktura_kv WHERE key >= '\\x6e'::bytea AND key < '\\x6f'::bytea \
             ORDER BY key DESC LIMIT 1"
                .to_owned(),
            "INSERT INTO faktura_kv VALUES ('\\x6e0006'::bytea, '\\x02'::bytea) \
             ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
                .to_owned(),
        ]
    };
    // One invoice per supplier and number: no entry under the index prefix, then this
    // invoice's own entry (its id at the end of the key).
    let unique_entry = |who: &'static str| {
        let id = if who == "a" { "01" } else { "02" };
        vec![
            "SELECT key FROM faktura_kv WHERE key >= '\\x6900'::bytea AND key < '\\x6901'::bytea"
                .to_owned(),
            format!(
                "INSERT INTO faktura_kv VALUES ('\\x6900{id}'::bytea, ''::bytea) \
                 ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
            ),
        ]
    };
    for isolation in ["REPEATABLE READ", "SERIALIZABLE"] {
        let (a, b) = interleaved(&url, isolation, next_number).await;
        assert!(
            a ^ b,
            "{isolation}: one of two claims of one number commits"
        );
        pg.query("DELETE FROM faktura_kv WHERE key = '\\x6e0006'::bytea");
    }
    let (a, b) = interleaved(&url, "REPEATABLE READ", unique_entry).await;
    assert!(a && b, "REPEATABLE READ lets both writers commit");
    assert_eq!(
        pg.query("SELECT count(*) FROM faktura_kv WHERE key >= '\\x6900'::bytea AND key < '\\x6901'::bytea"),
        "2",
        "and the rule is broken"
    );
    pg.query("DELETE FROM faktura_kv WHERE key >= '\\x6900'::bytea AND key < '\\x6901'::bytea");
    let (a, b) = interleaved(&url, "SERIALIZABLE", unique_entry).await;
    assert!(a ^ b, "SERIALIZABLE commits one of them");
}
