//! Lists of clients: the API's filters (`Filter`) and one page of the matching clients in
//! order with their number (`page`).
//!
//! The filters are combined with AND, the values of one filter with OR. A page reads as
//! few clients as the filter allows: the filters backed by an index (number, a part of the
//! name, invoices, tags, property values) give the ids of the candidates, and only those
//! are loaded and checked against the whole filter; a filter of the other fields alone
//! reads every client of the account.

use std::collections::BTreeSet;

use super::Error;
use super::clients::CLIENTS;
use super::documents::{DocKind, storage};
use super::properties::CLIENT_PROPERTIES;
use super::property_values::CLIENT_PROPERTY_VALUES;
use super::record_tags;
use super::records;
use super::schema::{Record, parse_bool};
use crate::caps::Read;
use crate::limits;

/// The list filters of clients, parsed. Texts are in lower case; each list is "any of
/// these" unless it says otherwise.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Parts of the name.
    pub names: Vec<String>,
    /// Serial numbers (`number`), whatever the prefix.
    pub numbers: Vec<i64>,
    /// Parts of the e-mail address.
    pub emails: Vec<String>,
    /// Parts of the first name.
    pub first_names: Vec<String>,
    /// Parts of the last name.
    pub last_names: Vec<String>,
    /// Country codes, in upper case.
    pub country_codes: Vec<String>,
    /// Parts of the note.
    pub notes: Vec<String>,
    /// The clients of these invoices.
    pub invoice_ids: Vec<u64>,
    /// All of these tags.
    pub tags: Vec<String>,
    /// Any of these tags.
    pub tags_any: Vec<String>,
    /// A property's id and the values (any of them) the client holds for it.
    pub properties: Vec<(u64, Vec<String>)>,
}

/// Whether `text` contains any of the parts (in lower case); true when there are none.
fn contains_any(text: &str, parts: &[String]) -> bool {
    if parts.is_empty() {
        return true;
    }
    let text = text.to_lowercase();
    parts.iter().any(|p| text.contains(p.as_str()))
}

impl Filter {
    /// Whether a client matches the filters on its own fields (those on other records,
    /// invoices, tags and property values, are matched through their ids).
    fn matches(&self, r: &Record) -> bool {
        contains_any(r.text("name"), &self.names)
            && contains_any(r.text("email"), &self.emails)
            && contains_any(r.text("first_name"), &self.first_names)
            && contains_any(r.text("last_name"), &self.last_names)
            && contains_any(r.text("note"), &self.notes)
            && (self.numbers.is_empty()
                || r.int("number").is_some_and(|n| self.numbers.contains(&n)))
            && (self.country_codes.is_empty()
                || self
                    .country_codes
                    .iter()
                    .any(|c| c.eq_ignore_ascii_case(r.text("country_code"))))
    }

