//! The customer portal's pages, rendered through `handle` with in-memory capabilities.

use std::collections::BTreeMap;

use rust_decimal::Decimal;

use super::Method;
use super::golden::World;
use super::read_only_tests::everything;
use crate::caps::Store as _;
use crate::domain::portal::EVERY_SETTING;
use crate::domain::schema::{Kind, Record, Scalar};
use crate::domain::{records, settings};

/// The portal path of `url` (`…/portal/{token}`).
fn portal_path(url: &str) -> String {
    url[url.find("/portal/").expect("a portal link")..].to_owned()
}

/// The text of element `name` in `xml`.
fn element<'a>(xml: &'a str, name: &str) -> &'a str {
    xml.split(&format!("<{name}>"))
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .unwrap_or_else(|| panic!("no <{name}> in {xml}"))
}

/// Every setting with a value other than the one it has: texts changed (a language that
/// is another German one, an IBAN and BIC that are others), numbers raised, and with `flip` each
/// yes/no turned round and links kept for a year, else links of finished documents
/// expired at once; settings that have no value yet get one of their kind.
fn every_setting_changed(stored: &Record, flip: bool) -> Record {
    let mut values: BTreeMap<String, Scalar> = stored.values.clone();
    for field in settings::FIELDS {
        values
            .entry(field.name.to_owned())
            .or_insert(match field.kind {
                Kind::Integer => Scalar::Int(0),
                Kind::Decimal => Scalar::Dec(Decimal::ZERO),
                Kind::Bool => Scalar::Bool(false),
                _ => Scalar::Text(String::new()),
            });
    }
    let kinds: BTreeMap<&str, Kind> = settings::FIELDS.iter().map(|f| (f.name, f.kind)).collect();
    for (name, value) in values.iter_mut() {
        let kind = kinds.get(name.as_str()).copied().unwrap_or(Kind::Text);
        *value = match (value.clone(), kind) {
            (_, Kind::Iban) => Scalar::Text("DE89 3704 0044 0532 0130 00".into()),
            (_, Kind::Bic) => Scalar::Text("COBADEFFXXX".into()),
            (_, Kind::Email) => Scalar::Text(format!("{}@example.org", name.replace('_', "-"))),
            (_, Kind::Country) => Scalar::Text("AT".into()),
            // German, which a page without the setting (English) does not speak.
            (Scalar::Text(t), _) if name == "locale" => {
                Scalar::Text(if t == "de_AT" { "de_DE" } else { "de_AT" }.into())
            }
            (Scalar::Text(_), _) if name == "time_zone" => Scalar::Text("America/New_York".into()),
            (Scalar::Text(t), _) if name == "public_url" => Scalar::Text(t),
            (Scalar::Text(t), _) => Scalar::Text(format!("{t} ({name})")),
            // Links of finished documents expired, or not: each is a page of its own.
            (Scalar::Int(_), _) if name == "portal_link_days" => {
                Scalar::Int(if flip { 365 } else { 0 })
            }
            (Scalar::Int(i), _) => Scalar::Int(i + 3),
            (Scalar::Dec(d), _) => Scalar::Dec(d + Decimal::ONE),
            (Scalar::Bool(b), _) => Scalar::Bool(b ^ flip),
            (other, _) => other,
        };
    }
    Record { values }
}

/// A page copies only the settings it reads out of the stored record
/// (`portal::shown_setting`): every kind of page, rendered with those and rendered with
/// all settings loaded, is the same page, with every setting changed from its default
/// (once with each yes/no setting turned round, once not, so that a setting a yes/no one
/// hides is seen too).
#[test]
fn pages_read_no_setting_they_do_not_load() {
    let w: World = everything();
    w.ok(
        Method::Put,
        "/api/settings",
        "<settings><public_url>https://rechnung.example.com</public_url>\
         <company_bank_iban>DE02120300000000202051</company_bank_iban></settings>",
    );
    let mut paths = Vec::new();
    for kind in [
        "invoices",
        "credit-notes",
        "offers",
        "confirmations",
        "delivery-notes",
        "reminders",
    ] {
        let (status, body) = w.call(
            Method::Put,
            &format!("/api/{kind}/1/renew-link"),
            "",
            "application/xml",
        );
        assert_eq!(status, 200, "{kind}: {body}");
        paths.push(portal_path(element(&body, "customerportal_url")));
    }
    let (status, body) = w.call(
        Method::Post,
        "/api/clients/1/portal-session",
        "",
        "application/xml",
    );
    assert!(status < 300, "{body}");
    paths.push(portal_path(element(&body, "url")));

    // A hundred days on: past the grace of finished documents, within a year of links.
    let clock = &w.clock().0;
    clock.set(clock.get() + 100 * 86_400);
    let stored = {
        let read = w.store.begin_read().unwrap();
        settings::load_stored(read.as_ref(), 1).unwrap()
    };
    for flip in [true, false] {
        let changed = every_setting_changed(&stored, flip);
        let mut txn = w.store.begin_write().unwrap();
        txn.put(&settings::key(1), &records::encode_record(&changed))
            .unwrap();
        txn.commit().unwrap();
        for path in &paths {
            let page = |every: bool| {
                EVERY_SETTING.set(every);
                let answer =
                    super::handle(&w.caps(), &w.request_as(Method::Get, path, "", "text/html"));
                EVERY_SETTING.set(false);
                (answer.status, String::from_utf8(answer.body).unwrap())
            };
            let (all, loaded) = (page(true), page(false));
            assert!([200, 410].contains(&all.0), "{path}: {}", all.1);
            assert_eq!(loaded, all, "{path} (yes/no settings turned round: {flip})");
            for shown in ["(company_name)", "(company_street)"] {
                assert!(
                    all.1.contains(shown),
                    "{path} shows the changed seller: {}",
                    all.1
                );
            }
        }
    }
}
