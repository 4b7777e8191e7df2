//! Accounts, users and API keys. A key is shown once and stored only as its SHA-256 hash;
//! the hash's entry names the user and the account every request is scoped to.

use sha2::{Digest, Sha256};

use super::Error;
use super::codes::is_email;
use crate::caps::{Random, Read, Write};
use crate::limits;
use crate::store::forms::{StoredAccount, StoredPrincipal, StoredUser};
use crate::store::{self, DATA_VERSION, keys};

#[derive(Debug, Clone)]
pub struct User {
    pub id: u64,
    pub account_id: u64,
    pub email: String,
    /// Admins may also change account settings.
    pub is_admin: bool,
    pub key_hash: [u8; 32],
    pub created: i64,
}

/// Who is calling: resolved from the API key of a request, whose entry holds it, so that a
/// request is authenticated with one read. A user's account and admin flag never change
/// after it is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Principal {
    pub user_id: u64,
    pub account_id: u64,
    pub is_admin: bool,
}

/// A freshly issued key, in clear exactly once.
#[derive(Debug, Clone)]
pub struct IssuedKey {
    pub account_id: u64,
    pub user_id: u64,
    pub api_key: String,
}

fn hash_key(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// 32 random bytes as 64 hex digits.
pub fn new_key(random: &dyn Random) -> String {
    let mut bytes = [0u8; 32];
    random.fill(&mut bytes);
    hex::encode(bytes)
}

/// Keys chosen by an operator (bootstrap) must still be hard to guess.
fn check_key(key: &str) -> Result<(), Error> {
    let (min, max) = (limits::API_KEY_CHARS_MIN, limits::API_KEY_CHARS_MAX);
    if key.len() < min || key.len() > max || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::invalid(format!(
            "an API key must be {min} to {max} visible ASCII characters"
        )));
    }
    Ok(())
}

/// What authenticating a key found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The key's entry names this principal.
    Principal(Principal),
    /// No key like it.
    Unknown,
    /// The entry was written before data version 3 and is read only by the migration: the
    /// store has not been migrated yet.
    Unmigrated,
}

pub fn authenticate(txn: &dyn Read, key: &str) -> Result<Found, Error> {
    let Some(entry) = txn.get(&keys::api_key(&hash_key(key)))? else {
        return Ok(Found::Unknown);
    };
    if store::version_of(&entry)?.0 < DATA_VERSION {
        return Ok(Found::Unmigrated);
    }
    Ok(Found::Principal(decode_principal(&entry)?))
}

/// The principal a key entry of this data version holds.
pub fn decode_principal(entry: &[u8]) -> Result<Principal, Error> {
    let StoredPrincipal {
        user_id,
        account_id,
        is_admin,
    } = store::decode_plain(entry)?;
    Ok(Principal {
        user_id,
        account_id,
        is_admin,
    })
}

/// The key entry of a user whose key is not revoked: its key and value.
pub fn key_entry(user: &User) -> (Vec<u8>, Vec<u8>) {
    let principal = StoredPrincipal {
        user_id: user.id,
        account_id: user.account_id,
        is_admin: user.is_admin,
    };
    (keys::api_key(&user.key_hash), store::encode(&principal))
}

/// Rewrites every key entry written before the current data version as a principal record
/// of this version (before version 3 an entry held the user id alone, or the principal,
/// told apart only by trying): the last step of every migration.
pub fn migrate_key_entries(txn: &mut dyn Write) -> Result<u64, Error> {
    let mut rewritten = 0;
    for (key, entry) in store::scan_all(txn.as_read(), &keys::api_keys())? {
        let (version, body) = store::version_of(&entry)?;
        if version >= DATA_VERSION {
            continue;
        }
        let principal = match store::read::<StoredPrincipal>(body) {
            // From version 3 on, the principal record as it is today.
            Ok(p) if version >= 3 => p,
            Ok(p) if store::encodes_as(&p, body) => p,
            _ => {
                let user_id: u64 = store::read(body)?;
                match txn.get(&keys::user(user_id))? {
                    Some(user) => {
                        let user = decode_user(&user)?;
                        StoredPrincipal {
                            user_id: user.id,
                            account_id: user.account_id,
                            is_admin: user.is_admin,
                        }
                    }
                    // A key whose user is gone opens nothing.
                    None => {
                        txn.delete(&key)?;
                        continue;
                    }
                }
            }
        };
        txn.put(&key, &store::encode(&principal))?;
        rewritten += 1;
    }
    Ok(rewritten)
}

