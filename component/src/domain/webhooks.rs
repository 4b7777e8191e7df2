//! Webhooks: where an account's events go (`url`), which ones (`events`), in which format
//! the record travels, and the secrets that sign it. A record resource whose every change
//! rewrites the account's subscriptions (`events::Subscriptions`, read by every write), and
//! whose secrets live beside it, never in the record.
//!
//! Also the catalogue of event names (every kind of document, its parts and the record
//! resources that emit), the check that keeps webhooks out of the private network where
//! a URL names an address literally (the host checks what a name resolves to at connect
//! time), and the one event time makes: an OPEN document whose due date passed shows
//! OVERDUE, which the scheduler notices once per document and day (`notice_overdue`).

use serde::{Deserialize, Serialize};

use super::documents::{DocKind, query, storage};
use super::events::{self, Subscriber, Subscriptions, Verb};
use super::records::{self, Resource};
use super::schema::{self, Changes, Field, Kind, Record, Scalar};
use super::{Ctx, Error, articles, clients, contacts, incomings, suppliers};
use crate::caps::{Read, Write};
use crate::limits;
use crate::store::{self, keys};

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the webhook (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the webhook was created (read only)."),
    Field::new("updated", Kind::DateTime)
        .read_only()
        .doc("When the webhook was last changed (read only)."),
    Field::new("url", Kind::Text).mandatory().doc(
        "Where events are POSTed: an http or https URL without credentials. An address of the \
         private network (loopback, private, link-local, unique-local, multicast, unspecified, \
         localhost) is refused, written literally here or resolved at delivery, unless the \
         service runs with --webhook-allow-private.",
    ),
    Field::new("events", Kind::Text).mandatory().doc(
        "The events sent, comma-separated: names such as invoice.create, invoice.status, \
         invoice_payment.create, client.delete (see the API guide for the list), or * for all.",
    ),
    Field::new("format", Kind::Enum(&["XML", "JSON"])).doc(
        "The format of the record each event carries, exactly as a GET of it answers: XML or \
         JSON. Default: XML.",
    ),
    Field::new("active", Kind::Bool).doc(
        "1 sends events, 0 pauses the webhook. Setting 1 again enables a webhook the service \
         disabled. Default: 1.",
    ),
    Field::new("description", Kind::Text).doc("What the webhook is for."),
    Field::new("disabled_reason", Kind::Text).read_only().doc(
        "Why the service disabled the webhook (a 410 Gone, or five days of failed deliveries); \
         empty while it is active (read only).",
    ),
    Field::new("secret", Kind::Text).read_only().doc(
        "The signing secret (Standard Webhooks, whsec_ and base64). Only in the answers to the \
         create and to rotate-secret; keep it then (read only).",
    ),
];

/// The fields a webhook shows, its secret apart.
pub fn shown_fields() -> &'static [Field] {
    &FIELDS[..FIELDS.len() - 1]
}

/// The fields of the answers that show the secret.
pub fn fields_with_secret() -> &'static [Field] {
    FIELDS
}

pub static WEBHOOKS: Resource = Resource::new("webhooks", "webhook", FIELDS, &records::Plain);

/// The hidden field holding when a webhook's deliveries started failing (since its last
/// success); five days of that disable it.
const FAILING_SINCE: &str = "failing_since";

/// The format byte of stored secrets.
const SECRETS_FORMAT: u8 = 1;

/// A webhook's signing secrets: the current one, and the one it replaced while that still
/// signs too (24 hours after a rotation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Secrets {
    current: String,
    previous: Option<(String, i64)>,
}

/// How long a replaced secret still signs.
pub const OLD_SECRET_SECONDS: i64 = 24 * 60 * 60;

// ---- the catalogue of events -------------------------------------------------------------

const CHANGES: &[Verb] = &[Verb::Create, Verb::Update, Verb::Delete];
const ADDED: &[Verb] = &[Verb::Create, Verb::Delete];

