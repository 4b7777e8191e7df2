//! `Idempotency-Key`: a write request sent with a key is carried out once per account; the
//! first answer is saved for 24 hours and sent again for the same key, so that a client
//! whose answer was lost (a timeout, or a 503 saying the commit's outcome is unknown) can
//! send the request again without doing it twice. The same key with another request
//! (method, path, query, content type or body) is 422.
//!
//! The answer must be saved exactly when the request's writes are: a request with a key
//! therefore runs in one write transaction (`Unit`), its reads and writes alike, and its
//! answer is written into that transaction before the one commit. After a conflict the
//! whole request runs again, as `in_write` does for one transaction. Work that leaves the
//! store (a recorded e-mail) waits for that commit.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::ApiError;
use super::{Body, Method, Request, Response, dispatch, pause_before_retry, response_format};
use crate::caps::{Caps, Read, Store, StoreError, Write, forward_read};
use crate::domain::{Ctx, dispatch as recorded};
use crate::store::{self, keys};

/// How long an answer is saved.
const SAVED_SECONDS: i64 = 24 * 60 * 60;
/// The longest key taken.
const KEY_CHARS_MAX: usize = 255;
/// The format byte in front of a saved answer.
const FORMAT: u8 = 1;
/// Expired answers removed per upkeep.
const EXPIRE_BATCH: u32 = 500;

/// The request's `Idempotency-Key`, when it is a write that carries one.
pub(super) fn key(req: &Request) -> Result<Option<&str>, ApiError> {
    if !matches!(req.method, Method::Post | Method::Put | Method::Delete) {
        return Ok(None);
    }
    let Some(key) = req.header("idempotency-key") else {
        return Ok(None);
    };
    if key.len() > KEY_CHARS_MAX || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ApiError::bad(format!(
            "Idempotency-Key must be 1 to {KEY_CHARS_MAX} visible ASCII characters"
        )));
    }
    Ok(Some(key))
}

/// A saved answer, with the fingerprint of the request that got it. Its stored form keeps
/// the name it was recorded under in `forms.layout.json` (postcard writes no names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "Kept")]
pub(crate) struct SavedAnswer {
    fingerprint: [u8; 32],
    /// Unix seconds of the first answer.
    at: i64,
    status: u16,
    headers: Vec<(String, String)>,
    #[serde(with = "serde_bytes")]
    body: Vec<u8>,
}

fn encode(saved: &SavedAnswer) -> Vec<u8> {
    store::encode_with_format(FORMAT, saved)
}

fn decode(bytes: &[u8]) -> Result<SavedAnswer, StoreError> {
    store::decode_with_format(FORMAT, bytes, "saved answer")
}

/// What makes two requests the same one.
fn fingerprint(req: &Request) -> [u8; 32] {
    let mut h = Sha256::new();
    for part in [
        super::method_name(&req.method).as_bytes(),
        req.path.as_bytes(),
        req.query.as_bytes(),
        req.header("content-type").unwrap_or_default().as_bytes(),
    ] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part);
    }
    match &req.body {
        Body::Bytes(b) => h.update(b),
        Body::TooLarge => h.update(b"\xff too large"),
    }
    h.finalize().into()
}

