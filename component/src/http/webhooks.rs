//! Webhooks on the wire: `/api/webhooks` (list, create, get, update, delete; `test` and
//! `rotate-secret`) and the delivery log `/api/webhook-deliveries` (list, get,
//! `redeliver`); and the sending of deliveries, `deliver`: the deliveries due for some
//! accounts are taken (`domain::deliveries::take`), each event's record is written in its
//! webhook's format exactly as a GET of it answers, signed as Standard Webhooks 1.0 says
//! (`webhook-id`, `webhook-timestamp` of the real time of the attempt, `webhook-signature`),
//! all sent at once through the `Outbound` capability, and every attempt settled.
//!
//! `deliver` runs after a write's commit (`after`), in the scheduler's pass of an account
//! (`runs::run_due`) and in the upkeep; never inside a write transaction, and never for
//! the sake of a request's answer, which leaves before.

use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};

use super::described::{Param, Schema, Shape};
use super::documents::{Comments, Documents, Items, Payments, parts};
use super::error::ApiError;
use super::records::{self, decode_changes, encode_record, page_answer};
use super::{Call, Encoded, Format, Method, Payload, Request, Response, in_write};
use crate::caps::{Caps, Outgoing, Read, Scoped};
use crate::codec::{Element, ScalarType};
use crate::domain::deliveries::{self, Outcome, Taken};
use crate::domain::documents::storage::{self, Child};
use crate::domain::documents::{DocKind, comments, items, payments};
use crate::domain::events::{self, Delivery, Status};
use crate::domain::records::{self as domain_records, ListQuery};
use crate::domain::schema::{Field, Kind, Record};
use crate::domain::{Ctx, clock, date::Date, webhooks};
use crate::limits;

/// The variable that lets webhooks reach the private network (tests, closed networks).
pub(crate) const ALLOW_PRIVATE_VAR: &str = "FAKTURA_WEBHOOK_ALLOW_PRIVATE";

/// Whether the service lets webhooks name addresses of the private network.
fn private_allowed(caps: &Caps) -> bool {
    caps.env
        .var(ALLOW_PRIVATE_VAR)
        .is_some_and(|v| v.trim() == "1" || v.trim().eq_ignore_ascii_case("true"))
}

// ---- webhooks ----------------------------------------------------------------------------

/// A webhook as its element: without its secret, or with the secret given.
fn webhook_element(record: &Record, secret: Option<&str>) -> Element {
    match secret {
        None => encode_record(webhooks::shown_fields(), "webhook", record, None),
        Some(secret) => {
            let mut r = record.clone();
            r.set(
                "secret",
                Some(crate::domain::schema::Scalar::Text(secret.to_owned())),
            );
            encode_record(webhooks::fields_with_secret(), "webhook", &r, None)
        }
    }
}

fn parse_id(raw: &str, label: &str) -> Result<u64, ApiError> {
    raw.parse::<u64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::NotFound(format!("{label} {raw} does not exist")))
}

/// `GET /api/webhooks`.
pub(super) fn list(c: &Call<'_>) -> Result<Response, ApiError> {
    let (page, per_page) = c.query.paging()?;
    let q = ListQuery {
        order: c.query.order(webhooks::shown_fields())?,
        page,
        per_page,
        ..ListQuery::default()
    };
    let txn = c.caps.store.begin_read()?;
    let result = domain_records::list(txn.as_ref(), &webhooks::WEBHOOKS, c.ctx.account_id, &q)?;
    let children = result
        .records
        .iter()
        .map(|r| webhook_element(r, None))
        .collect();
    Ok(page_answer(
        "webhooks",
        children,
        page,
        per_page,
        result.total,
    ))
}

/// `GET /api/webhooks/{id}`.
pub(super) fn get(c: &Call<'_>) -> Result<Response, ApiError> {
    let id = parse_id(c.id, "webhook")?;
    let txn = c.caps.store.begin_read()?;
    let record = webhooks::load(txn.as_ref(), c.ctx.account_id, id)?;
    Ok(Response::doc(200, webhook_element(&record, None)))
}

