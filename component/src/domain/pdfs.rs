//! Stored PDFs of documents: the rendered original, its print version (no background) and
//! an uploaded signed copy, each under its document's key.

use serde::{Deserialize, Serialize};

use super::Error;
use crate::caps::{Read, Write};
use crate::store;

/// Which file of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Original,
    Print,
    Signed,
}

impl Variant {
    fn tag(self) -> &'static str {
        match self {
            Variant::Original => "original",
            Variant::Print => "print",
            Variant::Signed => "signed",
        }
    }

    const ALL: [Variant; 3] = [Variant::Original, Variant::Print, Variant::Signed];
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredPdf {
    pub id: u64,
    pub created: i64,
    pub filename: String,
    pub content: Vec<u8>,
}

fn key(account: u64, collection: &str, document: u64, variant: Variant) -> Vec<u8> {
    let mut k = store::account_prefix(account);
    k.extend_from_slice(b"pdf/");
    k.extend_from_slice(collection.as_bytes());
    k.push(b'/');
    k.extend_from_slice(&document.to_be_bytes());
    k.extend_from_slice(variant.tag().as_bytes());
    k
}

/// Stores a file of the document `(collection, id)`.
pub fn save(
    txn: &mut dyn Write,
    account: u64,
    (collection, document): (&str, u64),
    variant: Variant,
    created: i64,
    filename: &str,
    content: Vec<u8>,
) -> Result<StoredPdf, Error> {
    let pdf = StoredPdf {
        id: store::next_id(txn, "pdfs")?,
        created,
        filename: filename.to_owned(),
        content,
    };
    txn.put(
        &key(account, collection, document, variant),
        &store::encode(&pdf),
    )?;
    Ok(pdf)
}

pub fn load(
    txn: &dyn Read,
    account: u64,
    collection: &str,
    document: u64,
    variant: Variant,
) -> Result<Option<StoredPdf>, Error> {
    match txn.get(&key(account, collection, document, variant))? {
        Some(bytes) => Ok(Some(store::decode(&bytes)?)),
        None => Ok(None),
    }
}

pub fn delete_all(
    txn: &mut dyn Write,
    account: u64,
    collection: &str,
    document: u64,
) -> Result<(), Error> {
    for v in Variant::ALL {
        txn.delete(&key(account, collection, document, v))?;
    }
    Ok(())
}