/// Runs `handle` once per key: the saved answer when there is one for this request, 422
/// when the key went with another, else `handle` in one transaction with its answer.
pub(super) fn run(
    caps: &Caps,
    ctx: &Ctx,
    req: &Request,
    key: &str,
    handle: impl Fn(&Caps) -> Result<Response, ApiError>,
) -> Result<Response, ApiError> {
    let key_hash: [u8; 32] = Sha256::digest(key.as_bytes()).into();
    let at = keys::idempotency(ctx.account_id, &key_hash);
    let fingerprint = fingerprint(req);
    let mut tries = 1;
    loop {
        let mut unit = Unit::begin(caps.store)?;
        if let Some(answer) = kept_answer(&unit, &at, &fingerprint, key, ctx.now)? {
            return answer;
        }
        let in_unit = Caps {
            store: &unit,
            ..*caps
        };
        let answer = match handle(&in_unit) {
            Err(ApiError::Busy) if tries < crate::limits::WRITE_TRIES => {
                drop(unit);
                pause_before_retry(caps, tries);
                tries += 1;
                continue;
            }
            // A failure of the server is not an answer to keep: nothing is saved, and the
            // request may be sent again with the key.
            Err(e) if e.status() >= 500 => return Err(e),
            Err(e) => Response::error(&e),
            Ok(r) if r.status >= 500 => return Ok(r),
            Ok(r) => r,
        };
        let refused = answer.status >= 400;
        if unit.failed.get() && !refused {
            return Err(ApiError::Internal(
                "a write of a request with an Idempotency-Key failed, yet it answered success"
                    .into(),
            ));
        }
        if refused {
            // A refusal keeps none of the request's writes (those of a write that failed
            // among them, which a transaction of its own would have rolled back): only its
            // answer, in a transaction of its own.
            drop(unit);
            unit = Unit::begin(caps.store)?;
            if let Some(answer) = kept_answer(&unit, &at, &fingerprint, key, ctx.now)? {
                return answer;
            }
        }
        let saved = saved_answer_of(answer, req, fingerprint, ctx.now);
        let expiry = keys::idempotency_expiry(ctx.now + SAVED_SECONDS, ctx.account_id, &key_hash);
        let may_retry = tries < crate::limits::WRITE_TRIES;
        match commit_saved(caps, unit, &at, &expiry, saved, may_retry)? {
            Some(answer) => return Ok(answer),
            None => {
                pause_before_retry(caps, tries);
                tries += 1;
            }
        }
    }
}

/// An answer as it is saved: encoded in the request's format, with the request's
/// fingerprint and the moment of the answer.
fn saved_answer_of(
    answer: Response,
    req: &Request,
    fingerprint: [u8; 32],
    now: i64,
) -> SavedAnswer {
    let encoded = super::encode(answer, response_format(req));
    SavedAnswer {
        fingerprint,
        at: now,
        status: encoded.status,
        headers: encoded.headers,
        body: encoded.body,
    }
}