pub fn decode_user(bytes: &[u8]) -> Result<User, Error> {
    let StoredUser {
        id,
        account_id,
        email,
        is_admin,
        key_hash,
        created,
    } = store::decode_plain(bytes)?;
    Ok(User {
        id,
        account_id,
        email,
        is_admin,
        key_hash,
        created,
    })
}

pub fn load_user(txn: &dyn Read, id: u64) -> Result<User, Error> {
    let bytes = txn
        .get(&keys::user(id))?
        .ok_or_else(|| Error::NotFound(format!("user {id} does not exist")))?;
    decode_user(&bytes)
}

/// Removes a user's key: the next request with it answers 401.
pub fn revoke_user(txn: &mut dyn Write, user_id: u64) -> Result<(), Error> {
    let user = load_user(txn.as_read(), user_id)?;
    txn.delete(&keys::api_key(&user.key_hash))?;
    Ok(())
}

pub fn has_accounts(txn: &dyn Read) -> Result<bool, Error> {
    Ok(!txn.scan(&keys::accounts(), None, 1, false)?.is_empty())
}

/// Whether `presented` is the key `configured` names, compared by their hashes so that the
/// time taken tells nothing of how much of it matched.
pub fn same_key(presented: &str, configured: &str) -> bool {
    hash_key(presented) == hash_key(configured)
}

pub fn create_account(
    txn: &mut dyn Write,
    name: &str,
    admin_email: &str,
    now: i64,
    random: &dyn Random,
    key: Option<&str>,
) -> Result<IssuedKey, Error> {
    let name = name.trim();
    let max = limits::ACCOUNT_NAME_CHARS_MAX;
    if name.is_empty() || name.chars().count() > max {
        return Err(Error::invalid(format!(
            "an account name must be 1 to {max} characters"
        )));
    }
    let id = store::next_id(txn, "account")?;
    let account = StoredAccount {
        id,
        name: name.to_owned(),
        created: now,
    };
    txn.put(&keys::account_record(id), &store::encode(&account))?;
    create_user(txn, id, admin_email, true, now, random, key)
}

