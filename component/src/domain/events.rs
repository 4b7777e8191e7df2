//! Events: what a change tells the account's webhooks (`invoice.create`, `client.delete`,
//! `invoice_payment.create`), recorded by the write transaction of the change itself as
//! one delivery per webhook that takes the event. An event is therefore kept exactly when
//! its change is: a write that rolls back or runs again after a conflict records nothing
//! twice, and a committed one never loses its event, whatever happens to the host after
//! the commit (the deliveries wait in the store until they are sent, `deliveries`).
//!
//! The save and delete paths of documents, of their parts and of record resources call
//! `emit`; this module knows none of them, only a resource's name, a verb, an id and the
//! record's bytes as they were (`Snapshot`), which the wire side renders in the webhook's
//! format when it delivers. It must not read what an event does not need: for an account
//! without webhooks an emit costs one read of a small key (`Write::get_cached`, once per
//! transaction where the store keeps it).

use serde::{Deserialize, Serialize};

use super::{Ctx, Error};
use crate::caps::{Read, StoreError, Write};
use crate::store::{self, keys};

/// The format byte of stored subscriptions.
const SUBSCRIPTIONS_FORMAT: u8 = 1;
/// The format byte of a stored delivery.
const DELIVERY_FORMAT: u8 = 1;
/// The storage collection of deliveries (and their id counter).
pub const DELIVERIES: &str = "webhook-deliveries";

/// What happened to a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Create,
    Update,
    Delete,
    /// Its status changed: by a request, or by time (OPEN to OVERDUE).
    Status,
    /// It was handed over as an e-mail or a letter.
    Send,
}

impl Verb {
    pub const ALL: [Verb; 5] = [
        Verb::Create,
        Verb::Update,
        Verb::Delete,
        Verb::Status,
        Verb::Send,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Delete => "delete",
            Verb::Status => "status",
            Verb::Send => "send",
        }
    }
}

/// The event of a webhook's test (`PUT /api/webhooks/{id}/test`).
pub const TEST_EVENT: &str = "webhook.test";

/// A webhook that takes events, and which: event names, or `*` for all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subscriber {
    pub webhook: u64,
    pub events: Vec<String>,
}

impl Subscriber {
    pub fn takes(&self, event: &str) -> bool {
        self.events.iter().any(|e| e == "*" || e == event)
    }
}

/// The account's active webhooks, as every write reads them (`hooks/on`); absent when
/// the account has none. Written whenever a webhook changes (`webhooks`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Subscriptions {
    pub hooks: Vec<Subscriber>,
}

impl Subscriptions {
    /// The webhooks that take `event`, in id order.
    pub fn takers(&self, event: &str) -> Vec<u64> {
        self.hooks
            .iter()
            .filter(|s| s.takes(event))
            .map(|s| s.webhook)
            .collect()
    }

    /// Whether any webhook takes an event of `verb` of any resource.
    pub fn takes_verb(&self, verb: Verb) -> bool {
        let suffix = format!(".{}", verb.as_str());
        self.hooks
            .iter()
            .any(|s| s.events.iter().any(|e| e == "*" || e.ends_with(&suffix)))
    }
}

fn decode_subscriptions(bytes: &[u8]) -> Result<Subscriptions, Error> {
    Ok(store::decode_with_format(
        SUBSCRIPTIONS_FORMAT,
        bytes,
        "webhook subscriptions",
    )?)
}

/// The account's subscriptions as a writer reads them on its way (kept for the rest of
/// its transaction where the store can).
fn subscriptions_cached(txn: &mut dyn Write, account: u64) -> Result<Option<Subscriptions>, Error> {
    txn.get_cached(&keys::webhooks_on(account))?
        .map(|b| decode_subscriptions(&b))
        .transpose()
}

/// The account's subscriptions; `None` when it has no active webhook.
pub fn subscriptions(txn: &dyn Read, account: u64) -> Result<Option<Subscriptions>, Error> {
    txn.get(&keys::webhooks_on(account))?
        .map(|b| decode_subscriptions(&b))
        .transpose()
}

/// Keeps the account's subscriptions; none removes the key, so that writes of an account
/// without active webhooks find nothing.
pub fn set_subscriptions(
    txn: &mut dyn Write,
    account: u64,
    subs: &Subscriptions,
) -> Result<(), Error> {
    let key = keys::webhooks_on(account);
    if subs.hooks.is_empty() {
        txn.delete(&key)?;
    } else {
        txn.put(&key, &store::encode_with_format(SUBSCRIPTIONS_FORMAT, subs))?;
    }
    Ok(())
}

