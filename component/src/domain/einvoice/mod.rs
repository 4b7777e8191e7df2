//! A document's EN 16931 e-invoices: the model of a completed document (`build`, from the
//! document, its items, client and settings), and the e-invoices kept for it. The model,
//! its rules, writers and readers are the `faktura_einvoice` crate's; this module maps
//! Faktura's records to its model and keeps what it makes, and never writes XML itself.
//!
//! Every profile's e-invoice is made once, when the document is completed, and kept: its
//! XML, or the rules its data failed. Later changes to the settings, the client or a
//! template never change an issued e-invoice.

pub mod build;

use faktura_einvoice::derive::{self, Situation};
use faktura_einvoice::{Profile, Violation, model, rules, write};

use super::Error;
use super::clients::CLIENTS;
use super::contacts;
use super::country_taxes;
use super::documents::items::Item;
use super::documents::{DocKind, Document, storage};
use super::records;
use super::schema::Record;
use super::settings;
use crate::caps::{Read, Write};
use crate::store::forms::{StoredEinvoice, StoredEinvoicesIssued};
use crate::store::{self, keys};

/// A document's e-invoice of one profile as it was fixed at completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Issued {
    /// The XML, and the number of the document it is named after.
    Xml { number: String, xml: Vec<u8> },
    /// The rules the document's data failed for this profile.
    Refused(Vec<Violation>),
}

fn key(account: u64, kind: DocKind, id: u64, profile: Profile) -> Vec<u8> {
    keys::einvoice(account, kind.collection(), id, profile.name())
}

/// The key of the list of a document's profiles whose XML was issued (`issued_as_xml`).
pub fn issued_key(account: u64, kind: DocKind, id: u64) -> Vec<u8> {
    keys::einvoices_issued(account, kind.collection(), id)
}

/// The client's tax situation as the VAT categories need it.
fn situation(txn: &dyn Read, account: u64, client: &Record) -> Result<Situation, Error> {
    let country = client.text("country_code");
    Ok(match client.text("tax_rule") {
        "NO_TAX" => Situation::Exempt,
        "TAX" => Situation::Taxed,
        _ if !country.is_empty() && country_taxes::is_tax_free_country(txn, account, country)? => {
            if derive::in_eu(country) {
                Situation::EuTaxFree
            } else {
                Situation::Export
            }
        }
        _ => Situation::Taxed,
    })
}

/// The model of a document as it is now, and the rule check of each profile.
pub fn model(txn: &dyn Read, account: u64, doc: &Document) -> Result<model::Invoice, Error> {
    let items = storage::items(txn, account, doc.kind, doc.id)?;
    let client = records::load(txn, &CLIENTS, account, doc.client_id)?;
    let settings = settings::load_stored(txn, account)?;
    model_of(txn, account, doc, &items, &client, &settings)
}

/// The model of a document whose items, client and settings the caller has loaded.
pub fn model_of(
    txn: &dyn Read,
    account: u64,
    doc: &Document,
    items: &[Item],
    client: &Record,
    settings: &Record,
) -> Result<model::Invoice, Error> {
    let preceding = match (doc.kind, doc.invoice_id) {
        (DocKind::CreditNote, Some(invoice)) if invoice > 0 => {
            match storage::load(txn, account, DocKind::Invoice, invoice as u64) {
                Ok(inv) if !inv.formatted_number.is_empty() => {
                    Some((inv.formatted_number, inv.date))
                }
                Ok(_) | Err(Error::NotFound(_)) => None,
                Err(e) => return Err(e),
            }
        }
        _ => None,
    };
    let contact = match doc.contact_id {
        Some(id) => contacts::of(txn, account, doc.client_id, id)?.ok(),
        None => None,
    };
    Ok(build::build(&build::Sources {
        doc,
        items,
        client,
        settings,
        situation: situation(txn, account, client)?,
        preceding,
        contact: contact.as_ref(),
    }))
}

/// The e-invoice of `inv` in `profile`: its XML, or the rules it fails.
pub fn make(inv: &model::Invoice, doc: &Document, profile: Profile) -> Issued {
    let exact_vat = doc.basis() == super::money::PriceBasis::Net;
    match rules::check(inv, profile, exact_vat) {
        v if v.is_empty() => Issued::Xml {
            number: doc.formatted_number.clone(),
            xml: write(inv, profile),
        },
        v => Issued::Refused(v),
    }
}

