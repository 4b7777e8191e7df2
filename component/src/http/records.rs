//! The wire side of record-shaped resources: request documents to `Changes`, records to
//! elements, and the five operations (list, get, create, update, delete).

use base64::Engine as _;

use super::error::ApiError;
use super::{Response, in_write};
use crate::codec::{Element, ScalarType};
use crate::domain::records::{self, ListQuery, Resource};
use crate::domain::schema::{Access, Changes, Field, Kind, Record};
use crate::http::Call;

/// A resource with its root element names.
pub(super) struct Wire {
    pub plural: &'static str,
    pub singular: &'static str,
    pub res: &'static Resource,
    /// Whose records these are, for resources that belong to another record.
    pub owner: Option<Owner>,
    /// The tags of the records, for resources whose lists take `tags` and `tags_any`.
    pub tags: Option<&'static record_tags::Owner>,
}

/// The record a resource's records belong to (an incoming's payments, a client's property
/// values): a list that names owners by `field` answers 404 for one that is not the
/// account's, and a `required` one must name one.
pub(super) struct Owner {
    pub field: &'static str,
    pub required: bool,
    /// Ok when the owner is one of the account's (`txn`, account, id), else `NotFound`.
    pub check: fn(&dyn crate::caps::Read, u64, u64) -> Result<(), crate::domain::Error>,
}

impl Wire {
    const fn new(plural: &'static str, singular: &'static str, res: &'static Resource) -> Wire {
        Wire {
            plural,
            singular,
            res,
            owner: None,
            tags: None,
        }
    }

    /// The resource's records carry tags, by which its lists filter.
    const fn tagged(mut self, tags: &'static record_tags::Owner) -> Wire {
        self.tags = Some(tags);
        self
    }

    /// The record shape of the API description: fields, and the list filters (an owner's
    /// field among them).
    pub(super) fn schema(&self) -> super::described::Schema {
        let mut filters: Vec<_> = self
            .res
            .filters
            .iter()
            .map(|f| (f.param, f.field))
            .collect();
        if let Some(owner) = &self.owner
            && !filters.iter().any(|(p, _)| *p == owner.field)
        {
            filters.push((owner.field, owner.field));
        }
        super::described::Schema {
            singular: self.singular,
            plural: self.plural,
            fields: self.res.fields,
            filters,
            owner: self
                .owner
                .as_ref()
                .filter(|o| o.required)
                .map(|o| (o.field, true)),
        }
    }

    /// The resource's records belong to an `owner`.
    const fn owned_by(mut self, owner: Owner) -> Wire {
        self.owner = Some(owner);
        self
    }
}

/// The owner of an incoming's children: named in every list.
const INCOMING_OWNER: Owner = Owner {
    field: "incoming_id",
    required: true,
    check: |txn, account, id| records::check_exists(txn, &incomings::INCOMINGS, account, id),
};

use crate::domain::{
    articles, clients, contacts, country_taxes, email_templates, incomings, properties,
    property_values, record_tags, suppliers, taxes, templates, units,
};

