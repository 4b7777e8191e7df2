//! What time makes due, done by one code path: `run_due` makes the runs of an account's
//! recurring invoices that are due at the account's moment, a few per write transaction
//! (each claimed there, so a retry or a second host makes none twice), and hands
//! what they recorded to mail after the commit; tells the account's webhooks of the
//! documents that fell due (OPEN to OVERDUE) since its last pass, removes deliveries past
//! their keeping, and sends the deliveries that are due (retries follow the account's
//! clock). The host's `upkeep` calls it for every account (sending for all of them in one
//! go, `make_due` then `webhooks::deliver`); `PUT /api/test-clock` for one, until nothing
//! is due.
//!
//! The test clock (`/api/test-clock`, only where the service runs with
//! `FAKTURA_TEST_CLOCK=1`) moves an account's clock forward.

use super::error::ApiError;
use super::{Call, Response, dispatch, in_write, webhooks};
use crate::caps::{Caps, Scoped};
use crate::codec::{Element, ScalarType};
use crate::domain::{
    Ctx, clock, deliveries, documents, dunning, runs, schedule, webhooks as hooks,
};
use crate::store::{self, keys};

/// Recurring invoices one pass reads as due, at most.
const DUE_BATCH: usize = 1000;

/// The variable that enables the test clock.
const TEST_CLOCK_VAR: &str = "FAKTURA_TEST_CLOCK";

/// Makes what is due for `account` at its moment now, once, and sends its deliveries that
/// are due. The number of runs made.
pub fn run_due(caps: &Caps, account: u64) -> Result<u32, ApiError> {
    let made = make_due(caps, account)?;
    webhooks::deliver(caps, &[account])?;
    Ok(made)
}

/// Makes what is due for `account` at its moment now, once, but sends nothing: every due
/// run of its recurring invoices, at most `runs::CATCH_UP_MAX` of each; the events of
/// documents that fell due; the removal of old deliveries. The number of runs made.
pub fn make_due(caps: &Caps, account: u64) -> Result<u32, ApiError> {
    let scoped = Scoped::account(caps.store, account);
    let caps = &Caps {
        store: &scoped,
        ..*caps
    };
    let system_now = caps.clock.now_unix();
    let clock = current_clock(caps, account, system_now)?;
    // The service makes the runs: user 0 writes their comments.
    let ctx = clock.ctx(account, 0, true, system_now);
    let made = make_runs(caps, &ctx)?;
    notice_overdue_and_expire(caps, &ctx)?;
    Ok(made + dunning_pass(caps, &ctx)?)
}

/// The account's clock, its moment saved as now when it is stale.
fn current_clock(
    caps: &Caps,
    account: u64,
    system_now: i64,
) -> Result<clock::AccountClock, ApiError> {
    let clock = clock::load(caps.store.begin_read()?.as_ref(), account)?;
    if !clock.stale(clock.now(system_now)) {
        return Ok(clock);
    }
    // Read again in the write that keeps it: a test clock moved since the read above
    // (a new account's clock is stale at once) must not be put back.
    in_write(caps, |txn| {
        let clock = clock::load(txn.as_read(), account)?;
        let now = clock.now(system_now);
        if clock.stale(now) {
            clock::save(txn, account, &clock.zone, clock.offset, now)?;
        }
        Ok(clock)
    })
}

/// The due runs of the account's recurring invoices, `RUN_BATCH` to a transaction, each
/// handed to mail after its commit. The number of runs made.
fn make_runs(caps: &Caps, ctx: &Ctx) -> Result<u32, ApiError> {
    let due = documents::storage::due(
        caps.store.begin_read()?.as_ref(),
        ctx.account_id,
        ctx.now,
        DUE_BATCH,
    )?;
    let mut made = 0;
    let mut cursor = Cursor::default();
    while cursor.at < due.len() {
        let mut list = Vec::new();
        let from = cursor;
        match in_write(caps, |txn| Ok(from.runs(ctx, txn, caps, &due, RUN_BATCH)?)) {
            Ok((runs, next)) => {
                list = runs;
                cursor = next;
            }
            // The batch's runs again, one at a time: a run that fails alone ends the pass
            // with its error, as a run alone always did, and those before it are kept.
            Err(_) => {
                for _ in 0..RUN_BATCH {
                    if cursor.at == due.len() {
                        break;
                    }
                    let from = cursor;
                    let (runs, next) =
                        in_write(caps, |txn| Ok(from.runs(ctx, txn, caps, &due, 1)?))?;
                    list.extend(runs);
                    cursor = next;
                }
            }
        }
        made += list.len() as u32;
        for run in &list {
            if let Some((dispatch_id, d)) = &run.dispatch {
                dispatch::hand_over(caps, *dispatch_id, d, true)?;
            }
        }
    }
    Ok(made)
}

