//! The examples of the docs run, so that they cannot rot: every ```` ```sh ```` block of
//! README.md and docs/*.md, the blocks of one file in order in one `bash -euo pipefail`
//! (a block may use what an earlier one set: `KEY`, a captured id, a file it wrote), in a
//! temporary directory, against a host of that file's own. The docs' address of `make run`
//! and of its metrics become the test host's, a line `KEY=…` sets the test host's key.
//! Blocks that need what the test host lacks (make, SMTP, PostgreSQL, `wasmtime serve`)
//! are fenced ```` ```console ````, which must not call the API at the docs' address;
//! docs/development.md says so for writers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use faktura_tests::{ADMIN_KEY, App, test_component, workspace_root};

/// The address the docs' API examples call: the one `make run` serves on.
const DOCS_API: &str = "http://127.0.0.1:8080";

/// The address the docs' metrics examples call (`--metrics 127.0.0.1:9090`).
const DOCS_METRICS: &str = "http://127.0.0.1:9090";

/// The fence of the blocks that run.
const RUN: &str = "sh";

/// The fence of shell blocks shown but not run.
const SHOWN: &str = "console";

/// How long one file's blocks may take together, in seconds (coreutils `timeout`).
const FILE_SECONDS_MAX: u32 = 300;

/// Marks the start of a block's output in the shell's output; the ASCII record separator
/// no example prints.
const MARK: char = '\u{1e}';

/// A fenced block of a markdown file.
struct Block {
    /// The first word of the fence's info string (`sh`, `console`, …; empty for none).
    lang: String,
    /// The line of the opening fence, counted from 1.
    line: usize,
    text: String,
}

/// The fenced blocks of `markdown`, by CommonMark's rules for backtick fences as far as
/// the docs use them: an opening line of three or more backticks (indented at most three
/// spaces) whose info string holds no backtick, closed by a line of at least as many
/// backticks and nothing else.
fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(usize, Block)> = None;
    for (index, line) in markdown.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let trimmed = line.trim_start_matches(' ');
        let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
        match &mut open {
            Some((fence, block)) => {
                if ticks >= *fence && indent <= 3 && trimmed[ticks..].trim().is_empty() {
                    out.push(open.take().expect("a block is open").1);
                } else {
                    block.text.push_str(line);
                    block.text.push('\n');
                }
            }
            None => {
                let info = &trimmed[ticks..];
                if ticks >= 3 && indent <= 3 && !info.contains('`') {
                    let lang = info.split_whitespace().next().unwrap_or("").to_owned();
                    let block = Block {
                        lang,
                        line: index + 1,
                        text: String::new(),
                    };
                    open = Some((ticks, block));
                }
            }
        }
    }
    assert!(open.is_none(), "a fenced block is never closed");
    out
}

/// Whether `text` runs curl against the docs' API address on some line.
fn calls_api(text: &str) -> bool {
    text.lines()
        .any(|l| l.contains("curl ") && l.contains(DOCS_API))
}