pub(super) static TEMPLATES: Wire = Wire::new("templates", "template", &templates::TEMPLATES);
pub(super) static USER_PROPERTIES: Wire = Wire::new(
    "user-properties",
    "user-property",
    &properties::USER_PROPERTIES,
);
pub(super) static INCOMING_PROPERTIES: Wire = Wire::new(
    "incoming-properties",
    "incoming-property",
    &properties::INCOMING_PROPERTIES,
);
pub(super) static CLIENT_PROPERTIES: Wire = Wire::new(
    "client-properties",
    "client-property",
    &properties::CLIENT_PROPERTIES,
);
pub(super) static COUNTRY_TAXES: Wire = Wire::new(
    "country-taxes",
    "country-tax",
    &country_taxes::COUNTRY_TAXES,
);
pub(super) static CLIENTS: Wire = Wire::new("clients", "client", &clients::CLIENTS);
pub(super) static EMAIL_TEMPLATES: Wire = Wire::new(
    "email-templates",
    "email-template",
    &email_templates::EMAIL_TEMPLATES,
);
pub(super) static TAXES: Wire = Wire::new("taxes", "tax", &taxes::TAXES);
pub(super) static INCOMING_PROPERTY_VALUES: Wire = Wire::new(
    "incoming-property-values",
    "incoming-property-value",
    &property_values::INCOMING_PROPERTY_VALUES,
)
.owned_by(Owner {
    field: "incoming_id",
    required: false,
    check: |txn, account, id| {
        property_values::check_owner(txn, &property_values::INCOMING_PROPERTY_VALUES, account, id)
    },
});
pub(super) static CLIENT_PROPERTY_VALUES: Wire = Wire::new(
    "client-property-values",
    "client-property-value",
    &property_values::CLIENT_PROPERTY_VALUES,
)
.owned_by(Owner {
    field: "client_id",
    required: false,
    check: |txn, account, id| {
        property_values::check_owner(txn, &property_values::CLIENT_PROPERTY_VALUES, account, id)
    },
});
pub(super) static USER_PROPERTY_VALUES: Wire = Wire::new(
    "user-property-values",
    "user-property-value",
    &property_values::USER_PROPERTY_VALUES,
)
.owned_by(Owner {
    field: "user_id",
    required: false,
    check: |txn, account, id| {
        property_values::check_owner(txn, &property_values::USER_PROPERTY_VALUES, account, id)
    },
});
pub(super) static CLIENT_TAGS: Wire =
    Wire::new("client-tags", "client-tag", &record_tags::CLIENT_TAGS).owned_by(Owner {
        field: "client_id",
        required: true,
        check: |txn, account, id| {
            if record_tags::CLIENTS.exists(txn, account, id)? {
                Ok(())
            } else {
                Err(crate::domain::Error::NotFound(format!(
                    "client {id} does not exist"
                )))
            }
        },
    });
pub(super) static ARTICLE_TAGS: Wire =
    Wire::new("article-tags", "article-tag", &record_tags::ARTICLE_TAGS).owned_by(Owner {
        field: "article_id",
        required: true,
        check: |txn, account, id| {
            if record_tags::ARTICLES.exists(txn, account, id)? {
                Ok(())
            } else {
                Err(crate::domain::Error::NotFound(format!(
                    "article {id} does not exist"
                )))
            }
        },
    });
pub(super) static UNITS: Wire = Wire::new("units", "unit", &units::UNITS);
pub(super) static REMINDER_TEXTS: Wire = Wire::new(
    "reminder-texts",
    "reminder-text",
    &crate::domain::dunning::levels::LEVELS,
);
pub(super) static BASE_RATES: Wire = Wire::new(
    "base-rates",
    "base-rate",
    &crate::domain::dunning::base_rates::BASE_RATES,
);
pub(super) static ARTICLES: Wire =
    Wire::new("articles", "article", &articles::ARTICLES).tagged(&record_tags::ARTICLES);
pub(super) static ARTICLE_PROPERTIES: Wire = Wire::new(
    "article-properties",
    "article-property",
    &properties::ARTICLE_PROPERTIES,
);
pub(super) static ARTICLE_PROPERTY_VALUES: Wire = Wire::new(
    "article-property-values",
    "article-property-value",
    &property_values::ARTICLE_PROPERTY_VALUES,
)
.owned_by(Owner {
    field: "article_id",
    required: false,
    check: |txn, account, id| {
        property_values::check_owner(txn, &property_values::ARTICLE_PROPERTY_VALUES, account, id)
    },
});
/// Contacts are listed by their client, which a list must name.
pub(super) static CONTACTS: Wire =
    Wire::new("contacts", "contact", &contacts::CONTACTS).owned_by(Owner {
        field: "client_id",
        required: true,
        check: |txn, account, id| records::check_exists(txn, &clients::CLIENTS, account, id),
    });
