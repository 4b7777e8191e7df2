//! The admin socket: `faktura account create`, `user create`, `user revoke`, `backup` and
//! `check` reach a running server through `admin.sock` in its data directory, since only
//! one process can have the database open. Without a server listening there the commands
//! open the data directory themselves.
//!
//! The socket is the owner's only (mode 0600), like the database beside it. One request
//! line, one answer line, fields separated by tabs:
//! `create-account NAME EMAIL`, `create-user ACCOUNT EMAIL`, `revoke-user USER`;
//! answered by `ok [ACCOUNT USER KEY]` or `error MESSAGE`. Two requests are answered by
//! more than a line: `backup` by `ok` and then the export of the store (`store::transfer`)
//! up to the end of the stream, whose trailer tells a whole backup from one cut short;
//! `check` by `ok ACCOUNTS RECORDS INDEX-ENTRIES KEPT-VALUES NUMBER-CLAIMS PROBLEMS-FOUND`
//! and then one line per problem listed.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use crate::{CheckReport, Runtime};

/// The socket's file name in the data directory.
pub const SOCKET: &str = "admin.sock";

/// The longest request line read (names and addresses are far shorter).
const LINE_MAX: u64 = 4096;

/// What an admin command asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    CreateAccount { name: String, email: String },
    CreateUser { account: u64, email: String },
    RevokeUser { user: u64 },
}

/// What it got: the new user's key, or nothing (a revocation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issued {
    pub account_id: u64,
    pub user_id: u64,
    pub api_key: String,
}

impl Command {
    fn encode(&self) -> anyhow::Result<String> {
        let fields = match self {
            Command::CreateAccount { name, email } => {
                vec!["create-account".to_owned(), name.clone(), email.clone()]
            }
            Command::CreateUser { account, email } => {
                vec!["create-user".to_owned(), account.to_string(), email.clone()]
            }
            Command::RevokeUser { user } => vec!["revoke-user".to_owned(), user.to_string()],
        };
        if fields.iter().any(|f| f.contains(['\t', '\n', '\r'])) {
            bail!("names and addresses cannot contain tabs or line breaks");
        }
        Ok(fields.join("\t"))
    }

    fn decode(line: &str) -> anyhow::Result<Command> {
        let fields: Vec<&str> = line.split('\t').collect();
        let number = |s: &str| {
            s.parse::<u64>()
                .with_context(|| format!("not a number: {s}"))
        };
        Ok(match fields.as_slice() {
            ["create-account", name, email] => Command::CreateAccount {
                name: (*name).to_owned(),
                email: (*email).to_owned(),
            },
            ["create-user", account, email] => Command::CreateUser {
                account: number(account)?,
                email: (*email).to_owned(),
            },
            ["revoke-user", user] => Command::RevokeUser {
                user: number(user)?,
            },
            _ => bail!("unknown admin command"),
        })
    }

    /// Runs the command on `runtime` (the server's, or one the command opened).
    pub async fn run(&self, runtime: &Runtime) -> anyhow::Result<Option<Issued>> {
        let key = match self {
            Command::CreateAccount { name, email } => runtime.create_account(name, email).await?,
            Command::CreateUser { account, email } => runtime.create_user(*account, email).await?,
            Command::RevokeUser { user } => {
                runtime.revoke_user(*user).await?;
                return Ok(None);
            }
        };
        Ok(Some(Issued {
            account_id: key.account_id,
            user_id: key.user_id,
            api_key: key.api_key,
        }))
    }
}

/// Whether a server listens on the admin socket of `data_dir`.
pub async fn serving(data_dir: &Path) -> bool {
    UnixStream::connect(data_dir.join(SOCKET)).await.is_ok()
}

/// Streams a backup of the store of the server on `data_dir` into `out`; `None` when no
/// server listens there. What arrives is checked by its reader: a stream the server cut
/// short lacks its trailer.
pub async fn request_backup(
    data_dir: &Path,
    out: &mut (impl tokio::io::AsyncWrite + Unpin),
) -> Option<anyhow::Result<()>> {
    let stream = UnixStream::connect(data_dir.join(SOCKET)).await.ok()?;
    Some(
        async {
            let (_, mut export) = ask(stream, "backup").await?;
            tokio::io::copy(&mut export, out).await?;
            Ok(())
        }
        .await,
    )
}

/// The consistency check of the store of the server on `data_dir`; `None` when no server
/// listens there.
pub async fn request_check(data_dir: &Path) -> Option<anyhow::Result<CheckReport>> {
    let stream = UnixStream::connect(data_dir.join(SOCKET)).await.ok()?;
    Some(
        async {
            let (counts, mut rest) = ask(stream, "check").await?;
            let counts: Vec<u64> = counts
                .iter()
                .map(|n| n.parse())
                .collect::<Result<_, _>>()
                .context("the server's check report is garbled")?;
            let [
                accounts,
                records,
                index_entries,
                tally_values,
                number_claims,
                problems_found,
            ] = counts[..]
            else {
                bail!("the server's check report is garbled");
            };
            let mut problems = Vec::new();
            let mut line = String::new();
            while rest.read_line(&mut line).await? > 0 {
                problems.push(line.trim_end_matches('\n').to_owned());
                line.clear();
            }
            Ok(CheckReport {
                accounts,
                records,
                index_entries,
                tally_values,
                number_claims,
                problems,
                problems_found,
            })
        }
        .await,
    )
}