/// What a delivery shows, kept as it was at the change: the record's stored bytes (a
/// document's, a part's; a record resource's as the API shows it), the values it shows of
/// another record (an item's of its document, as a document's stored form holding just
/// those), and the account's day then (a status as shown that day, OVERDUE).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    #[serde(with = "serde_bytes")]
    pub record: Vec<u8>,
    pub parent: Option<serde_bytes::ByteBuf>,
    /// Julian day.
    pub today: i32,
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    Pending,
    Succeeded,
    Failed,
}

impl Status {
    pub const ALL: [Status; 3] = [Status::Pending, Status::Succeeded, Status::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "PENDING",
            Status::Succeeded => "SUCCEEDED",
            Status::Failed => "FAILED",
        }
    }
}

/// One try to deliver: when (the account's clock), the receiver's HTTP status if it
/// answered, how long it took, and why it failed or the start of the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub at: i64,
    pub status: Option<u16>,
    pub millis: u32,
    pub error: String,
    pub answer: String,
}

/// An event on its way to one webhook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    pub webhook: u64,
    /// The event's name, `invoice.create`.
    pub event: String,
    /// The id of the record the event is of.
    pub resource_id: u64,
    pub snapshot: Snapshot,
    /// When the event happened, on the account's clock.
    pub created: i64,
    pub status: Status,
    /// When the next attempt is due (account's clock); meaningful while pending.
    pub next_attempt: i64,
    /// The moment its entry in the due index names: the next attempt, or the end of the
    /// lease of whoever is sending it now.
    pub due_at: i64,
    /// Attempts since it was recorded or last redelivered: the place in the retry plan.
    pub tries: u32,
    /// Every attempt made.
    pub attempts_made: u32,
    /// The latest attempts, the last one last (at most `ATTEMPTS_LOGGED`).
    pub attempts: Vec<Attempt>,
}

/// Attempts a delivery's log keeps.
pub const ATTEMPTS_LOGGED: usize = 24;

fn corrupt(what: &str) -> Error {
    Error::Store(StoreError::Backend(format!(
        "corrupt webhook delivery: {what}"
    )))
}

/// The delivery `id` of the account, if there is one.
pub fn load(txn: &dyn Read, account: u64, id: u64) -> Result<Option<Delivery>, Error> {
    txn.get(&keys::record(account, DELIVERIES, id))?
        .map(|b| decode(&b))
        .transpose()
}

pub fn decode(bytes: &[u8]) -> Result<Delivery, Error> {
    Ok(store::decode_with_format(
        DELIVERY_FORMAT,
        bytes,
        "webhook delivery",
    )?)
}

/// Writes delivery `id` as `new`, moving its entry in the due index from where `old` (as
/// stored, `None` for a new one) had it: a pending delivery has one at its `due_at`.
pub fn store(
    txn: &mut dyn Write,
    account: u64,
    id: u64,
    old: Option<&Delivery>,
    new: &Delivery,
) -> Result<(), Error> {
    let entry = |d: &Delivery| {
        (d.status == Status::Pending).then(|| keys::delivery_due(account, d.due_at, id))
    };
    let (before, after) = (old.and_then(entry), entry(new));
    if before != after {
        if let Some(k) = before {
            txn.delete(&k)?;
        }
        if let Some(k) = &after {
            txn.put(k, &[])?;
        }
    }
    txn.put(
        &keys::record(account, DELIVERIES, id),
        &store::encode_with_format(DELIVERY_FORMAT, new),
    )?;
    Ok(())
}

/// Removes delivery `id` with its entry in the due index.
pub fn remove(txn: &mut dyn Write, account: u64, id: u64, d: &Delivery) -> Result<(), Error> {
    if d.status == Status::Pending {
        txn.delete(&keys::delivery_due(account, d.due_at, id))?;
    }
    txn.delete(&keys::record(account, DELIVERIES, id))?;
    Ok(())
}

/// The pending deliveries of the account that may be sent at `now`, soonest first, at
/// most `limit`.
pub fn due(txn: &dyn Read, account: u64, now: i64, limit: u32) -> Result<Vec<u64>, Error> {
    let prefix = keys::deliveries_due(account);
    let mut ids = Vec::new();
    for (k, _) in txn.scan(&prefix, None, limit, false)? {
        let at = k
            .get(prefix.len()..prefix.len() + 8)
            .and_then(keys::i64_of_sortable)
            .ok_or_else(|| corrupt("a short due entry"))?;
        if at > now {
            break;
        }
        ids.push(store::id_of_key(&k)?);
    }
    Ok(ids)
}

