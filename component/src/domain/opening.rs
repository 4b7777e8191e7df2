//! Opening an account: the account and its admin user (`accounts`), and what a new
//! account starts with (its dunning levels and the published base rates).

use super::accounts::{self, IssuedKey};
use super::{Ctx, Error, dunning};
use crate::caps::{Random, Write};
use crate::store;

/// The name and admin address of the account a new store starts with.
const DEFAULT_ACCOUNT: &str = "Default";
const DEFAULT_ADMIN_EMAIL: &str = "admin@localhost.localdomain";

/// A new account with its admin user (keyed `key`, or a random key) and its starting
/// records.
pub fn open_account(
    txn: &mut dyn Write,
    name: &str,
    admin_email: &str,
    now: i64,
    random: &dyn Random,
    key: Option<&str>,
) -> Result<IssuedKey, Error> {
    let issued = accounts::create_account(txn, name, admin_email, now, random, key)?;
    let ctx = Ctx {
        account_id: issued.account_id,
        user_id: 0,
        is_admin: true,
        now,
        utc_offset: 0,
    };
    dunning::seed(&ctx, txn)?;
    Ok(issued)
}

/// Opens the default account and its admin user, with `key` or a random one, when the
/// store has no account yet; `None` when it has.
pub fn bootstrap(
    txn: &mut dyn Write,
    now: i64,
    random: &dyn Random,
    key: Option<&str>,
) -> Result<Option<IssuedKey>, Error> {
    if accounts::has_accounts(txn.as_read())? {
        return Ok(None);
    }
    // A store without accounts holds nothing of an older version.
    store::set_data_version(txn, store::DATA_VERSION)?;
    open_account(txn, DEFAULT_ACCOUNT, DEFAULT_ADMIN_EMAIL, now, random, key).map(Some)
}