/// `block` as the test runs it: the docs' addresses made the test host's (`api`,
/// `metrics`), and each `KEY=…` line setting the test host's key.
fn adapted(block: &str, api: &str, metrics: &str) -> String {
    block
        .lines()
        .map(|line| {
            if line.trim_start().starts_with("KEY=") {
                format!("KEY={ADMIN_KEY}")
            } else {
                line.replace(DOCS_API, api).replace(DOCS_METRICS, metrics)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The markdown files whose examples run: README.md and docs/*.md, by name.
fn documents() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("docs/ lists").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    docs.insert(0, root.join("README.md"));
    docs
}

/// A host as the docs' examples expect one: `make run`'s, with a postal queue and a
/// metrics listener.
async fn docs_host(postal: &Path) -> App {
    let postal = postal.to_path_buf();
    App::spawn_configured(
        Arc::new(tempfile::tempdir().unwrap()),
        test_component(),
        move |o| {
            o.postal = Some(postal);
            o.metrics = Some("127.0.0.1:0".parse().unwrap());
        },
    )
    .await
}

/// Runs the runnable blocks of `file` (its path as messages show it) in order against a
/// host of their own; the number run, or what went wrong: the block that failed, with its
/// output and exit code.
async fn run_file(file: &Path, runnable: &[&Block]) -> Result<usize, String> {
    let postal = tempfile::tempdir().unwrap();
    let app = docs_host(postal.path()).await;
    let metrics = app.metrics_base.clone().expect("a metrics listener");
    let mut script = String::from("set -euo pipefail\nexec 2>&1\n");
    for (n, block) in runnable.iter().enumerate() {
        script.push_str(&format!("printf '\\n{MARK}%d\\n' {n}\n"));
        script.push_str(&adapted(&block.text, &app.base, &metrics));
        script.push('\n');
    }
    let work = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new("timeout");
    command
        .args(["--kill-after=5", &FILE_SECONDS_MAX.to_string()])
        .args(["bash", "-c", &script, "docs-example"])
        .current_dir(work.path())
        .stdin(std::process::Stdio::null());
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("bash and coreutils' timeout run");
    if out.status.success() {
        return Ok(runnable.len());
    }
    // The output after the last mark is the failed block's; what bash said before the
    // script's first line (a syntax error) is on stderr.
    let output = String::from_utf8_lossy(&out.stdout);
    let before = String::from_utf8_lossy(&out.stderr);
    let (n, printed) = output
        .rsplit_once(MARK)
        .and_then(|(_, last)| {
            let (n, printed) = last.split_once('\n').unwrap_or((last, ""));
            Some((n.parse::<usize>().ok()?, printed))
        })
        .unwrap_or((0, &output));
    let block = runnable[n];
    let code = match out.status.code() {
        Some(124) => format!("124: stopped after {FILE_SECONDS_MAX} s"),
        Some(code) => code.to_string(),
        None => "a signal".into(),
    };
    Err(format!(
        "{}:{}: the example failed with exit code {code}\n--- the block\n{}--- what it printed\n{}\n---",
        file.display(),
        block.line,
        block.text,
        format!("{before}{printed}").trim_end()
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shell_example_of_the_docs_runs_against_a_host() {
    let root = workspace_root();
    let mut failures = Vec::new();
    let mut ran_total = 0;
    for file in documents() {
        let shown = file.strip_prefix(&root).unwrap_or(&file).to_path_buf();
        let markdown = std::fs::read_to_string(&file).unwrap();
        let all = blocks(&markdown);
        let runnable: Vec<&Block> = all.iter().filter(|b| b.lang == RUN).collect();
        // An API example on the docs' address is run, never only shown.
        for b in all.iter().filter(|b| b.lang == SHOWN && calls_api(&b.text)) {
            failures.push(format!(
                "{}:{}: a ```{SHOWN} block calls the API at {DOCS_API}: fence it ```{RUN}, \
                 so that it runs",
                shown.display(),
                b.line
            ));
        }
        let has_api_examples = all.iter().any(|b| calls_api(&b.text));
        if runnable.is_empty() {
            if has_api_examples {
                failures.push(format!(
                    "{}: it has curl examples of the API, but none runs",
                    shown.display()
                ));
            }
            eprintln!("docs: {}: no blocks to run", shown.display());
            continue;
        }
        let started = std::time::Instant::now();
        match run_file(&shown, &runnable).await {
            Ok(n) => {
                ran_total += n;
                eprintln!(
                    "docs: {}: ran {n} blocks in {:.1} s",
                    shown.display(),
                    started.elapsed().as_secs_f64()
                );
            }
            Err(why) => failures.push(why),
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems with the docs' examples:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(ran_total > 0, "no example ran at all");
}

#[test]
fn blocks_are_read_by_their_fences() {
    let markdown = "text\n\
        ```sh\n\
        curl -fsS http://127.0.0.1:8080/api/clients\n\
        ```\n\
        Inline ```` ```sh ```` is no fence.\n\
        ````console\n\
        ```sh\n\
        make run\n\
        ````\n\
        ```\n\
        plain\n\
        ```\n";
    let found = blocks(markdown);
    let summary: Vec<(&str, usize, &str)> = found
        .iter()
        .map(|b| (b.lang.as_str(), b.line, b.text.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("sh", 2, "curl -fsS http://127.0.0.1:8080/api/clients\n"),
            ("console", 6, "```sh\nmake run\n"),
            ("", 10, "plain\n"),
        ]
    );
    assert!(calls_api(&found[0].text));
    assert!(!calls_api(&found[1].text));
}

#[test]
fn examples_are_pointed_at_the_test_host() {
    let block = "KEY=3f0c…   # the printed key\n\
        curl -fsS http://127.0.0.1:8080/api/clients -H \"X-ServiceApiKey: $KEY\"\n\
        curl -fsS http://127.0.0.1:9090/healthz";
    assert_eq!(
        adapted(block, "http://127.0.0.1:40001", "http://127.0.0.1:40002"),
        format!(
            "KEY={ADMIN_KEY}\n\
             curl -fsS http://127.0.0.1:40001/api/clients -H \"X-ServiceApiKey: $KEY\"\n\
             curl -fsS http://127.0.0.1:40002/healthz"
        )
    );
}
