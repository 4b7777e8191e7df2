//! Several hosts on one PostgreSQL store under concurrent load: three hosts in-process with
//! eight clients each, and host processes of which one is killed (SIGKILL) mid-load.
//!
//! What must hold whichever host a client reaches: every acknowledged write is there
//! afterwards with the fields sent, the document numbers of each account and kind run
//! 1..K without a gap or a repeat, and no answer is a 5xx but 503, which a client sends
//! again until it succeeds (the component runs a colliding transaction again 16 times
//! before it answers 503).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use faktura_tests::{
    App, HOST_BINARY_HINT, PostgresServer, Reply, concurrently, free_port, host_binary, run_ok,
    start_host_on, test_component, try_send,
};

use crate::support::{CREDIT_NOTES, INVOICES, Kind};

/// Both series of numbers each account keeps.
const KINDS: [&Kind; 2] = [&INVOICES, &CREDIT_NOTES];

/// Most times a client sends a request that answered 503.
const SENDS_MAX: usize = 50;

/// How a client reaches a host: in-process (`App`) or over a fresh connection to a host
/// process, which may be gone.
#[derive(Clone)]
enum Host {
    InProcess(Arc<App>),
    Process(String),
}

impl Host {
    /// One request with `key` and an XML body; `None` when the host cannot be reached.
    async fn send(&self, key: &str, method: &str, path: &str, body: &str) -> Option<Reply> {
        let body = (!body.is_empty() || method != "GET").then_some(body);
        match self {
            Host::InProcess(app) => Some(app.call_as(key, method, path, body).await),
            Host::Process(base) => try_send(base, method, path, body, key).await,
        }
    }
}

/// What the clients saw: the 503s they sent again, and the requests that got no answer.
#[derive(Default)]
struct Tally {
    unavailable: AtomicUsize,
    unanswered: AtomicUsize,
}

