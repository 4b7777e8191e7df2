//! The API reference: an OpenAPI 3.1 document made from the route table (`router`, where
//! every route says what it is about) and the field tables (`schema::Field`, where every
//! field describes itself), served without a key at `GET /api/openapi.json`. Nothing of it
//! is written beside the code it describes: a route or field without its description fails
//! a test here.
//!
//! Both media types are described. XML elements are named with `xml` objects; every scalar
//! is text on the wire (typed XML elements carry a `type` attribute, JSON values are
//! strings), so fields are strings with a `format` where one applies. A JSON list holds its
//! records under the singular name, as an object when there is exactly one and an array
//! otherwise (the XML tree mirrored), which the schema states with `oneOf`.

use serde_json::{Map, Value, json};

use super::described::{About, Input, Op, Output, Param, Schema, Shape, Verb};
use super::router::{self, Route};
use crate::domain::schema::{Access, Field, Kind};

/// The list parameters of every list.
const PAGING: &[Param] = &[
    Param::new("page", Shape::Id, "The page to answer, from 1. Default: 1."),
    Param::new(
        "per_page",
        Shape::Id,
        "Records per page. Default: 100; more than 1000 is taken as 1000.",
    ),
    Param::new(
        "order_by",
        Shape::Text,
        "Order of the list: a field name, then ASC or DESC (`+` or a space between), \
         several comma-separated. Default: id ASC.",
    ),
];

/// Statuses every authenticated operation may answer, besides its own.
const ERRORS: &[(u16, &str)] = &[
    (
        400,
        "The request is malformed or breaks a rule; the body names each problem.",
    ),
    (401, "The API key is missing or unknown."),
    (403, "The key's user may not do this."),
    (404, "No such record in the key's account."),
    (405, "The path does not take this method."),
    (413, "The body is over the size limit."),
    (415, "The body's content type is neither XML nor JSON."),
    (
        429,
        "The account's rate limit is reached until `X-Rate-Limit-Reset`.",
    ),
    (500, "A fault of the service; the details are in its log."),
    (
        503,
        "The store or a capability cannot be reached now, writers kept colliding, or a \
         commit's outcome is unknown: nothing was changed (or, as the message says, may \
         have been); send the request again (with its `Idempotency-Key`).",
    ),
];

/// The document, as JSON text.
pub(super) fn document() -> String {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for route in router::routes().filter(|r| !r.is_internal()) {
        let mut item = Map::new();
        for (verb, op) in operations(route) {
            item.insert(
                verb.name().to_ascii_lowercase(),
                operation(route, verb, &op, &mut schemas),
            );
        }
        paths.insert(path_of(route), Value::Object(item));
    }
    paths.insert("/openapi.json".into(), openapi_path());
    schemas.insert("errors".into(), errors_schema());
    let mut errors = Map::new();
    for (status, why) in ERRORS {
        errors.insert(status.to_string(), error_response(why));
    }
    errors.insert(
        "422".into(),
        error_response("The `Idempotency-Key` was sent before with another request."),
    );
    let doc = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Faktura",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Invoices, credit notes, clients, incoming invoices and e-invoices \
                (EN 16931: XRechnung, Factur-X) over XML or JSON. XML is the default; \
                `?format=json` or `Accept: application/json` answers JSON, and a body sent \
                as `Content-Type: application/json` is read as JSON. Every scalar is text. \
                Writes with an `Idempotency-Key` header are made once however often they \
                are sent within 24 hours.",
        },
        "servers": [{"url": "/api"}],
        "security": [{"apiKeyHeader": []}, {"apiKeyQuery": []}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "responses": errors,
            "securitySchemes": {
                "apiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-ServiceApiKey"},
                "apiKeyQuery": {"type": "apiKey", "in": "query", "name": "api_key"},
            },
            "headers": {
                "X-Rate-Limit-Remaining": {
                    "description": "Requests left in the account's current window.",
                    "schema": {"type": "string"},
                },
                "X-Rate-Limit-Reset": {
                    "description": "Unix seconds when the next window begins.",
                    "schema": {"type": "string"},
                },
                "X-Total-Count": {
                    "description": "How many records the list holds over all its pages.",
                    "schema": {"type": "string"},
                },
                "Idempotent-Replayed": {
                    "description": "`true` when the answer is the one kept for the request's \
                        `Idempotency-Key`, not made anew.",
                    "schema": {"type": "string"},
                },
            },
        },
    });
    serde_json::to_string_pretty(&doc).expect("a JSON value prints")
}

