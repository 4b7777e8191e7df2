//! The stored forms of records: plain serde structs whose postcard encoding is the bytes on
//! disk. They name no domain type; the domain converts its types to and from them by
//! hand (destructuring every field, so that a field added on either side and forgotten on
//! the other does not compile).
//!
//! Field order and variant order are the layout. A form never changes; what a record
//! gains later goes into its tail (`tail!`), field after field, where a record written
//! before a field existed simply ends and reads the field's default: growing needs no new
//! data version. Enums may gain variants at their end. Anything else (a field changed,
//! removed or moved) needs a new data version and a migration; `layout_tests` compares
//! the forms with the layout recorded in `forms.layout.json` and fails on a change the
//! data version does not account for.
//!
//! Decimals are generic over their `DecimalForm`, because records written at data version 1
//! hold them as 16-element tuples and later ones as one 16-byte string: `store::decode`
//! picks the form by the record's version byte.

use std::collections::BTreeMap;
use std::fmt;

use rust_decimal::Decimal;
use serde::de::Visitor;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a stored form gained after it: written behind the form, field after field (its
/// `Serialize`, which postcard writes as the fields one after the other), and read back
/// up to where the record ends.
pub trait Tail: Default + Serialize {
    /// The fields' names and types, in their order (the layout test reads them).
    const LAYOUT: &'static [(&'static str, &'static str)];
    /// Reads the fields a record holds (`rest`: what follows its form); those it ends
    /// before keep their defaults. Bytes left after the last known field are a record
    /// of a later layout: an error.
    fn read_from(rest: &[u8]) -> Result<Self, postcard::Error>;
}

/// Declares a tail: a struct of its fields with `Tail`. It is written as any struct
/// (postcard: its fields one after the other, no lengths or names); reading it field by
/// field is what lets a record end early.
macro_rules! tail {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident: $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Default, Serialize)]
        pub struct $name {
            $($(#[$fdoc])* pub $field: $ty,)*
        }

        impl Tail for $name {
            const LAYOUT: &'static [(&'static str, &'static str)] =
                &[$((stringify!($field), stringify!($ty))),*];

            fn read_from(rest: &[u8]) -> Result<$name, postcard::Error> {
                let mut tail = $name::default();
                let mut rest = rest;
                $(
                    if rest.is_empty() {
                        return Ok(tail);
                    }
                    let (value, after) = postcard::take_from_bytes::<$ty>(rest)?;
                    tail.$field = value;
                    rest = after;
                )*
                if rest.is_empty() {
                    Ok(tail)
                } else {
                    Err(postcard::Error::DeserializeBadEncoding)
                }
            }
        }
    };
}

/// How a record holds a decimal.
pub trait DecimalForm: Copy {
    fn of(d: Decimal) -> Self;
    fn get(self) -> Decimal;
}

/// A decimal as its exact 16 bytes in one byte string (data version 2 on): postcard reads
/// it in one call.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Dec16(pub Decimal);

impl DecimalForm for Dec16 {
    fn of(d: Decimal) -> Dec16 {
        Dec16(d)
    }
    fn get(self) -> Decimal {
        self.0
    }
}

impl Serialize for Dec16 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0.serialize())
    }
}

impl<'de> Deserialize<'de> for Dec16 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dec16, D::Error> {
        struct Bytes16;
        impl Visitor<'_> for Bytes16 {
            type Value = [u8; 16];
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("the 16 bytes of a decimal")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<[u8; 16], E> {
                v.try_into().map_err(|_| E::invalid_length(v.len(), &self))
            }
        }
        Ok(Dec16(Decimal::deserialize(d.deserialize_bytes(Bytes16)?)))
    }
}

/// A decimal as data version 1 wrote it: its 16 bytes as a tuple, read element by
/// element.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DecTuple(pub [u8; 16]);

impl DecimalForm for DecTuple {
    fn of(d: Decimal) -> DecTuple {
        DecTuple(d.serialize())
    }
    fn get(self) -> Decimal {
        Decimal::deserialize(self.0)
    }
}

