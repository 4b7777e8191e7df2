//! The layout of everything the component stores, against the one recorded in
//! `forms.layout.json` with the data version it belongs to. A stored form may grow only
//! where old bytes still read: a tail gains fields at its end (`forms::Tail`), an enum
//! gains variants at its end. Any other change needs a new data version (and a migration
//! that rewrites or reads the old bytes); without one this test fails. A layout that
//! changed as allowed, or with a new data version, is recorded with `UPDATE_EXPECT=1`.

#![expect(
    clippy::disallowed_methods,
    reason = "the recorded layout is a file of the test run, and UPDATE_EXPECT an environment variable of it"
)]

use std::collections::BTreeMap;

use serde_json::{Value, json};
use serde_reflection::{Samples, Tracer, TracerConfig};

use super::DATA_VERSION;
use super::forms::{
    StoredAccount, StoredComment, StoredDocument, StoredDocumentTail, StoredEinvoice, StoredItem,
    StoredItemTail, StoredPayment, StoredPdf, StoredPrincipal, StoredRecord, StoredSums, StoredTag,
    StoredUser, Tail,
};

const RECORDED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/store/forms.layout.json");

/// A decimal laid out as `Dec16` lays it out (a byte string), for the tracer, which offers
/// empty bytes where `Dec16` takes only 16.
struct Decimal;

impl serde::Serialize for Decimal {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&[0; 16])
    }
}

impl<'de> serde::Deserialize<'de> for Decimal {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
        struct Bytes;
        impl serde::de::Visitor<'_> for Bytes {
            type Value = Decimal;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("the bytes of a decimal")
            }
            fn visit_bytes<E: serde::de::Error>(self, _: &[u8]) -> Result<Decimal, E> {
                Ok(Decimal)
            }
        }
        d.deserialize_bytes(Bytes)
    }
}

/// Every stored form and value with a serde layout, and every tail, as one JSON value.
fn layout() -> Value {
    let mut tracer = Tracer::new(TracerConfig::default());
    let samples = Samples::new();
    macro_rules! trace {
        ($($t:ty),* $(,)?) => {
            $(tracer.trace_type::<$t>(&samples).expect(stringify!($t));)*
        };
    }
    // Enums first, each traced through every variant.
    trace!(
        super::forms::StoredKind,
        super::forms::StoredStatus,
        super::forms::StoredScalar<Decimal>,
        crate::domain::dispatch::Parcel,
        super::forms::StoredPortalTarget,
    );
    trace!(
        StoredDocument<Decimal>,
        StoredItem<Decimal>,
        StoredPayment<Decimal>,
        StoredComment,
        StoredTag,
        StoredPdf,
        StoredSums<Decimal>,
        StoredAccount,
        StoredUser,
        StoredPrincipal,
        StoredRecord<Decimal>,
        StoredEinvoice,
        super::forms::StoredEinvoicesIssued,
        crate::domain::dispatch::Dispatch,
        crate::domain::incomings::Extra,
        crate::http::idempotency::SavedAnswer,
        crate::domain::clock::StoredClock,
        super::forms::StoredPortalLink,
    );
    let registry = tracer
        .registry()
        .expect("every stored form is traced whole");
    let tails: BTreeMap<&str, Vec<String>> = [
        ("StoredDocumentTail", fields::<StoredDocumentTail>()),
        ("StoredItemTail", fields::<StoredItemTail>()),
    ]
    .into_iter()
    .collect();
    json!({
        "data_version": DATA_VERSION,
        "forms": serde_json::to_value(&registry).expect("a registry is JSON"),
        "tails": tails,
    })
}

fn fields<T: Tail>() -> Vec<String> {
    T::LAYOUT.iter().map(|(n, t)| format!("{n}: {t}")).collect()
}

/// Why `now` cannot read what was written under `was` without a new data version, if it
/// cannot: each difference that is not a tail field or an enum variant added at the end.
fn breaks(was: &Value, now: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let empty = serde_json::Map::new();
    let forms_was = was["forms"].as_object().unwrap_or(&empty);
    let forms_now = now["forms"].as_object().unwrap_or(&empty);
    for (name, old) in forms_was {
        let Some(new) = forms_now.get(name) else {
            out.push(format!("{name} is no longer stored"));
            continue;
        };
        match (old.get("ENUM"), new.get("ENUM")) {
            (Some(old_variants), Some(new_variants)) => {
                for (index, variant) in old_variants.as_object().unwrap_or(&empty) {
                    if new_variants.get(index) != Some(variant) {
                        out.push(format!("{name}: variant {index} changed"));
                    }
                }
            }
            _ if old != new => out.push(format!("{name} changed")),
            _ => {}
        }
    }
    for (name, old) in was["tails"].as_object().unwrap_or(&empty) {
        let old = old.as_array().cloned().unwrap_or_default();
        let new = now["tails"][name].as_array().cloned().unwrap_or_default();
        if new.len() < old.len() || new[..old.len()] != old[..] {
            out.push(format!("the tail {name} changed other than at its end"));
        }
    }
    out
}

#[test]
fn stored_forms_change_only_as_old_bytes_still_read_or_with_a_new_data_version() {
    let now = layout();
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let recorded = std::fs::read_to_string(RECORDED).expect("forms.layout.json is recorded");
    let was: Value = serde_json::from_str(&recorded).expect("forms.layout.json is JSON");
    if was == now {
        return;
    }
    if was["data_version"] == now["data_version"] {
        let broken = breaks(&was, &now);
        assert!(
            broken.is_empty(),
            "stored forms changed so that bytes written at data version {DATA_VERSION} no \
             longer read: {broken:?}. Append the field to a tail instead, or raise \
             store::DATA_VERSION with a migration; then record with UPDATE_EXPECT=1"
        );
    }
    if update {
        let text = serde_json::to_string_pretty(&now).expect("JSON") + "\n";
        std::fs::write(RECORDED, text).expect("forms.layout.json written");
        return;
    }
    panic!(
        "the stored forms grew (or the data version changed): check the difference and record \
         it with UPDATE_EXPECT=1"
    );
}

#[test]
fn a_field_changed_in_place_breaks_and_one_appended_to_a_tail_does_not() {
    let was = layout();
    let mut appended = was.clone();
    appended["tails"]["StoredItemTail"]
        .as_array_mut()
        .unwrap()
        .push(json!("optional: bool"));
    assert!(breaks(&was, &appended).is_empty());
    let mut variant = was.clone();
    variant["forms"]["StoredKind"]["ENUM"]["99"] = json!({"Later": "UNIT"});
    assert!(breaks(&was, &variant).is_empty());
    let mut changed = was.clone();
    changed["forms"]["StoredTag"] = json!({"STRUCT": []});
    assert_eq!(breaks(&was, &changed), ["StoredTag changed"]);
    let mut reordered = was.clone();
    reordered["tails"]["StoredItemTail"]
        .as_array_mut()
        .unwrap()
        .reverse();
    assert_eq!(breaks(&was, &reordered).len(), 1);
}
