//! Every key the component stores under, built here and nowhere else.
//!
//! Keys are bytes that sort as their parts: ids are big-endian `u64`, indexed values have
//! a fixed width. Every account-scoped key starts with `A` and the account id, so one
//! account's prefix scan can never see another account's data; the few global keys start
//! with `G`. Below an account, the first segment tells the family apart: a collection
//! name, or one of the `RESERVED` segments, which no collection may be named.
//!
//! Layout:
//! - `G account/{id}`: an account; `G user/{id}`: a user; `G key/{sha256}`: an API key's
//!   entry (the principal); `G seq/{name}`: id counters; `G meta/version`: the data version;
//!   `G dispatch/{id}`: a message recorded by a write, until mail takes it
//! - `A {account}{collection}/{id}`: a record
//! - `A {account}{collection}/{parent}{id}` with `A {account}parent/{collection}/{id}`: a
//!   child record (item, payment, comment, tag) under its document, and the way back
//! - `A {account}file/{collection}/{field}/{id}`: a file field's bytes, outside the record
//! - `A {account}one/{name}`: a per-account singleton (settings)
//! - `A {account}ix/{collection}/{index}/{value}{id}`: secondary indexes of documents, and
//!   below `ix/{collection}/` the tallied sums and counts (`sums/`, `count/`, `status-count/`,
//!   `sums-kept/`)
//! - `A {account}idx/number/{range}/{prefix}\0{number}`: number claims;
//!   `A {account}idx/client-docs/{client}{kind}{id}`: a client's documents;
//!   `A {account}idx/contact-docs/{contact}{kind}{id}`: the documents naming a contact;
//!   `A {account}idx/supplier-incomings/{supplier}{id}`: a supplier's incoming invoices
//! - `A {account}pdf/{collection}/{id}{variant}`: the stored PDFs of a document
//! - `A {account}einvoice/{collection}/{id}{profile}`: its e-invoices, fixed at completion,
//!   with `A {account}einvoice/{collection}/{id}/`: the profiles whose XML was issued
//! - `A {account}idem/{sha256}`: the first answer to a request with an `Idempotency-Key`,
//!   with `G idem-expiry/{expires}{account}{sha256}` to remove it after 24 hours
//! - `A {account}hooks/on`: the account's webhooks and the events each takes (absent
//!   without any); `A {account}hooks/secret/{id}`: a webhook's signing secrets;
//!   `A {account}hooks/due/{at}{id}`: the deliveries of events pending, by the moment one
//!   may next be sent; `A {account}hooks/overdue-day`: the day up to which documents that
//!   fell due were noticed
//! - `G portal/{sha256}`: a link of the customer portal by the SHA-256 of its token (what
//!   it opens, in which account), with `G portal-expiry/{expires}{sha256}` for a client's
//!   session, to remove it once it ended; `A {account}one/portal-secret`: the account's
//!   key of the portal's form tokens (32 random bytes)

/// First segments below an account that are not collections.
pub const RESERVED: [&str; 9] = [
    "file", "one", "parent", "ix", "idx", "pdf", "einvoice", "idem", "hooks",
];

/// A key outside every account: `G{family}/{tail}`.
pub fn global(family: &str, tail: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(2 + family.len() + tail.len());
    k.push(b'G');
    k.extend_from_slice(family.as_bytes());
    k.push(b'/');
    k.extend_from_slice(tail);
    k
}

pub fn account_record(id: u64) -> Vec<u8> {
    global("account", &id.to_be_bytes())
}

/// Prefix of every account record.
pub fn accounts() -> Vec<u8> {
    global("account", &[])
}

pub fn user(id: u64) -> Vec<u8> {
    global("user", &id.to_be_bytes())
}

/// The entry of an API key, by the key's SHA-256.
pub fn api_key(hash: &[u8; 32]) -> Vec<u8> {
    global("key", hash)
}

/// Prefix of every API key's entry.
pub fn api_keys() -> Vec<u8> {
    global("key", &[])
}