/// The receivers of a recurring invoice's e-mails, listed by their recurring.
pub(super) static RECURRING_RECEIVERS: Wire = Wire::new(
    "recurring-email-receivers",
    "recurring-email-receiver",
    &crate::domain::documents::recurring::RECEIVERS,
)
.owned_by(Owner {
    field: "recurring_id",
    required: true,
    check: |txn, account, id| match crate::domain::documents::storage::load(
        txn,
        account,
        crate::domain::documents::DocKind::Recurring,
        id,
    ) {
        Ok(_) => Ok(()),
        Err(e) => Err(e),
    },
});
pub(super) static SUPPLIERS: Wire = Wire::new("suppliers", "supplier", &suppliers::SUPPLIERS);
pub(super) static INCOMINGS: Wire = Wire::new("incomings", "incoming", &incomings::INCOMINGS);
pub(super) static INCOMING_PAYMENTS: Wire = Wire::new(
    "incoming-payments",
    "incoming-payment",
    &incomings::INCOMING_PAYMENTS,
)
.owned_by(INCOMING_OWNER);
pub(super) static INCOMING_COMMENTS: Wire = Wire::new(
    "incoming-comments",
    "incoming-comment",
    &incomings::INCOMING_COMMENTS,
)
.owned_by(INCOMING_OWNER);
pub(super) static INCOMING_ITEMS: Wire = Wire::new(
    "incoming-items",
    "incoming-item",
    &incomings::INCOMING_ITEMS,
)
.owned_by(INCOMING_OWNER);

/// The record resources with webhook events (`Resource::emits`), as a GET answers them.
pub(super) fn emitting() -> [&'static Wire; 8] {
    [
        &CLIENTS,
        &SUPPLIERS,
        &ARTICLES,
        &CONTACTS,
        &INCOMINGS,
        &INCOMING_PAYMENTS,
        &INCOMING_COMMENTS,
        &INCOMING_ITEMS,
    ]
}

/// Checks the root element and parses every writable field the document carries. Fields
/// that cannot be read are kept in `Changes::invalid`, so that the domain reports them
/// together with its own findings.
pub(super) fn decode_changes(
    fields: &'static [Field],
    root: &Element,
    singular: &str,
) -> Result<Changes, ApiError> {
    if root.name != singular && root.name != singular.replace('-', "_") {
        return Err(ApiError::bad(format!(
            "expected a <{singular}> root element, found <{}>",
            root.name
        )));
    }
    if root.as_text().is_some_and(|t| !t.trim().is_empty()) {
        return Err(ApiError::bad(format!(
            "<{singular}> must hold its fields as elements, not text"
        )));
    }
    let mut changes = Changes::default();
    for field in fields.iter().filter(|f| f.access == Access::Write) {
        let Some(child) = root.child(field.name) else {
            continue;
        };
        if root
            .children()
            .iter()
            .filter(|c| c.name == field.name)
            .count()
            > 1
        {
            changes.invalid.push((
                field.name,
                format!("{} is given more than once", field.name),
            ));
            continue;
        }
        let Some(text) = child.as_text() else {
            changes.invalid.push((
                field.name,
                format!("{} must be a value, not a list of elements", field.name),
            ));
            continue;
        };
        if field.kind == Kind::File {
            match decode_base64(text) {
                Some(bytes) if !bytes.is_empty() => changes.files.push((field.name, bytes)),
                Some(_) => changes
                    .invalid
                    .push((field.name, format!("{} must not be empty", field.name))),
                None => changes
                    .invalid
                    .push((field.name, format!("{} is not valid base64", field.name))),
            }
            continue;
        }
        match field.parse(text) {
            Ok(value) => changes.values.push((field.name, value)),
            Err(e) => changes.invalid.push((field.name, e)),
        }
    }
    Ok(changes)
}

/// Standard base64; line breaks and spaces inside are allowed, as mail-style encoders emit.
pub(super) fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()
}

