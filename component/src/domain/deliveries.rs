//! The life of a delivery, from its event's commit to success or failure: taken to be sent
//! (`take`, a lease of `LEASE_SECONDS` in a write transaction, so that of several hosts
//! one sends a given attempt, and another takes it over once the lease is out if the first
//! died), its attempt settled (`settle`: success on 2xx; else the next attempt after the
//! retry plan, `RETRY_SECONDS`, or failure after the last; 410 Gone fails it and disables
//! the webhook, and five days of failures do too), sent again on request (`redeliver`),
//! and removed after `RETENTION_SECONDS`. Every moment here is on the account's clock, so a
//! test clock moves retries; sending is the wire side's (`http::webhooks`).

use super::events::{self, Attempt, Delivery, Status};
use super::records;
use super::schema::{Record, Scalar};
use super::webhooks;
use super::{Ctx, Error};
use crate::caps::{Read, Write};
use crate::limits;
use crate::store::{self, keys};

/// How long whoever took a delivery holds it.
pub const LEASE_SECONDS: i64 = 60;
/// The waits after each failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; the
/// attempt after the last wait is the eighth and last.
pub const RETRY_SECONDS: [i64; 7] = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];
/// How long a webhook may fail every delivery before it is disabled.
pub const FAILING_MAX_SECONDS: i64 = 5 * 86_400;
/// How long deliveries are kept.
pub const RETENTION_SECONDS: i64 = 30 * 86_400;

/// A delivery taken to be sent, with its webhook as it is now.
#[derive(Debug, Clone)]
pub struct Taken {
    pub id: u64,
    pub delivery: Delivery,
    pub webhook: crate::domain::schema::Record,
}