/// The kinds of documents, in variant order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StoredKind {
    Invoice,
    CreditNote,
    Offer,
    Confirmation,
    DeliveryNote,
    Recurring,
    Reminder,
}

/// A document's stored status, in variant order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StoredStatus {
    Draft,
    Open,
    Paid,
    Canceled,
    Won,
    Lost,
    Cleared,
    Completed,
    Created,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "D: Deserialize<'de>", serialize = "D: Serialize"))]
pub struct StoredTax<D> {
    pub name: String,
    pub rate: D,
    pub net: D,
    pub amount: D,
}

/// A document (invoice or credit note). Dates are Julian day numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "D: Deserialize<'de>", serialize = "D: Serialize"))]
pub struct StoredDocument<D> {
    pub kind: StoredKind,
    pub id: u64,
    pub client_id: u64,
    pub contact_id: Option<i64>,
    pub created: i64,
    pub updated: i64,
    pub number: i64,
    pub number_pre: String,
    pub number_length: i64,
    pub formatted_number: String,
    pub status: StoredStatus,
    pub date: i32,
    pub supply_date: String,
    pub supply_date_type: String,
    pub due_date: i32,
    pub address: String,
    pub discount_rate: D,
    pub discount_date: i32,
    pub label: String,
    pub intro: String,
    pub note: String,
    pub currency_code: String,
    pub quote: D,
    pub payment_types: String,
    pub net_gross: String,
    pub reduction: String,
    pub template_id: Option<i64>,
    pub tax_free: bool,
    pub total_net: D,
    pub total_gross: D,
    pub total_net_unreduced: D,
    pub total_gross_unreduced: D,
    pub total_reduction: D,
    pub taxes: Vec<StoredTax<D>>,
    pub paid_amount: D,
    pub paid_types: Vec<String>,
    pub title: String,
    pub invoice_id: Option<i64>,
    pub free_text_id: Option<i64>,
    pub tags: Vec<String>,
    pub article_ids: Vec<i64>,
}

tail!(
    /// What a document gained after its `StoredDocument` (since data version 4), stored
    /// after it.
    StoredDocumentTail {
        buyer_reference: String,
        order_reference: String,
        offer_id: Option<i64>,
        confirmation_id: Option<i64>,
        /// A Julian day number.
        validity_date: i32,
        recurring_id: Option<i64>,
        schedule: Option<StoredSchedule>,
        dunning: Option<StoredDunning>,
        /// The document's link to the customer portal; empty without one.
        portal_url: String,
        /// BT-12 of its e-invoices.
        contract_reference: String,
    }
);

/// What a reminder holds beyond a document. Dates are Julian day numbers.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StoredDunning {
    pub reminder_text_id: i64,
    pub level: i64,
    pub level_name: String,
    pub subject: String,
    pub claim: Dec16,
    pub invoice_number: String,
    pub invoice_date: Option<i32>,
    pub invoice_due_date: Option<i32>,
    pub is_old: bool,
    pub flat_charge: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "D: Deserialize<'de>", serialize = "D: Serialize"))]
pub struct StoredItem<D> {
    pub id: u64,
    pub document_id: u64,
    pub position: i64,
    pub article_id: Option<i64>,
    pub unit: String,
    pub quantity: D,
    pub unit_price: D,
    pub tax_name: String,
    pub tax_rate: D,
    pub title: String,
    pub description: String,
    pub reduction: String,
    pub product_type: String,
    pub created: i64,
    pub updated: i64,
}

/// The schedule of a recurring invoice. Dates are Julian day numbers.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StoredSchedule {
    pub name: String,
    pub cycle: String,
    pub cycle_number: i64,
    pub action: String,
    pub hour: i64,
    pub start_date: Option<i32>,
    pub end_date: Option<i32>,
    pub iterations: i64,
    pub counter: i64,
    pub slot: i64,
    pub last_creation_date: Option<i32>,
    pub next_creation_date: Option<i32>,
    pub next_run: Option<i64>,
    pub ultimo: bool,
    pub due_days: i64,
    pub discount_days: i64,
    pub email_sender: String,
    pub email_subject: String,
    pub email_message: String,
    pub email_filename: String,
    pub email_bcc: String,
    pub letter_color: bool,
    pub letter_duplex: bool,
    pub letter_paper_weight: i64,
    pub last_error: String,
}