/// An id counter.
pub fn counter(name: &str) -> Vec<u8> {
    global("seq", name.as_bytes())
}

/// A message recorded by a write and not yet handed to mail (`domain::dispatch`).
pub fn dispatch(id: u64) -> Vec<u8> {
    global("dispatch", &id.to_be_bytes())
}

/// Prefix of every recorded message.
pub fn dispatches() -> Vec<u8> {
    global("dispatch", &[])
}

/// The first answer to a request with an `Idempotency-Key`, by the key's SHA-256.
pub fn idempotency(account_id: u64, key_hash: &[u8; 32]) -> Vec<u8> {
    let mut k = segment(account_id, "idem");
    k.extend_from_slice(key_hash);
    k
}

/// When a stored answer expires: `G idem-expiry/{expires}{account}{key hash}`, in the
/// order they expire.
pub fn idempotency_expiry(expires: i64, account_id: u64, key_hash: &[u8; 32]) -> Vec<u8> {
    let mut tail = Vec::with_capacity(48);
    tail.extend_from_slice(&expires.max(0).to_be_bytes());
    tail.extend_from_slice(&account_id.to_be_bytes());
    tail.extend_from_slice(key_hash);
    global("idem-expiry", &tail)
}

/// Prefix of every expiry of a stored answer.
pub fn idempotency_expiries() -> Vec<u8> {
    global("idem-expiry", &[])
}

/// A link of the customer portal, by the SHA-256 of its token.
pub fn portal_link(hash: &[u8; 32]) -> Vec<u8> {
    global("portal", hash)
}

/// When a client's portal session ends: `G portal-expiry/{expires}{hash}`, in the order
/// they end.
pub fn portal_expiry(expires: i64, hash: &[u8; 32]) -> Vec<u8> {
    let mut tail = Vec::with_capacity(40);
    tail.extend_from_slice(&expires.max(0).to_be_bytes());
    tail.extend_from_slice(hash);
    global("portal-expiry", &tail)
}

/// Prefix of every end of a portal session.
pub fn portal_expiries() -> Vec<u8> {
    global("portal-expiry", &[])
}

/// The store's data version (see `store::DATA_VERSION`).
pub fn data_version() -> Vec<u8> {
    global("meta", b"version")
}

/// `A{account}`: the prefix of everything of one account.
pub fn account(account: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(48);
    k.push(b'A');
    k.extend_from_slice(&account.to_be_bytes());
    k
}

/// `A{account}{segment}/`.
fn segment(account_id: u64, segment: &str) -> Vec<u8> {
    let mut k = account(account_id);
    k.extend_from_slice(segment.as_bytes());
    k.push(b'/');
    k
}

/// Prefix of all records of one collection of one account.
pub fn collection(account: u64, collection: &str) -> Vec<u8> {
    debug_assert!(
        !RESERVED.contains(&collection),
        "{collection} is a reserved key segment"
    );
    segment(account, collection)
}