/// Takes the deliveries `ids` that are due at `ctx.now` to send them: each is held for
/// `LEASE_SECONDS`, at most `per_webhook_max` of one webhook. One whose webhook is gone or
/// disabled fails here, unsent.
pub fn take(
    ctx: &Ctx,
    txn: &mut dyn Write,
    ids: &[u64],
    per_webhook_max: usize,
) -> Result<Vec<Taken>, Error> {
    let account = ctx.account_id;
    let mut taken: Vec<Taken> = Vec::new();
    for &id in ids {
        let Some(old) = events::load(txn.as_read(), account, id)? else {
            continue;
        };
        if old.status != Status::Pending || old.due_at > ctx.now {
            continue;
        }
        if taken
            .iter()
            .filter(|t| t.delivery.webhook == old.webhook)
            .count()
            >= per_webhook_max
        {
            continue;
        }
        let webhook = match webhooks::load(txn.as_read(), account, old.webhook) {
            Ok(w) if w.bool("active") => w,
            Ok(_) | Err(Error::NotFound(_)) => {
                let mut d = old.clone();
                d.status = Status::Failed;
                events::store(txn, account, id, Some(&old), &d)?;
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut d = old.clone();
        d.due_at = ctx.now + LEASE_SECONDS;
        events::store(txn, account, id, Some(&old), &d)?;
        taken.push(Taken {
            id,
            delivery: d,
            webhook,
        });
    }
    Ok(taken)
}

/// What an attempt came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The receiver answered `status`; `answer` is the start of its body.
    Answered { status: u16, answer: String },
    /// No answer: why.
    Failed(String),
}

/// Records an attempt at `at` (the account's clock) that took `millis`, and moves the
/// delivery on: SUCCEEDED on a 2xx answer; FAILED after 410 Gone (which disables the
/// webhook) or after the last attempt of the plan; else due again after the plan's wait.
/// A delivery another sender settled meanwhile (its lease ran out) only logs the attempt.
pub fn settle(
    ctx: &Ctx,
    txn: &mut dyn Write,
    id: u64,
    at: i64,
    millis: u32,
    outcome: &Outcome,
) -> Result<(), Error> {
    let account = ctx.account_id;
    let Some(old) = events::load(txn.as_read(), account, id)? else {
        return Ok(());
    };
    let mut d = old.clone();
    let (status, error, answer) = match outcome {
        Outcome::Answered { status, answer } => {
            let error = match status {
                200..=299 => String::new(),
                300..=399 => {
                    format!("the receiver answered {status}, a redirect, which is not followed")
                }
                _ => format!("the receiver answered {status}"),
            };
            (Some(*status), error, answer.clone())
        }
        Outcome::Failed(why) => (None, why.clone(), String::new()),
    };
    d.attempts.push(Attempt {
        at,
        status,
        millis,
        error,
        answer,
    });
    if d.attempts.len() > events::ATTEMPTS_LOGGED {
        d.attempts.remove(0);
    }
    d.attempts_made += 1;
    if old.status == Status::Pending {
        d.tries += 1;
        let succeeded = status.is_some_and(|s| (200..300).contains(&s));
        if succeeded {
            d.status = Status::Succeeded;
        } else if status == Some(410) {
            d.status = Status::Failed;
            webhooks::disable(
                ctx,
                txn,
                d.webhook,
                &format!(
                    "the receiver answered 410 Gone at {}",
                    super::date::format_datetime(ctx.now)
                ),
            )?;
        } else {
            match RETRY_SECONDS.get(d.tries as usize - 1) {
                Some(wait) => {
                    d.next_attempt = ctx.now + wait;
                    d.due_at = d.next_attempt;
                }
                None => d.status = Status::Failed,
            }
        }
        if status != Some(410) {
            webhooks::note_attempt(ctx, txn, d.webhook, succeeded, FAILING_MAX_SECONDS)?;
        }
    }
    events::store(txn, account, id, Some(&old), &d)
}

/// Makes a delivery pending again, due now, with a fresh retry plan: sent again (with
/// the same `webhook-id`) whatever became of it.
pub fn redeliver(ctx: &Ctx, txn: &mut dyn Write, id: u64) -> Result<Delivery, Error> {
    let account = ctx.account_id;
    let old = events::load(txn.as_read(), account, id)?
        .ok_or_else(|| Error::NotFound(format!("webhook delivery {id} does not exist")))?;
    match webhooks::load(txn.as_read(), account, old.webhook) {
        Ok(w) if w.bool("active") => {}
        Ok(_) => {
            return Err(Error::invalid(format!(
                "webhook {} is disabled; set it active to send its deliveries",
                old.webhook
            )));
        }
        Err(Error::NotFound(_)) => {
            return Err(Error::invalid(format!(
                "webhook {} was deleted; its deliveries cannot be sent",
                old.webhook
            )));
        }
        Err(e) => return Err(e),
    }
    let mut d = old.clone();
    d.status = Status::Pending;
    d.tries = 0;
    d.next_attempt = ctx.now;
    d.due_at = ctx.now;
    events::store(txn, account, id, Some(&old), &d)?;
    Ok(d)
}

/// Removes the account's deliveries recorded `RETENTION_SECONDS` or longer ago, oldest first,
/// at most `limits::DELIVERY_EXPIRE_BATCH`; the number removed.
pub fn expire(ctx: &Ctx, txn: &mut dyn Write) -> Result<u32, Error> {
    let account = ctx.account_id;
    let prefix = keys::collection(account, events::DELIVERIES);
    let mut removed = 0;
    // Ids rise with time: the oldest come first, and the first one young enough ends it.
    for (k, v) in txn.scan(&prefix, None, limits::DELIVERY_EXPIRE_BATCH, false)? {
        let d = events::decode(&v)?;
        if d.created > ctx.now - RETENTION_SECONDS {
            break;
        }
        events::remove(txn, account, store::id_of_key(&k)?, &d)?;
        removed += 1;
    }
    Ok(removed)
}

/// Whether the account has a delivery old enough to be removed (a read before a write).
pub fn any_expired(txn: &dyn Read, ctx: &Ctx) -> Result<bool, Error> {
    let prefix = keys::collection(ctx.account_id, events::DELIVERIES);
    Ok(match txn.scan(&prefix, None, 1, false)?.first() {
        Some((_, v)) => events::decode(v)?.created <= ctx.now - RETENTION_SECONDS,
        None => false,
    })
}

/// Which deliveries a log lists.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub webhooks: Vec<u64>,
    pub events: Vec<String>,
    pub statuses: Vec<Status>,
}