/// The path of a route as OpenAPI writes it.
fn path_of(route: &Route) -> String {
    let mut out = String::new();
    for segment in route.path {
        out.push('/');
        out.push_str(segment);
    }
    out
}

/// The operations of a route: each method it takes, described.
pub(super) fn operations(route: &Route) -> Vec<(Verb, Described)> {
    let member = route.id_of().is_some();
    let mut out = Vec::new();
    for verb in route.verbs() {
        let described = match route.about {
            About::Records(schema) => records_op(verb, member, schema, &[]),
            About::Documents(schema, params) => records_op(verb, member, schema, params),
            About::Ops(ops) => {
                let find = |want: Verb| ops.iter().find(|(v, _)| *v == want);
                // A HEAD the GET handler serves is described by the GET.
                find(verb)
                    .or_else(|| (verb == Verb::Head).then(|| find(Verb::Get)).flatten())
                    .map(|(_, op)| Described::from(op))
            }
        };
        if let Some(d) = described {
            out.push((verb, d));
        }
    }
    out
}

/// An operation as the document shows it.
pub(super) struct Described {
    pub summary: String,
    pub params: Vec<(&'static str, Shape, String)>,
    pub input: Input,
    pub output: Output,
    /// A HEAD that answers only the list's count.
    pub count_only: bool,
    /// A list that takes `group_by`.
    pub groups: bool,
}

impl From<&Op> for Described {
    fn from(op: &Op) -> Described {
        Described {
            summary: op.summary.into(),
            params: op.params.iter().map(owned).collect(),
            input: op.input,
            output: op.output,
            count_only: false,
            groups: false,
        }
    }
}

/// The operations of a record resource, from the verb and whether the path names one.
fn records_op(
    verb: Verb,
    member: bool,
    schema: fn() -> Schema,
    params: &'static [Param],
) -> Option<Described> {
    let s = schema();
    let is_documents = !params.is_empty();
    let described = |summary: String, input, output| Described {
        summary,
        params: Vec::new(),
        input,
        output,
        count_only: false,
        groups: false,
    };
    Some(match (verb, member) {
        (Verb::Get | Verb::Head, false) => {
            let mut list_params: Vec<_> = params.iter().map(owned).collect();
            for (param, field) in &s.filters {
                let doc = s
                    .fields
                    .iter()
                    .find(|f| f.name == *field)
                    .map_or("", |f| f.doc);
                let doc = format!(
                    "Only records whose {field} is this (several comma-separated: any of \
                     them). {field}: {doc}"
                );
                list_params.push((param, Shape::Text, doc));
            }
            list_params.extend(PAGING.iter().map(owned));
            Described {
                summary: if verb == Verb::Head {
                    format!("Count the {}", s.plural)
                } else {
                    format!("List the {}", s.plural)
                },
                params: list_params,
                input: Input::Nothing,
                output: Output::List(schema),
                count_only: verb == Verb::Head,
                groups: is_documents && verb == Verb::Get,
            }
        }
        (Verb::Post, false) => described(
            format!("Create a {}", s.singular),
            Input::Record(schema, false),
            Output::Record(201, schema),
        ),
        (Verb::Get | Verb::Head, true) => described(
            format!("Get a {}", s.singular),
            Input::Nothing,
            Output::Record(200, schema),
        ),
        (Verb::Put, true) => described(
            format!("Change a {}: only the fields sent", s.singular),
            Input::Record(schema, false),
            Output::Record(200, schema),
        ),
        (Verb::Delete, true) => described(
            format!("Delete a {}", s.singular),
            Input::Nothing,
            Output::Empty,
        ),
        _ => return None,
    })
}

fn owned(p: &Param) -> (&'static str, Shape, String) {
    (p.name, p.shape, p.doc.to_owned())
}

fn operation(route: &Route, verb: Verb, op: &Described, schemas: &mut Map<String, Value>) -> Value {
    let mut parameters = Vec::new();
    if route.id_of().is_some() {
        parameters.push(json!({
            "name": "id",
            "in": "path",
            "required": true,
            "description": "The record's id.",
            "schema": {"type": "integer", "minimum": 1},
        }));
    }
    for (name, shape, doc) in &op.params {
        parameters.push(json!({
            "name": name,
            "in": "query",
            "description": doc,
            "schema": shape_schema(*shape),
        }));
    }
    let own_format = op.params.iter().any(|(name, _, _)| *name == "format");
    parameters.extend((!own_format).then(|| {
        json!({
            "name": "format",
            "in": "query",
            "description": "`json` answers JSON, `xml` XML (the default), whatever `Accept` says.",
            "schema": {"type": "string", "enum": ["xml", "json"]},
        })
    }));
    if matches!(verb, Verb::Post | Verb::Put | Verb::Delete) {
        parameters.push(json!({
            "name": "Idempotency-Key",
            "in": "header",
            "description": "Makes the write once: the first answer is kept for 24 hours and \
                sent again, with `Idempotent-Replayed: true`, for the same key and request; \
                the same key with another request is 422. 1 to 255 printable characters.",
            "schema": {"type": "string", "minLength": 1, "maxLength": 255},
        }));
    }
    let mut out = Map::new();
    out.insert(
        "operationId".into(),
        Value::String(operation_id(route, verb)),
    );
    out.insert("summary".into(), Value::String(op.summary.clone()));
    out.insert("tags".into(), json!([route.path[0]]));
    out.insert("parameters".into(), Value::Array(parameters));
    if let Input::Record(schema, optional) = op.input {
        let s = schema();
        let name = register(&s, schemas);
        let input = format!("{name}-input");
        out.insert(
            "requestBody".into(),
            json!({
                "required": !optional,
                "content": {
                    "application/xml": {"schema": {"$ref": format!("#/components/schemas/{input}")}},
                    "application/json": {"schema": {
                        "type": "object",
                        "properties": {s.singular: {"$ref": format!("#/components/schemas/{input}")}},
                        "required": [s.singular],
                    }},
                },
            }),
        );
    }
    let mut responses = Map::new();
    let (status, success) = success(route, verb, op, schemas);
    responses.insert(status.to_string(), success);
    for (status, _) in ERRORS {
        responses.insert(
            status.to_string(),
            json!({"$ref": format!("#/components/responses/{status}")}),
        );
    }
    if matches!(verb, Verb::Post | Verb::Put | Verb::Delete) {
        responses.insert("422".into(), json!({"$ref": "#/components/responses/422"}));
    }
    out.insert("responses".into(), Value::Object(responses));
    Value::Object(out)
}

fn operation_id(route: &Route, verb: Verb) -> String {
    let mut id = verb.name().to_ascii_lowercase();
    for segment in route.path {
        id.push('_');
        id.push_str(&segment.replace(['{', '}'], ""));
    }
    id
}

fn rate_headers() -> Map<String, Value> {
    let mut h = Map::new();
    for name in ["X-Rate-Limit-Remaining", "X-Rate-Limit-Reset"] {
        h.insert(
            name.into(),
            json!({"$ref": format!("#/components/headers/{name}")}),
        );
    }
    h
}

/// The status and description of an operation's success.
fn success(
    route: &Route,
    verb: Verb,
    op: &Described,
    schemas: &mut Map<String, Value>,
) -> (u16, Value) {
    let mut headers = rate_headers();
    if matches!(verb, Verb::Post | Verb::Put | Verb::Delete) {
        headers.insert(
            "Idempotent-Replayed".into(),
            json!({"$ref": "#/components/headers/Idempotent-Replayed"}),
        );
    }
    if verb == Verb::Head {
        if matches!(op.output, Output::List(_)) || route.id_of().is_none() {
            headers.insert(
                "X-Total-Count".into(),
                json!({"$ref": "#/components/headers/X-Total-Count"}),
            );
        }
        let description = if op.count_only {
            "The count in `X-Total-Count`; no body."
        } else {
            "The headers of the GET; no body."
        };
        return (200, json!({"description": description, "headers": headers}));
    }
    match op.output {
        Output::Record(status, schema) => {
            let s = schema();
            let name = register(&s, schemas);
            let content = json!({
                "application/xml": {"schema": {"$ref": format!("#/components/schemas/{name}")}},
                "application/json": {"schema": {
                    "type": "object",
                    "properties": {s.singular: {"$ref": format!("#/components/schemas/{name}")}},
                    "required": [s.singular],
                }},
            });
            (
                status,
                json!({"description": format!("The {}.", s.singular), "headers": headers, "content": content}),
            )
        }
        Output::List(schema) => {
            let s = schema();
            let name = register(&s, schemas);
            headers.insert(
                "X-Total-Count".into(),
                json!({"$ref": "#/components/headers/X-Total-Count"}),
            );
            let one = json!({"$ref": format!("#/components/schemas/{name}")});
            let xml_list = json!({
                "type": "object",
                "xml": {"name": s.plural},
                "properties": {
                    "type": {"type": "string", "xml": {"attribute": true}},
                    "page": {"type": "string", "xml": {"attribute": true}},
                    "per_page": {"type": "string", "xml": {"attribute": true}},
                    "total": {"type": "string", "xml": {"attribute": true}},
                    s.singular: {"type": "array", "items": one.clone()},
                },
            });
            let json_list = json!({
                "type": "object",
                "properties": {s.plural: {
                    "type": "object",
                    "properties": {
                        s.singular: {"oneOf": [one.clone(), {"type": "array", "items": one}]},
                        "@page": {"type": "string"},
                        "@per_page": {"type": "string"},
                        "@total": {"type": "string"},
                    },
                }},
                "required": [s.plural],
            });
            let description = if op.groups {
                format!(
                    "A page of the {} (with `group_by`: their sums by group, per currency).",
                    s.plural
                )
            } else {
                format!("A page of the {}.", s.plural)
            };
            (
                200,
                json!({
                    "description": description,
                    "headers": headers,
                    "content": {
                        "application/xml": {"schema": xml_list},
                        "application/json": {"schema": json_list},
                    },
                }),
            )
        }
        Output::Empty => (
            200,
            json!({
                "description": "Done; the body is empty (JSON: `{}`).",
                "headers": headers,
                "content": {"application/json": {"schema": {"type": "object", "maxProperties": 0}}},
            }),
        ),
        Output::Bytes(media) => {
            let mut content = Map::new();
            for m in media {
                let schema = if m.starts_with("application/xml") {
                    json!({"type": "string"})
                } else {
                    json!({"type": "string", "contentMediaType": m})
                };
                content.insert((*m).into(), json!({ "schema": schema }));
            }
            (
                200,
                json!({"description": "The file.", "headers": headers, "content": content}),
            )
        }
    }
}

/// Adds the record schema (and its input schema) of `s` once; its name.
fn register(s: &Schema, schemas: &mut Map<String, Value>) -> String {
    let name = s.singular.to_owned();
    if schemas.contains_key(&name) {
        return name;
    }
    let mut all = Map::new();
    let mut input = Map::new();
    let mut required = Vec::new();
    for f in s.fields {
        all.insert(f.name.into(), field_schema(f));
        if f.access == Access::Write {
            input.insert(f.name.into(), field_schema(f));
            if f.mandatory {
                required.push(Value::String(f.name.into()));
            }
        }
    }
    schemas.insert(
        name.clone(),
        json!({"type": "object", "xml": {"name": s.singular}, "properties": all}),
    );
    schemas.insert(
        format!("{name}-input"),
        json!({
            "type": "object",
            "xml": {"name": s.singular},
            "description": "On create, the fields marked required must be given; on change, \
                only the fields sent change. Read-only and unknown fields are ignored.",
            "properties": input,
            "required": required,
        }),
    );
    name
}

/// A field's schema: text on the wire, with a format where the kind has one.
fn field_schema(f: &Field) -> Value {
    let mut s = match f.kind {
        Kind::Text => json!({"type": "string"}),
        Kind::Integer => json!({"type": "string", "pattern": "^(-?[0-9]+)?$"}),
        Kind::Decimal => json!({"type": "string", "pattern": "^(-?[0-9]+([.][0-9]+)?)?$"}),
        Kind::Date => json!({"type": "string", "description": "YYYY-MM-DD"}),
        Kind::DateTime => json!({"type": "string", "description": "ISO 8601 with UTC offset"}),
        Kind::Bool => json!({"type": "string", "enum": ["1", "0", ""]}),
        Kind::Enum(values) => {
            let mut v: Vec<Value> = values.iter().map(|w| Value::String((*w).into())).collect();
            v.push(Value::String(String::new()));
            json!({"type": "string", "enum": v})
        }
        Kind::Country => json!({"type": "string", "pattern": "^([A-Za-z]{2})?$"}),
        Kind::Currency => json!({"type": "string", "pattern": "^([A-Za-z]{3})?$"}),
        Kind::File => json!({"type": "string", "contentEncoding": "base64"}),
    };
    let mut doc = f.doc.to_owned();
    if let Some(extra) = s.get("description").and_then(Value::as_str) {
        doc = format!("{doc} ({extra})");
    }
    if f.access == Access::Read {
        s["readOnly"] = Value::Bool(true);
    }
    s["description"] = Value::String(doc);
    s
}

fn shape_schema(shape: Shape) -> Value {
    match shape {
        Shape::Text => json!({"type": "string"}),
        Shape::Id => json!({"type": "integer", "minimum": 1}),
        Shape::Ids => json!({"type": "string", "pattern": "^[0-9]+(,[0-9]+)*$"}),
        Shape::Date => json!({"type": "string", "format": "date"}),
        Shape::OneOf(words) => json!({"type": "string", "enum": words}),
        Shape::AnyOf(words) => json!({
            "type": "string",
            "description": format!("Any of {}, comma-separated.", words.join(", ")),
        }),
    }
}

fn error_response(why: &str) -> Value {
    json!({
        "description": why,
        "content": {
            "application/xml": {"schema": {"$ref": "#/components/schemas/errors"}},
            "application/json": {"schema": {
                "type": "object",
                "properties": {"errors": {
                    "type": "object",
                    "properties": {"error": {"oneOf": [
                        {"type": "string"},
                        {"type": "array", "items": {"type": "string"}},
                    ]}},
                }},
                "required": ["errors"],
            }},
        },
    })
}

fn errors_schema() -> Value {
    json!({
        "type": "object",
        "xml": {"name": "errors"},
        "description": "One `error` element per problem; each names the field or rule.",
        "properties": {"error": {
            "type": "array",
            "description": "One problem, naming the field or rule.",
            "items": {"type": "string", "xml": {"name": "error"}},
        }},
    })
}

fn openapi_path() -> Value {
    json!({"get": {
        "operationId": "get_openapi",
        "summary": "This document",
        "tags": ["openapi"],
        "security": [],
        "responses": {"200": {
            "description": "The OpenAPI 3.1 document of the API.",
            "content": {"application/json": {"schema": {"type": "object"}}},
        }},
    }})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every route of the table is in the document with each of its methods, and every
    /// operation and field says what it is.
    #[test]
    fn every_route_and_field_is_described() {
        let doc: Value = serde_json::from_str(&document()).unwrap();
        let mut undescribed = Vec::new();
        for route in router::routes().filter(|r| !r.is_internal()) {
            let path = path_of(route);
            let described = operations(route);
            for verb in route.verbs() {
                let Some((_, op)) = described.iter().find(|(v, _)| *v == verb) else {
                    undescribed.push(format!("{} {path}: no operation", verb.name()));
                    continue;
                };
                if op.summary.trim().is_empty() {
                    undescribed.push(format!("{} {path}: no summary", verb.name()));
                }
                let method = verb.name().to_ascii_lowercase();
                assert!(
                    doc["paths"][&path][&method].is_object(),
                    "{method} {path} is missing from the document"
                );
                for (name, _, doc) in &op.params {
                    if doc.trim().is_empty() {
                        undescribed.push(format!("{} {path}: parameter {name}", verb.name()));
                    }
                }
            }
        }
        for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
            for (field, s) in schema["properties"].as_object().into_iter().flatten() {
                let d = s["description"].as_str().unwrap_or("");
                if d.trim().is_empty() || d.starts_with(" (") {
                    undescribed.push(format!("field {name}.{field}"));
                }
            }
        }
        assert!(
            undescribed.is_empty(),
            "{} without a description:\n{}",
            undescribed.len(),
            undescribed.join("\n")
        );
    }

    #[test]
    fn operation_ids_are_unique() {
        let doc: Value = serde_json::from_str(&document()).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                let id = op["operationId"].as_str().unwrap().to_owned();
                assert!(seen.insert(id.clone()), "{method} {path}: {id} twice");
            }
        }
    }
}
