//! Load from `wrk`: a fixed number of connections for a fixed time, and the figures of its
//! report.

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, bail};

/// What one measurement gave.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Figures {
    pub per_sec: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub count: u64,
    /// Answers other than 2xx/3xx (or other than the one status a script expects), socket
    /// errors and timeouts.
    pub errors: u64,
    /// The 503 answers among `errors`, as a script that counts them reports them
    /// (`Answers 503: N`); 0 for scripts that do not.
    pub unavailable: u64,
}

impl Figures {
    /// Two measurements of equal length as one: requests and errors add up, the rate is
    /// their mean, and so (approximately) are the latencies.
    pub(crate) fn with(self, other: Figures) -> Figures {
        Figures::mean(&[self, other])
    }

    /// Measurements of equal length as one, as [`Figures::with`] combines two.
    pub(crate) fn mean(all: &[Figures]) -> Figures {
        let n = all.len().max(1) as f64;
        let mean = |f: fn(&Figures) -> f64| all.iter().map(f).sum::<f64>() / n;
        Figures {
            per_sec: mean(|f| f.per_sec),
            p50_ms: mean(|f| f.p50_ms),
            p99_ms: mean(|f| f.p99_ms),
            count: all.iter().map(|f| f.count).sum(),
            errors: all.iter().map(|f| f.errors).sum(),
            unavailable: all.iter().map(|f| f.unavailable).sum(),
        }
    }
}

pub(crate) struct Load<'a> {
    pub url: String,
    pub seconds: u64,
    pub connections: usize,
    pub key: Option<&'a str>,
    pub script: Option<&'a Path>,
}

impl Load<'_> {
    pub(crate) fn run(&self) -> anyhow::Result<Figures> {
        let mut cmd = Command::new("wrk");
        cmd.arg("-t2")
            .arg(format!("-c{}", self.connections))
            .arg(format!("-d{}s", self.seconds))
            .arg("--timeout")
            .arg("30s")
            .arg("--latency");
        if let Some(key) = self.key {
            cmd.arg("-H").arg(format!("X-ServiceApiKey: {key}"));
        }
        if let Some(script) = self.script {
            cmd.arg("-s").arg(script);
        }
        cmd.arg(&self.url);
        let out = cmd.output().context("running wrk (apt install wrk)")?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            bail!(
                "wrk failed: {}{}",
                text,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        parse(&text).with_context(|| format!("reading wrk's report:\n{text}"))
    }
}

/// Milliseconds of a wrk duration such as `812.00us`, `1.25ms`, `2.01s` or `1.00m`.
fn millis(text: &str) -> Option<f64> {
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    Some(match unit {
        "us" => number / 1000.0,
        "ms" => number,
        "s" => number * 1000.0,
        "m" => number * 60_000.0,
        "h" => number * 3_600_000.0,
        _ => return None,
    })
}