pub fn record(account: u64, coll: &str, id: u64) -> Vec<u8> {
    let mut k = collection(account, coll);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

pub fn file(account: u64, collection: &str, field: &str, id: u64) -> Vec<u8> {
    let mut k = segment(account, "file");
    k.extend_from_slice(collection.as_bytes());
    k.push(b'/');
    k.extend_from_slice(field.as_bytes());
    k.push(b'/');
    k.extend_from_slice(&id.to_be_bytes());
    k
}

pub fn singleton(account: u64, name: &str) -> Vec<u8> {
    let mut k = segment(account, "one");
    k.extend_from_slice(name.as_bytes());
    k
}

/// Prefix of the children of one parent, so that they are one prefix scan.
pub fn children(account: u64, collection: &str, parent: u64) -> Vec<u8> {
    let mut k = self::collection(account, collection);
    k.extend_from_slice(&parent.to_be_bytes());
    k
}

/// A child record (an item, payment, comment or tag) under its parent document.
pub fn child(account: u64, collection: &str, parent: u64, id: u64) -> Vec<u8> {
    let mut k = children(account, collection, parent);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// From a child's id to its parent's id (children are addressed by id alone).
pub fn parent(account: u64, collection: &str, id: u64) -> Vec<u8> {
    let mut k = parents(account, collection);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// Prefix of the ways back of every child of one collection.
pub fn parents(account: u64, collection: &str) -> Vec<u8> {
    let mut k = segment(account, "parent");
    k.extend_from_slice(collection.as_bytes());
    k.push(b'/');
    k
}

/// Prefix of a secondary index (or of tallies) of a collection.
pub fn index(account: u64, collection: &str, index: &str) -> Vec<u8> {
    let mut k = segment(account, "ix");
    k.extend_from_slice(collection.as_bytes());
    k.push(b'/');
    k.extend_from_slice(index.as_bytes());
    k.push(b'/');
    k
}

/// An index entry: prefix, the indexed value (fixed width, sorting as the value), the id.
pub fn index_entry(account: u64, collection: &str, name: &str, value: &[u8], id: u64) -> Vec<u8> {
    let mut k = index(account, collection, name);
    k.extend_from_slice(value);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// Prefix of every number claim of an account.
pub fn all_number_claims(account: u64) -> Vec<u8> {
    let mut k = segment(account, "idx");
    k.extend_from_slice(b"number/");
    k
}

/// Prefix of the number claims of one range and resolved prefix.
pub fn number_claims(account: u64, range: &str, pre: &str) -> Vec<u8> {
    let mut k = all_number_claims(account);
    k.extend_from_slice(range.as_bytes());
    k.push(b'/');
    k.extend_from_slice(pre.as_bytes());
    k.push(0);
    k
}

pub fn number_claim(account: u64, range: &str, pre: &str, number: i64) -> Vec<u8> {
    let mut k = number_claims(account, range, pre);
    k.extend_from_slice(&number.to_be_bytes());
    k
}

/// The range a number claim's key names (`invoice`, `client`), if it is one.
pub fn number_claim_range(account: u64, key: &[u8]) -> Option<&str> {
    let tail = key.strip_prefix(all_number_claims(account).as_slice())?;
    let end = tail.iter().position(|b| *b == b'/')?;
    std::str::from_utf8(&tail[..end]).ok()
}

/// Prefix of the entries of every client's documents.
pub fn all_client_documents(account: u64) -> Vec<u8> {
    let mut k = segment(account, "idx");
    k.extend_from_slice(b"client-docs/");
    k
}

/// Prefix of the documents of a client (any kind); a client with any is kept.
pub fn client_documents(account: u64, client: u64) -> Vec<u8> {
    let mut k = all_client_documents(account);
    k.extend_from_slice(&client.to_be_bytes());
    k
}

/// Prefix of the entries of every contact's documents.
pub fn all_contact_documents(account: u64) -> Vec<u8> {
    let mut k = segment(account, "idx");
    k.extend_from_slice(b"contact-docs/");
    k
}

/// Prefix of the documents naming a contact (any kind); a contact with any is kept.
pub fn contact_documents(account: u64, contact: u64) -> Vec<u8> {
    let mut k = all_contact_documents(account);
    k.extend_from_slice(&contact.to_be_bytes());
    k
}

/// The entry of a document naming a contact: its kind's byte and its id.
pub fn contact_document(account: u64, contact: u64, kind_byte: u8, id: u64) -> Vec<u8> {
    let mut k = contact_documents(account, contact);
    k.push(kind_byte);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// Prefix of the entries of every supplier's incoming invoices.
pub fn all_supplier_incomings(account: u64) -> Vec<u8> {
    let mut k = segment(account, "idx");
    k.extend_from_slice(b"supplier-incomings/");
    k
}

/// Prefix of a supplier's incoming invoices: `idx/supplier-incomings/{supplier}{id}`.
pub fn supplier_incomings(account: u64, supplier: u64) -> Vec<u8> {
    let mut k = all_supplier_incomings(account);
    k.extend_from_slice(&supplier.to_be_bytes());
    k
}

/// A supplier's incoming invoice.
pub fn supplier_incoming(account: u64, supplier: u64, id: u64) -> Vec<u8> {
    let mut k = supplier_incomings(account, supplier);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// A client's document of the kind `kind_byte`.
pub fn client_document(account: u64, client: u64, kind_byte: u8, id: u64) -> Vec<u8> {
    let mut k = client_documents(account, client);
    k.push(kind_byte);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// A stored PDF of a document: `variant` is its tag (`original`, `print`, `signed`).
pub fn pdf(account: u64, collection: &str, document: u64, variant: &str) -> Vec<u8> {
    let mut k = segment(account, "pdf");
    k.extend_from_slice(collection.as_bytes());
    k.push(b'/');
    k.extend_from_slice(&document.to_be_bytes());
    k.extend_from_slice(variant.as_bytes());
    k
}

/// The e-invoice of one profile of a document (fixed at completion).
pub fn einvoice(account: u64, collection: &str, document: u64, profile: &str) -> Vec<u8> {
    let mut k = segment(account, "einvoice");
    k.extend_from_slice(collection.as_bytes());
    k.push(b'/');
    k.extend_from_slice(&document.to_be_bytes());
    k.extend_from_slice(profile.as_bytes());
    k
}

/// The list of a document's e-invoice profiles whose XML was issued. A profile's name never
/// starts with `/`, so this key is no prefix of an e-invoice's and none is a prefix of it.
pub fn einvoices_issued(account: u64, collection: &str, document: u64) -> Vec<u8> {
    let mut k = einvoice(account, collection, document, "");
    k.push(b'/');
    k
}

/// The account's webhooks and the events each takes: read on the path of every write.
pub fn webhooks_on(account: u64) -> Vec<u8> {
    let mut k = segment(account, "hooks");
    k.extend_from_slice(b"on");
    k
}

/// The signing secrets of a webhook.
pub fn webhook_secret(account: u64, webhook: u64) -> Vec<u8> {
    let mut k = segment(account, "hooks");
    k.extend_from_slice(b"secret/");
    k.extend_from_slice(&webhook.to_be_bytes());
    k
}

/// Prefix of the pending deliveries of an account, by the moment each may next be sent.
pub fn deliveries_due(account: u64) -> Vec<u8> {
    let mut k = segment(account, "hooks");
    k.extend_from_slice(b"due/");
    k
}

/// A pending delivery, due at `at` (Unix seconds of the account's clock).
pub fn delivery_due(account: u64, at: i64, delivery: u64) -> Vec<u8> {
    let mut k = deliveries_due(account);
    k.extend_from_slice(&sortable_i64(at));
    k.extend_from_slice(&delivery.to_be_bytes());
    k
}

/// The day (Julian) up to which documents that fell due were noticed for webhooks.
pub fn overdue_day(account: u64) -> Vec<u8> {
    let mut k = segment(account, "hooks");
    k.extend_from_slice(b"overdue-day");
    k
}

/// An i64 as bytes that sort like the number (sign bit flipped).
pub fn sortable_i64(v: i64) -> [u8; 8] {
    ((v as u64) ^ (1 << 63)).to_be_bytes()
}

/// The number `sortable_i64` wrote; `None` for bytes of another width.
pub fn i64_of_sortable(bytes: &[u8]) -> Option<i64> {
    let b: [u8; 8] = bytes.try_into().ok()?;
    Some((u64::from_be_bytes(b) ^ (1 << 63)) as i64)
}

/// An i32 as bytes that sort like the number (sign bit flipped).
pub fn sortable_i32(v: i32) -> [u8; 4] {
    ((v as u32) ^ 0x8000_0000).to_be_bytes()
}

/// The number `sortable_i32` wrote; `None` for bytes of another width.
pub fn i32_of_sortable(bytes: &[u8]) -> Option<i32> {
    let b: [u8; 4] = bytes.try_into().ok()?;
    Some((u32::from_be_bytes(b) ^ 0x8000_0000) as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_never_share_a_prefix() {
        // Account 1's prefix must not be a prefix of account 256's keys, and so on.
        let a = collection(1, "clients");
        let b = record(256, "clients", 1);
        assert!(!b.starts_with(&a));
        assert!(record(1, "clients", 2).starts_with(&a));
        assert!(!record(1, "clients-x", 2).starts_with(&a));
    }

    /// Every family of keys under an account has a prefix of its own that is no prefix of
    /// another's, so that no scan of one family reaches into another.
    #[test]
    fn key_families_are_disjoint() {
        let families: Vec<(&str, Vec<u8>)> = vec![
            ("records", collection(7, "invoices")),
            ("files", segment(7, "file")),
            ("singletons", segment(7, "one")),
            ("parents", segment(7, "parent")),
            ("indexes", segment(7, "ix")),
            ("claims", all_number_claims(7)),
            ("client documents", all_client_documents(7)),
            ("pdfs", segment(7, "pdf")),
            ("e-invoices", segment(7, "einvoice")),
            ("supplier incomings", all_supplier_incomings(7)),
            ("webhooks", segment(7, "hooks")),
        ];
        for (i, (a, ka)) in families.iter().enumerate() {
            for (b, kb) in families.iter().skip(i + 1) {
                assert!(
                    !ka.starts_with(kb) && !kb.starts_with(ka),
                    "{a} and {b} overlap"
                );
            }
        }
        assert!(file(7, "templates", "base64file", 1).starts_with(&families[1].1));
        assert!(pdf(7, "invoices", 1, "original").starts_with(&families[7].1));
        assert!(number_claim(7, "invoice", "RE-", 1).starts_with(&families[5].1));
        assert!(einvoice(7, "invoices", 1, "factur-x").starts_with(&families[8].1));
        let issued = einvoices_issued(7, "invoices", 1);
        assert!(issued.starts_with(&families[8].1));
        for profile in ["factur-x", "xrechnung-cii", "xrechnung-ubl"] {
            let one = einvoice(7, "invoices", 1, profile);
            assert!(!one.starts_with(&issued) && !issued.starts_with(&one));
        }
        assert!(client_document(7, 3, b'i', 1).starts_with(&families[6].1));
        assert!(supplier_incoming(7, 3, 1).starts_with(&families[9].1));
        for k in [
            webhooks_on(7),
            webhook_secret(7, 1),
            delivery_due(7, -5, 1),
            overdue_day(7),
        ] {
            assert!(k.starts_with(&families[10].1));
        }
        assert!(delivery_due(7, 3, 1).starts_with(&deliveries_due(7)));
        assert!(!webhooks_on(7).starts_with(&deliveries_due(7)));
        assert!(!overdue_day(7).starts_with(&webhooks_on(7)));
        // Global keys and account keys never meet.
        assert_ne!(accounts()[0], account(1)[0]);
        assert!(!api_key(&[0; 32]).starts_with(&accounts()));
        assert!(!data_version().starts_with(&counter("")));
    }

    #[test]
    fn a_number_claim_names_its_range() {
        let claim = number_claim(7, "credit_note", "GS/[YYYY]/", 12);
        assert_eq!(number_claim_range(7, &claim), Some("credit_note"));
        assert_eq!(number_claim_range(8, &claim), None, "another account's");
        assert_eq!(number_claim_range(7, &client_documents(7, 1)), None);
    }

    #[test]
    fn sortable_numbers_sort_as_numbers() {
        let mut values = [-5, 3, 0, i32::MIN, i32::MAX, -1];
        let mut keys: Vec<[u8; 4]> = values.iter().map(|v| sortable_i32(*v)).collect();
        values.sort();
        keys.sort();
        let back: Vec<i32> = keys.iter().map(|k| i32_of_sortable(k).unwrap()).collect();
        assert_eq!(back, values);
        assert_eq!(i32_of_sortable(&[1, 2, 3]), None);
    }
}
