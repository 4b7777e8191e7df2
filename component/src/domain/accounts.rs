//! Accounts, users and API keys. A key is shown once and stored only as its SHA-256 hash;
//! the hash's entry names the user and the account every request is scoped to.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Error;
use crate::caps::{Random, Read, Write};
use crate::store;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Account {
    pub id: u64,
    pub name: String,
    pub created: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct User {
    pub id: u64,
    pub account_id: u64,
    pub email: String,
    /// Admins may also change account settings.
    pub is_admin: bool,
    pub key_hash: [u8; 32],
    pub created: i64,
}

/// Who is calling: resolved from the API key of a request, whose entry holds it (in this
/// field order), so that a request is authenticated with one read. A user's account and
/// admin flag never change after it is created. Entries written before held the user id
/// alone, and are still read (`authenticate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
    if key.len() < 16 || key.len() > 256 || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::invalid(
            "an API key must be 16 to 256 visible ASCII characters",
        ));
    }
    Ok(())
}

pub fn authenticate(txn: &dyn Read, key: &str) -> Result<Option<Principal>, Error> {
    let Some(entry) = txn.get(&store::global_key("key", &hash_key(key)))? else {
        return Ok(None);
    };
    if let Ok(principal) = store::decode::<Principal>(&entry) {
        return Ok(Some(principal));
    }
    // An entry of the first format: the user id, and the user read for the rest.
    let user_id: u64 = store::decode(&entry)?;
    let Some(user) = txn.get(&store::global_key("user", &user_id.to_be_bytes()))? else {
        return Ok(None);
    };
    let user: User = store::decode(&user)?;
    Ok(Some(Principal {
        account_id: user.account_id,
        user_id: user.id,
        is_admin: user.is_admin,
    }))
}

pub fn load_user(txn: &dyn Read, id: u64) -> Result<User, Error> {
    let bytes = txn
        .get(&store::global_key("user", &id.to_be_bytes()))?
        .ok_or_else(|| Error::NotFound(format!("user {id} does not exist")))?;
    Ok(store::decode(&bytes)?)
}

/// Removes a user's key: the next request with it answers 401.
pub fn revoke_user(txn: &mut dyn Write, user_id: u64) -> Result<(), Error> {
    let user = load_user(txn.as_read(), user_id)?;
    txn.delete(&store::global_key("key", &user.key_hash))?;
    Ok(())
}

pub fn has_accounts(txn: &dyn Read) -> Result<bool, Error> {
    Ok(!txn
        .scan(&store::global_key("account", &[]), None, 1, false)?
        .is_empty())
}

/// The name and admin address of the account a new store starts with.
const DEFAULT_ACCOUNT: &str = "Default";
const DEFAULT_ADMIN_EMAIL: &str = "admin@localhost.localdomain";

/// Creates the default account and its admin user, with `key` or a random one, when the
/// store has no account yet; `None` when it has.
pub fn bootstrap(
    txn: &mut dyn Write,
    now: i64,
    random: &dyn Random,
    key: Option<&str>,
) -> Result<Option<IssuedKey>, Error> {
    if has_accounts(txn.as_read())? {
        return Ok(None);
    }
    create_account(txn, DEFAULT_ACCOUNT, DEFAULT_ADMIN_EMAIL, now, random, key).map(Some)
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
    if name.is_empty() || name.chars().count() > 200 {
        return Err(Error::invalid(
            "an account name must be 1 to 200 characters",
        ));
    }
    let id = store::next_id(txn, "account")?;
    let account = Account {
        id,
        name: name.to_owned(),
        created: now,
    };
    txn.put(
        &store::global_key("account", &id.to_be_bytes()),
        &store::encode(&account),
    )?;
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
    if txn
        .get(&store::global_key("account", &account_id.to_be_bytes()))?
        .is_none()
    {
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
    let key_entry = store::global_key("key", &key_hash);
    if txn.get(&key_entry)?.is_some() {
        return Err(Error::invalid("that API key is already in use"));
    }
    let id = store::next_id(txn, "user")?;
    let user = User {
        id,
        account_id,
        email: email.to_owned(),
        is_admin,
        key_hash,
        created: now,
    };
    txn.put(
        &store::global_key("user", &id.to_be_bytes()),
        &store::encode(&user),
    )?;
    let principal = Principal {
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

/// A plain shape check: one @, no spaces or line breaks, a dot in the domain.
pub fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && s.len() <= 254
        && !domain.contains('@')
        && !s
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "<>,;\"".contains(c))
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

    #[test]
    fn a_key_leads_to_its_account_and_is_stored_hashed() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let (a, b) = account_and_user(w.as_mut());
        w.commit().unwrap();
        let r = store.begin_read().unwrap();
        let p = authenticate(r.as_ref(), &b.api_key).unwrap().unwrap();
        assert_eq!(
            (p.account_id, p.user_id, p.is_admin),
            (a.account_id, b.user_id, false)
        );
        assert!(authenticate(r.as_ref(), "wrong").unwrap().is_none());
        // The clear key appears nowhere in the store.
        let all = store::scan_all(r.as_ref(), b"").unwrap();
        assert!(all.iter().all(|(k, v)| {
            !k.windows(10).any(|w| w == &b.api_key.as_bytes()[..10])
                && !v.windows(10).any(|w| w == &b.api_key.as_bytes()[..10])
        }));
    }

    #[test]
    fn a_key_is_resolved_from_its_entry_alone_and_old_entries_still_work() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let (a, b) = account_and_user(w.as_mut());
        // The new entry names the principal: the user record is not read.
        let user_key = store::global_key("user", &a.user_id.to_be_bytes());
        let admin = load_user(w.as_read(), a.user_id).unwrap();
        w.delete(&user_key).unwrap();
        let p = authenticate(w.as_read(), &a.api_key).unwrap().unwrap();
        assert_eq!(
            (p.account_id, p.user_id, p.is_admin),
            (a.account_id, a.user_id, true)
        );
        w.put(&user_key, &store::encode(&admin)).unwrap();
        // An entry of the first format holds the user id; the user supplies the rest.
        let user = load_user(w.as_read(), b.user_id).unwrap();
        w.put(
            &store::global_key("key", &user.key_hash),
            &store::encode(&b.user_id),
        )
        .unwrap();
        let p = authenticate(w.as_read(), &b.api_key).unwrap().unwrap();
        assert_eq!(
            (p.account_id, p.user_id, p.is_admin),
            (a.account_id, b.user_id, false)
        );
        // Revoking removes either kind of entry.
        revoke_user(w.as_mut(), b.user_id).unwrap();
        assert!(authenticate(w.as_read(), &b.api_key).unwrap().is_none());
    }

    #[test]
    fn email_shapes() {
        assert!(is_email("a.b@example.com"));
        assert!(!is_email("a@b"));
        assert!(!is_email("a b@example.com"));
        assert!(!is_email("a@example.com\r\nBcc: x@y.z"));
        assert!(!is_email("a@@example.com"));
    }
}