/// The account's deliveries that pass `f`, in id order, each as the fields a list shows
/// and orders by (`id`, `webhook_id`, `event`, `resource_id`, `status`, `attempts`,
/// `next_attempt`, `created`): small, so that a long log is ordered without holding the
/// records its events carry.
pub fn matching(txn: &dyn Read, account: u64, f: &Filter) -> Result<Vec<Record>, Error> {
    let mut out = Vec::new();
    store::for_each(
        txn,
        &keys::collection(account, events::DELIVERIES),
        |(k, v)| {
            let d = events::decode(v)?;
            let passes = (f.webhooks.is_empty() || f.webhooks.contains(&d.webhook))
                && (f.events.is_empty() || f.events.contains(&d.event))
                && (f.statuses.is_empty() || f.statuses.contains(&d.status));
            if passes {
                out.push(fields_of(store::id_of_key(k)?, &d));
            }
            Ok::<_, Error>(())
        },
    )?;
    Ok(out)
}

/// The fields of a delivery that a list shows and orders by.
fn fields_of(id: u64, d: &Delivery) -> Record {
    let mut r = Record::default();
    let int = |v: u64| Some(Scalar::Int(v as i64));
    r.set("id", int(id));
    r.set("webhook_id", int(d.webhook));
    r.set("event", Some(Scalar::Text(d.event.clone())));
    r.set("resource_id", int(d.resource_id));
    r.set("status", Some(Scalar::Text(d.status.as_str().into())));
    r.set("attempts", int(u64::from(d.attempts_made)));
    if d.status == Status::Pending {
        r.set("next_attempt", Some(Scalar::DateTime(d.next_attempt)));
    }
    r.set("created", Some(Scalar::DateTime(d.created)));
    r
}

/// The delivery `id` of the account.
pub fn load(txn: &dyn Read, account: u64, id: u64) -> Result<Delivery, Error> {
    events::load(txn, account, id)?
        .ok_or_else(|| Error::NotFound(format!("webhook delivery {id} does not exist")))
}