pub(super) const fn scalar_type(kind: Kind) -> Option<ScalarType> {
    match kind {
        Kind::Integer => Some(ScalarType::Integer),
        Kind::Decimal => Some(ScalarType::Float),
        Kind::Date => Some(ScalarType::Date),
        Kind::DateTime => Some(ScalarType::DateTime),
        Kind::Text
        | Kind::Bool
        | Kind::Enum(_)
        | Kind::Country
        | Kind::Currency
        | Kind::File
        | Kind::Email
        | Kind::Iban
        | Kind::Bic
        | Kind::UnitCode
        | Kind::Words(_)
        | Kind::Tag
        | Kind::Recipients => None,
    }
}

/// A record as its element; file fields only when their bytes are given (single GET).
pub(super) fn encode_record(
    fields: &[Field],
    singular: &str,
    record: &Record,
    files: Option<&[(&'static str, Vec<u8>)]>,
) -> Element {
    let mut children = Vec::with_capacity(fields.len());
    for f in fields {
        let text = if f.kind == Kind::File {
            let Some(files) = files else { continue };
            files
                .iter()
                .find(|(n, _)| *n == f.name)
                .map(|(_, b)| base64::engine::general_purpose::STANDARD.encode(b))
                .unwrap_or_default()
        } else {
            record.get(f.name).map(|v| v.to_wire()).unwrap_or_default()
        };
        children.push(match scalar_type(f.kind) {
            Some(ty) => Element::typed(f.name, ty, text),
            None => Element::text(f.name, text),
        });
    }
    Element::node(singular, children)
}

pub(super) fn parse_id(wire: &Wire, raw: &str) -> Result<u64, ApiError> {
    raw.parse::<u64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::NotFound(format!("{} {raw} does not exist", wire.res.label)))
}

/// The owners a list names (`owner.field`, comma-separated ids) must be the account's;
/// a list of records that cannot be listed without their owner must name one.
fn check_owners(c: &Call<'_>, owner: &Owner) -> Result<(), ApiError> {
    match c.query.get(owner.field) {
        Some(raw) => {
            let txn = c.caps.store.begin_read()?;
            for id in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let id = id.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    ApiError::bad(format!(
                        "{} must be a positive integer, got \"{id}\"",
                        owner.field
                    ))
                })?;
                (owner.check)(txn.as_ref(), c.ctx.account_id, id)?;
            }
            Ok(())
        }
        None if owner.required => Err(ApiError::bad(format!("{} is mandatory", owner.field))),
        None => Ok(()),
    }
}

/// A list of a resource's records: filtered, ordered and paged; for records that belong
/// to another, the owners it names must be the account's.
pub(super) fn list(c: &Call<'_>, wire: &Wire) -> Result<Response, ApiError> {
    let (caps, ctx, query) = (c.caps, c.ctx, c.query);
    if let Some(owner) = &wire.owner {
        check_owners(c, owner)?;
    }
    let (page, per_page) = query.paging()?;
    let mut q = ListQuery {
        order: query.order(wire.res.fields)?,
        page,
        per_page,
        ..ListQuery::default()
    };
    for filter in wire.res.filters {
        if let Some(v) = query.get(filter.param) {
            let values: Vec<String> = v
                .split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect();
            // An id filter names ids; anything else would silently match nothing.
            if wire
                .res
                .fields
                .iter()
                .any(|f| f.name == filter.field && f.kind == Kind::Integer)
            {
                query.ids(filter.param)?;
            }
            if filter.part {
                q.parts.push((filter.field, values));
            } else {
                q.filters.push((filter.field, values));
            }
        }
    }
    let txn = caps.store.begin_read()?;
    if let Some(tags) = wire.tags {
        let (all, any) = (query.list("tags"), query.list("tags_any"));
        q.only = tags.owners(txn.as_ref(), ctx.account_id, &all, &any)?;
    }
    let result = records::list(txn.as_ref(), wire.res, ctx.account_id, &q)?;
    let mut children = Vec::with_capacity(result.records.len());
    for r in result.records {
        let r = wire.res.rules.shown(txn.as_ref(), ctx.account_id, r)?;
        children.push(encode_record(wire.res.fields, wire.singular, &r, None));
    }
    Ok(page_answer(
        wire.plural,
        children,
        page,
        per_page,
        result.total,
    ))
}