/// Tells the account's webhooks of the documents that fell due since the last pass, and
/// removes the deliveries past their keeping.
fn notice_overdue_and_expire(caps: &Caps, ctx: &Ctx) -> Result<(), ApiError> {
    // Reads first: a pass with nothing to write commits nothing.
    let (falling_due, expired) = {
        let txn = caps.store.begin_read()?;
        (
            hooks::overdue_unnoticed(txn.as_ref(), ctx)?,
            deliveries::any_expired(txn.as_ref(), ctx)?,
        )
    };
    if falling_due {
        in_write(caps, |txn| Ok(hooks::notice_overdue(ctx, txn)?))?;
    }
    if expired {
        in_write(caps, |txn| Ok(deliveries::expire(ctx, txn)?))?;
    }
    Ok(())
}

/// Runs one write transaction makes, at most: they share its commit (the store's sync to
/// disk), which made a run alone wait on the disk about a fifth of its time.
const RUN_BATCH: usize = 8;

/// Where a pass is among its due recurrings: the next one, and the runs of it made so far.
#[derive(Debug, Default, Clone, Copy)]
struct Cursor {
    at: usize,
    runs_of_at: usize,
}

impl Cursor {
    /// Up to `limit` runs of `due` from this place on, in `txn` (at most
    /// `runs::CATCH_UP_MAX` of each recurring per pass): what they made, and the place
    /// after them. The place moves only when the transaction commits, so that a retry
    /// starts where the failed try did.
    fn runs(
        self,
        ctx: &crate::domain::Ctx,
        txn: &mut dyn crate::caps::Write,
        caps: &Caps,
        due: &[u64],
        limit: usize,
    ) -> Result<(Vec<runs::Made>, Cursor), crate::domain::Error> {
        let mut next = self;
        let mut made = Vec::new();
        while next.at < due.len() && made.len() < limit {
            if next.runs_of_at < runs::CATCH_UP_MAX
                && let Some(run) = runs::run(ctx, txn, caps.pdf, caps.random, due[next.at])?
            {
                made.push(run);
                next.runs_of_at += 1;
            } else {
                next = Cursor {
                    at: next.at + 1,
                    runs_of_at: 0,
                };
            }
        }
        Ok((made, next))
    }
}

/// Invoices one write transaction of a dunning run handles, at most.
const DUNNING_BATCH: usize = 50;

/// Today's automatic dunning run of the account, once a day while `dunning_run` is on:
/// the next reminder of every OVERDUE invoice that is due one, a batch of invoices per
/// transaction. An invoice whose reminder cannot be made (a problem of its data) is
/// noted on the invoice and left for the next day; the others of its batch are made one
/// by one. The number of reminders made.
fn dunning_pass(caps: &Caps, ctx: &Ctx) -> Result<u32, ApiError> {
    let account = ctx.account_id;
    let today = ctx.today();
    let ids = {
        let txn = caps.store.begin_read()?;
        if !dunning::pass_due(txn.as_ref(), account, today)? {
            return Ok(0);
        }
        dunning::candidates(txn.as_ref(), account, today)?
    };
    let mut made = Vec::new();
    for batch in ids.chunks(DUNNING_BATCH) {
        let runs = |txn: &mut dyn crate::caps::Write, ids: &[u64]| {
            let mut made = Vec::new();
            for id in ids {
                made.extend(dunning::run(ctx, txn, caps.pdf, caps.random, *id)?);
            }
            Ok::<_, crate::domain::Error>(made)
        };
        match in_write(caps, |txn| Ok(runs(txn, batch)?)) {
            Ok(list) => made.extend(list),
            Err(ApiError::BadRequest(_)) => {
                for id in batch {
                    match in_write(caps, |txn| Ok(runs(txn, std::slice::from_ref(id))?)) {
                        Ok(list) => made.extend(list),
                        Err(ApiError::BadRequest(problems)) => in_write(caps, |txn| {
                            Ok(dunning::note_failure(ctx, txn, *id, &problems)?)
                        })?,
                        Err(e) => return Err(e),
                    }
                }
            }
            Err(e) => return Err(e),
        }
    }
    in_write(caps, |txn| Ok(dunning::pass_done(txn, account, today)?))?;
    for m in &made {
        if let Some((dispatch_id, d)) = &m.dispatch {
            dispatch::hand_over(caps, *dispatch_id, d, true)?;
        }
    }
    Ok(made.len() as u32)
}

