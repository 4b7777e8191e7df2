//! The standalone component (the service with the plug compiled in) under `wasmtime serve`:
//! the API end to end on a real data directory, across restarts and concurrent requests;
//! acknowledged writes across SIGKILLs of `wasmtime serve`; a writer that traps holding the
//! store's turn (the standalone build with the test routes); the same data directory in the
//! faktura host; and the static checks that it exports what the shipped component exports
//! and imports only WASI that Spin provides.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use faktura_tests::{
    App, HOST_BINARY_HINT, Instances, Reply, SmtpSink, WasmtimeServe, check_pdf, concurrently,
    free_port, host_binary, run_ok, shipped_component, standalone_component,
    standalone_test_component, test_component, wit_dir,
};

const KEY: &str = "standalone-key-0123456789";

const CLIENT: &str = "<client><name>Müller AG</name><street>Hauptstr. 1</street>\
    <zip>10115</zip><city>Berlin</city><country_code>DE</country_code></client>";

fn invoice(client: u64) -> String {
    format!(
        "<invoice><client_id>{client}</client_id><invoice-items>\
         <invoice-item><name>Beratung</name><quantity>3</quantity><unit_price>100</unit_price></invoice-item>\
         <invoice-item><name>Reise</name><quantity>1</quantity><unit_price>50.5</unit_price></invoice-item>\
         </invoice-items></invoice>"
    )
}

#[track_caller]
fn ok(reply: &Reply) -> &Reply {
    assert!(reply.status < 300, "{} {}", reply.status, reply.body);
    reply
}