/// Sends a request until it answers something other than 503 (at most `SENDS_MAX` times),
/// which must be `want`; `None` when the host could not be reached (the write is then not
/// acknowledged).
async fn send_until_done(
    host: &Host,
    key: &str,
    (method, path, body): (&str, &str, &str),
    want: u16,
    tally: &Tally,
) -> Option<Reply> {
    for sent in 1..=SENDS_MAX {
        let Some(r) = host.send(key, method, path, body).await else {
            tally.unanswered.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        if r.status == 503 {
            tally.unavailable.fetch_add(1, Ordering::Relaxed);
            // The pause a client takes before it sends again, growing.
            tokio::time::sleep(Duration::from_millis(5 * sent as u64)).await;
            continue;
        }
        assert_eq!(r.status, want, "{method} {path}: {}", r.body);
        return Some(r);
    }
    panic!("{method} {path}: still 503 after {SENDS_MAX} sends");
}

/// A document a client created and had acknowledged, and what else of it was.
#[derive(Debug, Clone)]
struct Made {
    account: usize,
    kind: usize,
    id: u64,
    /// The label sent, unique to the document.
    label: String,
    /// The price of its one item (tax free), so its total.
    price: u32,
    completed: bool,
    /// The payment acknowledged, with its amount.
    payment: Option<(u64, String)>,
}

impl Made {
    /// What client `c` sends in `round`, on one of `accounts` accounts: accounts and
    /// kinds taken in turn, the label unique, the price `price`.
    fn planned(c: usize, round: usize, accounts: usize, price: usize) -> Made {
        Made {
            account: (c + round) % accounts,
            kind: (c / accounts + round) % KINDS.len(),
            id: 0,
            label: format!("client {c} round {round}"),
            price: u32::try_from(price).unwrap(),
            completed: false,
            payment: None,
        }
    }
}

/// A client's round: a document of `kind` for `account` created on one host, completed
/// on the next and paid on the one after, each step only once the one before was
/// acknowledged. Stops at the first request without an answer.
async fn document_round(
    hosts: &[Host],
    first: usize,
    key: &str,
    client_id: u64,
    made: &mut Made,
    tally: &Tally,
) {
    let kind = KINDS[made.kind];
    let host = |step: usize| &hosts[(first + step) % hosts.len()];
    let item = format!(
        "<{0}><{1}><title>Arbeit</title><quantity>1</quantity><unit_price>{2}</unit_price>\
         <tax_name>frei</tax_name><tax_rate>0</tax_rate></{1}></{0}>",
        kind.named("items"),
        kind.named("item"),
        made.price
    );
    let body = kind.body(&format!(
        "<client_id>{client_id}</client_id><label>{}</label>{item}",
        made.label
    ));
    let Some(created) =
        send_until_done(host(0), key, ("POST", &kind.list(), &body), 201, tally).await
    else {
        return;
    };
    made.id = created.id();
    let complete = format!("{}/complete", kind.at(made.id));
    if send_until_done(host(1), key, ("PUT", &complete, ""), 200, tally)
        .await
        .is_none()
    {
        return;
    }
    made.completed = true;
    let amount = (made.price / 10).to_string();
    let payment = kind.part("payment", made.id, &format!("<amount>{amount}</amount>"));
    let paid = send_until_done(
        host(2),
        key,
        ("POST", &kind.parts("payments"), &payment),
        201,
        tally,
    )
    .await;
    made.payment = paid.map(|p| (p.id(), amount));
}

/// Checks the store through `host` after the load: every acknowledged document with its
/// fields, its completion and its payment, and the numbers of each account and kind
/// 1..K. `all_acknowledged`: every document there was acknowledged (no host died), so
/// there are exactly as many.
async fn check_store(
    host: &Host,
    keys: &[String],
    made: &[Made],
    all_acknowledged: bool,
) -> Vec<(usize, usize, usize)> {
    let tally = Tally::default();
    let mut counted = Vec::new();
    for (account, key) in keys.iter().enumerate() {
        for (k, kind) in KINDS.iter().enumerate() {
            let ours: Vec<&Made> = made
                .iter()
                .filter(|m| m.account == account && m.kind == k && m.id != 0)
                .collect();
            for m in &ours {
                let r = send_until_done(host, key, ("GET", &kind.at(m.id), ""), 200, &tally)
                    .await
                    .expect("the checking host answers");
                let price = m.price.to_string();
                r.assert_fields(&[("label", &m.label), ("total_gross", &price)]);
                if m.completed {
                    assert_ne!(r.field("status").as_deref(), Some("DRAFT"), "{m:?}");
                }
                if let Some((payment, amount)) = &m.payment {
                    let list = kind.parts_of("payments", m.id);
                    let paid = send_until_done(host, key, ("GET", &list, ""), 200, &tally)
                        .await
                        .expect("the checking host answers");
                    assert_eq!(paid.fields("id"), [payment.to_string()], "{m:?}");
                    assert_eq!(paid.fields("amount"), [amount.as_str()], "{m:?}");
                }
            }
            let list = format!("{}?per_page=1000", kind.list());
            let listed = send_until_done(host, key, ("GET", &list, ""), 200, &tally)
                .await
                .expect("the checking host answers");
            let total: usize = listed.header("x-total-count").unwrap().parse().unwrap();
            if all_acknowledged {
                assert_eq!(total, ours.len(), "account {account}: {}s", kind.label);
            } else {
                assert!(total >= ours.len(), "account {account}: {}s", kind.label);
            }
            let mut numbers: Vec<String> = listed
                .fields(&kind.number())
                .into_iter()
                .filter(|n| !n.is_empty())
                .collect();
            numbers.sort();
            let gapless: Vec<String> = (1..=numbers.len())
                .map(|n| format!("{}{n:05}", kind.number_pre))
                .collect();
            assert_eq!(
                numbers, gapless,
                "account {account}: {} numbers",
                kind.label
            );
            let completed = ours.iter().filter(|m| m.completed).count();
            assert!(numbers.len() >= completed, "account {account}");
            counted.push((account, k, numbers.len()));
        }
    }
    assert_eq!(tally.unanswered.load(Ordering::Relaxed), 0);
    counted
}

/// Three hosts in-process on one store, eight clients each, on three accounts: each client
/// creates, completes and pays documents of both kinds, every step on the next host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hosts_on_one_store_keep_every_acknowledged_write_and_gapless_numbers() {
    const HOSTS: usize = 3;
    const CLIENTS_PER_HOST: usize = 8;
    const ROUNDS: usize = 4;
    let pg = PostgresServer::start();
    let mut hosts = Vec::new();
    for _ in 0..HOSTS {
        let app = App::spawn_on_store(pg.url(), |_| {}).await;
        hosts.push(Host::InProcess(Arc::new(app)));
    }
    let Host::InProcess(first) = &hosts[0] else {
        unreachable!("in-process hosts")
    };
    let mut keys = Vec::new();
    let mut clients = Vec::new();
    for name in ["Nord GmbH", "Süd AG", "West KG"] {
        let key = first.new_account(name).await;
        let client = first
            .call_as(
                &key,
                "POST",
                "/api/clients",
                Some("<client><name>K</name></client>"),
            )
            .await;
        assert_eq!(client.status, 201, "{}", client.body);
        clients.push(client.id());
        keys.push(key);
    }
    let (hosts, keys, clients) = (Arc::new(hosts), Arc::new(keys), Arc::new(clients));
    let tally = Arc::new(Tally::default());
    let started = Instant::now();
    let made: Vec<Vec<Made>> = concurrently(HOSTS * CLIENTS_PER_HOST, |c| {
        let (hosts, keys, clients, tally) =
            (hosts.clone(), keys.clone(), clients.clone(), tally.clone());
        async move {
            let mut made = Vec::new();
            for round in 0..ROUNDS {
                let mut m = Made::planned(c, round, keys.len(), 100 + c * ROUNDS + round);
                let first = c % hosts.len();
                document_round(
                    &hosts,
                    first,
                    &keys[m.account],
                    clients[m.account],
                    &mut m,
                    &tally,
                )
                .await;
                assert!(m.payment.is_some(), "every request is answered in-process");
                made.push(m);
            }
            made
        }
    })
    .await;
    let load = started.elapsed();
    let made: Vec<Made> = made.into_iter().flatten().collect();
    let counted = check_store(&hosts[1], &keys, &made, true).await;
    let unavailable = tally.unavailable.load(Ordering::Relaxed);
    eprintln!(
        "{} documents created, completed and paid by {} clients through {HOSTS} hosts in \
         {load:.1?}; {unavailable} answers were 503 and sent again; numbers per account and \
         kind: {counted:?}",
        made.len(),
        HOSTS * CLIENTS_PER_HOST
    );
    assert_eq!(made.len(), HOSTS * CLIENTS_PER_HOST * ROUNDS);
}

