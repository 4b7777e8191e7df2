//! Links of the customer portal: the tokens that open one document, or one client's
//! documents for an hour (a session), without an API key. Owns making, finding, renewing
//! and forgetting them, and the form tokens bound to them. Knows nothing of what a page
//! shows (`portal`), nor of HTTP.
//!
//! A token is kept only as its SHA-256: the entry under `G portal/{hash}` says which
//! account it belongs to and what it opens, so that a request finds it by one key lookup
//! whatever the token, and a copy of the store does not hand out working links. The
//! document keeps its link whole for its owner (`Document::portal_url`, which is how a
//! renewal finds the entry to forget).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use super::Error;
use super::documents::DocKind;
use crate::caps::{Random, Read, Write};
use crate::store::forms::{StoredPortalLink, StoredPortalTarget};
use crate::store::{self, keys};

/// Random bytes of a token: 192 bits, 32 characters in a link.
const TOKEN_BYTES: usize = 24;

/// How long a client's portal session works.
pub const SESSION_SECS: i64 = 3600;

/// Views of one link noted on its document at most once in this many seconds.
pub const VIEW_NOTE_SECS: i64 = 3600;

/// What a link opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Document(DocKind, u64),
    /// A client's documents, until `expires` (the account's Unix seconds).
    Client {
        id: u64,
        expires: i64,
    },
}

/// A link as its entry holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The SHA-256 of its token.
    pub hash: [u8; 32],
    pub account: u64,
    pub target: Target,
    /// When it was made: the document's completion or the link's renewal.
    pub issued: i64,
    /// When a view of it was last noted on its document (0: never).
    pub last_view: i64,
}