#[tokio::test(flavor = "multi_thread")]
async fn the_standalone_component_serves_the_api_and_keeps_data_across_restarts() {
    let data = Arc::new(tempfile::tempdir().unwrap());
    // Instances serve many requests each here, and one per request after the restart.
    let serve = WasmtimeServe::start_reusing(data.path(), KEY, Instances::Reused).await;

    // Only the configured key bootstraps the empty data directory.
    let stranger = serve
        .call("someone-else-0123456789", "GET", "/api/clients", None)
        .await;
    stranger.assert_error(401, "");
    let client = ok(&serve.call(KEY, "POST", "/api/clients", Some(CLIENT)).await).id();
    let created = serve
        .call(KEY, "POST", "/api/invoices", Some(&invoice(client)))
        .await;
    let id = ok(&created).id();
    assert_eq!(created.field("total_gross").as_deref(), Some("350.5"));
    ok(&serve
        .call(KEY, "PUT", &format!("/api/invoices/{id}/complete"), None)
        .await);
    let pdf_path = format!("/api/invoices/{id}/pdf?format=pdf");
    let pdf = serve.call(KEY, "GET", &pdf_path, None).await;
    ok(&pdf);
    assert_eq!(pdf.header("content-type"), Some("application/pdf"));
    let text = check_pdf(&pdf.bytes);
    assert!(
        text.contains("INV-00001") && text.contains("Müller AG"),
        "{text}"
    );
    ok(&serve
        .call(
            KEY,
            "POST",
            &format!("/api/invoices/{id}/email"),
            Some("<email><recipients><to>client@example.org</to></recipients></email>"),
        )
        .await);
    let list = serve.call(KEY, "GET", "/api/invoices", None).await;
    assert_eq!(list.header("x-total-count"), Some("1"));
    assert_eq!(list.fields("status"), vec!["OPEN"]);
    // A status list loads its page with the store's get-many, here the plug's.
    let open = serve
        .call(KEY, "GET", "/api/invoices?status=OPEN", None)
        .await;
    assert_eq!(open.fields("invoice_number"), vec!["INV-00001"]);

    // A killed server loses nothing.
    serve.kill();
    let serve = WasmtimeServe::start(data.path(), KEY).await;
    let list = serve.call(KEY, "GET", "/api/invoices", None).await;
    assert_eq!(list.fields("invoice_number"), vec!["INV-00001"]);
    let again = serve.call(KEY, "GET", &pdf_path, None).await;
    assert_eq!(again.bytes, pdf.bytes, "the stored PDF is the same file");
    let second = serve
        .call(KEY, "POST", "/api/invoices", Some(&invoice(client)))
        .await;
    ok(&second);
    serve.kill();

    // The mail went to the outbox in the host's format, and `faktura outbox deliver`
    // hands it to a real SMTP server.
    let outbox = data.path().join("outbox");
    let queued = faktura_host::list_outbox(&outbox).unwrap();
    assert_eq!(queued.len(), 1);
    assert_eq!(queued[0].status, "queued");
    assert_eq!(queued[0].recipients, vec!["client@example.org"]);
    let smtp = SmtpSink::start(free_port()).await;
    let delivered = run_ok(
        std::process::Command::new(host_binary())
            .args(["outbox", "deliver", "--data"])
            .arg(data.path())
            .args(["--smtp", &smtp.url()]),
        HOST_BINARY_HINT,
    );
    let stdout = String::from_utf8_lossy(&delivered.stdout);
    assert!(stdout.starts_with("sent"), "{stdout}");
    let messages = smtp.wait_for(1, 10).await;
    assert!(messages[0].contains("invoice_1.pdf"), "{}", messages[0]);

    // The faktura host opens the same data directory: same file, same records.
    let app = App::spawn_with(data.clone(), test_component()).await;
    let list = app.call_as(KEY, "GET", "/api/invoices", None).await;
    assert_eq!(
        list.fields("invoice_number"),
        vec!["INV-00001", "INV-00002"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sixteen_concurrent_creates_all_survive_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let serve = Arc::new(WasmtimeServe::start_reusing(data.path(), KEY, Instances::Reused).await);
    let client = ok(&serve.call(KEY, "POST", "/api/clients", Some(CLIENT)).await).id();
    let replies = concurrently(16, |_| {
        let serve = serve.clone();
        async move {
            let reply = serve
                .call(KEY, "POST", "/api/invoices", Some(&invoice(client)))
                .await;
            ok(&reply);
            (reply.id(), reply.field("invoice_number").unwrap())
        }
    })
    .await;
    let (created, numbers): (BTreeSet<u64>, BTreeSet<String>) = replies.into_iter().unzip();
    assert_eq!(created.len(), 16);
    let expected: BTreeSet<String> = (1..=16).map(|n| format!("INV-{n:05}")).collect();
    assert_eq!(numbers, expected);
    // Each reused instance follows the commits the others made since it last read: every
    // invoice reads back at once, wherever the request lands.
    let ids: Vec<u64> = created.iter().copied().collect();
    let read = concurrently(16, |i| {
        let (serve, id) = (serve.clone(), ids[i]);
        async move {
            let reply = serve
                .call(KEY, "GET", &format!("/api/invoices/{id}"), None)
                .await;
            reply.status
        }
    })
    .await;
    assert_eq!(read, vec![200; 16]);

    Arc::try_unwrap(serve).ok().unwrap().kill();
    let serve = WasmtimeServe::start(data.path(), KEY).await;
    let list = serve
        .call(KEY, "GET", "/api/invoices?per_page=100", None)
        .await;
    let listed: BTreeSet<u64> = list
        .fields("id")
        .iter()
        .filter_map(|s| s.parse().ok())
        .collect();
    assert!(created.is_subset(&listed), "{created:?} {listed:?}");
    assert_eq!(list.header("x-total-count"), Some("16"));
}

/// `wasmtime serve` is killed (SIGKILL) ten times at pseudo-random moments while clients
/// create, complete and pay invoices, as the host is in `crash.rs`: after every restart
/// each acknowledged write is there, no invoice is half-written, numbers have no gaps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_sigkills_of_wasmtime_serve() {
    use crate::crash::{Acknowledged, KEY, verify, work};
    const ROUNDS: usize = 10;
    const WORKERS: usize = 6;
    let data = tempfile::tempdir().unwrap();
    let acked: Acknowledged = Arc::default();
    // Rounds alternate between instances per request and reused instances.
    let instances = |round: usize| {
        if round.is_multiple_of(2) {
            Instances::Reused
        } else {
            Instances::PerRequest
        }
    };
    let mut serve = WasmtimeServe::start_reusing(data.path(), KEY, instances(0)).await;
    let client = ok(&serve
        .call(
            KEY,
            "POST",
            "/api/clients",
            Some("<client><name>Crash AG</name></client>"),
        )
        .await)
    .id();
    let mut seed = 0x2545_f491_u64;
    for round in 0..ROUNDS {
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| tokio::spawn(work(serve.base.clone(), client, acked.clone())))
            .collect();
        // A pseudo-random moment between 200 and 1000 ms.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        tokio::time::sleep(Duration::from_millis(200 + seed % 800)).await;
        serve.kill();
        for w in workers {
            let _ = w.await;
        }
        serve = WasmtimeServe::start_reusing(data.path(), KEY, instances(round + 1)).await;
        verify(&serve.base, &acked, round).await;
    }
    let acked = acked.lock().unwrap();
    assert!(
        acked.values().filter(|v| v.1).count() >= ROUNDS,
        "the workers got completions acknowledged: {acked:?}"
    );
    eprintln!(
        "standalone crash test: {ROUNDS} kills survived, {} invoices acknowledged ({} \
         completed, {} paid)",
        acked.len(),
        acked.values().filter(|v| v.1).count(),
        acked.values().filter(|v| v.2).count()
    );
}

