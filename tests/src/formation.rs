//! A pg_auto_failover formation on 127.0.0.1 (Debian's `postgresql-15-auto-failover` and
//! `pg-auto-failover-cli`): a monitor and three PostgreSQL 15 nodes, one primary and two
//! standbys in a synchronous quorum (`number_sync_standbys` 1, every node in the quorum),
//! so that a test can kill the primary under load and watch the monitor promote a standby.
//!
//! Every server runs as the `postgres` user (they refuse root), listens on 127.0.0.1 only,
//! trusts local connections and uses no TLS, with all its files in one temporary
//! directory. Each node's keeper (`pg_autoctl run`, which starts and stops its PostgreSQL)
//! runs in a process group of its own, so that `kill_primary` can kill the node whole,
//! keeper, server and sessions at once, as a crash of its machine would. Dropping the
//! `Formation` stops every server and keeper, also when a test panics.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{free_port, is_root, run_ok};

/// PostgreSQL's programs: the version Debian's pg_auto_failover extension is built for.
const POSTGRES_BIN: &str = "/usr/lib/postgresql/15/bin";

/// The monitor's failover timing, in milliseconds (the retry count aside). A node is failed
/// over once its keeper has not reported for `node_considered_unhealthy_timeout` and the
/// monitor's health check (every `health_check_period`, one retry after
/// `health_check_retry_delay`) cannot connect to its PostgreSQL; the promotion then waits
/// `primary_demote_timeout` for the old primary to stop writing. The defaults (20 s
/// unhealthy, 30 s demote) are sized for a network partition between machines: the old
/// primary's keeper stops its server after `timeout.network_partition_timeout` (20 s) alone,
/// before a standby is promoted. On one machine a partition cannot happen, so the timeouts
/// are short; the health check's connect timeout stays long enough for a loaded machine not
/// to fail over a live primary.
pub const MONITOR_TIMEOUTS: &[(&str, u32)] = &[
    ("pgautofailover.health_check_period", 1000),
    ("pgautofailover.health_check_timeout", 2000),
    ("pgautofailover.health_check_max_retries", 1),
    ("pgautofailover.health_check_retry_delay", 500),
    ("pgautofailover.node_considered_unhealthy_timeout", 2000),
    ("pgautofailover.primary_demote_timeout", 1000),
    ("pgautofailover.startup_grace_period", 1000),
];

/// What every server of the formation runs with besides what pg_auto_failover sets: small
/// (pg_auto_failover sizes `shared_buffers` for a machine of its own, and four servers
/// share this one), without fsync, since a test kills processes, never the machine, and
/// with short checkpoints. A killed primary that had written past what the standbys
/// received can come back by a new base backup (pg_auto_failover 2.0 may leave its data
/// directory shut down in recovery, which PostgreSQL 15's pg_rewind refuses), and the base
/// backup first waits for a checkpoint on the new primary, spread over
/// `checkpoint_completion_target` × `checkpoint_timeout`: up to 4.5 min by default, 3 s
/// here.
const SERVER_SETTINGS: &str = "shared_buffers = '32MB'\nfsync = off\n\
                               checkpoint_timeout = '30s'\ncheckpoint_completion_target = 0.1\n";

/// A PostgreSQL node of the formation as the monitor names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub port: u16,
}

/// One node's row of `pg_autoctl show state`.
#[derive(Clone, Debug)]
pub struct NodeState {
    pub node: Node,
    /// The state its keeper last reported (`primary`, `secondary`, `catchingup`, …).
    pub reported: String,
    /// The state the monitor assigned it.
    pub assigned: String,
}

impl NodeState {
    /// Whether the node is in `state` as both the monitor and its keeper see it.
    pub fn is(&self, state: &str) -> bool {
        self.reported == state && self.assigned == state
    }
}

/// A running formation; see the module documentation.
pub struct Formation {
    dir: tempfile::TempDir,
    /// The `postgres` user's uid and gid, when this runs as root.
    user: Option<(u32, u32)>,
    monitor_port: u16,
    nodes: Vec<Node>,
    /// The keeper of the monitor and of each node, by data directory name; `None` while
    /// killed.
    keepers: Vec<(String, Option<Child>)>,
}