/// The SHA-256 of a token, the key of its entry.
pub fn hash_of(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The link of `token`, if there is one. Every token is hashed and looked up alike, well
/// formed or not, so that neither the answer nor its time tells a malformed token from an
/// unknown or a replaced one; the entry's own hash is compared in constant time.
pub fn find(txn: &dyn Read, token: &str) -> Result<Option<Link>, Error> {
    let hash = hash_of(token);
    let Some(bytes) = txn.get(&keys::portal_link(&hash))? else {
        return Ok(None);
    };
    let stored: StoredPortalLink = store::decode_plain(&bytes)?;
    if !same(&stored.hash, &hash) {
        return Ok(None);
    }
    let target = match stored.target {
        StoredPortalTarget::Document { collection, id } => {
            match DocKind::ALL
                .into_iter()
                .find(|k| k.collection() == collection)
            {
                Some(kind) => Target::Document(kind, id),
                None => return Ok(None),
            }
        }
        StoredPortalTarget::Client { id, expires } => Target::Client { id, expires },
    };
    Ok(Some(Link {
        hash,
        account: stored.account_id,
        target,
        issued: stored.issued,
        last_view: stored.last_view,
    }))
}

fn save(txn: &mut dyn Write, link: &Link) -> Result<(), Error> {
    let target = match link.target {
        Target::Document(kind, id) => StoredPortalTarget::Document {
            collection: kind.collection().to_owned(),
            id,
        },
        Target::Client { id, expires } => StoredPortalTarget::Client { id, expires },
    };
    let stored = StoredPortalLink {
        hash: link.hash,
        account_id: link.account,
        target,
        issued: link.issued,
        last_view: link.last_view,
    };
    txn.put(&keys::portal_link(&link.hash), &store::encode(&stored))?;
    Ok(())
}

/// The address of a link: `{public_url}/portal/{token}`.
pub fn url(public_url: &str, token: &str) -> String {
    format!("{}/portal/{token}", public_url.trim_end_matches('/'))
}

/// The token a link's address ends with.
fn token_of(url: &str) -> Option<&str> {
    url.rsplit_once("/portal/")
        .map(|(_, token)| token)
        .filter(|t| !t.is_empty())
}

/// A new link to a document of `account` at `now`, kept by its hash; its address.
pub fn issue(
    txn: &mut dyn Write,
    random: &dyn Random,
    public_url: &str,
    account: u64,
    target: Target,
    now: i64,
) -> Result<String, Error> {
    // The account's form key is made with its first link, in a write, so that a page view
    // only reads it.
    secret(txn, random, account)?;
    let mut bytes = [0u8; TOKEN_BYTES];
    random.fill(&mut bytes);
    let token = URL_SAFE_NO_PAD.encode(bytes);
    let link = Link {
        hash: hash_of(&token),
        account,
        target,
        issued: now,
        last_view: 0,
    };
    save(txn, &link)?;
    if let Target::Client { expires, .. } = target {
        txn.put(&keys::portal_expiry(expires, &link.hash), &[])?;
    }
    Ok(url(public_url, &token))
}

/// Forgets the link at `url` (a document's link, replaced or with its document deleted): it
/// opens nothing from now on.
pub fn forget(txn: &mut dyn Write, url: &str) -> Result<(), Error> {
    if let Some(token) = token_of(url) {
        txn.delete(&keys::portal_link(&hash_of(token)))?;
    }
    Ok(())
}

/// Notes that `link` was viewed at `now`; false when a view was noted less than
/// `VIEW_NOTE_SECS` ago (as the transaction reads it: of two views at once, one notes).
pub fn note_view(txn: &mut dyn Write, link: &Link, now: i64) -> Result<bool, Error> {
    let Some(bytes) = txn.get(&keys::portal_link(&link.hash))? else {
        return Ok(false);
    };
    let mut stored: StoredPortalLink = store::decode_plain(&bytes)?;
    if now - stored.last_view < VIEW_NOTE_SECS {
        return Ok(false);
    }
    stored.last_view = now;
    txn.put(&keys::portal_link(&link.hash), &store::encode(&stored))?;
    Ok(true)
}

/// Whether a view at `now` would be noted (a read, before the write that notes it).
pub fn view_due(link: &Link, now: i64) -> bool {
    now - link.last_view >= VIEW_NOTE_SECS
}

/// The token a form of `link`'s page carries: an HMAC-SHA-256 of the link's hash under the
/// account's portal key. A page of another link, or of another site, cannot make it.
pub fn form_token(txn: &dyn Read, link: &Link) -> Result<String, Error> {
    let key = txn.get(&secret_key(link.account))?.ok_or_else(|| {
        Error::Store(crate::caps::StoreError::Backend(
            "a portal link of an account without a portal key".into(),
        ))
    })?;
    let mut message = b"faktura portal form\0".to_vec();
    message.extend_from_slice(&link.hash);
    Ok(URL_SAFE_NO_PAD.encode(hmac_sha256(&key, &message)))
}

/// Whether `given` is the form token of `link`, compared in constant time.
pub fn form_token_matches(txn: &dyn Read, link: &Link, given: &str) -> Result<bool, Error> {
    let want = form_token(txn, link)?;
    Ok(same(want.as_bytes(), given.as_bytes()))
}

pub(crate) fn secret_key(account: u64) -> Vec<u8> {
    keys::singleton(account, "portal-secret")
}

/// The account's portal key, made on first use.
fn secret(txn: &mut dyn Write, random: &dyn Random, account: u64) -> Result<(), Error> {
    let key = secret_key(account);
    if txn.get(&key)?.is_none() {
        let mut bytes = [0u8; 32];
        random.fill(&mut bytes);
        txn.put(&key, &bytes)?;
    }
    Ok(())
}

/// Removes the sessions that ended by `now`, at most `limit` of them; how many.
pub fn expire_sessions(txn: &mut dyn Write, now: i64, limit: u32) -> Result<u32, Error> {
    let prefix = keys::portal_expiries();
    let mut removed = 0;
    for (key, _) in txn.scan(&prefix, None, limit, false)? {
        let tail = &key[prefix.len()..];
        let (Some(expires), Some(hash)) = (
            tail.get(..8)
                .and_then(|b| b.try_into().ok())
                .map(i64::from_be_bytes),
            tail.get(8..40).and_then(|b| <[u8; 32]>::try_from(b).ok()),
        ) else {
            continue;
        };
        if expires > now {
            break;
        }
        txn.delete(&key)?;
        txn.delete(&keys::portal_link(&hash))?;
        removed += 1;
    }
    Ok(removed)
}

/// HMAC-SHA-256 (RFC 2104) of `message` under `key`.
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// Whether `a` and `b` are equal, in a time that depends on their lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::Store as _;
    use crate::caps::mem::{CountingRandom, MemStore};

    /// RFC 4231, test cases 1 and 6 (a key longer than a block).
    #[test]
    fn hmac_sha256_matches_the_rfc_test_vectors() {
        assert_eq!(
            hex::encode(hmac_sha256(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex::encode(hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn a_link_is_found_by_its_token_and_by_nothing_else() {
        let store = MemStore::default();
        let random = CountingRandom::default();
        let mut txn = store.begin_write().unwrap();
        let target = Target::Document(DocKind::Offer, 7);
        let url = issue(txn.as_mut(), &random, "https://x.test/", 3, target, 100).unwrap();
        assert!(url.starts_with("https://x.test/portal/"), "{url}");
        let token = token_of(&url).unwrap().to_owned();
        assert_eq!(token.len(), 32);
        let found = find(txn.as_read(), &token).unwrap().unwrap();
        assert_eq!(
            (found.account, found.target, found.issued),
            (3, target, 100)
        );
        for other in ["", "x", &token[1..], &format!("{token}x"), "../../etc"] {
            assert_eq!(find(txn.as_read(), other).unwrap(), None, "{other}");
        }
        // The store holds the hash, never the token.
        txn.commit().unwrap();
        let read = store.begin_read().unwrap();
        let all = read.scan(b"", None, 1000, false).unwrap();
        assert!(
            all.iter().all(|(k, v)| !k
                .windows(token.len())
                .chain(v.windows(token.len()))
                .any(|w| w == token.as_bytes())),
            "the token is stored nowhere"
        );
        let mut txn = store.begin_write().unwrap();
        forget(txn.as_mut(), &url).unwrap();
        assert_eq!(find(txn.as_read(), &token).unwrap(), None, "forgotten");
    }

    #[test]
    fn a_form_token_is_bound_to_its_link() {
        let store = MemStore::default();
        let random = CountingRandom::default();
        let mut txn = store.begin_write().unwrap();
        let a = issue(
            txn.as_mut(),
            &random,
            "https://x.test",
            1,
            Target::Document(DocKind::Invoice, 1),
            0,
        )
        .unwrap();
        let b = issue(
            txn.as_mut(),
            &random,
            "https://x.test",
            1,
            Target::Document(DocKind::Invoice, 2),
            0,
        )
        .unwrap();
        let a = find(txn.as_read(), token_of(&a).unwrap()).unwrap().unwrap();
        let b = find(txn.as_read(), token_of(&b).unwrap()).unwrap().unwrap();
        let token_a = form_token(txn.as_read(), &a).unwrap();
        assert!(form_token_matches(txn.as_read(), &a, &token_a).unwrap());
        assert!(!form_token_matches(txn.as_read(), &b, &token_a).unwrap());
        assert!(!form_token_matches(txn.as_read(), &a, "").unwrap());
    }

    #[test]
    fn views_are_noted_once_an_hour_and_sessions_expire() {
        const T: i64 = 1_795_000_000;
        let store = MemStore::default();
        let random = CountingRandom::default();
        let mut txn = store.begin_write().unwrap();
        let url = issue(
            txn.as_mut(),
            &random,
            "https://x.test",
            1,
            Target::Client {
                id: 4,
                expires: T + 5000,
            },
            T,
        )
        .unwrap();
        let link = find(txn.as_read(), token_of(&url).unwrap())
            .unwrap()
            .unwrap();
        assert!(note_view(txn.as_mut(), &link, T + 1500).unwrap());
        assert!(!note_view(txn.as_mut(), &link, T + 1500 + VIEW_NOTE_SECS - 1).unwrap());
        assert!(note_view(txn.as_mut(), &link, T + 1500 + VIEW_NOTE_SECS).unwrap());
        assert_eq!(expire_sessions(txn.as_mut(), T + 4999, 10).unwrap(), 0);
        assert_eq!(expire_sessions(txn.as_mut(), T + 5000, 10).unwrap(), 1);
        assert_eq!(find(txn.as_read(), token_of(&url).unwrap()).unwrap(), None);
    }
}
