//! A lease on the store, shared by every instance through files alone.
//!
//! WASI has no file locks and instances share no memory, so the instances of a runtime
//! (`wasmtime serve`, Spin: one per request, running at once) take turns through a
//! directory of tickets. A ticket is a file named by its generation; the holder of the
//! newest ticket owns the store until it writes `{generation}.free` beside it. Taking the
//! next turn is creating the next generation's file with `create_new`, which exactly one
//! instance can win. Nobody ever deletes or renames a live ticket.
//!
//! An instance that dies holding a lease (a trap, a killed process) never frees it. Its
//! ticket then stops being renewed: the holder touches it at least every `RENEW_AFTER`
//! while it works, and a ticket untouched for `TTL` is stale, so the next generation may
//! be taken over it. A holder checks before every write that no newer generation exists
//! and that its own ticket is still there (`check`), so one that was only slow, not dead,
//! finds out and stops instead of writing beside the new owner.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// A ticket untouched this long belongs to an instance that died: the others wait for a
/// dead holder's turn at most this long (and one pause), under a second.
pub const TTL: Duration = Duration::from_millis(900);
/// A holder touches its ticket when this much time passed since the last touch: a holder
/// keeps its turn unless it makes no store call for most of `TTL`.
const RENEW_AFTER: Duration = Duration::from_millis(200);
/// `check` looks at the directory again after this much time; in between, the holder
/// cannot have been displaced, since displacing it takes `TTL` without a renewal.
const RECHECK_AFTER: Duration = Duration::from_millis(50);
/// The longest pause between two looks at a busy store: a turn lasts a few fsyncs, and
/// many waiters looking more often would take the CPU its holder needs.
const PAUSE_MAX: Duration = Duration::from_millis(8);
/// How long `acquire` waits for its turn before it gives up.
pub const WAIT_MAX: Duration = Duration::from_secs(60);

/// The store's turn, held until `release` (or until the instance dies).
#[derive(Debug)]
pub struct Lease {
    dir: PathBuf,
    generation: u64,
    ticket: File,
    checked: Instant,
    renewed: Instant,
    released: bool,
}

/// Why a lease could not be taken or kept.
#[derive(Debug)]
pub enum LeaseError {
    /// Nobody freed the store within `WAIT_MAX`.
    Busy,
    /// A newer generation was taken over this holder's stale ticket.
    Lost,
    Io(io::Error),
}

impl std::fmt::Display for LeaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeaseError::Busy => write!(f, "the store stayed busy for {WAIT_MAX:?}"),
            LeaseError::Lost => write!(f, "the store's lease expired and was taken over"),
            LeaseError::Io(e) => write!(f, "the store's lease directory: {e}"),
        }
    }
}

impl From<io::Error> for LeaseError {
    fn from(e: io::Error) -> LeaseError {
        LeaseError::Io(e)
    }
}

fn ticket_name(generation: u64) -> String {
    format!("{generation:020}")
}

fn free_name(generation: u64) -> String {
    format!("{generation:020}.free")
}

/// The newest generation in `dir` (0 when there is none) and whether it was freed.
fn newest(dir: &Path) -> io::Result<(u64, bool)> {
    let mut top = 0;
    let mut freed = Vec::new();
    // An entry that vanishes while the directory is read was cleaned up by a newer holder.
    for entry in fs::read_dir(dir)?.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        match name.strip_suffix(".free") {
            Some(g) => freed.extend(g.parse::<u64>().ok()),
            None => top = top.max(name.parse::<u64>().unwrap_or(0)),
        }
    }
    Ok((top, top == 0 || freed.contains(&top)))
}

fn is_stale(path: &Path) -> bool {
    match fs::metadata(path).and_then(|m| m.modified()) {
        Ok(touched) => SystemTime::now()
            .duration_since(touched)
            .is_ok_and(|age| age > TTL),
        // A ticket that vanished was cleaned up by a newer holder: not ours to judge.
        Err(_) => false,
    }
}