impl Formation {
    /// Creates the monitor and three nodes, starts their keepers and waits until one node
    /// is primary and two are secondaries, then makes the role and database `faktura`.
    pub fn start() -> Formation {
        assert!(
            Path::new(POSTGRES_BIN).join("pg_ctl").exists()
                && Command::new("pg_autoctl").arg("--version").output().is_ok(),
            "pg_auto_failover is installed (apt-get install postgresql-15-auto-failover \
             pg-auto-failover-cli; make test-deps does)"
        );
        let dir = tempfile::tempdir().unwrap();
        // pg_autoctl keeps its pid files elsewhere (/tmp) when this one does not exist.
        std::fs::create_dir(dir.path().join("run")).unwrap();
        let user = is_root().then(|| {
            run_ok(
                Command::new("chown")
                    .args(["-R", "postgres"])
                    .arg(dir.path()),
                "the postgres user exists",
            );
            (id("-u"), id("-g"))
        });
        let mut formation = Formation {
            dir,
            user,
            monitor_port: free_port(),
            nodes: Vec::new(),
            keepers: Vec::new(),
        };
        formation.create_monitor();
        for i in 1..=3 {
            formation.create_node(&format!("node{i}"));
        }
        // `pg_autoctl set formation number-sync-standbys` of 2.0 misreads its argument.
        // The monitor takes the setting only while the primary is settled in its state
        // (not while it still moves from wait_primary to primary): tried until it does.
        let set = "SELECT pgautofailover.set_formation_number_sync_standbys('default', 1)";
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let out = formation
                .program("psql")
                .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
                .args(["-p", &formation.monitor_port.to_string()])
                .args(["-U", "autoctl_node", "-d", "pg_auto_failover", "-c", set])
                .output()
                .expect("psql runs");
            if out.status.success() {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the monitor takes number_sync_standbys: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        formation.wait_until(
            "a primary and two secondaries",
            Duration::from_secs(60),
            |s| {
                s.iter().filter(|n| n.is("primary")).count() == 1
                    && s.iter().filter(|n| n.is("secondary")).count() == 2
            },
        );
        let primary = formation.primary();
        formation.psql(
            primary.port,
            "postgres",
            "faktura",
            "CREATE ROLE faktura LOGIN; ALTER DATABASE faktura OWNER TO faktura",
        );
        formation
    }

    /// The URI a client gives to reach whichever node is primary: every node, and
    /// `target_session_attrs=read-write`, which skips the standbys.
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!(
            "postgres://faktura@{}/faktura?target_session_attrs=read-write",
            hosts.join(",")
        )
    }

    /// Every node's state, as the monitor has it.
    pub fn state(&self) -> Vec<NodeState> {
        let out = run_ok(
            &mut self.autoctl(&[
                "show",
                "state",
                "--json",
                "--pgdata",
                &self.pgdata("monitor"),
            ]),
            "pg_autoctl shows the state",
        );
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        let text = |row: &serde_json::Value, key: &str| {
            row[key]
                .as_str()
                .unwrap_or_else(|| panic!("{key} in {row}"))
                .to_owned()
        };
        rows.as_array()
            .expect("a list of nodes")
            .iter()
            .map(|row| NodeState {
                node: Node {
                    name: text(row, "nodename"),
                    port: row["nodeport"].as_u64().expect("a port") as u16,
                },
                reported: text(row, "current_group_state"),
                assigned: text(row, "assigned_group_state"),
            })
            .collect()
    }

    /// The node the monitor has as primary now (reported and assigned).
    pub fn primary(&self) -> Node {
        let state = self.state();
        let mut primaries = state.iter().filter(|n| n.is("primary"));
        match (primaries.next(), primaries.next()) {
            (Some(p), None) => p.node.clone(),
            _ => panic!("not one primary: {state:?}"),
        }
    }

    /// Kills the primary whole with SIGKILL: its keeper, its PostgreSQL and every session
    /// of it at once. The node it was.
    pub fn kill_primary(&mut self) -> Node {
        let primary = self.primary();
        self.kill(&primary.name);
        primary
    }

    /// Starts the keeper of `node` again: it asks the monitor what it is now and, after a
    /// failover, rewinds its server to follow the new primary as a standby.
    pub fn rejoin(&mut self, node: &Node) {
        let child = self.spawn_keeper(&node.name);
        let slot = self.keeper(&node.name);
        assert!(slot.is_none(), "{} was running", node.name);
        *slot = Some(child);
    }