/// Records the delivery of `event` (of record `resource_id`) to `webhook`, due now.
pub fn record(
    ctx: &Ctx,
    txn: &mut dyn Write,
    webhook: u64,
    event: &str,
    resource_id: u64,
    snapshot: Snapshot,
) -> Result<u64, Error> {
    let id = store::next_id_of_many(txn, DELIVERIES)?;
    let d = Delivery {
        webhook,
        event: event.to_owned(),
        resource_id,
        snapshot,
        created: ctx.now,
        status: Status::Pending,
        next_attempt: ctx.now,
        due_at: ctx.now,
        tries: 0,
        attempts_made: 0,
        attempts: Vec::new(),
    };
    store(txn, ctx.account_id, id, None, &d)?;
    Ok(id)
}

/// Records event `{resource}.{verb}` of record `id` for every webhook of the account that
/// takes it, in the caller's transaction. `snapshot` says what the record shows; it is
/// asked for only when some webhook takes the event.
pub fn emit(
    ctx: &Ctx,
    txn: &mut dyn Write,
    resource: &str,
    verb: Verb,
    id: u64,
    snapshot: impl FnOnce(&dyn Read) -> Result<Snapshot, Error>,
) -> Result<(), Error> {
    let Some(subs) = subscriptions_cached(txn, ctx.account_id)? else {
        return Ok(());
    };
    let event = format!("{resource}.{}", verb.as_str());
    let takers = subs.takers(&event);
    if takers.is_empty() {
        return Ok(());
    }
    let snapshot = snapshot(txn.as_read())?;
    for webhook in takers {
        record(ctx, txn, webhook, &event, id, snapshot.clone())?;
    }
    Ok(())
}

/// A snapshot of bytes as they are, on the caller's day.
pub fn snapshot_of(ctx: &Ctx, record: Vec<u8>, parent: Option<Vec<u8>>) -> Snapshot {
    Snapshot {
        record,
        parent: parent.map(serde_bytes::ByteBuf::from),
        today: ctx.today().julian(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::Store;
    use crate::caps::mem::MemStore;

    fn ctx() -> Ctx {
        Ctx {
            account_id: 3,
            user_id: 1,
            is_admin: true,
            now: 1_800_000_000,
            utc_offset: 0,
        }
    }

    fn count(txn: &dyn Read) -> usize {
        store::scan_all(txn, &keys::collection(3, DELIVERIES))
            .unwrap()
            .len()
    }

    #[test]
    fn an_event_nobody_takes_records_nothing_and_reads_no_snapshot() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let never = |_: &dyn Read| -> Result<Snapshot, Error> { panic!("no snapshot needed") };
        emit(&ctx(), w.as_mut(), "invoice", Verb::Create, 1, never).unwrap();
        set_subscriptions(
            w.as_mut(),
            3,
            &Subscriptions {
                hooks: vec![Subscriber {
                    webhook: 9,
                    events: vec!["client.create".into()],
                }],
            },
        )
        .unwrap();
        emit(&ctx(), w.as_mut(), "invoice", Verb::Create, 1, never).unwrap();
        assert_eq!(count(w.as_read()), 0);
    }

    #[test]
    fn an_event_is_recorded_once_per_webhook_that_takes_it_and_is_due_now() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let subs = Subscriptions {
            hooks: vec![
                Subscriber {
                    webhook: 1,
                    events: vec!["*".into()],
                },
                Subscriber {
                    webhook: 2,
                    events: vec!["client.update".into(), "invoice.status".into()],
                },
                Subscriber {
                    webhook: 4,
                    events: vec!["client.delete".into()],
                },
            ],
        };
        set_subscriptions(w.as_mut(), 3, &subs).unwrap();
        let snap = |_: &dyn Read| Ok(snapshot_of(&ctx(), b"bytes".to_vec(), None));
        emit(&ctx(), w.as_mut(), "invoice", Verb::Status, 7, snap).unwrap();
        assert_eq!(count(w.as_read()), 2);
        let due_now = due(w.as_read(), 3, ctx().now, 10).unwrap();
        assert_eq!(due_now.len(), 2);
        let d = load(w.as_read(), 3, due_now[1]).unwrap().unwrap();
        assert_eq!(
            (d.webhook, d.event.as_str(), d.resource_id, d.status),
            (2, "invoice.status", 7, Status::Pending)
        );
        assert!(due(w.as_read(), 3, ctx().now - 1, 10).unwrap().is_empty());
        // Without subscriptions the key is gone.
        set_subscriptions(w.as_mut(), 3, &Subscriptions::default()).unwrap();
        assert!(subscriptions(w.as_read(), 3).unwrap().is_none());
    }
}