/// Every account's id.
pub fn accounts(caps: &Caps) -> Result<Vec<u64>, ApiError> {
    let txn = caps.store.begin_read()?;
    store::scan_all(txn.as_ref(), &keys::accounts())?
        .iter()
        .map(|(k, _)| Ok(store::id_of_key(k)?))
        .collect()
}

/// Whether the service runs with test clocks.
fn test_clock_on(caps: &Caps) -> bool {
    caps.env
        .var(TEST_CLOCK_VAR)
        .is_some_and(|v| v.trim() == "1" || v.trim().eq_ignore_ascii_case("true"))
}

/// `<test-clock>`: the account's moment in its zone, and the zone.
fn answer(ctx: &Ctx, zone: &str) -> Response {
    let moment = schedule::zone(zone)
        .and_then(|z| {
            jiff::Timestamp::from_second(ctx.now)
                .ok()
                .map(|t| t.to_zoned(z).strftime("%Y-%m-%dT%H:%M:%S%:z").to_string())
        })
        .unwrap_or_default();
    Response::doc(
        200,
        Element::node(
            "test-clock",
            vec![
                Element::typed("now", ScalarType::DateTime, moment),
                Element::text("time_zone", zone),
            ],
        ),
    )
}

/// `GET /api/test-clock`: the account's clock (404 without test clocks).
pub(super) fn get(c: &Call<'_>) -> Result<Response, ApiError> {
    if !test_clock_on(c.caps) {
        return Err(ApiError::NotFound("no resource at /api/test-clock".into()));
    }
    let clock = clock::load(c.caps.store.begin_read()?.as_ref(), c.ctx.account_id)?;
    Ok(answer(c.ctx, &clock.zone))
}

/// `PUT /api/test-clock`: moves the account's clock forward to `now` (and its zone to
/// `time_zone`), then makes everything due up to then before it answers.
pub(super) fn put(c: &Call<'_>) -> Result<Response, ApiError> {
    if !test_clock_on(c.caps) {
        return Err(ApiError::NotFound("no resource at /api/test-clock".into()));
    }
    if !c.ctx.is_admin {
        return Err(ApiError::Forbidden(
            "only an admin user may move the account's clock".into(),
        ));
    }
    let root = c.req.document()?;
    if root.name != "test-clock" {
        return Err(ApiError::bad(format!(
            "expected a <test-clock> root element, found <{}>",
            root.name
        )));
    }
    let account = c.ctx.account_id;
    let clock = clock::load(c.caps.store.begin_read()?.as_ref(), account)?;
    let (now, zone) = decode_test_clock(&root, c.ctx, &clock)?;
    let system_now = c.caps.clock.now_unix();
    let offset = now.map_or(clock.offset, |n| n - system_now);
    let moment = system_now + offset;
    in_write(c.caps, |txn| {
        clock::save(txn, account, &zone, offset, moment)?;
        Ok(crate::domain::settings::set_time_zone(txn, account, &zone)?)
    })?;
    // Everything due up to the new moment, pass after pass (a series far behind catches
    // up a bounded number of runs per pass).
    while run_due(c.caps, account)? > 0 {}
    let clock = clock::load(c.caps.store.begin_read()?.as_ref(), account)?;
    let ctx = clock.ctx(
        account,
        c.ctx.user_id,
        c.ctx.is_admin,
        c.caps.clock.now_unix(),
    );
    Ok(answer(&ctx, &clock.zone))
}