/// `POST /api/webhooks`: answers the webhook with its secret, this once.
pub(super) fn create(c: &Call<'_>) -> Result<Response, ApiError> {
    let changes = decode_changes(
        webhooks::fields_with_secret(),
        &c.req.document()?,
        "webhook",
    )?;
    let secret = webhooks::new_secret(c.caps.random);
    let allowed = private_allowed(c.caps);
    let record = in_write(c.caps, |txn| {
        Ok(webhooks::create(c.ctx, txn, &changes, allowed, &secret)?)
    })?;
    Ok(Response::doc(201, webhook_element(&record, Some(&secret))))
}

/// `PUT /api/webhooks/{id}`.
pub(super) fn update(c: &Call<'_>) -> Result<Response, ApiError> {
    let id = parse_id(c.id, "webhook")?;
    // An unknown id is a 404 even when the body is also wrong.
    webhooks::load(c.caps.store.begin_read()?.as_ref(), c.ctx.account_id, id)?;
    let changes = decode_changes(
        webhooks::fields_with_secret(),
        &c.req.document()?,
        "webhook",
    )?;
    let allowed = private_allowed(c.caps);
    let record = in_write(c.caps, |txn| {
        Ok(webhooks::update(c.ctx, txn, id, &changes, allowed)?)
    })?;
    Ok(Response::doc(200, webhook_element(&record, None)))
}

/// `DELETE /api/webhooks/{id}`.
pub(super) fn delete(c: &Call<'_>) -> Result<Response, ApiError> {
    let id = parse_id(c.id, "webhook")?;
    in_write(c.caps, |txn| Ok(webhooks::delete(c.ctx, txn, id)?))?;
    Ok(Response::empty())
}

/// `PUT /api/webhooks/{id}/rotate-secret`: a new secret, shown this once; the old one
/// signs beside it for 24 hours.
pub(super) fn rotate(c: &Call<'_>) -> Result<Response, ApiError> {
    let id = parse_id(c.id, "webhook")?;
    let secret = webhooks::new_secret(c.caps.random);
    let record = in_write(c.caps, |txn| Ok(webhooks::rotate(c.ctx, txn, id, &secret)?))?;
    Ok(Response::doc(200, webhook_element(&record, Some(&secret))))
}

/// `PUT /api/webhooks/{id}/test`: a `webhook.test` event carrying the webhook, sent now;
/// answers its delivery as the first attempt left it.
pub(super) fn test(c: &Call<'_>) -> Result<Response, ApiError> {
    let id = parse_id(c.id, "webhook")?;
    let delivery = in_write(c.caps, |txn| {
        let record = webhooks::load(txn.as_read(), c.ctx.account_id, id)?;
        if !record.bool("active") {
            return Err(ApiError::bad(format!(
                "webhook {id} is not active; set active to 1 to test it"
            )));
        }
        let snapshot = events::snapshot_of(c.ctx, domain_records::encode_record(&record), None);
        Ok(events::record(
            c.ctx,
            txn,
            id,
            events::TEST_EVENT,
            id,
            snapshot,
        )?)
    })?;
    send_now(c, delivery)
}

/// Sends delivery `id` now, for a request that asked for it, and answers it as the
/// attempt left it.
fn send_now(c: &Call<'_>, id: u64) -> Result<Response, ApiError> {
    let ctx = c.ctx;
    let taken = in_write(c.caps, |txn| Ok(deliveries::take(ctx, txn, &[id], 1)?))?;
    send(c.caps, vec![(*ctx, taken)])?;
    let d = deliveries::load(c.caps.store.begin_read()?.as_ref(), ctx.account_id, id)?;
    Ok(Response::doc(200, delivery_element(id, &d)))
}

// ---- the delivery log --------------------------------------------------------------------