/// Whether `webhook` is one of the account's (for a log filtered by it).
pub fn webhook_exists(txn: &dyn Read, account: u64, webhook: u64) -> Result<bool, Error> {
    records::exists(txn, &webhooks::WEBHOOKS, account, webhook)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::Store;
    use crate::caps::mem::MemStore;
    use crate::domain::schema::{Changes, Scalar};

    fn ctx(now: i64) -> Ctx {
        Ctx {
            account_id: 5,
            user_id: 1,
            is_admin: true,
            now,
            utc_offset: 0,
        }
    }

    /// A webhook taking every event, and one recorded delivery of it.
    fn setup(w: &mut dyn Write) -> (u64, u64) {
        let changes = Changes {
            values: vec![
                ("url", Some(Scalar::Text("https://example.com/in".into()))),
                ("events", Some(Scalar::Text("*".into()))),
            ],
            ..Changes::default()
        };
        let hook = webhooks::create(&ctx(1000), w, &changes, false, "whsec_x")
            .unwrap()
            .id();
        let id = events::record(
            &ctx(1000),
            w,
            hook,
            "client.create",
            7,
            events::Snapshot::default(),
        )
        .unwrap();
        (hook, id)
    }

    fn failed(status: u16) -> Outcome {
        Outcome::Answered {
            status,
            answer: String::new(),
        }
    }

    #[test]
    fn a_failing_delivery_follows_the_retry_plan_and_fails_after_eight_attempts() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let (_, id) = setup(w.as_mut());
        let mut now = 1000;
        for attempt in 1..=8 {
            let due = events::due(w.as_read(), 5, now, 10).unwrap();
            assert_eq!(due, [id], "attempt {attempt} is due at {now}");
            let taken = take(&ctx(now), w.as_mut(), &due, 16).unwrap();
            assert_eq!(taken.len(), 1);
            // Held: nobody else takes it.
            assert!(events::due(w.as_read(), 5, now, 10).unwrap().is_empty());
            assert!(take(&ctx(now), w.as_mut(), &[id], 16).unwrap().is_empty());
            settle(&ctx(now), w.as_mut(), id, now, 3, &failed(500)).unwrap();
            let d = load(w.as_read(), 5, id).unwrap();
            assert_eq!(d.attempts_made, attempt);
            if attempt < 8 {
                let wait = RETRY_SECONDS[attempt as usize - 1];
                assert_eq!((d.status, d.next_attempt), (Status::Pending, now + wait));
                assert!(
                    events::due(w.as_read(), 5, now + wait - 1, 10)
                        .unwrap()
                        .is_empty()
                );
                now += wait;
            } else {
                assert_eq!(d.status, Status::Failed);
            }
        }
        assert!(
            events::due(w.as_read(), 5, i64::MAX, 10)
                .unwrap()
                .is_empty()
        );
        // Sent again on request: pending, due now, with the same id.
        let d = redeliver(&ctx(now + 1), w.as_mut(), id).unwrap();
        assert_eq!((d.status, d.tries), (Status::Pending, 0));
        assert_eq!(events::due(w.as_read(), 5, now + 1, 10).unwrap(), [id]);
    }

    #[test]
    fn gone_disables_the_webhook_at_once_and_its_pending_deliveries_fail_unsent() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let (hook, id) = setup(w.as_mut());
        let other = events::record(
            &ctx(1000),
            w.as_mut(),
            hook,
            "client.update",
            7,
            Default::default(),
        )
        .unwrap();
        take(&ctx(1000), w.as_mut(), &[id], 16).unwrap();
        settle(&ctx(1000), w.as_mut(), id, 1000, 3, &failed(410)).unwrap();
        assert_eq!(load(w.as_read(), 5, id).unwrap().status, Status::Failed);
        let webhook = webhooks::load(w.as_read(), 5, hook).unwrap();
        assert!(!webhook.bool("active"));
        assert!(webhook.text("disabled_reason").contains("410"));
        assert!(events::subscriptions(w.as_read(), 5).unwrap().is_none());
        assert!(
            take(&ctx(1000), w.as_mut(), &[other], 16)
                .unwrap()
                .is_empty()
        );
        assert_eq!(load(w.as_read(), 5, other).unwrap().status, Status::Failed);
        assert!(redeliver(&ctx(1000), w.as_mut(), other).is_err());
    }

    #[test]
    fn five_days_of_failures_disable_the_webhook_and_a_success_ends_them() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let (hook, _) = setup(w.as_mut());
        let fail = |w: &mut dyn Write, now: i64| {
            let id =
                events::record(&ctx(now), w, hook, "client.update", 1, Default::default()).unwrap();
            take(&ctx(now), w, &[id], 16).unwrap();
            settle(&ctx(now), w, id, now, 1, &failed(503)).unwrap();
            id
        };
        fail(w.as_mut(), 1000);
        fail(w.as_mut(), 1000 + FAILING_MAX_SECONDS - 1);
        assert!(webhooks::load(w.as_read(), 5, hook).unwrap().bool("active"));
        let ok = events::record(
            &ctx(2000),
            w.as_mut(),
            hook,
            "client.update",
            1,
            Default::default(),
        )
        .unwrap();
        take(&ctx(2000), w.as_mut(), &[ok], 16).unwrap();
        settle(&ctx(2000), w.as_mut(), ok, 2000, 1, &failed(204)).unwrap();
        assert_eq!(load(w.as_read(), 5, ok).unwrap().status, Status::Succeeded);
        // The run of failures starts again after the success.
        fail(w.as_mut(), 3000);
        fail(w.as_mut(), 3000 + FAILING_MAX_SECONDS - 1);
        assert!(webhooks::load(w.as_read(), 5, hook).unwrap().bool("active"));
        fail(w.as_mut(), 3000 + FAILING_MAX_SECONDS);
        let webhook = webhooks::load(w.as_read(), 5, hook).unwrap();
        assert!(!webhook.bool("active"));
        assert!(
            webhook.text("disabled_reason").contains("5 days"),
            "{webhook:?}"
        );
    }

    #[test]
    fn deliveries_are_removed_after_thirty_days() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let (_, id) = setup(w.as_mut());
        assert!(!any_expired(w.as_read(), &ctx(1000 + RETENTION_SECONDS - 1)).unwrap());
        assert_eq!(
            expire(&ctx(1000 + RETENTION_SECONDS - 1), w.as_mut()).unwrap(),
            0
        );
        assert!(any_expired(w.as_read(), &ctx(1000 + RETENTION_SECONDS)).unwrap());
        assert_eq!(
            expire(&ctx(1000 + RETENTION_SECONDS), w.as_mut()).unwrap(),
            1
        );
        assert!(events::load(w.as_read(), 5, id).unwrap().is_none());
        assert!(
            events::due(w.as_read(), 5, i64::MAX, 10)
                .unwrap()
                .is_empty()
        );
    }
}
