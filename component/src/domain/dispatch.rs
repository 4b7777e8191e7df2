//! Messages that leave with a write: the e-mail or postal letter of a document is recorded
//! in the store by the write transaction of the request that sends it, and handed to the
//! `mail` capability only after that commit (`http::dispatch`).
//!
//! A write transaction may run again after a conflict, which must never send twice; a
//! host may stop between the commit and the hand-over, which must never lose the message.
//! The record is therefore the promise: mail takes it after the commit, and whatever is
//! still recorded when its hold ends (the host stopped, or mail could not take it then) is
//! handed over by `http::dispatch::hand_over_due`, at least once, as mail is delivered.
//! Whoever hands a record over first holds it (`take`), so that two hosts that both find
//! it due do not both send it: holding is a write, and of two writers only one commits.

use serde::{Deserialize, Serialize};

use super::Error;
use super::documents::{DocKind, claims, commands, storage};
use crate::caps::{Letter, Message, Read, Write};
use crate::store::{self, keys};

/// Seconds a record stays with whoever holds it (the request that recorded it, or a
/// hand-over of what is due) before another may take it.
pub const HOLD_SECONDS: i64 = 60;
/// The wait after mail could not take a record for now; it doubles per try.
const RETRY_SECONDS: i64 = 5;
const RETRY_SECONDS_MAX: i64 = 15 * 60;
/// The format byte in front of a stored record.
const FORMAT: u8 = 1;

/// What goes out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Parcel {
    Mail(Message),
    Letter(Letter),
}

/// A recorded message: what to hand over, and what to note on its document once mail has
/// taken it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dispatch {
    pub account: u64,
    /// Who sent it: the author of the note.
    pub user: u64,
    /// The document's collection (`DocKind::collection`).
    pub collection: String,
    pub document: u64,
    pub parcel: Parcel,
    /// The note written on the document once mail took the message (MAIL, LETTER).
    pub actionkey: String,
    pub note: String,
    /// Hand-overs tried.
    pub tries: u32,
    /// Unix seconds before which nobody else takes it.
    pub not_before: i64,
    /// Why the last try did not hand it over.
    pub last_error: String,
}

impl Dispatch {
    fn kind(&self) -> Result<DocKind, Error> {
        DocKind::ALL
            .into_iter()
            .find(|k| k.collection() == self.collection)
            .ok_or_else(|| corrupt("an unknown document kind"))
    }

    /// "e-mail" or "letter", for messages.
    pub fn what(&self) -> &'static str {
        match self.parcel {
            Parcel::Mail(_) => "e-mail",
            Parcel::Letter(_) => "letter",
        }
    }
}

fn corrupt(what: &str) -> Error {
    Error::Store(crate::caps::StoreError::Backend(format!(
        "corrupt recorded message: {what}"
    )))
}

fn encode(d: &Dispatch) -> Vec<u8> {
    store::encode_with_format(FORMAT, d)
}

fn decode(bytes: &[u8]) -> Result<Dispatch, Error> {
    Ok(store::decode_with_format(
        FORMAT,
        bytes,
        "recorded message",
    )?)
}

/// Records `d` in the caller's transaction, held by the caller for `HOLD_SECONDS`.
pub fn record(txn: &mut dyn Write, mut d: Dispatch, now: i64) -> Result<(u64, Dispatch), Error> {
    let id = store::next_id(txn, "dispatch")?;
    d.not_before = now + HOLD_SECONDS;
    txn.put(&keys::dispatch(id), &encode(&d))?;
    Ok((id, d))
}

pub fn load(txn: &dyn Read, id: u64) -> Result<Option<Dispatch>, Error> {
    txn.get(&keys::dispatch(id))?
        .map(|bytes| decode(&bytes))
        .transpose()
}

/// The recorded messages nobody holds at `now`, oldest first, at most `limit`.
pub fn due(txn: &dyn Read, now: i64, limit: usize) -> Result<Vec<u64>, Error> {
    let mut ids = Vec::new();
    store::for_each(txn, &keys::dispatches(), |(key, value)| {
        if ids.len() < limit && decode(value)?.not_before <= now {
            let tail: [u8; 8] = key[key.len() - 8..]
                .try_into()
                .map_err(|_| corrupt("a short key"))?;
            ids.push(u64::from_be_bytes(tail));
        }
        Ok::<_, Error>(())
    })?;
    Ok(ids)
}

/// Takes record `id` to hand it over, unless it is gone or someone holds it: holds it
/// for `HOLD_SECONDS` and counts the try.
pub fn take(txn: &mut dyn Write, id: u64, now: i64) -> Result<Option<Dispatch>, Error> {
    let Some(mut d) = load(txn.as_read(), id)? else {
        return Ok(None);
    };
    if d.not_before > now {
        return Ok(None);
    }
    d.not_before = now + HOLD_SECONDS;
    d.tries += 1;
    txn.put(&keys::dispatch(id), &encode(&d))?;
    Ok(Some(d))
}

