//! How much of the machine other work took while the harness measured: the CPU time
//! spent outside the harness, its children (wrk) and the hosts under test, from
//! /proc/stat and /proc/<pid>/stat. On a shared machine that share is what makes one
//! measurement differ from the next, so a comparison reports it next to its figures.

use std::process;

/// CPU time in clock ticks at one moment: the machine's, and the share of it that the
/// harness and the hosts used.
#[derive(Clone, Copy)]
pub(crate) struct Ticks {
    busy: u64,
    total: u64,
    ours: u64,
}

/// utime + stime of `pid`, and cutime + cstime (its children that were waited for) when
/// `children` is set.
fn process_ticks(pid: u32, children: bool) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces: the fields are those after it,
    // starting with the state (field 3); past the state, utime (field 14) is at index 10.
    let fields: Vec<u64> = stat
        .rsplit_once(')')?
        .1
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let own = fields.get(10)? + fields.get(11)?;
    let waited = if children {
        fields.get(12)? + fields.get(13)?
    } else {
        0
    };
    Some(own + waited)
}

impl Ticks {
    /// Now, counting the harness, its waited-for children and `hosts` as ours.
    pub(crate) fn now(hosts: &[u32]) -> Option<Ticks> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let cpu: Vec<u64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        // user nice system idle iowait irq softirq steal: time the hypervisor gave to
        // other machines (steal) was lost to the measurement as well.
        let [user, nice, system, idle, iowait, irq, softirq, steal] = *cpu.get(..8)? else {
            return None;
        };
        let busy = user + nice + system + irq + softirq + steal;
        let mut ours = process_ticks(process::id(), true)?;
        for &pid in hosts {
            ours += process_ticks(pid, false)?;
        }
        Some(Ticks {
            busy,
            total: busy + idle + iowait,
            ours,
        })
    }

    /// The share of all CPUs that other work took since `earlier`, 0 to 1.
    pub(crate) fn others_since(self, earlier: Ticks) -> f64 {
        let total = self.total.saturating_sub(earlier.total);
        let others = self
            .busy
            .saturating_sub(earlier.busy)
            .saturating_sub(self.ours.saturating_sub(earlier.ours));
        if total == 0 {
            0.0
        } else {
            others as f64 / total as f64
        }
    }
}