/// The record resources that emit events, and the verbs they have.
fn record_events() -> [(&'static Resource, &'static [Verb]); 8] {
    [
        (&clients::CLIENTS, CHANGES),
        (&suppliers::SUPPLIERS, CHANGES),
        (&articles::ARTICLES, CHANGES),
        (&contacts::CONTACTS, CHANGES),
        (&incomings::INCOMINGS, CHANGES),
        (&incomings::INCOMING_PAYMENTS, ADDED),
        (&incomings::INCOMING_COMMENTS, ADDED),
        (&incomings::INCOMING_ITEMS, ADDED),
    ]
}

/// Every event a webhook can take, in the order the API guide lists them: per kind of
/// document its own events and its parts' (`{range}_item`, `_payment`, `_comment`), then
/// the record resources'.
pub fn catalogue() -> Vec<String> {
    let mut names = Vec::new();
    let mut add = |resource: &str, verbs: &[Verb]| {
        for v in verbs {
            names.push(format!("{resource}.{}", v.as_str()));
        }
    };
    for kind in DocKind::ALL {
        let range = kind.range();
        add(range, &Verb::ALL);
        add(&format!("{range}_item"), CHANGES);
        if kind.spec().payments.is_some() {
            add(&format!("{range}_payment"), ADDED);
        }
        add(&format!("{range}_comment"), ADDED);
    }
    for (res, verbs) in record_events() {
        add(res.event.expect("a resource of the catalogue emits"), verbs);
    }
    names
}

/// The event names of an `events` field, each checked against the catalogue; problems go
/// to `errors`.
fn parse_events(text: &str, errors: &mut Vec<String>) -> Vec<String> {
    let known = catalogue();
    let mut out: Vec<String> = Vec::new();
    for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if name != "*" && !known.iter().any(|k| k == name) {
            errors.push(format!(
                "events: \"{name}\" is not an event; name events such as invoice.create or \
                 client.delete, or * for all"
            ));
        } else if !out.iter().any(|o| o == name) {
            out.push(name.to_owned());
        }
    }
    if out.is_empty() && errors.is_empty() {
        errors.push("events must name at least one event, or * for all".into());
    }
    out
}

// ---- URLs and the private network --------------------------------------------------------

/// Where a webhook sends: its URL taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    pub https: bool,
    /// The host as written: a name, an IPv4 address, or an IPv6 address without brackets.
    pub host: String,
    pub port: Option<u16>,
}

/// Whether an http(s) URL is https, and what follows its `scheme://`; none for another
/// scheme. The one reading of the scheme, for checking a URL and for sending to it.
pub fn split_scheme(url: &str) -> Option<(bool, &str)> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    if lower.starts_with("https://") {
        Some((true, &url[8..]))
    } else if lower.starts_with("http://") {
        Some((false, &url[7..]))
    } else {
        None
    }
}

/// Takes a webhook URL apart; `Err` says what is wrong with it.
pub fn parse_url(url: &str) -> Result<Url, String> {
    let (https, rest) = split_scheme(url)
        .ok_or_else(|| format!("url must be an http or https URL, got \"{url}\""))?;
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("url must not hold white space".into());
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err("url must not hold credentials (user:password@)".into());
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (host, after) = v6
                .split_once(']')
                .ok_or_else(|| "url has an IPv6 address without its closing ]".to_owned())?;
            if host.parse::<std::net::Ipv6Addr>().is_err() {
                return Err(format!("url's host [{host}] is not an IPv6 address"));
            }
            (host, after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    if host.is_empty() {
        return Err("url must name a host".into());
    }
    let port = match port {
        None => None,
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| format!("url's port must be 1 to 65535, got \"{p}\""))?,
        ),
    };
    Ok(Url {
        https,
        host: host.to_ascii_lowercase(),
        port,
    })
}

/// Why a URL's host is of the private network as written, if it is: an address literal
/// of it, or `localhost`.
pub fn private_host(url: &Url) -> Option<String> {
    let host = url.host.trim_end_matches('.');
    if host == "localhost" || host.ends_with(".localhost") {
        return Some(format!("url names {host}, this machine"));
    }
    let ip: std::net::IpAddr = host.parse().ok()?;
    faktura_netguard::is_private(ip).then(|| {
        format!(
            "url names {ip}, an address of the private network; the service sends there only \
             with --webhook-allow-private"
        )
    })
}