/// A request traps inside its write transaction, holding the store's turn (the test
/// component's half-written client): readers go on at once, the next writer gets the turn
/// within a second (the plug's lease expires), and nothing of the trapped write is kept.
#[tokio::test(flavor = "multi_thread")]
async fn a_writer_that_traps_holding_the_turn_delays_the_next_by_under_a_second() {
    // A trapped instance is dropped, also where instances serve many requests.
    for instances in [Instances::PerRequest, Instances::Reused] {
        a_writer_traps(instances).await;
    }
}

async fn a_writer_traps(instances: Instances) {
    let data = tempfile::tempdir().unwrap();
    let serve =
        WasmtimeServe::start_component(&standalone_test_component(), data.path(), KEY, instances)
            .await;
    ok(&serve.call(KEY, "POST", "/api/clients", Some(CLIENT)).await);
    for round in 0..3 {
        let trapped = serve
            .call(KEY, "POST", "/api/_test/half-written-client", Some(CLIENT))
            .await;
        assert_eq!(trapped.status, 500, "round {round}: {}", trapped.body);
        let started = Instant::now();
        let list = serve.call(KEY, "GET", "/api/clients", None).await;
        let read_took = started.elapsed();
        assert_eq!(
            list.header("x-total-count"),
            Some(&*(round + 1).to_string())
        );
        let started = Instant::now();
        ok(&serve.call(KEY, "POST", "/api/clients", Some(CLIENT)).await);
        let write_took = started.elapsed();
        // The read waited for nothing; the write waited for the dead writer's turn to
        // expire (under a second) and then wrote.
        assert!(
            read_took < Duration::from_millis(500),
            "round {round}: the read took {read_took:?}"
        );
        assert!(
            write_took < Duration::from_millis(1500),
            "round {round}: the write took {write_took:?}"
        );
        eprintln!(
            "{instances:?}, round {round}: read after the trap {read_took:?}, write \
             {write_took:?}"
        );
    }
    let list = serve.call(KEY, "GET", "/api/clients", None).await;
    assert_eq!(list.header("x-total-count"), Some("4"));
}

/// The names a component imports and exports.
fn imports_and_exports(path: &std::path::Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let bytes = std::fs::read(path).unwrap();
    let wit_component::DecodedWasm::Component(used, world) = wit_component::decode(&bytes).unwrap()
    else {
        panic!("{} is not a component", path.display());
    };
    let w = &used.worlds[world];
    (
        w.imports.keys().map(|k| used.name_world_key(k)).collect(),
        w.exports.keys().map(|k| used.name_world_key(k)).collect(),
    )
}