/// The figures of a wrk report. A script that expects one status of every answer (W8's)
/// adds `Answers other than 201: N`, a count that includes the non-2xx ones wrk counts
/// itself, and the first such answer, which goes to stderr. A script that tells 503
/// answers apart adds `Answers 503: N` (counted among the non-2xx ones too) and may name
/// the first of them (`First 503: …`), which goes to stderr as well.
fn parse(text: &str) -> anyhow::Result<Figures> {
    let mut f = Figures::default();
    let mut saw_rate = false;
    let (mut non_2xx, mut unexpected) = (0, 0);
    for line in text.lines() {
        if line.starts_with("First answer other than") || line.starts_with("First 503:") {
            eprintln!("  {line}");
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["50%", v] => f.p50_ms = millis(v).context("p50")?,
            ["99%", v] => f.p99_ms = millis(v).context("p99")?,
            ["Requests/sec:", v] => {
                f.per_sec = v.parse()?;
                saw_rate = true;
            }
            [n, "requests", "in", ..] => f.count = n.parse()?,
            ["Non-2xx", "or", "3xx", "responses:", n] => non_2xx = n.parse::<u64>()?,
            ["Answers", "other", "than", _, n] => unexpected = n.parse::<u64>()?,
            ["Answers", "503:", n] => f.unavailable = n.parse::<u64>()?,
            ["Socket", "errors:", rest @ ..] => {
                for part in rest.chunks(2) {
                    if let [_, n] = part {
                        f.errors += n.trim_end_matches(',').parse::<u64>()?;
                    }
                }
            }
            _ => {}
        }
    }
    if !saw_rate {
        bail!("no Requests/sec line");
    }
    f.errors += non_2xx.max(unexpected);
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_wrk_report() {
        let report = "Running 1s test @ http://127.0.0.1:1/\n  2 threads and 32 connections\n  \
            Thread Stats   Avg      Stdev     Max   +/- Stdev\n    Latency   812.00us  1.00ms  \
            20.00ms   90.00%\n  Latency Distribution\n     50%  640.00us\n     75%    1.00ms\n     \
            90%    1.50ms\n     99%    2.01s\n  12345 requests in 1.00s, 1.23MB read\n  \
            Socket errors: connect 1, read 2, write 0, timeout 3\n  Non-2xx or 3xx responses: 4\n\
            Requests/sec:  12345.67\nTransfer/sec:      1.23MB\n";
        let f = parse(report).unwrap();
        assert_eq!(f.count, 12345);
        assert_eq!(f.errors, 10);
        assert!((f.p50_ms - 0.64).abs() < 1e-9);
        assert!((f.p99_ms - 2010.0).abs() < 1e-9);
        assert!((f.per_sec - 12345.67).abs() < 1e-9);
    }

    #[test]
    fn answers_other_than_expected_are_failures() {
        let report = "  10 requests in 1.00s, 1.23MB read\n  Non-2xx or 3xx responses: 2\n\
            Requests/sec:     10.00\nAnswers other than 201: 3\n\
            First answer other than 201: 409 <error>duplicate</error>\n";
        assert_eq!(parse(report).unwrap().errors, 3);
        let report = "  10 requests in 1.00s, 1.23MB read\n  Non-2xx or 3xx responses: 2\n\
            Requests/sec:     10.00\n";
        assert_eq!(parse(report).unwrap().errors, 2);
    }

    #[test]
    fn answers_503_are_failures_told_apart() {
        let report = "  10 requests in 1.00s, 1.23MB read\n  Non-2xx or 3xx responses: 3\n\
            Requests/sec:     10.00\nAnswers 503: 2\nFirst 503: 503 <error>busy</error>\n";
        let f = parse(report).unwrap();
        assert_eq!((f.errors, f.unavailable), (3, 2));
    }

    #[test]
    fn two_halves_make_one_measurement() {
        let before = Figures {
            per_sec: 8000.0,
            p50_ms: 3.0,
            p99_ms: 9.0,
            count: 40_000,
            errors: 1,
            unavailable: 0,
        };
        let after = Figures {
            per_sec: 10000.0,
            p50_ms: 2.0,
            p99_ms: 7.0,
            count: 50_000,
            errors: 2,
            unavailable: 1,
        };
        let f = before.with(after);
        assert!((f.per_sec - 9000.0).abs() < 1e-9);
        assert!((f.p50_ms - 2.5).abs() < 1e-9);
        assert!((f.p99_ms - 8.0).abs() < 1e-9);
        assert_eq!((f.count, f.errors, f.unavailable), (90_000, 3, 1));
    }

    #[test]
    fn rounds_make_one_measurement() {
        let round = |per_sec: f64, errors: u64| Figures {
            per_sec,
            p50_ms: per_sec / 1000.0,
            p99_ms: per_sec / 100.0,
            count: 1000,
            errors,
            unavailable: 0,
        };
        let f = Figures::mean(&[round(1000.0, 0), round(2000.0, 1), round(6000.0, 0)]);
        assert!((f.per_sec - 3000.0).abs() < 1e-9);
        assert!((f.p50_ms - 3.0).abs() < 1e-9);
        assert!((f.p99_ms - 30.0).abs() < 1e-9);
        assert_eq!((f.count, f.errors), (3000, 1));
    }
}