/// The profile a client receives: its `einvoice_profile`, else XRechnung (CII).
pub fn profile_of(client: &Record) -> Profile {
    Profile::parse(client.text("einvoice_profile")).unwrap_or(Profile::XrechnungCii)
}

/// The profiles whose rules a completion must pass: Factur-X when the settings make every
/// PDF a Factur-X hybrid, and the profile the client receives.
pub fn required(settings: &Record, client: &Record) -> Vec<Profile> {
    let mut out = Vec::new();
    if settings.bool("einvoice_pdf") {
        out.push(Profile::FacturX);
    }
    if let Some(p) = Profile::parse(client.text("einvoice_profile"))
        && !out.contains(&p)
    {
        out.push(p);
    }
    out
}

/// What a completion of `doc` now would be refused for: one message per rule and field of
/// the profiles it must pass (`required`), as `issue` refuses them; none when it would go
/// through. Reads only.
pub fn refusals(txn: &dyn Read, account: u64, doc: &Document) -> Result<Vec<String>, Error> {
    let client = records::load(txn, &CLIENTS, account, doc.client_id)?;
    let settings = settings::load_stored(txn, account)?;
    let items = storage::items(txn, account, doc.kind, doc.id)?;
    let inv = model_of(txn, account, doc, &items, &client, &settings)?;
    let mut refused: Vec<String> = Vec::new();
    for profile in required(&settings, &client) {
        if let Issued::Refused(violations) = make(&inv, doc, profile) {
            for v in violations {
                let text = format!("{}: {}", profile.name(), v.describe());
                if !refused.contains(&text) {
                    refused.push(text);
                }
            }
        }
    }
    Ok(refused)
}

/// Makes and keeps every profile's e-invoice of a document being completed, and answers
/// them. Refused (and nothing kept) when the data fails a rule of a `required` profile:
/// one message per rule and field.
pub fn issue(
    txn: &mut dyn Write,
    account: u64,
    doc: &Document,
    inv: &model::Invoice,
    required: &[Profile],
) -> Result<Vec<(Profile, Issued)>, Error> {
    let mut refused: Vec<String> = Vec::new();
    let mut issued = Vec::with_capacity(Profile::ALL.len());
    for profile in Profile::ALL {
        let made = make(inv, doc, profile);
        if let Issued::Refused(violations) = &made
            && required.contains(&profile)
        {
            for v in violations {
                let text = format!("{}: {}", profile.name(), v.describe());
                if !refused.contains(&text) {
                    refused.push(text);
                }
            }
        }
        issued.push((profile, made));
    }
    if !refused.is_empty() {
        return Err(Error::Invalid(refused));
    }
    for (profile, e) in &issued {
        let stored = match e {
            Issued::Xml { number, xml } => StoredEinvoice::Xml {
                number: number.clone(),
                xml: xml.clone(),
            },
            Issued::Refused(v) => StoredEinvoice::Refused(
                v.iter()
                    .map(|v| (v.rule.clone(), v.field.clone(), v.message.clone()))
                    .collect(),
            ),
        };
        txn.put(
            &key(account, doc.kind, doc.id, *profile),
            &store::encode(&stored),
        )?;
    }
    let xml = issued
        .iter()
        .filter(|(_, e)| matches!(e, Issued::Xml { .. }))
        .map(|(p, _)| p.name().to_owned())
        .collect();
    txn.put(
        &issued_key(account, doc.kind, doc.id),
        &store::encode(&StoredEinvoicesIssued { xml }),
    )?;
    Ok(issued)
}

/// The e-invoice of `profile` fixed when the document was completed; none for a draft.
pub fn load(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    id: u64,
    profile: Profile,
) -> Result<Option<Issued>, Error> {
    let Some(bytes) = txn.get(&key(account, kind, id, profile))? else {
        return Ok(None);
    };
    Ok(Some(match store::decode_plain::<StoredEinvoice>(&bytes)? {
        StoredEinvoice::Xml { number, xml } => Issued::Xml { number, xml },
        StoredEinvoice::Refused(list) => Issued::Refused(
            list.into_iter()
                .map(|(rule, field, message)| Violation {
                    rule,
                    field,
                    message,
                })
                .collect(),
        ),
    }))
}