    /// The ids the indexed filters allow, in id order; `None` when no filter has an index
    /// (every client is a candidate).
    fn candidates(&self, txn: &dyn Read, account: u64) -> Result<Option<Vec<u64>>, Error> {
        let mut sets: Vec<BTreeSet<u64>> = Vec::new();
        for (property, values) in &self.properties {
            sets.push(holding(txn, account, *property, values)?);
        }
        for tag in &self.tags {
            sets.push(
                record_tags::CLIENTS
                    .tagged(txn, account, tag)?
                    .into_iter()
                    .collect(),
            );
        }
        if !self.tags_any.is_empty() {
            let mut any = BTreeSet::new();
            for tag in &self.tags_any {
                any.extend(record_tags::CLIENTS.tagged(txn, account, tag)?);
            }
            sets.push(any);
        }
        if !self.invoice_ids.is_empty() {
            let mut clients = BTreeSet::new();
            for id in &self.invoice_ids {
                match storage::load(txn, account, DocKind::Invoice, *id) {
                    Ok(doc) => {
                        clients.insert(doc.client_id);
                    }
                    Err(Error::NotFound(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            sets.push(clients);
        }
        if !self.numbers.is_empty() {
            let mut ids = BTreeSet::new();
            for n in &self.numbers {
                ids.extend(records::ids_where(txn, &CLIENTS, account, "number", *n)?);
            }
            sets.push(ids);
        }
        // Parts of the name narrow only when none is all white space.
        if !self.names.is_empty() {
            let mut ids = BTreeSet::new();
            let mut narrowed = true;
            for name in &self.names {
                match records::search(txn, &CLIENTS, account, "name", name)? {
                    Some(found) => ids.extend(found),
                    None => narrowed = false,
                }
            }
            if narrowed {
                sets.push(ids);
            }
        }
        // The smallest set first, so that the intersection only shrinks from there.
        sets.sort_by_key(BTreeSet::len);
        let mut sets = sets.into_iter();
        let Some(first) = sets.next() else {
            return Ok(None);
        };
        let ids = sets.fold(first, |acc, s| acc.intersection(&s).copied().collect());
        Ok(Some(ids.into_iter().collect()))
    }
}

/// The ids of the clients holding one of `values` for client property `property`: in any
/// case, and for a CHECKBOX as 1 or 0 (true, false … read as those). A property the
/// account does not have is refused.
fn holding(
    txn: &dyn Read,
    account: u64,
    property: u64,
    values: &[String],
) -> Result<BTreeSet<u64>, Error> {
    let param = format!("property{property}");
    let definition = match records::load(txn, &CLIENT_PROPERTIES, account, property) {
        Ok(p) => p,
        Err(Error::NotFound(_)) => {
            return Err(Error::invalid(format!(
                "{param}: client property {property} does not exist"
            )));
        }
        Err(e) => return Err(e),
    };
    let mut wanted = Vec::new();
    for v in values {
        if definition.text("type") == "CHECKBOX" {
            match parse_bool(v) {
                Some(b) => wanted.push(if b { "1" } else { "0" }.to_owned()),
                None => {
                    return Err(Error::invalid(format!(
                        "{param} must be 1 or 0 (the property is a CHECKBOX), got \"{v}\""
                    )));
                }
            }
        } else {
            wanted.push(v.trim().to_lowercase());
        }
    }
    let held = records::children(
        txn,
        &CLIENT_PROPERTY_VALUES,
        account,
        "client_property_id",
        property,
    )?;
    Ok(held
        .iter()
        .filter(|v| wanted.contains(&v.text("value").trim().to_lowercase()))
        .filter_map(|v| v.int("client_id"))
        .map(|c| c as u64)
        .collect())
}

/// One page of the clients matching the filter, in `order` (id order when empty), and
/// the number of all matches. Clients are read a batch at a time and none is held but the
/// page's (`records::Pager`), whatever the account's size.
pub fn page(
    txn: &dyn Read,
    account: u64,
    f: &Filter,
    order: &[(&'static str, bool)],
    page: u32,
    per_page: u32,
) -> Result<(Vec<Record>, usize), Error> {
    let mut pager = records::Pager::new(order, page, per_page);
    let mut each = |r: Record| {
        if f.matches(&r) {
            pager.push(r);
        }
    };
    match f.candidates(txn, account)? {
        Some(ids) => {
            for batch in ids.chunks(limits::LOAD_BATCH) {
                records::load_many(txn, &CLIENTS, account, batch)?
                    .into_iter()
                    .for_each(&mut each);
            }
        }
        None => records::for_each(txn, &CLIENTS, account, |r| {
            each(r);
            Ok(())
        })?,
    }
    pager.finish(|ids| records::load_many(txn, &CLIENTS, account, ids))
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::caps::mem::MemStore;
    use crate::caps::{Store, StoreError};
    use crate::domain::Ctx;
    use crate::domain::schema::{Changes, Scalar};

    /// Reads through `inner`, counting the records it reads (client records only, not
    /// index entries).
    struct Counting<'a> {
        inner: &'a dyn Read,
        clients_read: Cell<usize>,
    }

    impl Counting<'_> {
        fn count(&self, key: &[u8]) {
            let clients = crate::store::keys::collection(1, CLIENTS.collection);
            if key.starts_with(&clients) {
                self.clients_read.set(self.clients_read.get() + 1);
            }
        }
    }

    impl Read for Counting<'_> {
        fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
            self.count(key);
            self.inner.get(key)
        }
        fn scan_lent(
            &self,
            prefix: &[u8],
            after: Option<&[u8]>,
            limit: u32,
            reverse: bool,
            f: &mut dyn FnMut(&[u8], &[u8]),
        ) -> Result<usize, StoreError> {
            self.inner
                .scan_lent(prefix, after, limit, reverse, &mut |k, v| {
                    self.count(k);
                    f(k, v)
                })
        }
    }

    /// A lookup by number or by a part of the name loads the clients it finds and no
    /// other; a filter without an index reads them all.
    #[test]
    fn number_and_name_lookups_read_only_the_clients_they_find() {
        const CLIENTS_MADE: i64 = 300;
        let store = MemStore::default();
        let ctx = Ctx {
            account_id: 1,
            user_id: 1,
            is_admin: true,
            now: 0,
            utc_offset: 0,
        };
        let mut w = store.begin_write().unwrap();
        for k in 1..=CLIENTS_MADE {
            let changes = Changes {
                values: vec![
                    ("name", Some(Scalar::Text(format!("Kunde {k} GmbH")))),
                    ("number", Some(Scalar::Int(k))),
                    ("email", Some(Scalar::Text(format!("k{k}@example.com")))),
                ],
                ..Changes::default()
            };
            records::create(&ctx, w.as_mut(), &CLIENTS, &changes).unwrap();
        }
        w.commit().unwrap();
        let read = store.begin_read().unwrap();
        let check = |f: Filter, found: &[&str], read_at_most: usize| {
            let counting = Counting {
                inner: read.as_ref(),
                clients_read: Cell::new(0),
            };
            let (page, total) = page(&counting, 1, &f, &[], 1, 100).unwrap();
            let names: Vec<&str> = page.iter().map(|r| r.text("name")).collect();
            assert_eq!(names, found, "{f:?}");
            assert_eq!(total, found.len());
            assert!(
                counting.clients_read.get() <= read_at_most,
                "{f:?} read {} clients",
                counting.clients_read.get()
            );
        };
        check(
            Filter {
                numbers: vec![150],
                ..Filter::default()
            },
            &["Kunde 150 GmbH"],
            1,
        );
        check(
            Filter {
                names: vec!["de 150 g".into()],
                ..Filter::default()
            },
            &["Kunde 150 GmbH"],
            1,
        );
        // "de 15" is a part of 15, 150 to 159: those and no other are read.
        check(
            Filter {
                names: vec!["de 15".into()],
                numbers: vec![15, 151, 299],
                ..Filter::default()
            },
            &["Kunde 15 GmbH", "Kunde 151 GmbH"],
            3,
        );
        check(
            Filter {
                emails: vec!["k150@".into()],
                ..Filter::default()
            },
            &["Kunde 150 GmbH"],
            CLIENTS_MADE as usize,
        );
    }
}