impl Lease {
    /// Waits for the store's turn in `dir` (created when missing).
    pub fn acquire(dir: &Path) -> Result<Lease, LeaseError> {
        fs::create_dir_all(dir)?;
        let started = Instant::now();
        let mut pause = Duration::from_micros(100);
        loop {
            let (top, freed) = newest(dir)?;
            if freed || is_stale(&dir.join(ticket_name(top))) {
                let generation = top + 1;
                match File::create_new(dir.join(ticket_name(generation))) {
                    Ok(ticket) => {
                        // The directory may have been read long ago: if a newer generation
                        // exists, this ticket was taken on a stale view and is void.
                        if newest(dir)?.0 != generation {
                            drop(ticket);
                            let _ = fs::remove_file(dir.join(ticket_name(generation)));
                            continue;
                        }
                        clean_up(dir, generation);
                        let now = Instant::now();
                        return Ok(Lease {
                            dir: dir.to_owned(),
                            generation,
                            ticket,
                            checked: now,
                            renewed: now,
                            released: false,
                        });
                    }
                    // Another instance took this turn; look again.
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            // Wait for the turn `top` to end, looking only at the files that tell: its free
            // mark, the next ticket (another waiter was faster) and its own age. Cheaper than
            // reading the whole directory, which many waiters do at once.
            loop {
                if started.elapsed() > WAIT_MAX {
                    return Err(LeaseError::Busy);
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(PAUSE_MAX);
                let ended = match fs::metadata(dir.join(ticket_name(top))) {
                    // Gone: newer holders cleaned it up, long after its turn.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => true,
                    Err(e) => return Err(e.into()),
                    Ok(ticket) => {
                        dir.join(free_name(top)).exists()
                            || dir.join(ticket_name(top + 1)).exists()
                            || ticket.modified().is_ok_and(|touched| {
                                SystemTime::now()
                                    .duration_since(touched)
                                    .is_ok_and(|age| age > TTL)
                            })
                    }
                };
                if ended {
                    break;
                }
            }
        }
    }

    /// Confirms the lease is still this holder's, and renews it. Cheap when called often:
    /// the directory is read at most every `RECHECK_AFTER`.
    pub fn check(&mut self) -> Result<(), LeaseError> {
        if self.released {
            return Err(LeaseError::Lost);
        }
        if self.checked.elapsed() < RECHECK_AFTER {
            return Ok(());
        }
        let own = self.dir.join(ticket_name(self.generation));
        let next = self.dir.join(ticket_name(self.generation + 1));
        if !own.exists() || next.exists() {
            return Err(LeaseError::Lost);
        }
        if self.renewed.elapsed() >= RENEW_AFTER {
            self.ticket.set_modified(SystemTime::now())?;
            self.renewed = Instant::now();
        }
        self.checked = Instant::now();
        Ok(())
    }

    /// Ends this holder's turn; later checks fail.
    pub fn release(&mut self) -> Result<(), LeaseError> {
        if !self.released {
            self.released = true;
            File::create_new(self.dir.join(free_name(self.generation)))?;
        }
        Ok(())
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Makes the ticket look untouched for longer than `TTL`, as a dead holder's would.
    #[cfg(test)]
    pub(crate) fn expire(&mut self) {
        let long_ago = SystemTime::now() - TTL - Duration::from_secs(1);
        self.ticket.set_modified(long_ago).unwrap();
        self.checked = Instant::now() - RECHECK_AFTER;
    }
}

/// Removes the tickets and marks of generations before the previous one: their turns are
/// over, and the previous one stays so that a holder displaced from it can tell.
fn clean_up(dir: &Path, current: u64) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let generation = name.strip_suffix(".free").unwrap_or(name).parse::<u64>();
        if generation.is_ok_and(|g| g + 1 < current) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::{Arc, Barrier};

    #[test]
    fn turns_follow_each_other_and_old_tickets_go() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = Lease::acquire(dir.path()).unwrap();
        assert_eq!(first.generation(), 1);
        first.release().unwrap();
        let mut second = Lease::acquire(dir.path()).unwrap();
        assert_eq!(second.generation(), 2);
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        let mut names = names;
        names.sort();
        assert_eq!(names, vec![ticket_name(1), free_name(1), ticket_name(2)]);
        second.release().unwrap();
    }

    #[test]
    fn only_one_holder_at_a_time() {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let inside = Arc::new(AtomicU32::new(0));
        let start = Arc::new(Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (dir, inside, start) = (dir.clone(), inside.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    for _ in 0..20 {
                        let mut lease = Lease::acquire(dir.path()).unwrap();
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                        lease.check().unwrap();
                        std::thread::sleep(Duration::from_micros(200));
                        inside.fetch_sub(1, Ordering::SeqCst);
                        lease.release().unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let last = Lease::acquire(dir.path()).unwrap();
        assert_eq!(last.generation(), 8 * 20 + 1);
    }

    #[test]
    fn a_stale_ticket_is_taken_over_and_its_holder_learns_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut dead = Lease::acquire(dir.path()).unwrap();
        // The holder stopped renewing long ago.
        dead.expire();
        let next = Lease::acquire(dir.path()).unwrap();
        assert_eq!(next.generation(), 2);
        assert!(matches!(dead.check(), Err(LeaseError::Lost)));
    }

    #[test]
    fn a_live_holder_keeps_its_turn() {
        let dir = tempfile::tempdir().unwrap();
        let mut held = Lease::acquire(dir.path()).unwrap();
        held.checked = Instant::now() - RECHECK_AFTER;
        held.check().unwrap();
        let dir2 = dir.path().to_owned();
        let waiter = std::thread::spawn(move || Lease::acquire(&dir2).unwrap().generation());
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished());
        held.release().unwrap();
        assert_eq!(waiter.join().unwrap(), 2);
    }
}