/// A page of a list: its records under `plural` with the page, its size and the total,
/// which `X-Total-Count` carries too.
pub(super) fn page_answer(
    plural: &str,
    children: Vec<Element>,
    page: u32,
    per_page: u32,
    total: usize,
) -> Response {
    let root = Element::list(plural, children)
        .with_attr("page", page.to_string())
        .with_attr("per_page", per_page.to_string())
        .with_attr("total", total.to_string());
    let mut response = Response::doc(200, root);
    response
        .headers
        .push(("x-total-count".into(), total.to_string()));
    response
}

pub(super) fn get(c: &Call<'_>, wire: &Wire) -> Result<Response, ApiError> {
    let (caps, ctx, raw_id) = (c.caps, c.ctx, c.id);
    let id = parse_id(wire, raw_id)?;
    let txn = caps.store.begin_read()?;
    let record = records::load(txn.as_ref(), wire.res, ctx.account_id, id)?;
    let record = wire.res.rules.shown(txn.as_ref(), ctx.account_id, record)?;
    let files = records::load_files(txn.as_ref(), wire.res, ctx.account_id, id)?;
    Ok(Response::doc(
        200,
        encode_record(wire.res.fields, wire.singular, &record, Some(&files)),
    ))
}

pub(super) fn create(c: &Call<'_>, wire: &Wire) -> Result<Response, ApiError> {
    let changes = decode_changes(wire.res.fields, &c.req.document()?, wire.singular)?;
    saved(c, wire, 201, |txn| {
        records::create(c.ctx, txn, wire.res, &changes)
    })
}

/// `POST /client-tags`, `POST /article-tags`: tags a record, or answers the tag of that
/// name it carries (201 either way).
pub(super) fn create_tag(c: &Call<'_>, wire: &Wire) -> Result<Response, ApiError> {
    let owner = record_tags::of_tags(wire.res);
    let changes = decode_changes(wire.res.fields, &c.req.document()?, wire.singular)?;
    saved(c, wire, 201, |txn| owner.add(c.ctx, txn, &changes))
}

/// Runs a create or an update and answers the record it saved, with its files.
fn saved(
    c: &Call<'_>,
    wire: &Wire,
    status: u16,
    mut save: impl FnMut(&mut dyn crate::caps::Write) -> Result<Record, crate::domain::Error>,
) -> Result<Response, ApiError> {
    let (record, files) = in_write(c.caps, |txn| {
        let record = save(txn)?;
        let record = wire
            .res
            .rules
            .shown(txn.as_read(), c.ctx.account_id, record)?;
        let files = records::load_files(txn.as_read(), wire.res, c.ctx.account_id, record.id())?;
        Ok((record, files))
    })?;
    Ok(Response::doc(
        status,
        encode_record(wire.res.fields, wire.singular, &record, Some(&files)),
    ))
}

pub(super) fn update(c: &Call<'_>, wire: &Wire) -> Result<Response, ApiError> {
    let (caps, ctx, raw_id, req) = (c.caps, c.ctx, c.id, c.req);
    let id = parse_id(wire, raw_id)?;
    // An unknown id is a 404 even when the body is also wrong.
    {
        let txn = caps.store.begin_read()?;
        records::load(txn.as_ref(), wire.res, ctx.account_id, id)?;
    }
    let changes = decode_changes(wire.res.fields, &req.document()?, wire.singular)?;
    saved(c, wire, 200, |txn| {
        records::update(ctx, txn, wire.res, id, &changes)
    })
}

pub(super) fn delete(c: &Call<'_>, wire: &Wire) -> Result<Response, ApiError> {
    let (caps, ctx, raw_id) = (c.caps, c.ctx, c.id);
    let id = parse_id(wire, raw_id)?;
    in_write(caps, |txn| {
        records::delete(ctx, txn, wire.res, id).map_err(ApiError::from)
    })?;
    Ok(Response::empty())
}