static DELIVERY_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the delivery: one event to one webhook (read only)."),
    Field::new("webhook_id", Kind::Integer)
        .read_only()
        .doc("The webhook it goes to (read only)."),
    Field::new("event", Kind::Text)
        .read_only()
        .doc("The event, such as invoice.create (read only)."),
    Field::new("resource_id", Kind::Integer)
        .read_only()
        .doc("The id of the record the event is of (read only)."),
    Field::new("status", Kind::Enum(&["PENDING", "SUCCEEDED", "FAILED"]))
        .read_only()
        .doc(
            "PENDING until a receiver answered 2xx (SUCCEEDED) or the last of 8 attempts, or a 410 \
         Gone, failed (FAILED) (read only).",
        ),
    Field::new("attempts", Kind::Integer).read_only().doc(
        "Attempts made; attempt_log lists the latest, each with its time, http_status, \
         duration (milliseconds), error and the first KiB of the answer (read only).",
    ),
    Field::new("next_attempt", Kind::DateTime)
        .read_only()
        .doc("When the next attempt is due, while PENDING (read only)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the event happened (read only)."),
];

/// A delivery as its element, its attempts in `attempt_log`.
fn delivery_element(id: u64, d: &Delivery) -> Element {
    let datetime = |t: i64| crate::domain::date::format_datetime(t);
    let attempts = d
        .attempts
        .iter()
        .map(|a| {
            Element::node(
                "attempt",
                vec![
                    Element::typed("time", ScalarType::DateTime, datetime(a.at)),
                    Element::typed(
                        "http_status",
                        ScalarType::Integer,
                        a.status.map(|s| s.to_string()).unwrap_or_default(),
                    ),
                    Element::typed("duration", ScalarType::Integer, a.millis.to_string()),
                    Element::text("error", a.error.clone()),
                    Element::text("answer", a.answer.clone()),
                ],
            )
        })
        .collect();
    let next = if d.status == Status::Pending {
        datetime(d.next_attempt)
    } else {
        String::new()
    };
    Element::node(
        "webhook-delivery",
        vec![
            Element::typed("id", ScalarType::Integer, id.to_string()),
            Element::typed("webhook_id", ScalarType::Integer, d.webhook.to_string()),
            Element::text("event", d.event.clone()),
            Element::typed(
                "resource_id",
                ScalarType::Integer,
                d.resource_id.to_string(),
            ),
            Element::text("status", d.status.as_str()),
            Element::typed("attempts", ScalarType::Integer, d.attempts_made.to_string()),
            Element::typed("next_attempt", ScalarType::DateTime, next),
            Element::typed("created", ScalarType::DateTime, datetime(d.created)),
            Element::list("attempt_log", attempts),
        ],
    )
}

/// `GET /api/webhook-deliveries`: filtered by `webhook_id`, `event` and `status`, paged.
pub(super) fn deliveries_list(c: &Call<'_>) -> Result<Response, ApiError> {
    let (page, per_page) = c.query.paging()?;
    let order = c.query.order(DELIVERY_FIELDS)?;
    let mut f = deliveries::Filter {
        webhooks: c.query.ids("webhook_id")?,
        events: c
            .query
            .list("event")
            .into_iter()
            .map(str::to_owned)
            .collect(),
        statuses: Vec::new(),
    };
    for s in c.query.list("status") {
        match Status::ALL
            .iter()
            .find(|st| st.as_str().eq_ignore_ascii_case(s))
        {
            Some(st) => f.statuses.push(*st),
            None => {
                return Err(ApiError::bad(format!(
                    "status must list values of PENDING, SUCCEEDED, FAILED, got \"{s}\""
                )));
            }
        }
    }
    let txn = c.caps.store.begin_read()?;
    for &w in &f.webhooks {
        if !deliveries::webhook_exists(txn.as_ref(), c.ctx.account_id, w)? {
            return Err(ApiError::NotFound(format!("webhook {w} does not exist")));
        }
    }
    let mut all = deliveries::matching(txn.as_ref(), c.ctx.account_id, &f)?;
    if !order.is_empty() {
        // Stable: id order among equal keys.
        all.sort_by(|a, b| domain_records::compare_by(&order, a, b));
    }
    let total = all.len();
    let start = (page.saturating_sub(1) as usize).saturating_mul(per_page as usize);
    let mut children = Vec::new();
    for r in all.iter().skip(start).take(per_page as usize) {
        let d = deliveries::load(txn.as_ref(), c.ctx.account_id, r.id())?;
        children.push(delivery_element(r.id(), &d));
    }
    Ok(page_answer(
        "webhook-deliveries",
        children,
        page,
        per_page,
        total,
    ))
}