    /// Waits until `done` holds for the monitor's state, at most `limit`; panics naming
    /// `what` and the monitor's recent events when it does not.
    pub fn wait_until(
        &self,
        what: &str,
        limit: Duration,
        done: impl Fn(&[NodeState]) -> bool,
    ) -> Vec<NodeState> {
        let start = Instant::now();
        loop {
            let state = self.state();
            if done(&state) {
                return state;
            }
            if start.elapsed() > limit {
                panic!(
                    "the formation did not reach {what} in {limit:?}: {state:?}\n{}",
                    self.events()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The output of the keeper of `name` (`monitor`, `node1`, …) so far.
    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("{name}.log"))).unwrap_or_default()
    }

    /// The monitor's recent events, as text: what it decided and when.
    pub fn events(&self) -> String {
        let out = self
            .autoctl(&[
                "show",
                "events",
                "--count",
                "40",
                "--pgdata",
                &self.pgdata("monitor"),
            ])
            .output()
            .expect("pg_autoctl runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn create_monitor(&mut self) {
        let port = self.monitor_port.to_string();
        let pgdata = self.pgdata("monitor");
        run_ok(
            &mut self.create(&["monitor", "--pgdata", &pgdata, "--pgport", &port]),
            "pg_autoctl creates the monitor",
        );
        let timeouts: String = MONITOR_TIMEOUTS
            .iter()
            .map(|(name, value)| format!("{name} = {value}\n"))
            .collect();
        append(&pgdata, &format!("{SERVER_SETTINGS}{timeouts}"));
        self.start_keeper("monitor");
        // The nodes register with the monitor as they are created.
        let start = Instant::now();
        while !self
            .autoctl(&["show", "state", "--pgdata", &pgdata])
            .output()
            .is_ok_and(|o| o.status.success())
        {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the monitor did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Creates a node (the first one primary, the others standbys copied from it) and
    /// starts its keeper.
    fn create_node(&mut self, name: &str) {
        let port = free_port();
        let pgdata = self.pgdata(name);
        let monitor = format!(
            "postgres://autoctl_node@127.0.0.1:{}/pg_auto_failover?sslmode=disable",
            self.monitor_port
        );
        let port_text = port.to_string();
        run_ok(
            &mut self.create(&[
                "postgres",
                "--pgdata",
                &pgdata,
                "--pgport",
                &port_text,
                "--name",
                name,
                "--dbname",
                "faktura",
                "--monitor",
                &monitor,
                "--replication-quorum",
                "true",
                "--candidate-priority",
                "50",
            ]),
            "pg_autoctl creates a node",
        );
        append(&pgdata, SERVER_SETTINGS);
        self.start_keeper(name);
        self.nodes.push(Node {
            name: name.to_owned(),
            port,
        });
    }

    fn start_keeper(&mut self, name: &str) {
        let child = self.spawn_keeper(name);
        self.keepers.push((name.to_owned(), Some(child)));
    }

    /// `pg_autoctl run` for the data directory `name`, in a process group of its own, its
    /// output in `name.log` beside the data directory.
    fn spawn_keeper(&self, name: &str) -> Child {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join(format!("{name}.log")))
            .unwrap();
        self.autoctl(&["run", "--pgdata", &self.pgdata(name)])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0)
            .spawn()
            .expect("pg_autoctl starts")
    }

    fn keeper(&mut self, name: &str) -> &mut Option<Child> {
        &mut self
            .keepers
            .iter_mut()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no keeper {name}"))
            .1
    }

    /// SIGKILL to the keeper's process group (the keeper and the postmaster) and to every
    /// child of the postmaster: PostgreSQL puts each of its processes in a session of its
    /// own. The postmaster is stopped first, so that it starts no child in between.
    fn kill(&mut self, name: &str) {
        let pgdata = self.pgdata(name);
        let mut child = self
            .keeper(name)
            .take()
            .unwrap_or_else(|| panic!("{name} is not running"));
        let mut targets = vec![format!("-{}", child.id())];
        if let Some(postmaster) = postmaster(&pgdata) {
            let _ = Command::new("kill").args(["-STOP", &postmaster]).output();
            let children = Command::new("ps")
                .args(["-o", "pid=", "--ppid", &postmaster])
                .output()
                .expect("ps runs");
            targets.extend(
                String::from_utf8_lossy(&children.stdout)
                    .split_whitespace()
                    .map(str::to_owned),
            );
            targets.push(postmaster);
        }
        let _ = Command::new("kill")
            .args(["-KILL", "--"])
            .args(&targets)
            .output();
        let _ = child.wait();
    }

    /// Runs `sql` on the server at `port` as `user`, which must succeed.
    fn psql(&self, port: u16, user: &str, db: &str, sql: &str) {
        run_ok(
            self.program("psql")
                .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
                .args(["-p", &port.to_string(), "-U", user, "-d", db, "-c", sql]),
            "psql runs",
        );
    }

    fn pgdata(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }

    fn autoctl(&self, args: &[&str]) -> Command {
        let mut c = self.program("pg_autoctl");
        c.args(args);
        c
    }

    /// `pg_autoctl create` of a server, local (`LOCAL`) and with PostgreSQL 15.
    fn create(&self, args: &[&str]) -> Command {
        let mut c = self.autoctl(&["create"]);
        c.args(args)
            .args(LOCAL)
            .arg("--pgctl")
            .arg(PathBuf::from(POSTGRES_BIN).join("pg_ctl"));
        c
    }

    /// A program run as the `postgres` user when this is root, with pg_auto_failover's
    /// configuration, state and pid files in the temporary directory.
    fn program(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        if let Some((uid, gid)) = self.user {
            c.uid(uid).gid(gid);
        }
        let path = std::env::var("PATH").unwrap_or_default();
        c.current_dir(self.dir.path())
            .env("PATH", format!("{POSTGRES_BIN}:{path}"))
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_DATA_HOME", self.dir.path().join("share"))
            .env("XDG_RUNTIME_DIR", self.dir.path().join("run"))
            .env_remove("PGHOST")
            .env_remove("PGPORT")
            .env_remove("PGDATA")
            .env_remove("PG_AUTOCTL_MONITOR");
        c
    }
}

impl Drop for Formation {
    /// SIGQUIT to each keeper, which stops its PostgreSQL at once (`pg_ctl -m immediate`)
    /// and exits; SIGKILL to what is left after 10 s.
    fn drop(&mut self) {
        let mut running: Vec<Child> = self.keepers.iter_mut().filter_map(|k| k.1.take()).collect();
        for child in &running {
            let _ = Command::new("kill")
                .args(["-QUIT", &child.id().to_string()])
                .output();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while !running.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            running.retain_mut(|c| matches!(c.try_wait(), Ok(None)));
        }
        for mut child in running {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .output();
            let _ = child.wait();
        }
    }
}

/// What makes a server local: reached as 127.0.0.1 and listening there only, trusting
/// local connections, without TLS.
const LOCAL: &[&str] = &[
    "--hostname",
    "127.0.0.1",
    "--listen",
    "127.0.0.1",
    "--auth",
    "trust",
    "--no-ssl",
];

/// Adds `settings` to a server's `postgresql.auto.conf`, read after every other file.
fn append(pgdata: &str, settings: &str) {
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .append(true)
        .open(Path::new(pgdata).join("postgresql.auto.conf"))
        .and_then(|mut f| f.write_all(settings.as_bytes()))
        .expect("the server's postgresql.auto.conf is writable");
}

/// The pid of the postmaster serving `pgdata`, when one runs: the first line of its
/// `postmaster.pid`, checked against the process's command line, since a killed server
/// leaves the file behind.
fn postmaster(pgdata: &str) -> Option<String> {
    let pid_file = std::fs::read_to_string(Path::new(pgdata).join("postmaster.pid")).ok()?;
    let pid = pid_file.lines().next()?.trim().to_owned();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    String::from_utf8_lossy(&cmdline)
        .contains(pgdata)
        .then_some(pid)
}

/// The `postgres` user's uid (`-u`) or gid (`-g`).
fn id(which: &str) -> u32 {
    let out = run_ok(
        Command::new("id").args([which, "postgres"]),
        "the postgres user exists",
    );
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("a numeric id")
}