/// Host processes on one store, each with a data directory of its own. The first compiles
/// the component; the others start from a copy of its compiled-component cache.
struct Processes {
    hosts: Vec<faktura_tests::HostProcess>,
    bases: Vec<String>,
    dirs: Vec<tempfile::TempDir>,
}

impl Processes {
    async fn start(pg: &PostgresServer, n: usize, key: &str) -> Processes {
        let mut started = Processes {
            hosts: Vec::new(),
            bases: Vec::new(),
            dirs: Vec::new(),
        };
        for i in 0..n {
            let dir = tempfile::tempdir().unwrap();
            if i > 0 {
                run_ok(
                    std::process::Command::new("cp")
                        .arg("-a")
                        .arg(started.dirs[0].path().join("cache"))
                        .arg(dir.path().join("cache")),
                    "cp copies the compiled-component cache",
                );
            }
            let port = free_port();
            let base = format!("http://127.0.0.1:{port}");
            let mut host = start_host_on(dir.path(), port, key, &pg.url());
            host.wait_ready(&base, key).await;
            started.hosts.push(host);
            started.bases.push(base);
            started.dirs.push(dir);
        }
        started
    }

    /// A new account in the store `url` names, made through the admin socket of the first
    /// host; its API key.
    fn new_account(&self, url: &str, name: &str) -> String {
        let out = run_ok(
            std::process::Command::new(host_binary())
                .arg("--data")
                .arg(self.dirs[0].path())
                .args(["--store", url])
                .arg("--component")
                .arg(test_component())
                .args(["account", "create", name, "--email", "a@example.com"]),
            HOST_BINARY_HINT,
        );
        let text = String::from_utf8(out.stdout).unwrap();
        text.lines()
            .find_map(|l| l.split("API key (shown once): ").nth(1))
            .unwrap_or_else(|| panic!("no API key in {text}"))
            .trim()
            .to_owned()
    }
}