pub fn create_user(
    txn: &mut dyn Write,
    account_id: u64,
    email: &str,
    is_admin: bool,
    now: i64,
    random: &dyn Random,
    key: Option<&str>,
) -> Result<IssuedKey, Error> {
    let email = email.trim();
    if !is_email(email) {
        return Err(Error::invalid(format!(
            "email must be an e-mail address, got \"{email}\""
        )));
    }
    if txn.get(&keys::account_record(account_id))?.is_none() {
        return Err(Error::NotFound(format!(
            "account {account_id} does not exist"
        )));
    }
    let api_key = match key {
        Some(k) => {
            check_key(k)?;
            k.to_owned()
        }
        None => new_key(random),
    };
    let key_hash = hash_key(&api_key);
    let key_entry = keys::api_key(&key_hash);
    if txn.get(&key_entry)?.is_some() {
        return Err(Error::invalid("that API key is already in use"));
    }
    let id = store::next_id(txn, "user")?;
    let user = StoredUser {
        id,
        account_id,
        email: email.to_owned(),
        is_admin,
        key_hash,
        created: now,
    };
    txn.put(&keys::user(id), &store::encode(&user))?;
    let principal = StoredPrincipal {
        user_id: id,
        account_id,
        is_admin,
    };
    txn.put(&key_entry, &store::encode(&principal))?;
    Ok(IssuedKey {
        account_id,
        user_id: id,
        api_key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::Store;
    use crate::caps::mem::{CountingRandom, MemStore};

    /// Account A (its admin `a`) and a second user `b` of it, not an admin.
    fn account_and_user(w: &mut dyn Write) -> (IssuedKey, IssuedKey) {
        let random = CountingRandom::default();
        let a = create_account(w, "A", "a@example.com", 0, &random, None).unwrap();
        let b = create_user(w, a.account_id, "b@example.com", false, 0, &random, None).unwrap();
        (a, b)
    }

    fn principal(found: Found) -> (u64, u64, bool) {
        match found {
            Found::Principal(p) => (p.account_id, p.user_id, p.is_admin),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_key_leads_to_its_account_and_is_stored_hashed() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let (a, b) = account_and_user(w.as_mut());
        w.commit().unwrap();
        let r = store.begin_read().unwrap();
        let p = principal(authenticate(r.as_ref(), &b.api_key).unwrap());
        assert_eq!(p, (a.account_id, b.user_id, false));
        assert_eq!(authenticate(r.as_ref(), "wrong").unwrap(), Found::Unknown);
        // The clear key appears nowhere in the store.
        let all = store::scan_all(r.as_ref(), b"").unwrap();
        assert!(all.iter().all(|(k, v)| {
            !k.windows(10).any(|w| w == &b.api_key.as_bytes()[..10])
                && !v.windows(10).any(|w| w == &b.api_key.as_bytes()[..10])
        }));
    }

    /// A key's entry names its principal, so the user record is not read. Entries of
    /// versions before 3 (the user id alone, or the principal at version 2) are read only
    /// by the migration, which rewrites them.
    #[test]
    fn a_key_is_resolved_from_its_entry_alone_and_old_entries_are_migrated() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let (a, b) = account_and_user(w.as_mut());
        let user_key = keys::user(a.user_id);
        let admin = w.get(&user_key).unwrap().unwrap();
        w.delete(&user_key).unwrap();
        let p = principal(authenticate(w.as_read(), &a.api_key).unwrap());
        assert_eq!(p, (a.account_id, a.user_id, true));
        w.put(&user_key, &admin).unwrap();
        // Version 2 wrote the user id alone (first format) or the principal.
        let user = load_user(w.as_read(), b.user_id).unwrap();
        let old_user_id = [vec![2], postcard::to_allocvec(&b.user_id).unwrap()].concat();
        w.put(&keys::api_key(&user.key_hash), &old_user_id).unwrap();
        let admin_entry = keys::api_key(&load_user(w.as_read(), a.user_id).unwrap().key_hash);
        let mut old_principal = w.get(&admin_entry).unwrap().unwrap();
        old_principal[0] = 2;
        w.put(&admin_entry, &old_principal).unwrap();
        assert_eq!(
            authenticate(w.as_read(), &b.api_key).unwrap(),
            Found::Unmigrated
        );
        assert_eq!(
            authenticate(w.as_read(), &a.api_key).unwrap(),
            Found::Unmigrated
        );
        assert_eq!(migrate_key_entries(w.as_mut()).unwrap(), 2);
        assert_eq!(migrate_key_entries(w.as_mut()).unwrap(), 0, "done once");
        let p = principal(authenticate(w.as_read(), &b.api_key).unwrap());
        assert_eq!(p, (a.account_id, b.user_id, false));
        let p = principal(authenticate(w.as_read(), &a.api_key).unwrap());
        assert_eq!(p, (a.account_id, a.user_id, true));
        revoke_user(w.as_mut(), b.user_id).unwrap();
        assert_eq!(
            authenticate(w.as_read(), &b.api_key).unwrap(),
            Found::Unknown
        );
    }
}