/// The standalone component is the service with the plug's code compiled in: it exports
/// what the shipped component exports, and imports none of Faktura's interfaces, which the
/// shipped component imports from its host.
#[test]
fn the_standalone_component_exports_the_service_and_imports_no_faktura_interface() {
    let (shipped_imports, shipped_exports) = imports_and_exports(&shipped_component());
    let (imports, exports) = imports_and_exports(&standalone_component());
    assert_eq!(exports, shipped_exports);
    let faktura = |names: &BTreeSet<String>| -> Vec<String> {
        names
            .iter()
            .filter(|n| n.starts_with("faktura:"))
            .cloned()
            .collect()
    };
    assert_eq!(faktura(&imports), Vec::<String>::new());
    assert!(
        faktura(&shipped_imports).contains(&"faktura:service/store@0.1.0".to_owned()),
        "{shipped_imports:?}"
    );
}

/// Every function and resource the standalone component imports must be WASI 0.2.0 or older:
/// Spin (3.0 and newer) provides WASI 0.2 and matches a newer 0.2.x import to the 0.2.x
/// it has, but it cannot supply what a later 0.2 release added.
#[test]
fn every_import_of_the_standalone_component_is_wasi_that_spin_provides() {
    use wit_parser::{Stability, WorldItem};

    let bytes = std::fs::read(standalone_component()).unwrap();
    let wit_component::DecodedWasm::Component(used, world) = wit_component::decode(&bytes).unwrap()
    else {
        panic!("not a component");
    };
    let mut wasi = wit_parser::Resolve::default();
    wasi.push_dir(wit_dir()).unwrap();
    let baseline = semver::Version::new(0, 2, 0);
    let provided = [
        "wasi:io",
        "wasi:clocks",
        "wasi:random",
        "wasi:cli",
        "wasi:filesystem",
        "wasi:http",
        "wasi:sockets",
    ];
    let mut checked = 0;
    let mut problems = Vec::new();
    for (key, item) in &used.worlds[world].imports {
        let WorldItem::Interface { id, .. } = item else {
            problems.push(format!("{}: not an interface", used.name_world_key(key)));
            continue;
        };
        let iface = &used.interfaces[*id];
        let package = &used.packages[iface.package.unwrap()].name;
        let name = iface.name.clone().unwrap();
        let family = format!("{}:{}", package.namespace, package.name);
        if !provided.contains(&family.as_str())
            || package.version.as_ref().map(|v| (v.major, v.minor)) != Some((0, 2))
        {
            problems.push(format!("{}: not WASI 0.2", used.name_world_key(key)));
            continue;
        }
        let reference = wasi
            .interfaces
            .iter()
            .find(|(_, i)| {
                i.name.as_deref() == Some(name.as_str())
                    && i.package.is_some_and(|p| {
                        let n = &wasi.packages[p].name;
                        n.namespace == package.namespace && n.name == package.name
                    })
            })
            .map(|(_, i)| i)
            .unwrap_or_else(|| panic!("{family}/{name} is not in wit/deps"));
        let since = |s: &Stability| match s {
            Stability::Stable { since, .. } => Some(since.clone()),
            _ => None,
        };
        for f in iface.functions.keys() {
            checked += 1;
            match reference.functions.get(f).map(|r| since(&r.stability)) {
                Some(Some(v)) if v <= baseline => {}
                other => problems.push(format!("{family}/{name}#{f}: {other:?}")),
            }
        }
        // Runtimes match other types by structure, not by name (a later release may name an
        // old type anew); resources they match by name, so those must be old enough.
        for t in iface.types.keys() {
            let Some(&ty) = reference.types.get(t) else {
                problems.push(format!("{family}/{name}#{t}: not in wit/deps"));
                continue;
            };
            if !matches!(wasi.types[ty].kind, wit_parser::TypeDefKind::Resource) {
                continue;
            }
            checked += 1;
            match Some(since(&wasi.types[ty].stability)) {
                Some(Some(v)) if v <= baseline => {}
                other => problems.push(format!("{family}/{name}#{t}: {other:?}")),
            }
        }
    }
    assert!(
        problems.is_empty(),
        "imports Spin may not provide: {problems:#?}"
    );
    assert!(checked > 30, "only {checked} imported items were checked");
    let exports: Vec<String> = used.worlds[world]
        .exports
        .keys()
        .map(|k| used.name_world_key(k))
        .collect();
    assert!(
        exports
            .iter()
            .any(|e| e.starts_with("wasi:http/incoming-handler@0.2")),
        "{exports:?}"
    );
}