// ---- webhooks ----------------------------------------------------------------------------

/// Checks a webhook as a create or update leaves it and normalizes its `events`.
fn check(record: &mut Record, private_allowed: bool, errors: &mut Vec<String>) {
    let url = record.text("url").trim().to_owned();
    if url.chars().count() > limits::WEBHOOK_URL_CHARS_MAX {
        errors.push(format!(
            "url is longer than {} characters",
            limits::WEBHOOK_URL_CHARS_MAX
        ));
    } else if !url.is_empty() {
        match parse_url(&url) {
            Ok(parsed) => {
                if let (false, Some(why)) = (private_allowed, private_host(&parsed)) {
                    errors.push(why);
                }
            }
            Err(why) => errors.push(why),
        }
    }
    record.set("url", (!url.is_empty()).then_some(Scalar::Text(url)));
    let events = parse_events(record.text("events"), errors);
    record.set("events", Some(Scalar::Text(events.join(","))));
}

/// The defaults of a new webhook and the rule of `active`: a webhook turned on again
/// forgets why it was disabled and how long it failed.
fn settle_active(record: &mut Record, old: Option<&Record>) {
    if record.get("format").is_none() {
        record.set("format", Some(Scalar::Text("XML".into())));
    }
    if record.get("active").is_none() {
        record.set("active", Some(Scalar::Bool(true)));
    }
    let was_active = old.is_some_and(|o| o.bool("active"));
    if record.bool("active") && !was_active {
        record.set("disabled_reason", None);
        record.set(FAILING_SINCE, None);
    }
}

/// A new webhook, and its secret (made by the caller, `new_secret`).
pub fn create(
    ctx: &Ctx,
    txn: &mut dyn Write,
    changes: &Changes,
    private_allowed: bool,
    secret: &str,
) -> Result<Record, Error> {
    let mut errors = changes.errors();
    schema::check_mandatory(FIELDS, changes, &mut errors);
    let mut record = Record::default();
    changes.apply(&mut record);
    check(&mut record, private_allowed, &mut errors);
    let count = records::load_all(txn.as_read(), &WEBHOOKS, ctx.account_id)?.len();
    if count >= limits::WEBHOOKS_MAX {
        errors.push(format!(
            "an account has at most {} webhooks; delete one first",
            limits::WEBHOOKS_MAX
        ));
    }
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    settle_active(&mut record, None);
    let id = store::next_id(txn, WEBHOOKS.collection)?;
    record.set("id", Some(Scalar::Int(id as i64)));
    record.set("created", Some(Scalar::DateTime(ctx.now)));
    record.set("updated", Some(Scalar::DateTime(ctx.now)));
    records::save(ctx, txn, &WEBHOOKS, &record, None, &Changes::default())?;
    save_secrets(
        txn,
        ctx.account_id,
        id,
        &Secrets {
            current: secret.to_owned(),
            previous: None,
        },
    )?;
    resubscribe(ctx, txn)?;
    Ok(record)
}

pub fn update(
    ctx: &Ctx,
    txn: &mut dyn Write,
    id: u64,
    changes: &Changes,
    private_allowed: bool,
) -> Result<Record, Error> {
    let old = records::load(txn.as_read(), &WEBHOOKS, ctx.account_id, id)?;
    let mut errors = changes.errors();
    schema::check_not_cleared(FIELDS, changes, &mut errors);
    let mut record = old.clone();
    changes.apply(&mut record);
    // An unchanged URL is not checked again: the switch may have been lifted since.
    let url_unchanged = record.text("url").trim() == old.text("url");
    check(&mut record, private_allowed || url_unchanged, &mut errors);
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    settle_active(&mut record, Some(&old));
    save_changed(ctx, txn, &mut record, &old)?;
    Ok(record)
}