/// The moment a `<test-clock>` moves the account's clock to (Unix seconds), if it gives
/// one, and the zone, else the clock's; every wrong field reported at once.
fn decode_test_clock(
    root: &Element,
    ctx: &Ctx,
    clock: &clock::AccountClock,
) -> Result<(Option<i64>, String), ApiError> {
    let text = |name: &str| root.child(name).and_then(Element::as_text).map(str::trim);
    let mut errors = Vec::new();
    let now = match text("now") {
        Some(t) => match t.parse::<jiff::Timestamp>() {
            Ok(ts) => Some(ts.as_second()),
            Err(_) => {
                errors.push(format!(
                    "now must be a date-time with its offset like 2027-03-01T10:00:00+01:00, got \"{t}\""
                ));
                None
            }
        },
        None => None,
    };
    let zone = match text("time_zone") {
        Some(z) if schedule::zone(z).is_none() => {
            errors.push(format!(
                "time_zone must be an IANA time zone such as Europe/Berlin, got \"{z}\""
            ));
            clock.zone.clone()
        }
        Some(z) => z.to_owned(),
        None => clock.zone.clone(),
    };
    if let Some(now) = now
        && now < ctx.now
    {
        errors.push(format!(
            "now must not go back: the account's clock is at {}",
            crate::domain::date::format_datetime(ctx.now)
        ));
    }
    ApiError::checked((now, zone), errors)
}

static FIELDS: &[crate::domain::schema::Field] = &[
    crate::domain::schema::Field::new("now", crate::domain::schema::Kind::DateTime).doc(
        "The account's moment, ISO 8601 with the offset of its time zone. PUT: a moment not \
         before the clock's; the clock runs on from it.",
    ),
    crate::domain::schema::Field::new("time_zone", crate::domain::schema::Kind::Text)
        .doc("The account's time zone (settings time_zone), an IANA name."),
];