/// Commits the request's unit with its answer saved at `at` (and its expiry), then hands
/// over the messages the request recorded; the answer. `None` when the commit met a
/// conflict and the request may run again.
fn commit_saved(
    caps: &Caps,
    unit: Unit,
    at: &[u8],
    expiry: &[u8],
    saved: SavedAnswer,
    may_retry: bool,
) -> Result<Option<Response>, ApiError> {
    let committed = unit
        .put(at, &encode(&saved))
        .and_then(|()| unit.put(expiry, &[]))
        .and_then(|()| unit.commit());
    match committed {
        Ok(after) => {
            for id in after {
                hand_over(caps, id);
            }
            Ok(Some(answer_of(saved)))
        }
        Err(StoreError::Conflict) if may_retry => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The answer saved for the key at `at` while it lasts: sent again for the same request,
/// 422 for another.
fn kept_answer(
    unit: &Unit,
    at: &[u8],
    fingerprint: &[u8; 32],
    key: &str,
    now: i64,
) -> Result<Option<Result<Response, ApiError>>, ApiError> {
    let saved = unit.get(at)?.map(|b| decode(&b)).transpose()?;
    Ok(saved.filter(|k| k.at + SAVED_SECONDS > now).map(|saved| {
        if saved.fingerprint == *fingerprint {
            Ok(replay(saved))
        } else {
            Err(ApiError::Unprocessable(format!(
                "the Idempotency-Key \"{key}\" was sent before with another request; \
                     use a new key for a new request"
            )))
        }
    }))
}

/// Hands a message the request recorded to mail after the commit; a refusal is noted on
/// its document, since the request's answer is given.
fn hand_over(caps: &Caps, id: u64) {
    let result = caps
        .store
        .begin_read()
        .map_err(ApiError::from)
        .and_then(|txn| Ok(recorded::load(txn.as_ref(), id)?))
        .and_then(|d| match d {
            Some(d) => dispatch::hand_over(caps, id, &d, true).map(drop),
            None => Ok(()),
        });
    if let Err(e) = result {
        eprintln!("faktura: handing recorded message {id} to mail: {e:?}");
    }
}

fn answer_of(saved: SavedAnswer) -> Response {
    Response {
        status: saved.status,
        headers: saved.headers,
        payload: super::Payload::Bytes(saved.body),
    }
}

/// The saved answer, marked as sent before.
fn replay(saved: SavedAnswer) -> Response {
    let mut r = answer_of(saved);
    r.headers
        .push(("idempotent-replayed".into(), "true".into()));
    r
}

/// Removes the answers saved longer than `SAVED_SECONDS`; returns how many.
pub fn expire(caps: &Caps) -> Result<u32, ApiError> {
    let now = caps.clock.now_unix();
    let prefix = keys::idempotency_expiries();
    let due: Vec<Vec<u8>> = caps
        .store
        .begin_read()?
        .scan(&prefix, None, EXPIRE_BATCH, false)?
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| expires_of(&prefix, k).is_some_and(|at| at <= now))
        .collect();
    let mut removed = 0;
    for entry in due {
        let (Some(expires), Some((account, hash))) =
            (expires_of(&prefix, &entry), owner_of(&prefix, &entry))
        else {
            continue;
        };
        removed += super::in_write(caps, |txn| {
            txn.delete(&entry)?;
            let at = keys::idempotency(account, &hash);
            // A key used again after it expired has a newer answer: that one stays.
            let current = txn.get(&at)?.map(|b| decode(&b)).transpose()?;
            Ok(match current {
                Some(saved) if saved.at + SAVED_SECONDS == expires => {
                    txn.delete(&at)?;
                    1
                }
                _ => 0,
            })
        })?;
    }
    Ok(removed)
}

fn expires_of(prefix: &[u8], key: &[u8]) -> Option<i64> {
    let tail = key.strip_prefix(prefix)?;
    Some(i64::from_be_bytes(tail.get(..8)?.try_into().ok()?))
}

fn owner_of(prefix: &[u8], key: &[u8]) -> Option<(u64, [u8; 32])> {
    let tail = key.strip_prefix(prefix)?;
    let account = u64::from_be_bytes(tail.get(8..16)?.try_into().ok()?);
    Some((account, tail.get(16..48)?.try_into().ok()?))
}

/// One write transaction for a whole request: every `begin_read` and `begin_write` of the
/// request is a view of it, and their commits wait for `Unit::commit`.
struct Unit {
    txn: Rc<RefCell<Option<Box<dyn Write>>>>,
    /// Recorded messages to hand to mail after the commit.
    after: RefCell<Vec<u64>>,
    /// Whether a write of the request ended without its commit (it failed): its part of
    /// the writes cannot be taken back alone, so none of them may be saved.
    failed: Rc<Cell<bool>>,
}

impl Unit {
    fn begin(store: &dyn Store) -> Result<Unit, StoreError> {
        Ok(Unit {
            txn: Rc::new(RefCell::new(Some(store.begin_write()?))),
            after: RefCell::default(),
            failed: Rc::default(),
        })
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        View(self.txn.clone()).get(key)
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        View(self.txn.clone()).put(key, value)
    }

    /// Commits; returns the recorded messages to hand over now.
    fn commit(self) -> Result<Vec<u64>, StoreError> {
        let txn = self.txn.borrow_mut().take().ok_or_else(ended)?;
        txn.commit()?;
        Ok(self.after.into_inner())
    }
}

impl Store for Unit {
    fn begin_read(&self) -> Result<Box<dyn Read>, StoreError> {
        Ok(Box::new(View(self.txn.clone())))
    }

    fn begin_write(&self) -> Result<Box<dyn Write>, StoreError> {
        Ok(Box::new(WriteView {
            view: View(self.txn.clone()),
            failed: self.failed.clone(),
            committed: false,
        }))
    }

    fn whole_request(&self) -> bool {
        true
    }

    fn hand_over_after_commit(&self, id: u64) -> bool {
        self.after.borrow_mut().push(id);
        true
    }
}

fn ended() -> StoreError {
    StoreError::Backend("the request's transaction has ended".into())
}

/// A view of the unit's transaction; its commit is the unit's.
struct View(Rc<RefCell<Option<Box<dyn Write>>>>);

forward_read!(View, |v| v.0.borrow().as_ref().ok_or_else(ended)?);

/// A write of the request: a view of the unit's transaction whose commit is the unit's;
/// one dropped without its commit marks the unit failed.
struct WriteView {
    view: View,
    failed: Rc<Cell<bool>>,
    committed: bool,
}

forward_read!(WriteView, |w| w.view);

impl Write for WriteView {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.view.put(key, value)
    }

    fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
        self.view.delete(key)
    }

    fn next_ids(&mut self, counter: &[u8], n: u32) -> Result<Vec<u64>, StoreError> {
        self.view.next_ids(counter, n)
    }

    fn next_id_of_many(&mut self, counter: &[u8]) -> Result<u64, StoreError> {
        self.view.next_id_of_many(counter)
    }

    /// The request's commit is the unit's, after its answer is written.
    fn commit(mut self: Box<Self>) -> Result<(), StoreError> {
        self.committed = true;
        Ok(())
    }

    fn as_read(&self) -> &dyn Read {
        self
    }
}