/// `GET /api/webhook-deliveries/{id}`.
pub(super) fn delivery_get(c: &Call<'_>) -> Result<Response, ApiError> {
    let id = parse_id(c.id, "webhook delivery")?;
    let d = deliveries::load(c.caps.store.begin_read()?.as_ref(), c.ctx.account_id, id)?;
    Ok(Response::doc(200, delivery_element(id, &d)))
}

/// `PUT /api/webhook-deliveries/{id}/redeliver`: sends it again now, with the same
/// `webhook-id`, whatever became of it; answers it as that attempt left it.
pub(super) fn redeliver(c: &Call<'_>) -> Result<Response, ApiError> {
    let id = parse_id(c.id, "webhook delivery")?;
    deliveries::load(c.caps.store.begin_read()?.as_ref(), c.ctx.account_id, id)?;
    in_write(c.caps, |txn| Ok(deliveries::redeliver(c.ctx, txn, id)?))?;
    send_now(c, id)
}

// ---- sending -----------------------------------------------------------------------------

/// Set to `1` in the component's environment by a host that sends deliveries itself: it
/// calls the `deliver` export from a task of its own when an answer asks for it (`DELIVER`)
/// and after each upkeep, so that a write's instance sends nothing and the host can let
/// deliveries take turns with requests. Without it (`wasmtime serve`, Spin) the instance
/// that answered a write sends its events (`after`) and the upkeep sends the rest.
const HOST_DELIVERS: &str = "FAKTURA_HOST_DELIVERS";

/// The header in which the answer to a write asks a host that sends deliveries itself for
/// those of its account (the account's id). The faktura host takes it off before the
/// answer leaves, as it does `OUTCOME`.
pub(crate) const DELIVER: &str = "x-faktura-deliver";

/// Whether the host sends deliveries itself (`HOST_DELIVERS`).
pub fn host_delivers(caps: &Caps) -> bool {
    caps.env.var(HOST_DELIVERS).is_some_and(|v| v == "1")
}

/// The account whose events the answer to `req` may have recorded: that of a write that
/// succeeded.
pub fn written(req: &Request, answer: &Encoded) -> Option<u64> {
    let write = matches!(req.method, Method::Post | Method::Put | Method::Delete);
    answer.account.filter(|_| write && answer.status < 400)
}

/// Asks a host that sends deliveries itself to send those of `account` (`DELIVER`), which
/// the write answered by `answer` may have recorded.
pub fn tell_host(account: u64, answer: &mut Encoded) {
    answer.headers.push((DELIVER.into(), account.to_string()));
}

/// What a write request of `account` leaves to do once it is answered (`written`): the
/// deliveries of the events it recorded go out now rather than at the next upkeep. Costs
/// an account without pending deliveries one scan of an empty prefix.
pub fn after(caps: &Caps, account: u64) {
    if let Err(e) = deliver(caps, &[account]) {
        eprintln!("faktura: delivering webhook events of account {account}: {e:?}");
    }
}

