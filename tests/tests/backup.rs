//! Backup, restore and the consistency check, through the command line: a backup taken
//! while clients write holds every write acknowledged before it began and restores into
//! a store that checks clean; a restore refuses a store that is not empty and a damaged
//! backup before it writes anything; `faktura check` names the damage of a store and exits
//! with 1.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use faktura_tests::{
    App, HostProcess, free_port, host_binary, start_host, test_component, try_send,
};
use sha2::{Digest, Sha256};

const KEY: &str = "backup-test-key-0123456789";
const WORKERS: usize = 4;

/// Runs the `faktura` binary with `args` to its end, off the async workers.
async fn faktura(args: Vec<OsString>) -> Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(host_binary())
            .args(&args)
            .env("FAKTURA_LOG", "warn")
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", host_binary().display()))
    })
    .await
    .unwrap()
}

/// `faktura` with `args`, which must succeed; its standard output.
async fn faktura_ok(args: Vec<OsString>) -> String {
    let out = faktura(args.clone()).await;
    assert!(
        out.status.success(),
        "faktura {args:?}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Arguments: the words, then the paths.
fn args(words: &[&str], paths: &[(&str, &Path)]) -> Vec<OsString> {
    let mut out: Vec<OsString> = words.iter().map(OsString::from).collect();
    for (flag, path) in paths {
        out.push(flag.into());
        out.push(path.as_os_str().to_owned());
    }
    out
}

/// What the clients asked and were told, by invoice id: when its creation was asked for
/// and when it was acknowledged, and when its completion was acknowledged, if it was.
#[derive(Debug, Clone, Copy)]
struct Acknowledged {
    asked: Instant,
    created: Instant,
    completed: Option<Instant>,
}

type Writes = Arc<Mutex<BTreeMap<u64, Acknowledged>>>;

/// Creates and completes invoices until `stop`, recording each acknowledged write.
async fn write_until(base: String, client: u64, writes: Writes, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::SeqCst) {
        let body = format!(
            "<invoice><client_id>{client}</client_id><invoice-items><invoice-item>\
             <unit_price>10</unit_price></invoice-item></invoice-items></invoice>"
        );
        let asked = Instant::now();
        let r = try_send(&base, "POST", "/api/invoices", Some(&body), KEY)
            .await
            .expect("the server answers");
        assert_eq!(r.status, 201, "{}", r.body);
        let id = r.id();
        let created = Instant::now();
        writes.lock().unwrap().insert(
            id,
            Acknowledged {
                asked,
                created,
                completed: None,
            },
        );
        let path = format!("/api/invoices/{id}/complete");
        let r = try_send(&base, "PUT", &path, Some(""), KEY)
            .await
            .expect("the server answers");
        assert_eq!(r.status, 200, "{}", r.body);
        writes.lock().unwrap().get_mut(&id).unwrap().completed = Some(Instant::now());
    }
}

/// The host process on `data`, answering on its own port.
async fn serve(data: &Path, extra: &[&str]) -> (HostProcess, String) {
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut host = start_host(data, port, KEY, extra);
    host.wait_ready(&base, KEY).await;
    (host, base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_under_write_load_restores_every_write_acknowledged_before_it() {
    let files = tempfile::tempdir().unwrap();
    let data = files.path().join("data");
    let (_host, base) = serve(&data, &[]).await;
    let client = try_send(
        &base,
        "POST",
        "/api/clients",
        Some("<client><name>Kunde</name></client>"),
        KEY,
    )
    .await
    .unwrap()
    .id();
    let writes: Writes = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            tokio::spawn(write_until(
                base.clone(),
                client,
                writes.clone(),
                stop.clone(),
            ))
        })
        .collect();
    while writes.lock().unwrap().len() < 40 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let backup = files.path().join("store.backup");
    let began = Instant::now();
    let said = faktura_ok(args(&["backup"], &[("--to", &backup), ("--data", &data)])).await;
    let ended = Instant::now();
    // The writers go on a while after the backup too, so that the store moved on from it.
    let during = writes.lock().unwrap().len();
    while writes.lock().unwrap().len() < during + 10 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.await.unwrap();
    }
    assert!(said.starts_with("Backed up "), "{said}");
    let mode = std::fs::metadata(&backup).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "a backup is its owner's alone");
    let leftovers: Vec<_> = std::fs::read_dir(files.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let restored = files.path().join("restored");
    let said = faktura_ok(args(
        &["restore"],
        &[("--from", &backup), ("--data", &restored)],
    ))
    .await;
    assert!(said.starts_with("Restored "), "{said}");
    let checked = faktura_ok(args(
        &["check"],
        &[("--data", &restored), ("--component", &test_component())],
    ))
    .await;
    assert!(checked.contains("No problems found."), "{checked}");

    // The restored store is redb, whatever the original's store was.
    let (_restored_host, restored_base) = serve(&restored, &["--store", ""]).await;
    let writes = writes.lock().unwrap().clone();
    let mut before = 0;
    for (id, ack) in &writes {
        let r = try_send(
            &restored_base,
            "GET",
            &format!("/api/invoices/{id}"),
            None,
            KEY,
        )
        .await
        .unwrap();
        if ack.created < began {
            before += 1;
            assert_eq!(
                r.status, 200,
                "invoice {id}, acknowledged before the backup began"
            );
        }
        if ack.completed.is_some_and(|at| at < began) {
            assert_ne!(
                r.field("status").as_deref(),
                Some("DRAFT"),
                "invoice {id}, completed before the backup began"
            );
        }
        if ack.asked > ended {
            assert_eq!(
                r.status, 404,
                "invoice {id}, asked for after the backup ended"
            );
        }
    }
    assert!(before >= 40, "{before} writes before the backup");
    // The restored store counts on from the backup's ids: a new invoice collides with none.
    let r = try_send(
        &restored_base,
        "POST",
        "/api/invoices",
        Some(&format!(
            "<invoice><client_id>{client}</client_id></invoice>"
        )),
        KEY,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let last_before = writes
        .iter()
        .filter(|(_, ack)| ack.created < began)
        .map(|(id, _)| *id)
        .max()
        .unwrap();
    assert!(
        r.id() > last_before,
        "invoice {} was in the backup already",
        r.id()
    );
}

/// An app with a client and three invoices, completed, and a backup of it taken through
/// its admin socket: the backup's path.
async fn backed_up_app(files: &Path) -> (App, PathBuf) {
    let app = App::spawn().await;
    let client = app
        .create("/api/clients", "<client><name>Kunde</name></client>")
        .await
        .id();
    for _ in 0..3 {
        let id = app
            .create(
                "/api/invoices",
                &format!(
                    "<invoice><client_id>{client}</client_id><invoice-items><invoice-item>\
                     <unit_price>10</unit_price></invoice-item></invoice-items></invoice>"
                ),
            )
            .await
            .id();
        let r = app.put(&format!("/api/invoices/{id}/complete"), "").await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let backup = files.join("app.backup");
    let mut command = args(&["backup"], &[("--to", &backup)]);
    command.extend(app.store_args());
    faktura_ok(command).await;
    (app, backup)
}

#[tokio::test]
async fn a_restore_into_a_store_that_is_not_empty_is_refused_and_changes_nothing() {
    let files = tempfile::tempdir().unwrap();
    let (_app, backup) = backed_up_app(files.path()).await;
    let target = files.path().join("target");
    faktura_ok(args(
        &["restore"],
        &[("--from", &backup), ("--data", &target)],
    ))
    .await;
    let options = faktura_host::Options::new(&target, test_component());
    let before = files.path().join("before.export");
    faktura_host::export_store(&options, &before).await.unwrap();

    let out = faktura(args(
        &["restore"],
        &[("--from", &backup), ("--data", &target)],
    ))
    .await;
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("the store is not empty"), "{said}");
    let after = files.path().join("after.export");
    faktura_host::export_store(&options, &after).await.unwrap();
    assert!(
        std::fs::read(&before).unwrap() == std::fs::read(&after).unwrap(),
        "the refused restore changed the store"
    );
}

#[tokio::test]
async fn a_backup_with_one_flipped_byte_is_refused_by_restore_before_anything_is_written() {
    let files = tempfile::tempdir().unwrap();
    let (_app, backup) = backed_up_app(files.path()).await;
    let mut bytes = std::fs::read(&backup).unwrap();
    // The last byte of the last value: before the trailer (length mark, count, digest).
    let at = bytes.len() - 4 - 8 - 32 - 1;
    bytes[at] ^= 0x20;
    let damaged = files.path().join("damaged.backup");
    std::fs::write(&damaged, &bytes).unwrap();

    let target = files.path().join("target");
    let out = faktura(args(
        &["restore"],
        &[("--from", &damaged), ("--data", &target)],
    ))
    .await;
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("checksum does not match"), "{said}");
    assert!(
        !target.exists(),
        "the refused restore made {}",
        target.display()
    );
    // The same backup whole restores.
    faktura_ok(args(
        &["restore"],
        &[("--from", &backup), ("--data", &target)],
    ))
    .await;
}