/// Sends `request` and reads the first line of the answer: the fields after `ok`, and
/// the rest of the answer; the server's message when it says `error`.
async fn ask(
    stream: UnixStream,
    request: &str,
) -> anyhow::Result<(Vec<String>, BufReader<tokio::net::unix::OwnedReadHalf>)> {
    let (read, mut write) = stream.into_split();
    write.write_all(format!("{request}\n").as_bytes()).await?;
    write.shutdown().await?;
    let mut answer = BufReader::new(read);
    let mut first = String::new();
    answer.read_line(&mut first).await?;
    let mut fields = first.trim_end_matches('\n').split('\t');
    match (fields.next(), fields.clone().next()) {
        (Some("ok"), _) => Ok((fields.map(str::to_owned).collect(), answer)),
        (Some("error"), Some(message)) => bail!("{message}"),
        _ => bail!("the server gave no answer (see its log)"),
    }
}

/// Sends `command` to the server on `data_dir`; `None` when no server listens there.
pub async fn request(data_dir: &Path, command: &Command) -> Option<anyhow::Result<Option<Issued>>> {
    let line = match command.encode() {
        Ok(l) => l,
        Err(e) => return Some(Err(e)),
    };
    let stream = UnixStream::connect(data_dir.join(SOCKET)).await.ok()?;
    Some(exchange(stream, &line).await)
}

async fn exchange(stream: UnixStream, line: &str) -> anyhow::Result<Option<Issued>> {
    let (read, mut write) = stream.into_split();
    write.write_all(format!("{line}\n").as_bytes()).await?;
    write.shutdown().await?;
    let mut answer = String::new();
    BufReader::new(read).read_line(&mut answer).await?;
    let fields: Vec<&str> = answer.trim_end_matches('\n').split('\t').collect();
    match fields.as_slice() {
        ["ok"] => Ok(None),
        ["ok", account, user, key] => Ok(Some(Issued {
            account_id: account.parse()?,
            user_id: user.parse()?,
            api_key: (*key).to_owned(),
        })),
        ["error", message] => bail!("{message}"),
        _ => bail!("the server gave no answer (see its log)"),
    }
}

/// Listens on `data_dir/admin.sock` until the task is dropped. The database is open in
/// this process, so a socket file left there belongs to a server that is gone.
pub fn listen(runtime: Runtime, data_dir: &Path) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let path = data_dir.join(SOCKET);
    let _ = std::fs::remove_file(&path);
    let listener =
        UnixListener::bind(&path).with_context(|| format!("binding {}", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    Ok(tokio::spawn(accept(runtime, listener, path)))
}

async fn accept(runtime: Runtime, listener: UnixListener, path: PathBuf) {
    let _remove = Remove(path);
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(e) => {
                tracing::warn!("admin socket: {e}");
                continue;
            }
        };
        let runtime = runtime.clone();
        tokio::spawn(async move {
            if let Err(e) = answer(&runtime, stream).await {
                tracing::warn!("admin socket: {e}");
            }
        });
    }
}

async fn answer(runtime: &Runtime, stream: UnixStream) -> anyhow::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut line = String::new();
    tokio::io::AsyncReadExt::take(BufReader::new(read), LINE_MAX)
        .read_line(&mut line)
        .await?;
    let outcome = match line.trim_end_matches('\n') {
        "backup" => {
            tracing::info!("admin backup");
            write.write_all(b"ok\n").await?;
            // Past `ok` an error can only cut the stream short, which its reader sees by
            // the missing trailer; the reason goes to the log.
            let moved =
                crate::store::transfer::write_export(runtime.shared.store.db.as_ref(), &mut write)
                    .await?;
            tracing::info!(
                entries = moved.entries,
                bytes = moved.bytes,
                "admin backup sent"
            );
            return Ok(());
        }
        "check" => {
            tracing::info!("admin check");
            runtime.check().await.map(|r| {
                let counts = [
                    r.accounts,
                    r.records,
                    r.index_entries,
                    r.tally_values,
                    r.number_claims,
                    r.problems_found,
                ];
                let mut lines = vec![format!("ok\t{}", counts.map(|n| n.to_string()).join("\t"))];
                lines.extend(r.problems.iter().map(|p| p.replace(['\n', '\r'], " ")));
                lines.join("\n")
            })
        }
        request => match Command::decode(request) {
            Ok(command) => {
                tracing::info!(?command, "admin command");
                command.run(runtime).await.map(|issued| match issued {
                    None => "ok".to_owned(),
                    Some(k) => format!("ok\t{}\t{}\t{}", k.account_id, k.user_id, k.api_key),
                })
            }
            Err(e) => Err(e),
        },
    };
    let reply = outcome.unwrap_or_else(|e| {
        format!(
            "error\t{}",
            format!("{e:#}").replace(['\t', '\n', '\r'], " ")
        )
    });
    write.write_all(format!("{reply}\n").as_bytes()).await?;
    Ok(())
}

/// Removes the socket file when the listener ends.
struct Remove(PathBuf);

impl Drop for Remove {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_round_trip_and_refuse_separators() {
        for c in [
            Command::CreateAccount {
                name: "Müller & Söhne GmbH".into(),
                email: "a@example.com".into(),
            },
            Command::CreateUser {
                account: 7,
                email: "b@example.com".into(),
            },
            Command::RevokeUser { user: 42 },
        ] {
            assert_eq!(Command::decode(&c.encode().unwrap()).unwrap(), c);
        }
        let tab = Command::CreateAccount {
            name: "A\tB".into(),
            email: "a@example.com".into(),
        };
        assert!(tab.encode().is_err());
        assert!(Command::decode("drop-everything").is_err());
        assert!(Command::decode("revoke-user\tx").is_err());
    }
}