/// Whether the XML of a document's e-invoice in `profile` was issued (a draft has none),
/// read from the list `issue` keeps, without the XML. A document completed before the list
/// was kept has none: its profile's own record says.
pub fn issued_as_xml(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    id: u64,
    profile: Profile,
) -> Result<bool, Error> {
    match txn.get(&issued_key(account, kind, id))? {
        Some(bytes) => Ok(store::decode_plain::<StoredEinvoicesIssued>(&bytes)?
            .xml
            .iter()
            .any(|name| name == profile.name())),
        None => Ok(matches!(
            load(txn, account, kind, id, profile)?,
            Some(Issued::Xml { .. })
        )),
    }
}

/// Whether a document has its e-invoices (documents completed before they existed have
/// them made by the migration to data version 4).
pub fn exists(txn: &dyn Read, account: u64, kind: DocKind, id: u64) -> Result<bool, Error> {
    Ok(txn
        .get(&key(account, kind, id, Profile::XrechnungCii))?
        .is_some())
}

/// Forgets a document's e-invoices (the document is deleted).
pub fn delete_all(txn: &mut dyn Write, account: u64, kind: DocKind, id: u64) -> Result<(), Error> {
    for p in Profile::ALL {
        txn.delete(&key(account, kind, id, p))?;
    }
    txn.delete(&issued_key(account, kind, id))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::mem::MemStore;
    use crate::caps::{Store, StoreError};

    /// A reader that refuses to read any e-invoice's own record (its XML).
    struct NoXml(Box<dyn Read>);

    impl Read for NoXml {
        fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
            let profile_key = Profile::ALL.iter().any(|p| key == key_of(*p).as_slice());
            assert!(!profile_key, "an e-invoice's XML was read");
            self.0.get(key)
        }
        fn scan_lent(
            &self,
            prefix: &[u8],
            after: Option<&[u8]>,
            limit: u32,
            reverse: bool,
            f: &mut dyn FnMut(&[u8], &[u8]),
        ) -> Result<usize, StoreError> {
            self.0.scan_lent(prefix, after, limit, reverse, f)
        }
    }

    fn key_of(profile: Profile) -> Vec<u8> {
        key(1, DocKind::Invoice, 5, profile)
    }

    /// Invoice 5 of account 1 with its XRechnung (CII) issued and its Factur-X refused, as
    /// `issue` keeps them; with the list of the issued ones when `listed`.
    fn stored(listed: bool) -> MemStore {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let xml = StoredEinvoice::Xml {
            number: "RE-5".into(),
            xml: b"<x/>".to_vec(),
        };
        let refused = StoredEinvoice::Refused(vec![("BR-1".into(), "f".into(), "m".into())]);
        w.put(&key_of(Profile::XrechnungCii), &store::encode(&xml))
            .unwrap();
        w.put(&key_of(Profile::FacturX), &store::encode(&refused))
            .unwrap();
        if listed {
            let list = StoredEinvoicesIssued {
                xml: vec![Profile::XrechnungCii.name().to_owned()],
            };
            w.put(&issued_key(1, DocKind::Invoice, 5), &store::encode(&list))
                .unwrap();
        }
        w.commit().unwrap();
        store
    }

    #[test]
    fn the_issued_list_answers_without_reading_an_xml() {
        let store = stored(true);
        let txn = NoXml(store.begin_read().unwrap());
        let asked = |p| issued_as_xml(&txn, 1, DocKind::Invoice, 5, p).unwrap();
        assert!(asked(Profile::XrechnungCii));
        assert!(!asked(Profile::FacturX), "refused");
        assert!(!asked(Profile::XrechnungUbl), "not issued");
    }

    #[test]
    fn a_document_completed_before_the_list_is_answered_by_its_records() {
        let store = stored(false);
        let txn = store.begin_read().unwrap();
        let asked = |p| issued_as_xml(txn.as_ref(), 1, DocKind::Invoice, 5, p).unwrap();
        assert!(asked(Profile::XrechnungCii));
        assert!(!asked(Profile::FacturX), "refused");
        assert!(!asked(Profile::XrechnungUbl), "not issued");
    }

    #[test]
    fn a_deleted_document_keeps_no_e_invoice_nor_its_list() {
        let store = stored(true);
        let mut w = store.begin_write().unwrap();
        delete_all(w.as_mut(), 1, DocKind::Invoice, 5).unwrap();
        w.commit().unwrap();
        let txn = store.begin_read().unwrap();
        let prefix = keys::einvoice(1, DocKind::Invoice.collection(), 5, "");
        assert_eq!(txn.scan(&prefix, None, 10, false).unwrap(), Vec::new());
    }
}
