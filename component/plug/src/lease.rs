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
//!
//! Turns go in the order the writers came: a waiter announces itself in `waiting/` under
//! its arrival time, and takes a free turn only when no earlier waiter is announced. The
//! first in line looks often; the others rarely, as they cannot take the turn anyway. A
//! waiter renews its announcement as a holder renews its ticket, and one untouched for `TTL`
//! (its instance died) is passed over and removed.

use std::collections::VecDeque;
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
/// The pause of the first waiter in line between two looks at a busy store: a turn lasts a
/// few fsyncs, and the store idles until the first waiter sees it end.
const FIRST_PAUSE: Duration = Duration::from_micros(200);
/// The pause of a waiter behind others, per waiter before it, between two looks at the line
/// (at most `LINE_PAUSE_MAX`): each turn takes longer than this, and many waiters looking
/// more often would take the CPU the holder needs.
const LINE_PAUSE: Duration = Duration::from_millis(2);
const LINE_PAUSE_MAX: Duration = Duration::from_millis(16);
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

/// Whether a ticket or announcement last touched at `touched` belongs to one that died.
fn untouched_too_long(touched: SystemTime) -> bool {
    SystemTime::now()
        .duration_since(touched)
        .is_ok_and(|age| age > TTL)
}

fn is_stale(path: &Path) -> bool {
    match fs::metadata(path).and_then(|m| m.modified()) {
        Ok(touched) => untouched_too_long(touched),
        // A ticket that vanished was cleaned up by a newer holder: not ours to judge.
        Err(_) => false,
    }
}

/// A waiter's announcement in the line (`waiting/`), removed when it is dropped.
struct Waiter {
    line: PathBuf,
    name: String,
    file: File,
    renewed: Instant,
    /// The waiters announced before this one, earliest first, as the line was when this one
    /// joined it: later ones come after it, so the list only ever shortens.
    earlier: VecDeque<String>,
}

impl Waiter {
    fn announce(dir: &Path) -> io::Result<Waiter> {
        use std::hash::{BuildHasher, Hasher};
        let line = dir.join("waiting");
        fs::create_dir_all(&line)?;
        let arrived = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        // Two waiters of the same nanosecond are told apart by a random suffix.
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let name = format!("{arrived:030}-{random:016x}");
        let file = File::create_new(line.join(&name))?;
        let mut earlier: Vec<String> = fs::read_dir(&line)?
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|other| *other < name)
            .collect();
        earlier.sort();
        Ok(Waiter {
            line,
            name,
            file,
            renewed: Instant::now(),
            earlier: earlier.into(),
        })
    }

    /// How many waiters are before this one (0: it is first in line). The earliest is looked
    /// at until one is alive: one that left the line is forgotten, and the announcement of
    /// one that died is removed.
    fn before(&mut self) -> io::Result<usize> {
        while let Some(name) = self.earlier.front() {
            let path = self.line.join(name);
            match fs::metadata(&path).and_then(|m| m.modified()) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
                Ok(touched) if !untouched_too_long(touched) => {
                    return Ok(self.earlier.len());
                }
                Ok(_) => {
                    let _ = fs::remove_file(&path);
                }
            }
            self.earlier.pop_front();
        }
        Ok(0)
    }

    fn renew(&mut self) -> io::Result<()> {
        if self.renewed.elapsed() >= RENEW_AFTER {
            self.file.set_modified(SystemTime::now())?;
            self.renewed = Instant::now();
        }
        Ok(())
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        let _ = fs::remove_file(self.line.join(&self.name));
    }
}

impl Lease {
    /// Waits for the store's turn in `dir` (created when missing, with the line), after the
    /// waiters that came before.
    pub fn acquire(dir: &Path) -> Result<Lease, LeaseError> {
        let started = Instant::now();
        let mut waiter = Waiter::announce(dir)?;
        loop {
            if started.elapsed() > WAIT_MAX {
                return Err(LeaseError::Busy);
            }
            waiter.renew()?;
            let before = waiter.before()?;
            if before > 0 {
                let pause = LINE_PAUSE.saturating_mul(before as u32);
                std::thread::sleep(pause.min(LINE_PAUSE_MAX));
                continue;
            }
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
            // First in line: wait for the turn `top` to end, looking only at the files that
            // tell: its free mark, the next ticket (taken by a waiter that died or was passed
            // over) and its own age. Cheaper than reading the whole directory.
            loop {
                if started.elapsed() > WAIT_MAX {
                    return Err(LeaseError::Busy);
                }
                std::thread::sleep(FIRST_PAUSE);
                waiter.renew()?;
                let ended = match fs::metadata(dir.join(ticket_name(top))) {
                    // Gone: newer holders cleaned it up, long after its turn.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => true,
                    Err(e) => return Err(e.into()),
                    Ok(ticket) => {
                        dir.join(free_name(top)).exists()
                            || dir.join(ticket_name(top + 1)).exists()
                            || ticket.modified().is_ok_and(untouched_too_long)
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
            .filter(|name| name != "waiting")
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

    fn announced(dir: &Path) -> usize {
        fs::read_dir(dir.join("waiting")).map_or(0, |d| d.count())
    }

    #[test]
    fn turns_go_in_the_order_the_writers_came() {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let mut held = Lease::acquire(dir.path()).unwrap();
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for n in 0..5 {
            let (shared, order) = (dir.clone(), order.clone());
            waiters.push(std::thread::spawn(move || {
                let mut lease = Lease::acquire(shared.path()).unwrap();
                order.lock().unwrap().push(n);
                lease.release().unwrap();
            }));
            // The next comes once this one is in line.
            while announced(dir.path()) < n + 1 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        held.release().unwrap();
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3, 4]);
        assert_eq!(announced(dir.path()), 0, "every waiter left the line");
    }

    #[test]
    fn a_waiter_that_died_in_line_is_passed_over_within_the_ttl() {
        let dir = tempfile::tempdir().unwrap();
        let line = dir.path().join("waiting");
        fs::create_dir_all(&line).unwrap();
        // One died long ago, one just now: both came before any live waiter.
        let long_ago = File::create_new(line.join(format!("{:030}-0", 1))).unwrap();
        long_ago
            .set_modified(SystemTime::now() - TTL - Duration::from_secs(1))
            .unwrap();
        File::create_new(line.join(format!("{:030}-0", 2))).unwrap();
        let started = Instant::now();
        let mut lease = Lease::acquire(dir.path()).unwrap();
        let took = started.elapsed();
        assert!(took < TTL + Duration::from_millis(500), "{took:?}");
        assert_eq!(announced(dir.path()), 0, "{:?}", fs::read_dir(&line));
        lease.release().unwrap();
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