/// Deletes a webhook and its secrets; its deliveries stay in the log until they expire,
/// and those still pending fail when their turn comes.
pub fn delete(ctx: &Ctx, txn: &mut dyn Write, id: u64) -> Result<(), Error> {
    let record = records::load(txn.as_read(), &WEBHOOKS, ctx.account_id, id)?;
    records::remove(ctx, txn, &WEBHOOKS, &record)?;
    txn.delete(&keys::webhook_secret(ctx.account_id, id))?;
    resubscribe(ctx, txn)
}

/// A webhook of the account.
pub fn load(txn: &dyn Read, account: u64, id: u64) -> Result<Record, Error> {
    records::load(txn, &WEBHOOKS, account, id)
}

/// Gives a webhook a new secret (made by the caller); the old one still signs for
/// `OLD_SECRET_SECONDS`.
pub fn rotate(ctx: &Ctx, txn: &mut dyn Write, id: u64, secret: &str) -> Result<Record, Error> {
    let record = load(txn.as_read(), ctx.account_id, id)?;
    let old = load_secrets(txn.as_read(), ctx.account_id, id)?;
    save_secrets(
        txn,
        ctx.account_id,
        id,
        &Secrets {
            current: secret.to_owned(),
            previous: Some((old.current, ctx.now + OLD_SECRET_SECONDS)),
        },
    )?;
    Ok(record)
}

/// The secrets that sign a webhook's deliveries at the account's moment `now`: the current
/// one first.
pub fn signing_secrets(
    txn: &dyn Read,
    account: u64,
    id: u64,
    now: i64,
) -> Result<Vec<String>, Error> {
    let s = load_secrets(txn, account, id)?;
    let mut out = vec![s.current];
    if let Some((old, until)) = s.previous
        && now < until
    {
        out.push(old);
    }
    Ok(out)
}

fn load_secrets(txn: &dyn Read, account: u64, id: u64) -> Result<Secrets, Error> {
    let bytes = txn
        .get(&keys::webhook_secret(account, id))?
        .ok_or_else(|| Error::NotFound(format!("webhook {id} has no secret")))?;
    Ok(store::decode_with_format(
        SECRETS_FORMAT,
        &bytes,
        "webhook secret",
    )?)
}

fn save_secrets(txn: &mut dyn Write, account: u64, id: u64, s: &Secrets) -> Result<(), Error> {
    txn.put(
        &keys::webhook_secret(account, id),
        &store::encode_with_format(SECRETS_FORMAT, s),
    )?;
    Ok(())
}

/// A new secret from 32 random bytes, in the form of Standard Webhooks: `whsec_` and the
/// bytes in base64.
pub fn new_secret(random: &dyn crate::caps::Random) -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; 32];
    random.fill(&mut bytes);
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// Writes the account's subscriptions anew from its active webhooks. The day up to which
/// documents falling due were noticed starts when some webhook first takes `status`
/// events (so that what falls due from that day on is told even when the first pass of
/// time comes days later) and is forgotten when none takes them any more (so that
/// webhooks made later hear only of what falls due after them).
fn resubscribe(ctx: &Ctx, txn: &mut dyn Write) -> Result<(), Error> {
    let account = ctx.account_id;
    let hooks: Vec<Subscriber> = records::load_all(txn.as_read(), &WEBHOOKS, account)?
        .iter()
        .filter(|r| r.bool("active"))
        .map(|r| Subscriber {
            webhook: r.id(),
            events: r
                .text("events")
                .split(',')
                .filter(|e| !e.is_empty())
                .map(str::to_owned)
                .collect(),
        })
        .collect();
    let subs = Subscriptions { hooks };
    let day = keys::overdue_day(account);
    if !subs.takes_verb(Verb::Status) {
        txn.delete(&day)?;
    } else if txn.get(&day)?.is_none() {
        txn.put(&day, &(ctx.today().julian() as u64).to_be_bytes())?;
    }
    events::set_subscriptions(txn, account, &subs)
}