tail!(
    /// What an item gained after its `StoredItem` (since data version 4), stored after it.
    StoredItemTail {
        unit_code: String,
        tax_category: String,
        tax_exemption_reason: String,
        optional: bool,
        /// Reminders: FEE, FLAT_CHARGE, INTEREST or empty.
        charge: String,
    }
);

/// A document's e-invoice of one profile, fixed at completion: the document's number (its
/// file is named after it) and its XML, or the rules its data failed (rule id, field,
/// message). The XML is kept as it is: inflating it on every read cost a third of the
/// e-invoice GET's throughput, for about 12 KB per document saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum StoredEinvoice {
    Xml {
        number: String,
        #[serde(with = "serde_bytes")]
        xml: Vec<u8>,
    },
    Refused(Vec<(String, String, String)>),
}

/// The profiles of a document's e-invoices whose XML was issued (by name), kept beside
/// them so that a page offering the download need not read an XML to know it exists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredEinvoicesIssued {
    pub xml: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "D: Deserialize<'de>", serialize = "D: Serialize"))]
pub struct StoredPayment<D> {
    pub id: u64,
    pub document_id: u64,
    pub created: i64,
    pub user_id: u64,
    pub date: i32,
    pub amount: D,
    pub comment: String,
    pub payment_type: String,
    pub mark_paid: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredComment {
    pub id: u64,
    pub parent_id: u64,
    pub created: i64,
    pub user_id: u64,
    pub comment: String,
    pub actionkey: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredTag {
    pub id: u64,
    pub document_id: u64,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredPdf {
    pub id: u64,
    pub created: i64,
    pub filename: String,
    /// Bytes as one postcard byte string: the same encoding as a sequence of `u8`, read
    /// and written in one copy instead of a call per byte.
    #[serde(with = "serde_bytes")]
    pub content: Vec<u8>,
}

/// A link of the customer portal, kept under the SHA-256 of its token (`hash`, kept again
/// here so that a lookup compares it): the account, what the link opens, when it was
/// issued, and when a view was last noted on the document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredPortalLink {
    pub hash: [u8; 32],
    pub account_id: u64,
    pub target: StoredPortalTarget,
    pub issued: i64,
    pub last_view: i64,
}

/// What a portal link opens, in variant order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum StoredPortalTarget {
    /// A document, by its kind's collection and its id.
    Document { collection: String, id: u64 },
    /// A client's session: the client's documents, until `expires` (Unix seconds).
    Client { id: u64, expires: i64 },
}

/// Count and totals of the documents under one kept sum key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "D: Deserialize<'de>", serialize = "D: Serialize"))]
pub struct StoredSums<D> {
    pub count: u64,
    pub net: D,
    pub gross: D,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredAccount {
    pub id: u64,
    pub name: String,
    pub created: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredUser {
    pub id: u64,
    pub account_id: u64,
    pub email: String,
    pub is_admin: bool,
    pub key_hash: [u8; 32],
    pub created: i64,
}

/// An API key's entry: who the key authenticates (data version 3 on; before, entries
/// held the user id alone or this, told apart only by trying, which the migration to
/// version 3 resolves).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredPrincipal {
    pub user_id: u64,
    pub account_id: u64,
    pub is_admin: bool,
}

/// A value of a record-shaped resource, in variant order. Its text is a `String`, or its
/// bytes where a reader takes it in place from the stored bytes (`StoredRecordPairsRef`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(
    deserialize = "D: Deserialize<'de>, T: Deserialize<'de>",
    serialize = "D: Serialize, T: Serialize"
))]
pub enum StoredScalar<D, T = String> {
    Text(T),
    Int(i64),
    Dec(D),
    /// A Julian day number.
    Date(i32),
    /// Unix seconds.
    DateTime(i64),
    Bool(bool),
}