/// The test clock record, for the API description.
pub(super) fn schema() -> super::described::Schema {
    super::described::Schema {
        singular: "test-clock",
        plural: "test-clocks",
        fields: FIELDS,
        filters: Vec::new(),
        owner: None,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeSet;
    use std::rc::Rc;

    use super::super::Method;
    use super::super::golden::World;
    use crate::caps::{Read, Store, StoreError, Write, forward_read, mem::MemStore};

    /// Invoices each committed write made, and whether to refuse the first write that
    /// makes more than one.
    #[derive(Default)]
    struct Log {
        made: Vec<usize>,
        refuse_a_batch: bool,
    }

    /// The world's store, its writes logged.
    struct Logged {
        inner: MemStore,
        log: Rc<RefCell<Log>>,
    }

    struct LoggedWrite {
        txn: Box<dyn Write>,
        log: Rc<RefCell<Log>>,
        invoices: BTreeSet<Vec<u8>>,
    }

    forward_read!(LoggedWrite, |w| w.txn);

    impl Write for LoggedWrite {
        fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
            let prefix = crate::store::keys::collection(1, "invoices");
            if key.len() == prefix.len() + 8 && key.starts_with(&prefix) {
                self.invoices.insert(key.to_vec());
            }
            self.txn.put(key, value)
        }
        fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
            self.txn.delete(key)
        }
        fn commit(self: Box<Self>) -> Result<(), StoreError> {
            let made = self.invoices.len();
            let mut log = self.log.borrow_mut();
            if made > 1 && std::mem::take(&mut log.refuse_a_batch) {
                return Err(StoreError::Backend("refused for the test".into()));
            }
            self.txn.commit()?;
            if made > 0 {
                log.made.push(made);
            }
            Ok(())
        }
        fn as_read(&self) -> &dyn Read {
            self
        }
    }

    impl Store for Logged {
        fn begin_read(&self) -> Result<Box<dyn Read>, StoreError> {
            self.inner.begin_read()
        }
        fn begin_write(&self) -> Result<Box<dyn Write>, StoreError> {
            Ok(Box::new(LoggedWrite {
                txn: self.inner.begin_write()?,
                log: self.log.clone(),
                invoices: BTreeSet::new(),
            }))
        }
    }

    /// A world with `n` monthly recurrings due, and its store logged.
    fn due(n: usize) -> (World, Logged) {
        let w = World::new();
        w.ok(
            Method::Post,
            "/api/clients",
            "<client><name>Kunde</name></client>",
        );
        for i in 0..n {
            w.ok(
                Method::Post,
                "/api/recurrings",
                &format!(
                    "<recurring><client_id>1</client_id><name>Miete {i}</name>\
                     <recurring-items><recurring-item><title>Miete</title>\
                     <quantity>1</quantity><unit_price>500</unit_price></recurring-item>\
                     </recurring-items></recurring>"
                ),
            );
        }
        // The first runs are due tomorrow at 2 h.
        w.clock().0.set(w.clock().0.get() + 2 * 86_400);
        let store = Logged {
            inner: w.store.clone(),
            log: Rc::default(),
        };
        (w, store)
    }

    /// Invoices in the world.
    fn invoices(w: &World) -> usize {
        let txn = w.store.begin_read().unwrap();
        crate::store::scan_all(txn.as_ref(), &crate::store::keys::collection(1, "invoices"))
            .unwrap()
            .len()
    }

    #[test]
    fn due_runs_share_write_transactions_of_a_few_runs() {
        let (w, store) = due(20);
        assert_eq!(super::make_due(&w.caps_on(&store), 1).unwrap(), 20);
        assert_eq!(store.log.borrow().made, [8, 8, 4]);
        assert_eq!(invoices(&w), 20);
        // A second pass finds nothing due.
        assert_eq!(super::make_due(&w.caps_on(&store), 1).unwrap(), 0);
        assert_eq!(invoices(&w), 20);
    }

    #[test]
    fn a_batch_that_fails_is_made_again_one_run_at_a_time() {
        let (w, store) = due(10);
        store.log.borrow_mut().refuse_a_batch = true;
        assert_eq!(super::make_due(&w.caps_on(&store), 1).unwrap(), 10);
        assert!(!store.log.borrow().refuse_a_batch, "a batch was refused");
        // The refused batch's eight runs one at a time, then the two left as a batch.
        assert_eq!(store.log.borrow().made, [1, 1, 1, 1, 1, 1, 1, 1, 2]);
        assert_eq!(invoices(&w), 10);
    }

    /// A store on which the account's test clock moves just before the first write
    /// begins, as a `PUT /api/test-clock` may between a pass's read and its write.
    struct MovedBeforeTheFirstWrite {
        inner: MemStore,
        offset: i64,
        moved: std::cell::Cell<bool>,
    }

    impl Store for MovedBeforeTheFirstWrite {
        fn begin_read(&self) -> Result<Box<dyn Read>, StoreError> {
            self.inner.begin_read()
        }
        fn begin_write(&self) -> Result<Box<dyn Write>, StoreError> {
            if !self.moved.replace(true) {
                let mut txn = self.inner.begin_write()?;
                let zone = crate::domain::clock::ZONE_DEFAULT;
                crate::domain::clock::save(txn.as_mut(), 1, zone, self.offset, 0).unwrap();
                txn.commit()?;
            }
            self.inner.begin_write()
        }
    }

    #[test]
    fn a_pass_keeps_a_test_clock_moved_while_it_ran() {
        let w = World::new();
        let store = MovedBeforeTheFirstWrite {
            inner: w.store.clone(),
            offset: 86_400 * 365,
            moved: std::cell::Cell::new(false),
        };
        // A new account's clock is kept by its first pass, which reads it first.
        super::make_due(&w.caps_on(&store), 1).unwrap();
        assert!(store.moved.get(), "the pass wrote");
        let txn = w.store.begin_read().unwrap();
        let clock = crate::domain::clock::load(txn.as_ref(), 1).unwrap();
        assert_eq!(clock.offset, 86_400 * 365, "the moved clock stays");
    }
}