/// Disables a webhook for `reason` (its receiver answered 410 Gone, or its deliveries
/// failed for days): it takes no further events until it is set active again.
pub fn disable(ctx: &Ctx, txn: &mut dyn Write, id: u64, reason: &str) -> Result<(), Error> {
    let Ok(old) = load(txn.as_read(), ctx.account_id, id) else {
        return Ok(());
    };
    if !old.bool("active") {
        return Ok(());
    }
    let mut record = old.clone();
    record.set("active", Some(Scalar::Bool(false)));
    record.set("disabled_reason", Some(Scalar::Text(reason.to_owned())));
    save_changed(ctx, txn, &mut record, &old)
}

/// Saves a changed webhook, stamped `updated` now, and the account's subscriptions after
/// it.
fn save_changed(
    ctx: &Ctx,
    txn: &mut dyn Write,
    record: &mut Record,
    old: &Record,
) -> Result<(), Error> {
    record.set("updated", Some(Scalar::DateTime(ctx.now)));
    records::save(ctx, txn, &WEBHOOKS, record, Some(old), &Changes::default())?;
    resubscribe(ctx, txn)
}

/// Notes the outcome of an attempt on its webhook: a success ends a run of failures; a
/// failure starts one, and one that has lasted `failing_max_seconds` disables the webhook.
pub fn note_attempt(
    ctx: &Ctx,
    txn: &mut dyn Write,
    id: u64,
    succeeded: bool,
    failing_max_seconds: i64,
) -> Result<(), Error> {
    let Ok(old) = load(txn.as_read(), ctx.account_id, id) else {
        return Ok(());
    };
    let since = match old.get(FAILING_SINCE) {
        Some(Scalar::DateTime(t)) => Some(*t),
        _ => None,
    };
    let (changed, since) = match (succeeded, since) {
        (true, None) | (false, Some(_)) => (false, since),
        (true, Some(_)) => (true, None),
        (false, None) => (true, Some(ctx.now)),
    };
    if let Some(start) = since
        && ctx.now - start >= failing_max_seconds
    {
        return disable(
            ctx,
            txn,
            id,
            &format!(
                "every delivery failed for {} days, since {}",
                failing_max_seconds / 86_400,
                super::date::format_datetime(start)
            ),
        );
    }
    if changed {
        let mut record = old.clone();
        record.set(FAILING_SINCE, since.map(Scalar::DateTime));
        // A note of the service, not a change of the user's: `updated` stays.
        txn.put(
            &keys::record(ctx.account_id, WEBHOOKS.collection, id),
            &records::encode_record(&record),
        )?;
    }
    Ok(())
}

// ---- what time makes: documents falling due ----------------------------------------------

/// Whether `notice_overdue` has something to do at `ctx`'s moment (a read before its
/// write): some webhook takes `status` events, and today was not looked at yet.
pub fn overdue_unnoticed(txn: &dyn Read, ctx: &Ctx) -> Result<bool, Error> {
    let Some(subs) = events::subscriptions(txn, ctx.account_id)? else {
        return Ok(false);
    };
    if !subs.takes_verb(Verb::Status) {
        return Ok(false);
    }
    Ok(match txn.get(&keys::overdue_day(ctx.account_id))? {
        Some(b) => (store::u64_of(&b, "overdue day")? as i32) < ctx.today().julian(),
        None => true,
    })
}

