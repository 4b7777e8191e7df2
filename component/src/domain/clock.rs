//! The account's clock: the moment it is for an account (the system time, moved by the
//! account's test clock where the service runs with one) and the day it is in the
//! account's time zone (settings `time_zone`). Everything time-based of an account reads
//! it through its `Ctx` (`now`, `today`), never the system clock alone.
//!
//! Kept per account beside the settings, so that a request reads one small value: the zone,
//! the test clock's offset, and the zone's UTC offset with the moment it next changes (a
//! request inside that span needs no zone database; one after it computes the offset
//! afresh and writes nothing).

use serde::{Deserialize, Serialize};

use super::date::Date;
use super::schedule;
use super::{Ctx, Error};
use crate::caps::{Read, Write};
use crate::store::{self, keys};

/// The zone of an account that has not chosen one.
pub const ZONE_DEFAULT: &str = "Europe/Berlin";

/// The format byte of the stored clock.
const FORMAT: u8 = 1;

/// What is kept of an account's clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredClock {
    /// IANA name of the account's time zone.
    pub zone: String,
    /// Seconds the account's clock is ahead of the system time (its test clock; 0 without).
    pub offset: i64,
    /// The zone's UTC offset in seconds, valid from `valid_from` until `valid_until` (the
    /// zone's next change), in the account's time.
    pub utc_offset: i32,
    pub valid_from: i64,
    pub valid_until: i64,
}

/// An account's clock as a request reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountClock {
    pub zone: String,
    pub offset: i64,
    /// The span in which `utc_offset` holds, when known.
    cached: Option<(i32, i64, i64)>,
}

impl Default for AccountClock {
    fn default() -> Self {
        AccountClock {
            zone: ZONE_DEFAULT.to_owned(),
            offset: 0,
            cached: None,
        }
    }
}

pub(crate) fn key(account: u64) -> Vec<u8> {
    keys::singleton(account, "clock")
}

/// The clock of an account; the default (system time, Europe/Berlin) when none is kept.
pub fn load(txn: &dyn Read, account: u64) -> Result<AccountClock, Error> {
    let Some(bytes) = txn.get(&key(account))? else {
        return Ok(AccountClock::default());
    };
    let s: StoredClock = store::decode_with_format(FORMAT, &bytes, "account clock")?;
    Ok(AccountClock {
        zone: s.zone,
        offset: s.offset,
        cached: Some((s.utc_offset, s.valid_from, s.valid_until)),
    })
}

impl AccountClock {
    /// The account's moment when the system's is `system_now`.
    pub fn now(&self, system_now: i64) -> i64 {
        system_now.saturating_add(self.offset)
    }

    /// Seconds the account's zone is ahead of UTC at the account's moment `now`.
    pub fn utc_offset(&self, now: i64) -> i32 {
        match self.cached {
            Some((offset, from, until)) if (from..until).contains(&now) => offset,
            _ => schedule::zone(&self.zone)
                .map(|z| schedule::utc_offset(now, &z))
                .unwrap_or(0),
        }
    }

    /// The caller's context at the system moment `system_now`.
    pub fn ctx(&self, account_id: u64, user_id: u64, is_admin: bool, system_now: i64) -> Ctx {
        let now = self.now(system_now);
        Ctx {
            account_id,
            user_id,
            is_admin,
            now,
            utc_offset: self.utc_offset(now),
        }
    }

    /// Whether the kept UTC offset no longer covers the account's moment `now` (or soon
    /// will not): the upkeep writes it afresh.
    pub fn stale(&self, now: i64) -> bool {
        !matches!(self.cached, Some((_, from, until)) if from <= now && now + 86_400 < until)
    }
}

/// Keeps an account's clock: its zone and test clock offset, with the zone's UTC offset
/// from the account's moment `now` until the zone next changes it (at most a year).
pub fn save(
    txn: &mut dyn Write,
    account: u64,
    zone: &str,
    offset: i64,
    now: i64,
) -> Result<(), Error> {
    let tz = schedule::zone(zone)
        .ok_or_else(|| Error::invalid(format!("time_zone {zone} is not a known time zone")))?;
    let utc_offset = schedule::utc_offset(now, &tz);
    let horizon = now + 366 * 86_400;
    let valid_until = schedule::next_change(now, &tz).map_or(horizon, |t| t.min(horizon));
    let stored = StoredClock {
        zone: zone.to_owned(),
        offset,
        utc_offset,
        valid_from: now,
        valid_until,
    };
    txn.put(&key(account), &store::encode_with_format(FORMAT, &stored))?;
    Ok(())
}

/// The day `unix` (the account's time) falls on in the account's zone.
pub fn day_of(clock: &AccountClock, unix: i64) -> Date {
    Date::from_unix(unix + clock.utc_offset(unix) as i64)
}
