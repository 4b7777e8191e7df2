//! Handing recorded messages (`domain::dispatch`) to the `mail` capability: right after
//! the commit of the request that recorded one, and later for whatever is due (the host
//! asks now and then through `admin`; a component without such a host after each request
//! that sends).

use super::error::ApiError;
use super::in_write;
use crate::caps::{Caps, MailError};
use crate::domain::Error;
use crate::domain::dispatch::{self, Dispatch, Parcel};

/// Most recorded messages one hand-over of what is due tries.
const DUE_BATCH: usize = 100;

/// What became of a hand-over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Mail took the message.
    Handed,
    /// Mail could not take it now; it stays recorded for a later try.
    Later,
    /// Mail refused it for good; the record is gone.
    Refused(String),
}

/// Hands record `id` (`d`, held by the caller) to mail and ends or keeps the record as
/// mail answers. The document's note is written when mail took it; a refusal is noted on
/// the document only when `noted` (nobody waits for an answer).
pub fn hand_over(caps: &Caps, id: u64, d: &Dispatch, noted: bool) -> Result<Outcome, ApiError> {
    let taken = match &d.parcel {
        Parcel::Mail(message) => caps.mail.send(message),
        Parcel::Letter(letter) => caps.mail.post(letter),
    };
    let now = caps.clock.now_unix();
    let (outcome, end) = match taken {
        Ok(_receipt) => (
            Outcome::Handed,
            in_write(caps, |txn| Ok(dispatch::handed(txn, id, now)?)),
        ),
        Err(MailError::Rejected(m) | MailError::NotConfigured(m)) => {
            let end = in_write(caps, |txn| Ok(dispatch::refused(txn, id, now, &m, noted)?));
            (Outcome::Refused(m), end)
        }
        Err(MailError::Unavailable(m)) => {
            let end = in_write(caps, |txn| Ok(dispatch::later(txn, id, now, &m)?));
            (Outcome::Later, end)
        }
    };
    if let Err(e) = end {
        // Mail has its answer; the record's hold runs out and a later hand-over of what is
        // due ends it (sending it once more, as at-least-once delivery may).
        eprintln!("faktura: ending recorded {} {id}: {e:?}", d.what());
    }
    Ok(outcome)
}

/// Hands every recorded message nobody holds to mail; returns how many mail took.
pub fn hand_over_due(caps: &Caps) -> Result<u32, ApiError> {
    let now = caps.clock.now_unix();
    let due = dispatch::due(caps.store.begin_read()?.as_ref(), now, DUE_BATCH)?;
    let mut handed = 0;
    for id in due {
        let Some(d) = in_write(caps, |txn| Ok(dispatch::take(txn, id, now)?))? else {
            continue;
        };
        if hand_over(caps, id, &d, true)? == Outcome::Handed {
            handed += 1;
        }
    }
    Ok(handed)
}

/// The answer to a request that sent: mail took the message or will later; a refusal is
/// the client's 400.
pub fn answer(outcome: Outcome) -> Result<(), ApiError> {
    match outcome {
        Outcome::Handed | Outcome::Later => Ok(()),
        Outcome::Refused(m) => Err(Error::invalid(m).into()),
    }
}