impl Drop for WriteView {
    fn drop(&mut self) {
        if !self.committed {
            self.failed.set(true);
        }
    }
}

impl View {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.0
            .borrow_mut()
            .as_mut()
            .ok_or_else(ended)?
            .put(key, value)
    }

    fn delete(&self, key: &[u8]) -> Result<(), StoreError> {
        self.0.borrow_mut().as_mut().ok_or_else(ended)?.delete(key)
    }

    fn next_ids(&self, counter: &[u8], n: u32) -> Result<Vec<u64>, StoreError> {
        self.0
            .borrow_mut()
            .as_mut()
            .ok_or_else(ended)?
            .next_ids(counter, n)
    }

    fn next_id_of_many(&self, counter: &[u8]) -> Result<u64, StoreError> {
        self.0
            .borrow_mut()
            .as_mut()
            .ok_or_else(ended)?
            .next_id_of_many(counter)
    }
}

#[cfg(test)]
mod tests {
    use super::super::golden::World;
    use super::super::handle;
    use super::*;

    #[test]
    fn kept_answers_expire_after_a_day_and_free_their_key() {
        let w = World::new();
        let mut req = w.request_as(
            Method::Post,
            "/api/clients",
            "<client><name>A</name></client>",
            "application/xml",
        );
        req.headers.push(("idempotency-key".into(), "k1".into()));
        req.headers
            .push(("content-type".into(), "application/xml".into()));
        let first = handle(&w.caps(), &req);
        assert_eq!(first.status, 201);
        let again = handle(&w.caps(), &req);
        assert_eq!(again.body, first.body);
        assert_eq!(expire(&w.caps()).unwrap(), 0, "saved for a day");
        let clock = &w.clock().0;
        clock.set(clock.get() + SAVED_SECONDS);
        assert_eq!(expire(&w.caps()).unwrap(), 1);
        let fresh = handle(&w.caps(), &req);
        assert_eq!(fresh.status, 201);
        assert_ne!(fresh.body, first.body, "a new client, not the saved answer");
    }

    /// A write that fails inside a keyed request keeps nothing, as its own transaction
    /// would have: the refusal alone is saved, and sent again.
    #[test]
    fn a_failed_write_of_a_keyed_request_keeps_nothing_but_the_refusal() {
        let w = World::new();
        let caps = w.caps();
        let ctx = Ctx {
            account_id: 1,
            user_id: 1,
            is_admin: true,
            now: 1_795_000_000,
            utc_offset: 0,
        };
        let req = w.request(Method::Post, "/api/clients");
        let runs = Cell::new(0);
        let handle = |caps: &Caps| -> Result<Response, ApiError> {
            runs.set(runs.get() + 1);
            super::super::in_write(caps, |txn| {
                txn.put(b"written-before-the-refusal", b"1")?;
                Err::<(), _>(ApiError::bad("refused after a write"))
            })?;
            Ok(Response::empty())
        };
        let first = run(&caps, &ctx, &req, "k", handle).unwrap();
        assert_eq!(first.status, 400);
        let txn = caps.store.begin_read().unwrap();
        assert_eq!(txn.get(b"written-before-the-refusal").unwrap(), None);
        let again = run(&caps, &ctx, &req, "k", handle).unwrap();
        assert_eq!(again.status, 400);
        assert_eq!(runs.get(), 1, "the saved refusal is sent again");
        assert!(
            again
                .headers
                .iter()
                .any(|(k, _)| k == "idempotent-replayed")
        );
    }

    #[test]
    fn expiries_name_their_answer() {
        let hash = [7u8; 32];
        let prefix = keys::idempotency_expiries();
        let entry = keys::idempotency_expiry(1_000, 42, &hash);
        assert_eq!(expires_of(&prefix, &entry), Some(1_000));
        assert_eq!(owner_of(&prefix, &entry), Some((42, hash)));
        // In the order they expire.
        assert!(entry < keys::idempotency_expiry(1_001, 1, &[0; 32]));
    }
}