/// Ends record `id`, which mail took: it goes, its document gets its note, and the
/// account's webhooks hear that it was sent.
pub fn handed(txn: &mut dyn Write, id: u64, now: i64) -> Result<(), Error> {
    let Some(d) = load(txn.as_read(), id)? else {
        return Ok(());
    };
    txn.delete(&keys::dispatch(id))?;
    note(txn, &d, now, &d.actionkey, &d.note, true)
}

/// Ends record `id`, which mail refused for good. When nobody waits for the answer (a
/// hand-over of what was due) the document gets a note with the reason; a request that
/// sends is answered with it instead.
pub fn refused(
    txn: &mut dyn Write,
    id: u64,
    now: i64,
    reason: &str,
    noted: bool,
) -> Result<(), Error> {
    let Some(d) = load(txn.as_read(), id)? else {
        return Ok(());
    };
    txn.delete(&keys::dispatch(id))?;
    if noted {
        let text = format!("The {} was refused and not sent: {reason}", d.what());
        note(txn, &d, now, &d.actionkey, &text, false)?;
    }
    Ok(())
}

/// Keeps record `id`, which mail could not take for now, for a later try.
pub fn later(txn: &mut dyn Write, id: u64, now: i64, reason: &str) -> Result<(), Error> {
    let Some(mut d) = load(txn.as_read(), id)? else {
        return Ok(());
    };
    d.not_before = now + retry_after(d.tries);
    d.last_error = reason.to_owned();
    txn.put(&keys::dispatch(id), &encode(&d))
        .map_err(Error::from)
}

/// Seconds to wait after `tries` tries: `RETRY_SECONDS` doubling, at most
/// `RETRY_SECONDS_MAX`.
fn retry_after(tries: u32) -> i64 {
    (RETRY_SECONDS << tries.saturating_sub(1).min(16)).min(RETRY_SECONDS_MAX)
}

/// Notes `text` on the document of `d`; `sent` tells the account's webhooks that it was
/// sent.
fn note(
    txn: &mut dyn Write,
    d: &Dispatch,
    now: i64,
    actionkey: &str,
    text: &str,
    sent: bool,
) -> Result<(), Error> {
    // Noted at the account's moment: `now` is the system's.
    let ctx = super::clock::load(txn.as_read(), d.account)?.ctx(d.account, d.user, false, now);
    match storage::load(txn.as_read(), d.account, d.kind()?, d.document) {
        Ok(doc) => {
            commands::note(&ctx, txn, &doc, actionkey, text)?;
            if sent {
                storage::sent(&ctx, txn, &doc)?;
            }
            if doc.dunning.is_some() {
                // A reminder sent is noted on its invoice too.
                let invoice = claims::invoice_of(txn.as_read(), d.account, &doc)?;
                claims::note_on_invoice(
                    &ctx,
                    txn,
                    &invoice,
                    &format!("Reminder {}: {text}", doc.id),
                )?;
            }
            Ok(())
        }
        // The document is gone (its account was removed): nothing to note on.
        Err(Error::NotFound(_)) => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::Store;
    use crate::caps::mem::MemStore;

    fn letter() -> Dispatch {
        Dispatch {
            account: 1,
            user: 2,
            collection: "credit-notes".into(),
            document: 3,
            parcel: Parcel::Letter(Letter {
                address: vec!["A".into()],
                ..Letter::default()
            }),
            actionkey: "LETTER".into(),
            note: "Sent by post".into(),
            tries: 0,
            not_before: 0,
            last_error: String::new(),
        }
    }

    #[test]
    fn a_record_is_held_then_due_then_taken_by_one() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let (id, d) = record(w.as_mut(), letter(), 100).unwrap();
        assert_eq!(d.not_before, 100 + HOLD_SECONDS);
        assert_eq!(load(w.as_read(), id).unwrap(), Some(d));
        // Held by the request that recorded it.
        assert!(due(w.as_read(), 100, 10).unwrap().is_empty());
        assert!(take(w.as_mut(), id, 100).unwrap().is_none());
        // Its hold over, it is due, and the first to take it holds it again.
        let later_on = 100 + HOLD_SECONDS;
        assert_eq!(due(w.as_read(), later_on, 10).unwrap(), vec![id]);
        let taken = take(w.as_mut(), id, later_on).unwrap().unwrap();
        assert_eq!(taken.tries, 1);
        assert!(take(w.as_mut(), id, later_on).unwrap().is_none());
    }

    #[test]
    fn a_try_for_later_waits_longer_each_time() {
        assert_eq!(retry_after(1), RETRY_SECONDS);
        assert_eq!(retry_after(2), 2 * RETRY_SECONDS);
        assert_eq!(retry_after(40), RETRY_SECONDS_MAX);
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let (id, _) = record(w.as_mut(), letter(), 0).unwrap();
        take(w.as_mut(), id, HOLD_SECONDS).unwrap().unwrap();
        later(w.as_mut(), id, 1000, "queue full").unwrap();
        let d = load(w.as_read(), id).unwrap().unwrap();
        assert_eq!(
            (d.not_before, d.last_error.as_str()),
            (1000 + RETRY_SECONDS, "queue full")
        );
        // Ended, the record is gone (its document does not exist here: no note).
        handed(w.as_mut(), id, 1001).unwrap();
        assert_eq!(load(w.as_read(), id).unwrap(), None);
    }
}