/// Sends what is due for `accounts`, in one go: at most `limits::DELIVERY_BATCH`
/// deliveries, all at once. The number of attempts made.
pub fn deliver(caps: &Caps, accounts: &[u64]) -> Result<u32, ApiError> {
    let mut batch: Vec<(Ctx, Vec<Taken>)> = Vec::new();
    let mut room = limits::DELIVERY_BATCH as usize;
    for &account in accounts {
        if room == 0 {
            break;
        }
        let scoped = Scoped::account(caps.store, account);
        let caps = &Caps {
            store: &scoped,
            ..*caps
        };
        let (ctx, due) = {
            let txn = caps.store.begin_read()?;
            // One scan first: most accounts have nothing pending.
            if events::due(txn.as_ref(), account, i64::MAX, 1)?.is_empty() {
                continue;
            }
            let clock = clock::load(txn.as_ref(), account)?;
            let ctx = clock.ctx(account, 0, true, caps.clock.now_unix());
            let due = events::due(txn.as_ref(), account, ctx.now, limits::DELIVERY_SCAN)?;
            (ctx, due)
        };
        if due.is_empty() {
            continue;
        }
        let mut taken = in_write(caps, |txn| {
            Ok(deliveries::take(
                &ctx,
                txn,
                &due,
                limits::DELIVERY_BATCH_PER_WEBHOOK,
            )?)
        })?;
        // Taken beyond the room left go back at their lease's end, as a dead sender's do.
        taken.truncate(room);
        room -= taken.len();
        batch.push((ctx, taken));
    }
    send(caps, batch)
}

/// Sends what is due for `accounts` go after go (`deliver`) until a go sends nothing or
/// `limits::DELIVERY_PASS_SECONDS` have passed: a backlog (an outage, a receiver back
/// after a while) drains in one pass instead of a batch per pass. A failed attempt is due
/// again only after its wait, so a failing receiver ends the loop. The attempts made.
pub fn deliver_backlog(caps: &Caps, accounts: &[u64]) -> Result<u32, ApiError> {
    let start = caps.clock.now_unix();
    let mut made = 0;
    loop {
        let n = deliver(caps, accounts)?;
        made += n;
        if n == 0 || caps.clock.now_unix() - start >= limits::DELIVERY_PASS_SECONDS {
            return Ok(made);
        }
    }
}

/// Sends taken deliveries (of several accounts) at once and settles every attempt.
fn send(caps: &Caps, batch: Vec<(Ctx, Vec<Taken>)>) -> Result<u32, ApiError> {
    let mut requests = Vec::new();
    // Per delivery: where its request is among `requests`, or why there is none.
    let mut plans: Vec<(usize, &Taken, Result<usize, String>)> = Vec::new();
    let timestamp = caps.clock.now_unix();
    for (at, (ctx, taken)) in batch.iter().enumerate() {
        let txn = caps.store.begin_read()?;
        for t in taken {
            let prepared = prepare(txn.as_ref(), ctx, t, timestamp).map(|r| {
                requests.push(r);
                requests.len() - 1
            });
            plans.push((at, t, prepared));
        }
    }
    if plans.is_empty() {
        return Ok(0);
    }
    let exchanges = caps.outbound.post_all(
        &requests,
        limits::WEBHOOK_TIMEOUT_MS,
        limits::WEBHOOK_ANSWER_BYTES_MAX,
    );
    let mut made = 0;
    for (at, (ctx, _)) in batch.iter().enumerate() {
        let scoped = Scoped::account(caps.store, ctx.account_id);
        let caps = &Caps {
            store: &scoped,
            ..*caps
        };
        let mine: Vec<_> = plans.iter().filter(|(a, _, _)| *a == at).collect();
        if mine.is_empty() {
            continue;
        }
        // The attempts settle at the account's moment after them (retries wait from then).
        let clock = clock::load(caps.store.begin_read()?.as_ref(), ctx.account_id)?;
        let settled = clock.ctx(ctx.account_id, 0, true, caps.clock.now_unix());
        in_write(caps, |txn| {
            for (_, t, prepared) in &mine {
                let (outcome, millis) = match prepared {
                    Ok(i) => match exchanges.get(*i) {
                        Some(x) => (outcome_of(&x.answer), x.millis),
                        None => (Outcome::Failed("the request was not sent".into()), 0),
                    },
                    Err(why) => (Outcome::Failed(why.clone()), 0),
                };
                deliveries::settle(&settled, txn, t.id, ctx.now, millis, &outcome)?;
            }
            Ok(())
        })?;
        made += mine.len() as u32;
    }
    Ok(made)
}

