//! The wire side of clients beyond the shared record handlers: the filtered list (its
//! query read into a `client_query::Filter`, every bad value reported at once) and the
//! creation of a client's tag, which answers the tag a client already carries.

use super::described::{Param, Shape};
use super::error::ApiError;
use super::query::Query;
use super::records::{CLIENTS, encode_record, page_answer};
use super::{Call, Response, in_write};
use crate::codec::{Element, ScalarType};
use crate::domain::client_query::{self, Filter};
use crate::domain::codes;
use crate::domain::date::format_datetime;
use crate::domain::portal;
use crate::domain::schema::{Field, Kind};

/// The parameters `filter` reads, for the API description.
/// `POST /clients/{id}/portal-session`: a link to the client's documents in the customer
/// portal, working for an hour.
pub(super) fn portal_session(c: &Call<'_>) -> Result<Response, ApiError> {
    let id =
        c.id.parse::<u64>()
            .ok()
            .filter(|id| *id > 0)
            .ok_or_else(|| ApiError::NotFound(format!("client {} does not exist", c.id)))?;
    let (url, expires) = in_write(c.caps, |txn| {
        Ok(portal::open_session(c.ctx, txn, c.caps.random, id)?)
    })?;
    Ok(Response::doc(
        201,
        Element::node(
            "portal-session",
            vec![
                Element::typed("client_id", ScalarType::Integer, id.to_string()),
                Element::text("url", url),
                Element::typed("expires", ScalarType::DateTime, format_datetime(expires)),
            ],
        ),
    ))
}

static PORTAL_SESSION_FIELDS: &[Field] = &[
    Field::new("client_id", Kind::Integer)
        .read_only()
        .doc("The client whose documents the session shows."),
    Field::new("url", Kind::Text).read_only().doc(
        "The session's address in the customer portal: the settings' public_url, then \
         /portal/ and a token of 192 random bits.",
    ),
    Field::new("expires", Kind::DateTime)
        .read_only()
        .doc("When the session stops working: one hour after it was opened."),
];

/// The answer of `portal_session`, for the API description.
pub(super) fn portal_session_schema() -> super::described::Schema {
    super::described::Schema {
        singular: "portal-session",
        plural: "portal-sessions",
        fields: PORTAL_SESSION_FIELDS,
        filters: Vec::new(),
        owner: None,
    }
}

pub(super) const LIST_PARAMS: &[Param] = &[
    Param::new(
        "name",
        Shape::Text,
        "Only clients whose name contains this (case-insensitive); several comma-separated: \
         any of them.",
    ),
    Param::new(
        "client_number",
        Shape::Serials,
        "Only clients with this serial number (the number field, digits only, whatever the \
         prefix); several comma-separated: any of them.",
    ),
    Param::new(
        "email",
        Shape::Text,
        "Only clients whose e-mail address contains this (case-insensitive); several \
         comma-separated: any of them.",
    ),
    Param::new(
        "first_name",
        Shape::Text,
        "Only clients whose first name contains this (case-insensitive); several \
         comma-separated: any of them.",
    ),
    Param::new(
        "last_name",
        Shape::Text,
        "Only clients whose last name contains this (case-insensitive); several \
         comma-separated: any of them.",
    ),
    Param::new(
        "country_code",
        Shape::AnyOf(codes::COUNTRIES),
        "Only clients of this country (ISO 3166-1 alpha-2, any case); several \
         comma-separated: any of them.",
    ),
    Param::new(
        "note",
        Shape::Text,
        "Only clients whose note contains this (case-insensitive); several comma-separated: \
         any of them.",
    ),
    Param::new(
        "invoice_id",
        Shape::Ids,
        "Only the clients of these invoices (comma-separated).",
    ),
    Param::new(
        "tags",
        Shape::Text,
        "Only clients carrying all these tags (comma-separated, any case).",
    ),
    Param::new(
        "tags_any",
        Shape::Text,
        "Only clients carrying any of these tags (comma-separated, any case).",
    ),
    Param::new(
        "property{ID}",
        Shape::Numbered("property"),
        "`property` followed by the id of a client property (property12=…): only clients \
         holding this value of it (any case; a CHECKBOX 1 or 0); several comma-separated: \
         any of them. An id the account has no client property of is refused.",
    ),
];

/// The client filters of a query; unknown parameters are ignored.
fn filter(query: &Query) -> Result<Filter, ApiError> {
    let mut errors = Vec::new();
    let parts = |name: &str| -> Vec<String> {
        query
            .list(name)
            .into_iter()
            .map(str::to_lowercase)
            .collect()
    };
    let (tags, tags_any) = query.tags();
    let mut f = Filter {
        names: parts("name"),
        emails: parts("email"),
        first_names: parts("first_name"),
        last_names: parts("last_name"),
        notes: parts("note"),
        tags,
        tags_any,
        ..Filter::default()
    };
    f.numbers = query.picked(
        "client_number",
        "serial numbers (digits only, from 1)",
        &mut errors,
        |n| {
            n.parse::<i64>()
                .ok()
                .filter(|number| *number > 0 && n.bytes().all(|b| b.is_ascii_digit()))
        },
    );
    match query.ids("invoice_id") {
        Ok(ids) => f.invoice_ids = ids,
        Err(e) => errors.extend(e.messages()),
    }
    f.country_codes = query.picked(
        "country_code",
        "ISO 3166-1 alpha-2 country codes",
        &mut errors,
        |code| Some(code.to_ascii_uppercase()).filter(|upper| codes::is_country(upper)),
    );
    f.properties = properties(query, &mut errors);
    ApiError::checked(f, errors)
}

/// The `property{ID}` filters: the values asked of each client property, by its id (the
/// first parameter of an id counts).
fn properties(query: &Query, errors: &mut Vec<String>) -> Vec<(u64, Vec<String>)> {
    let mut properties: Vec<(u64, Vec<String>)> = Vec::new();
    for (name, _) in query.params() {
        let Some(digits) = name.strip_prefix("property") else {
            continue;
        };
        // `property` and a name that goes on otherwise are other parameters: ignored.
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        match digits.parse::<u64>() {
            Ok(id) if id > 0 => {
                let values: Vec<String> = query.list(name).into_iter().map(str::to_owned).collect();
                if !values.is_empty() && !properties.iter().any(|(p, _)| *p == id) {
                    properties.push((id, values));
                }
            }
            _ => errors.push(format!(
                "{name} must name a client property by its id, as property12"
            )),
        }
    }
    properties
}

/// `GET /clients`: a page of the clients the filters match, with their number in
/// `X-Total-Count`; `count_only` (HEAD) answers just the count. Only reads.
pub(super) fn list(c: &Call<'_>, count_only: bool) -> Result<Response, ApiError> {
    let (caps, ctx, query) = (c.caps, c.ctx, c.query);
    let f = filter(query)?;
    let (page, per_page) = query.paging()?;
    let order = query.order(CLIENTS.res.fields)?;
    let txn = caps.store.begin_read()?;
    let (clients, total) =
        client_query::page(txn.as_ref(), ctx.account_id, &f, &order, page, per_page)?;
    let children = if count_only {
        Vec::new()
    } else {
        clients
            .iter()
            .map(|r| encode_record(CLIENTS.res.fields, CLIENTS.singular, r, None))
            .collect()
    };
    Ok(page_answer(CLIENTS.plural, children, page, per_page, total))
}
