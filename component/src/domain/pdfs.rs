//! Stored PDFs of documents: the rendered original, its print version (no background) and
//! an uploaded signed copy, each under its document's key.

use super::Error;
use crate::caps::{Read, Write};
use crate::store::{self, forms, keys};

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

/// A document's PDF file as the service keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPdf {
    pub id: u64,
    pub created: i64,
    pub filename: String,
    pub content: Vec<u8>,
}

fn key(account: u64, collection: &str, document: u64, variant: Variant) -> Vec<u8> {
    keys::pdf(account, collection, document, variant.tag())
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
    let stored = forms::StoredPdf {
        id: pdf.id,
        created: pdf.created,
        filename: pdf.filename,
        content: pdf.content,
    };
    txn.put(
        &key(account, collection, document, variant),
        &store::encode(&stored),
    )?;
    Ok(StoredPdf {
        id: stored.id,
        created: stored.created,
        filename: stored.filename,
        content: stored.content,
    })
}

pub fn load(
    txn: &dyn Read,
    account: u64,
    collection: &str,
    document: u64,
    variant: Variant,
) -> Result<Option<StoredPdf>, Error> {
    match txn.get(&key(account, collection, document, variant))? {
        Some(bytes) => {
            let forms::StoredPdf {
                id,
                created,
                filename,
                content,
            } = store::decode_plain(&bytes)?;
            Ok(Some(StoredPdf {
                id,
                created,
                filename,
                content,
            }))
        }
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
