//! CPU time from /proc: how much of the machine other work took while the harness
//! measured (the CPU time spent outside the harness, its children (wrk) and the hosts
//! under test, from /proc/stat and /proc/<pid>/stat), and the CPU time of single
//! processes. On a shared machine that share is what makes one measurement differ from
//! the next, so a comparison reports it next to its figures.

use std::process;

/// CPU time in clock ticks at one moment: the machine's, and the share of it that the
/// harness and the hosts used.
#[derive(Clone, Copy)]
pub(crate) struct Ticks {
    busy: u64,
    total: u64,
    ours: u64,
}

/// What /proc/<pid>/stat says about one process's CPU time, in clock ticks.
#[derive(Clone, Copy)]
pub(crate) struct ProcessTicks {
    /// Its parent's pid.
    pub(crate) parent: u32,
    /// utime + stime: its own, over all its threads.
    pub(crate) own: u64,
    /// cutime + cstime: its children that exited and were waited for.
    pub(crate) waited: u64,
}

/// The CPU time of `pid` so far; None when it is gone.
pub(crate) fn process(pid: u32) -> Option<ProcessTicks> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces: the fields are those after it,
    // starting with the state (field 3); the parent (field 4) is at index 1 and utime
    // (field 14) at index 11.
    let fields: Vec<u64> = stat
        .rsplit_once(')')?
        .1
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    Some(ProcessTicks {
        parent: u32::try_from(*fields.get(1)?).ok()?,
        own: fields.get(11)? + fields.get(12)?,
        waited: fields.get(13)? + fields.get(14)?,
    })
}

/// utime + stime of `pid`, and cutime + cstime (its children that were waited for) when
/// `children` is set.
fn process_ticks(pid: u32, children: bool) -> Option<u64> {
    let p = process(pid)?;
    Some(p.own + if children { p.waited } else { 0 })
}

/// Clock ticks per second, the unit of /proc's CPU times (`getconf CLK_TCK`; 100 on every
/// Linux this runs on when getconf is missing).
pub(crate) fn ticks_per_sec() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// The CPU time of all CPUs so far, from /proc/stat: busy and in all (busy, idle and
/// waiting for IO), in clock ticks.
pub(crate) fn machine() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // user nice system idle iowait irq softirq steal: time the hypervisor gave to other
    // machines (steal) was lost to the measurement as well.
    let [user, nice, system, idle, iowait, irq, softirq, steal] = *cpu.get(..8)? else {
        return None;
    };
    let busy = user + nice + system + irq + softirq + steal;
    Some((busy, busy + idle + iowait))
}

impl Ticks {
    /// Now, counting the harness, its waited-for children and `hosts` as ours.
    pub(crate) fn now(hosts: &[u32]) -> Option<Ticks> {
        let (busy, total) = machine()?;
        let mut ours = process_ticks(process::id(), true)?;
        for &pid in hosts {
            ours += process_ticks(pid, false)?;
        }
        Some(Ticks { busy, total, ours })
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