/// Tells the account's webhooks of every OPEN document whose due date passed since the
/// last pass (it shows OVERDUE from today on), once per document and day: the day up to
/// which this was done is kept (`hooks/overdue-day`) and moves in the same transaction.
/// An account whose webhooks take no `status` event keeps nothing. The number of events.
pub fn notice_overdue(ctx: &Ctx, txn: &mut dyn Write) -> Result<u32, Error> {
    let account = ctx.account_id;
    let Some(subs) = events::subscriptions(txn.as_read(), account)? else {
        return Ok(0);
    };
    if !subs.takes_verb(Verb::Status) {
        return Ok(0);
    }
    let today = ctx.today();
    let key = keys::overdue_day(account);
    let noticed = txn
        .get(&key)?
        .map(|b| store::u64_of(&b, "overdue day"))
        .transpose()?
        .map(|d| d as i32);
    let mut told = 0;
    match noticed {
        // Kept since webhooks take `status` events (`resubscribe`); where it is missing
        // (older data) the count starts from today.
        None => {}
        Some(day) if day >= today.julian() => return Ok(0),
        Some(day) => {
            // OVERDUE from the day after the due date: what was due before the last pass's
            // day showed OVERDUE then already; what is due before today does now.
            let first = super::date::Date::from_julian(day);
            let last = today.add_days(-1);
            for kind in DocKind::ALL.into_iter().filter(|k| k.spec().falls_due) {
                for id in query::open_due_between(txn.as_read(), account, kind, first, last)? {
                    let doc = storage::load(txn.as_read(), account, kind, id)?;
                    storage::fell_due(ctx, txn, &doc)?;
                    told += 1;
                }
            }
        }
    }
    txn.put(&key, &(today.julian() as u64).to_be_bytes())?;
    Ok(told)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(u: &str) -> Result<Url, String> {
        parse_url(u)
    }

    #[test]
    fn urls_are_http_or_https_without_credentials() {
        let ok = |u: &str, host: &str, https: bool, port: Option<u16>| {
            assert_eq!(
                url(u).unwrap(),
                Url {
                    https,
                    host: host.into(),
                    port
                },
                "{u}"
            );
        };
        ok(
            "https://hooks.example.com/in?x=1",
            "hooks.example.com",
            true,
            None,
        );
        ok("HTTP://Example.com:8080", "example.com", false, Some(8080));
        ok("http://[2001:db8::1]:81/x", "2001:db8::1", false, Some(81));
        for bad in [
            "ftp://example.com",
            "example.com",
            "https://user:pw@example.com/",
            "https://@example.com",
            "https://",
            "https://example.com:0/",
            "https://example.com:99999/",
            "https://[::1/",
            "https://exa mple.com/",
        ] {
            assert!(url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn private_addresses_written_literally_are_named() {
        for private in [
            "http://127.0.0.1/",
            "http://[::1]/",
            "http://10.0.0.1/",
            "http://172.16.5.4/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data",
            "http://0.0.0.0/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://[ff02::1]/",
            "http://[::]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[64:ff9b::a00:1]/",
            "http://224.0.0.1/",
            "http://100.64.0.1/",
            "http://localhost:8080/",
            "http://api.localhost/",
        ] {
            assert!(private_host(&url(private).unwrap()).is_some(), "{private}");
        }
        for public in [
            "https://example.com/",
            "http://93.184.216.34/",
            "http://[2606:4700::1111]/",
            "http://172.32.0.1/",
        ] {
            assert!(private_host(&url(public).unwrap()).is_none(), "{public}");
        }
    }

    #[test]
    fn events_are_names_of_the_catalogue_or_a_star() {
        let names = catalogue();
        for name in [
            "invoice.create",
            "invoice.status",
            "invoice.send",
            "credit_note.delete",
            "invoice_payment.create",
            "invoice_item.update",
            "offer_comment.create",
            "delivery_note.status",
            "recurring.update",
            "client.delete",
            "supplier.create",
            "article.update",
            "contact.create",
            "incoming.create",
            "incoming_payment.delete",
        ] {
            assert!(names.iter().any(|n| n == name), "{name}");
        }
        for name in [
            "offer_payment.create",
            "client.status",
            "invoice_payment.update",
        ] {
            assert!(!names.iter().any(|n| n == name), "{name}");
        }
        let mut errors = Vec::new();
        assert_eq!(
            parse_events(" invoice.create , *,invoice.create", &mut errors),
            ["invoice.create", "*"]
        );
        assert!(errors.is_empty());
        parse_events("invoice.create,invoice.explode", &mut errors);
        assert!(errors[0].contains("invoice.explode"), "{errors:?}");
    }

    #[test]
    fn a_secret_is_whsec_and_32_bytes_of_base64() {
        use base64::Engine as _;
        let s = new_secret(&crate::caps::mem::CountingRandom::default());
        let raw = base64::engine::general_purpose::STANDARD
            .decode(s.strip_prefix("whsec_").unwrap())
            .unwrap();
        assert_eq!(raw.len(), 32);
    }
}