/// What an exchange came to, its answer cut to what the log keeps.
fn outcome_of(answer: &Result<crate::caps::Answer, String>) -> Outcome {
    match answer {
        Ok(a) => {
            let mut end = a.body.len().min(limits::WEBHOOK_ANSWER_LOGGED_BYTES_MAX);
            while end > 0 && std::str::from_utf8(&a.body[..end]).is_err() {
                end -= 1;
            }
            Outcome::Answered {
                status: a.status,
                answer: String::from_utf8_lossy(&a.body[..end]).into_owned(),
            }
        }
        Err(why) => Outcome::Failed(why.clone()),
    }
}

/// The request of a taken delivery: its event's record in the webhook's format, signed
/// with the webhook's secrets at `timestamp` (Unix seconds, the real time of the attempt).
fn prepare(txn: &dyn Read, ctx: &Ctx, t: &Taken, timestamp: i64) -> Result<Outgoing, String> {
    let format = match t.webhook.text("format") {
        "JSON" => Format::Json,
        _ => Format::Xml,
    };
    let body = body(txn, ctx.account_id, &t.delivery, format)
        .map_err(|e| format!("the event's record could not be written: {e:?}"))?;
    let secrets = webhooks::signing_secrets(txn, ctx.account_id, t.delivery.webhook, ctx.now)
        .map_err(|e| format!("the webhook's secret could not be read: {e:?}"))?;
    let msg_id = message_id(t.id);
    let signature = signatures(&secrets, &msg_id, timestamp, &body)?;
    let content_type = match format {
        Format::Json => super::JSON_TYPE,
        Format::Xml => super::XML_TYPE,
    };
    Ok(Outgoing {
        url: t.webhook.text("url").to_owned(),
        headers: vec![
            ("content-type".into(), content_type.into()),
            ("user-agent".into(), "Faktura-Webhook".into()),
            ("webhook-id".into(), msg_id),
            ("webhook-timestamp".into(), timestamp.to_string()),
            ("webhook-signature".into(), signature),
            ("x-faktura-event".into(), t.delivery.event.clone()),
            (
                "x-faktura-webhook-id".into(),
                t.delivery.webhook.to_string(),
            ),
        ],
        body,
    })
}

/// The `webhook-id` of a delivery: one per event and webhook, the same on every attempt.
fn message_id(delivery: u64) -> String {
    format!("msg_{delivery}")
}

/// `webhook-signature`: `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`
/// under each secret's key (the base64 after `whsec_`), separated by spaces.
fn signatures(
    secrets: &[String],
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut out = Vec::new();
    for secret in secrets {
        let key = b64
            .decode(secret.strip_prefix("whsec_").unwrap_or(secret))
            .map_err(|_| "the webhook's secret is not base64".to_owned())?;
        let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key)
            .map_err(|_| "the webhook's secret is not a key".to_owned())?;
        mac.update(msg_id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        out.push(format!("v1,{}", b64.encode(mac.finalize().into_bytes())));
    }
    Ok(out.join(" "))
}