/// The entries of an export (or backup) file, in order.
fn read_entries(bytes: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let header = bytes.iter().position(|b| *b == b'\n').unwrap() + 1;
    let mut rest = &bytes[header..];
    let mut take = |n: usize| {
        let (taken, left) = rest.split_at(n);
        rest = left;
        taken.to_vec()
    };
    let mut entries = Vec::new();
    loop {
        let key_len = u32::from_be_bytes(take(4).try_into().unwrap());
        if key_len == u32::MAX {
            return entries;
        }
        let key = take(key_len as usize);
        let value_len = u32::from_be_bytes(take(4).try_into().unwrap());
        entries.push((key, take(value_len as usize)));
    }
}

/// An export file of `entries`: header, entries, trailer with count and checksum.
fn write_entries(entries: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut out = b"faktura store export 1\n".to_vec();
    for (key, value) in entries {
        out.extend((key.len() as u32).to_be_bytes());
        out.extend(key);
        out.extend((value.len() as u32).to_be_bytes());
        out.extend(value);
    }
    out.extend(u32::MAX.to_be_bytes());
    out.extend((entries.len() as u64).to_be_bytes());
    let digest = Sha256::digest(&out);
    out.extend(digest);
    out
}

#[tokio::test]
async fn check_names_the_damage_of_a_store_and_exits_with_1() {
    let files = tempfile::tempdir().unwrap();
    let (app, backup) = backed_up_app(files.path()).await;
    // Through the running server's admin socket.
    let mut command = vec!["check".into()];
    command.extend(app.store_args());
    let said = faktura_ok(command).await;
    assert!(said.contains("No problems found."), "{said}");

    // A store whose one index entry of an invoice's date is gone.
    let mut entries = read_entries(&std::fs::read(&backup).unwrap());
    let date_entry = entries
        .iter()
        .position(|(k, _)| k.windows(17).any(|w| w == b"ix/invoices/date/"))
        .expect("an invoice has a date entry");
    entries.remove(date_entry);
    let crafted = files.path().join("crafted.backup");
    std::fs::write(&crafted, write_entries(&entries)).unwrap();
    let damaged = files.path().join("damaged");
    faktura_ok(args(
        &["restore"],
        &[("--from", &crafted), ("--data", &damaged)],
    ))
    .await;

    // On the data directory, no server running on it.
    let out = faktura(args(
        &["check"],
        &[("--data", &damaged), ("--component", &test_component())],
    ))
    .await;
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.lines()
            .any(|l| l
                .starts_with("problem: account 1: invoice 1 lacks its entry A1 ix/invoices/date/")),
        "{said}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the store has a problem"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