/// Three host processes on one store under load from six clients each; one host is
/// killed with SIGKILL mid-load. Its clients get no answer from then on (nothing they
/// were not answered counts as written); the others go on being served; afterwards every
/// acknowledged write is there and the numbers have no gap, also where the killed host
/// held a transaction open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_killed_mid_load_loses_no_acknowledged_write_and_leaves_no_gap() {
    const KEY: &str = "cluster-admin-key-0123456789";
    const HOSTS: usize = 3;
    const CLIENTS_PER_HOST: usize = 6;
    const VICTIM: usize = HOSTS - 1;
    let pg = PostgresServer::start();
    let mut processes = Processes::start(&pg, HOSTS, KEY).await;
    let keys = Arc::new(vec![
        KEY.to_owned(),
        processes.new_account(&pg.url(), "Zweite GmbH"),
    ]);
    let mut clients = Vec::new();
    let first = Host::Process(processes.bases[0].clone());
    for key in keys.iter() {
        let client = first
            .send(
                key,
                "POST",
                "/api/clients",
                "<client><name>K</name></client>",
            )
            .await
            .expect("the first host answers");
        assert_eq!(client.status, 201, "{}", client.body);
        clients.push(client.id());
    }
    let clients = Arc::new(clients);
    let hosts: Vec<Host> = processes.bases.iter().cloned().map(Host::Process).collect();
    let hosts = Arc::new(hosts);
    let tally = Arc::new(Tally::default());
    let stop = Arc::new(AtomicBool::new(false));
    let killed_at: Arc<std::sync::Mutex<Option<Instant>>> = Arc::default();
    let load = concurrently(HOSTS * CLIENTS_PER_HOST, |c| {
        let (hosts, keys, clients, tally, stop, killed_at) = (
            hosts.clone(),
            keys.clone(),
            clients.clone(),
            tally.clone(),
            stop.clone(),
            killed_at.clone(),
        );
        async move {
            // Each client stays with one host, so that the killed host's clients are its
            // own; a round still takes the document from create to payment.
            let home = c % hosts.len();
            let own = [hosts[home].clone()];
            let mut made = Vec::new();
            let mut after_kill = 0;
            let mut round = 0;
            while !stop.load(Ordering::Relaxed) {
                let mut m = Made::planned(c, round, keys.len(), 100 + c * 1000 + round);
                let killed = killed_at.lock().unwrap().is_some();
                document_round(
                    &own,
                    0,
                    &keys[m.account],
                    clients[m.account],
                    &mut m,
                    &tally,
                )
                .await;
                let answered = m.payment.is_some();
                made.push(m);
                if !answered {
                    // The host is gone: this client has nothing more to send it.
                    break;
                }
                if killed {
                    after_kill += 1;
                }
                round += 1;
            }
            (home, made, after_kill)
        }
    });
    let killer = async {
        tokio::time::sleep(Duration::from_secs(2)).await;
        processes.hosts[VICTIM].kill();
        *killed_at.lock().unwrap() = Some(Instant::now());
        tokio::time::sleep(Duration::from_secs(3)).await;
        stop.store(true, Ordering::Relaxed);
    };
    let (load, ()) = tokio::join!(load, killer);
    let mut made = Vec::new();
    for (home, theirs, after_kill) in load {
        let last_answered = theirs.last().is_some_and(|m| m.payment.is_some());
        if home == VICTIM {
            assert!(
                !last_answered,
                "a client of the killed host was answered to the end"
            );
        } else {
            assert!(
                after_kill > 0 && last_answered,
                "a client of a live host was not served after the kill: {after_kill} rounds"
            );
        }
        made.extend(theirs);
    }
    let counted = check_store(&hosts[0], &keys, &made, false).await;
    let acknowledged = made.iter().filter(|m| m.payment.is_some()).count();
    eprintln!(
        "{acknowledged} rounds acknowledged in full, {} requests unanswered (the killed \
         host's), {} answers 503 and sent again; numbers per account and kind: {counted:?}",
        tally.unanswered.load(Ordering::Relaxed),
        tally.unavailable.load(Ordering::Relaxed)
    );
}