/// The body of a delivery: the event's record as a GET of it answered in `format` when the
/// event happened.
fn body(txn: &dyn Read, account: u64, d: &Delivery, format: Format) -> Result<Vec<u8>, ApiError> {
    let resource = d.event.rsplit_once('.').map_or("", |(r, _)| r);
    let snap = &d.snapshot;
    let today = Date::from_julian(snap.today);
    let doc_of = |bytes: &[u8]| storage::decode(bytes);
    let answer = |element: Element| super::encode(Response::doc(200, element), format).body;
    if resource == "webhook" {
        let record = domain_records::decode_record(&snap.record)?;
        return Ok(answer(webhook_element(&record, None)));
    }
    if let Some(kind) = DocKind::ALL.into_iter().find(|k| k.range() == resource) {
        let doc = doc_of(&snap.record)?;
        let response = Response {
            status: 200,
            headers: Vec::new(),
            payload: Payload::Documents(Documents {
                docs: vec![doc],
                list: None,
                today,
            }),
        };
        debug_assert_eq!(kind.range(), resource);
        return Ok(super::encode(response, format).body);
    }
    for kind in DocKind::ALL {
        let Some(part) = resource
            .strip_prefix(kind.range())
            .and_then(|r| r.strip_prefix('_'))
        else {
            continue;
        };
        let parent = snap.parent.as_ref().map(|p| doc_of(p)).transpose()?;
        let element = match part {
            "item" => {
                let item = items::Item::decode(&snap.record)?;
                let doc = match parent {
                    Some(doc) => doc,
                    None => storage::load(txn, account, kind, item.document_id)?,
                };
                parts::element::<Items>(kind, &item, Some(&doc))
            }
            "payment" => {
                parts::element::<Payments>(kind, &payments::Payment::decode(&snap.record)?, None)
            }
            "comment" => {
                parts::element::<Comments>(kind, &comments::Comment::decode(&snap.record)?, None)
            }
            _ => continue,
        };
        return Ok(answer(element));
    }
    let record = domain_records::decode_record(&snap.record)?;
    if resource == "incoming" {
        return Ok(answer(super::incomings::element_of(
            txn, account, today, record,
        )?));
    }
    let wire = records::emitting()
        .into_iter()
        .find(|w| w.res.event == Some(resource))
        .ok_or_else(|| ApiError::Internal(format!("no record resource has events {resource}")))?;
    Ok(answer(encode_record(
        wire.res.fields,
        wire.singular,
        &record,
        Some(&[]),
    )))
}

// ---- the API description -----------------------------------------------------------------

/// The webhook record, for the API description.
pub(super) fn schema() -> Schema {
    Schema {
        singular: "webhook",
        plural: "webhooks",
        fields: webhooks::fields_with_secret(),
        filters: Vec::new(),
        owner: None,
    }
}

/// The delivery record, for the API description.
pub(super) fn delivery_schema() -> Schema {
    Schema {
        singular: "webhook-delivery",
        plural: "webhook-deliveries",
        fields: DELIVERY_FIELDS,
        filters: Vec::new(),
        owner: None,
    }
}

/// The query of the delivery log, for the API description.
pub(super) const DELIVERY_PARAMS: &[Param] = &[
    Param::new(
        "webhook_id",
        Shape::Ids,
        "Only deliveries to these webhooks.",
    ),
    Param::new(
        "event",
        Shape::Text,
        "Only deliveries of these events (comma-separated names, such as invoice.create).",
    ),
    Param::new(
        "status",
        Shape::AnyOf(&["PENDING", "SUCCEEDED", "FAILED"]),
        "Only deliveries of these statuses.",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The test vector of the Standard Webhooks specification: its secret, id, timestamp
    /// and payload give its signature.
    #[test]
    fn signatures_match_the_standard_webhooks_test_vector() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned();
        let body = br#"{"test": 2432232314}"#;
        let got = signatures(&[secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body).unwrap();
        assert_eq!(got, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn a_rotated_secret_signs_beside_the_new_one() {
        let a = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned();
        let b = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=".to_owned();
        let both = signatures(&[b.clone(), a.clone()], "msg_1", 5, b"x").unwrap();
        let parts: Vec<&str> = both.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], signatures(&[b], "msg_1", 5, b"x").unwrap());
        assert_eq!(parts[1], signatures(&[a], "msg_1", 5, b"x").unwrap());
    }
}