/// A record of a record-shaped resource: its values by field name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "D: Deserialize<'de>", serialize = "D: Serialize"))]
pub struct StoredRecord<D> {
    pub values: BTreeMap<String, StoredScalar<D>>,
}

/// A [`StoredRecord`] as its reader takes it: postcard writes a map as its length and its
/// pairs, as it writes a sequence of pairs, so the pairs decode as they were written (by
/// name, a map's order) without a map built on the way
/// (`tests::a_stored_record_reads_as_its_pairs_in_order`).
#[derive(Debug, Deserialize)]
#[serde(bound(deserialize = "D: Deserialize<'de>"))]
pub struct StoredRecordPairs<D> {
    pub values: Vec<(String, StoredScalar<D>)>,
}

/// A [`StoredRecordPairs`] read in place, for a reader that keeps a few of its values:
/// names and texts are borrowed from the stored bytes, and a text is taken as its bytes
/// (postcard writes a string as it writes bytes), so that only a text kept is copied and
/// checked to be UTF-8.
#[derive(Debug, Deserialize)]
#[serde(bound(deserialize = "'de: 'a, D: Deserialize<'de>"))]
pub struct StoredRecordPairsRef<'a, D> {
    #[serde(borrow)]
    pub values: Vec<(&'a str, StoredScalar<D, &'a [u8]>)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_record_reads_as_its_pairs_in_order() {
        let record = StoredRecord::<Dec16> {
            values: [
                ("zip", StoredScalar::Text("10115".into())),
                ("a", StoredScalar::Int(-3)),
                (
                    "rate",
                    StoredScalar::Dec(Dec16(rust_decimal::Decimal::new(1925, 2))),
                ),
                ("on", StoredScalar::Bool(true)),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        };
        let bytes = postcard::to_allocvec(&record).unwrap();
        let pairs: StoredRecordPairs<Dec16> = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(
            pairs.values,
            record.values.clone().into_iter().collect::<Vec<_>>()
        );
        let borrowed: StoredRecordPairsRef<Dec16> = postcard::from_bytes(&bytes).unwrap();
        let owned: Vec<(String, StoredScalar<Dec16>)> = borrowed
            .values
            .into_iter()
            .map(|(name, v)| {
                let v = match v {
                    StoredScalar::Text(t) => {
                        StoredScalar::Text(String::from_utf8(t.to_vec()).unwrap())
                    }
                    StoredScalar::Int(i) => StoredScalar::Int(i),
                    StoredScalar::Dec(d) => StoredScalar::Dec(d),
                    StoredScalar::Date(d) => StoredScalar::Date(d),
                    StoredScalar::DateTime(t) => StoredScalar::DateTime(t),
                    StoredScalar::Bool(b) => StoredScalar::Bool(b),
                };
                (name.to_owned(), v)
            })
            .collect();
        assert_eq!(owned, record.values.into_iter().collect::<Vec<_>>());
    }

    /// File bytes written as a byte string read as the sequence of `u8` earlier versions
    /// wrote, and back: postcard encodes both as a length and the bytes.
    #[test]
    fn byte_strings_are_encoded_as_byte_sequences_were() {
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        struct Earlier {
            id: u64,
            created: i64,
            filename: String,
            content: Vec<u8>,
        }
        let now = StoredPdf {
            id: 7,
            created: 1_795_000_000,
            filename: "invoice_7.pdf".into(),
            content: (0..=255u8).cycle().take(1000).collect(),
        };
        let earlier = Earlier {
            id: 7,
            created: 1_795_000_000,
            filename: "invoice_7.pdf".into(),
            content: now.content.clone(),
        };
        let bytes = postcard::to_allocvec(&now).unwrap();
        assert_eq!(bytes, postcard::to_allocvec(&earlier).unwrap());
        assert_eq!(postcard::from_bytes::<Earlier>(&bytes).unwrap(), earlier);
        assert_eq!(postcard::from_bytes::<StoredPdf>(&bytes).unwrap(), now);
    }
}
