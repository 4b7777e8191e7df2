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
    Param::new(
        "page",
        Shape::Page,
        "The page to answer, from 1. Default: 1.",
    ),
    Param::new(
        "per_page",
        Shape::PerPage,
        "Records per page. Default: 100; more than 1000 is taken as 1000.",
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
    (
        409,
        "The request clashes with a record that exists (a number or code already used, or \
         an incoming invoice already imported); the message names it.",
    ),
    (405, "The path does not take this method."),
    (413, "The body is over the size limit."),
    (414, "The query string is over the size limit (8192 bytes)."),
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
    (
        507,
        "The server's disk is full and the change could not be made durable: it may not \
         have been made; read it back, or send the request again (with its \
         `Idempotency-Key`) once the disk has room.",
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
fn operations(route: &Route) -> Vec<(Verb, Described)> {
    let member = route.id_of().is_some();
    let mut out = Vec::new();
    for verb in route.verbs() {
        let described = match route.about {
            About::Records(schema) => records_op(verb, member, schema, &[]),
            About::Documents(schema, params) => records_op(verb, member, schema, params),
            About::Ops(_) => {
                route.about.op(verb).map(|op| {
                    let mut d = Described::from(op);
                    if let Output::List(schema) = op.output {
                        // Every list pages and orders alike.
                        d.params.extend(PAGING.iter().map(owned));
                        d.params.push(order_by(schema().fields));
                    }
                    d
                })
            }
        };
        if let Some(d) = described {
            out.push((verb, d));
        }
    }
    out
}

/// An operation as the document shows it.
struct Described {
    summary: String,
    params: Vec<(&'static str, Shape, String)>,
    input: Input,
    output: Output,
    /// A HEAD that answers only the list's count.
    count_only: bool,
}

impl From<&Op> for Described {
    fn from(op: &Op) -> Described {
        Described {
            summary: op.summary.into(),
            params: op.params.iter().map(owned).collect(),
            input: op.input,
            output: op.output,
            count_only: false,
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
    let described = |summary: String, input, output| Described {
        summary,
        params: Vec::new(),
        input,
        output,
        count_only: false,
    };
    Some(match (verb, member) {
        (Verb::Get | Verb::Head, false) => list_op(verb, &s, schema, params),
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
            Input::Change(schema),
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

/// The list of a record resource (GET), or its count (HEAD): the resource's own
/// parameters, its owner, its filters, paging and order.
fn list_op(verb: Verb, s: &Schema, schema: fn() -> Schema, params: &'static [Param]) -> Described {
    let mut list_params: Vec<_> = params.iter().map(owned).collect();
    let owner = s.owner.map(|(field, _)| field);
    if let Some((field, several)) = s.owner {
        list_params.push(if several {
            (
                field,
                Shape::RequiredIds,
                "The records of these (comma-separated); must be given.".to_owned(),
            )
        } else {
            (
                field,
                Shape::RequiredId,
                "The records of this one; must be given.".to_owned(),
            )
        });
    }
    for (param, name) in s.filters.iter().filter(|(p, _)| Some(*p) != owner) {
        list_params.push(filter_param(s, param, name));
    }
    list_params.extend(PAGING.iter().map(owned));
    list_params.push(order_by(s.fields));
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
    }
}

/// A list filter: the parameter `param`, matching the field `name`.
fn filter_param(
    s: &Schema,
    param: &'static str,
    name: &'static str,
) -> (&'static str, Shape, String) {
    let field = s.fields.iter().find(|f| f.name == name);
    let doc = format!(
        "Only records whose {name} is this (several comma-separated: any of \
         them). {name}: {}",
        field.map_or("", |f| f.doc)
    );
    let shape = match field.map(|f| f.kind) {
        Some(Kind::Integer) => Shape::Ids,
        _ => Shape::Text,
    };
    (param, shape, doc)
}

/// `order_by` over the fields a list can be ordered by, as `Query::order` reads it.
fn order_by(fields: &[Field]) -> (&'static str, Shape, String) {
    let names: Vec<&str> = fields
        .iter()
        .filter(|f| !f.single_only)
        .map(|f| f.name)
        .collect();
    let one = format!("({})([ +](ASC|DESC|asc|desc))?", names.join("|"));
    let pattern = format!(
        "^({one})(,{one}){{0,{}}}$",
        crate::limits::ORDER_KEYS_MAX - 1
    );
    (
        "order_by",
        Shape::Pattern(pattern),
        format!(
            "Order of the list: a field name, then ASC or DESC (a space or `+` between), up \
             to {} of them comma-separated. Default: id ASC.",
            crate::limits::ORDER_KEYS_MAX
        ),
    )
}

fn owned(p: &Param) -> (&'static str, Shape, String) {
    (p.name, p.shape.clone(), p.doc.to_owned())
}

/// An operation as the document writes it: its id, summary, parameters, body and answers.
fn operation(route: &Route, verb: Verb, op: &Described, schemas: &mut Map<String, Value>) -> Value {
    let mut out = Map::new();
    out.insert(
        "operationId".into(),
        Value::String(operation_id(route, verb)),
    );
    out.insert("summary".into(), Value::String(op.summary.clone()));
    out.insert("tags".into(), json!([route.path[0]]));
    out.insert(
        "parameters".into(),
        Value::Array(parameters(route, verb, op)),
    );
    if let Some(body) = request_body(op, schemas) {
        out.insert("requestBody".into(), body);
    }
    out.insert(
        "responses".into(),
        Value::Object(responses(route, verb, op, schemas)),
    );
    Value::Object(out)
}

/// The parameters of an operation: the id in the path, its query parameters, `format`
/// unless it has its own, and `Idempotency-Key` on a write.
fn parameters(route: &Route, verb: Verb, op: &Described) -> Vec<Value> {
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
        parameters.push(query_parameter(name, shape, doc));
    }
    let own_format = op.params.iter().any(|(name, _, _)| *name == "format");
    parameters.extend((!own_format).then(|| {
        json!({
            "name": "format",
            "in": "query",
            "description": "`json` answers JSON, `xml` XML (the default), whatever `Accept` \
                says (either case); another value is refused.",
            "schema": {"type": "string", "pattern": "^([Xx][Mm][Ll]|[Jj][Ss][Oo][Nn])?$"},
        })
    }));
    if matches!(verb, Verb::Post | Verb::Put | Verb::Delete) {
        parameters.push(json!({
            "name": "Idempotency-Key",
            "in": "header",
            "description": "Makes the write once: the first answer is kept for 24 hours and \
                sent again, with `Idempotent-Replayed: true`, for the same key and request; \
                the same key with another request is 422. Up to 255 visible ASCII \
                characters; empty is no key.",
            "schema": {"type": "string", "pattern": "^[!-~]{0,255}$"},
        }));
    }
    parameters
}

/// A query parameter of an operation.
fn query_parameter(name: &str, shape: &Shape, doc: &str) -> Value {
    let mut parameter = json!({
        "name": name,
        "in": "query",
        "required": matches!(shape, Shape::RequiredIds | Shape::RequiredId),
        "description": doc,
        "schema": shape_schema(shape),
    });
    if matches!(shape, Shape::Numbered(_)) {
        // An object whose members are the parameters themselves.
        parameter["style"] = "form".into();
        parameter["explode"] = true.into();
    }
    parameter
}

/// The body an operation takes, in XML or JSON, if it takes one; adds its schemas.
fn request_body(op: &Described, schemas: &mut Map<String, Value>) -> Option<Value> {
    let (schema, variant, required) = match op.input {
        Input::Nothing => return None,
        Input::Record(schema, optional) => (schema, "input", !optional),
        Input::Change(schema) => (schema, "changes", true),
    };
    let s = schema();
    let name = register(&s, schemas);
    let xml = format!("#/components/schemas/{name}-{variant}");
    let json = format!("#/components/schemas/{name}-{variant}-json");
    Some(json!({
        "required": required,
        "content": {
            "application/xml": {"schema": {"$ref": xml}},
            "application/json": {"schema": {
                "type": "object",
                "properties": {s.singular: {"$ref": json}},
                "required": [s.singular],
                "additionalProperties": false,
            }},
        },
    }))
}

/// The answers of an operation: its success, then the errors every operation may answer
/// (and 422 on a write).
fn responses(
    route: &Route,
    verb: Verb,
    op: &Described,
    schemas: &mut Map<String, Value>,
) -> Map<String, Value> {
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
    responses
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
        return head_success(route, op, headers);
    }
    match op.output {
        Output::Record(_, schema) | Output::File(schema, _) => {
            record_success(op.output, schema, headers, schemas)
        }
        Output::List(schema) => list_success(op, schema, headers, schemas),
        Output::Empty => (
            200,
            json!({
                "description": "Done; the body is empty (JSON: `{}`).",
                "headers": headers,
                "content": {
                    "application/xml": {"schema": {"type": "string", "maxLength": 0}},
                    "application/json": {"schema": {"type": "object", "maxProperties": 0}},
                },
            }),
        ),
        Output::Bytes(media) => bytes_success(media, headers),
    }
}

/// The success of a HEAD: headers only, with the count when it is a list's.
fn head_success(route: &Route, op: &Described, mut headers: Map<String, Value>) -> (u16, Value) {
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
    (200, json!({"description": description, "headers": headers}))
}

/// The success of an operation answering one record (or, for a file, the file itself in
/// its own media type); adds the record's schemas.
fn record_success(
    output: Output,
    schema: fn() -> Schema,
    headers: Map<String, Value>,
    schemas: &mut Map<String, Value>,
) -> (u16, Value) {
    let status = match output {
        Output::Record(status, _) => status,
        _ => 200,
    };
    let s = schema();
    let name = register(&s, schemas);
    let mut content = json!({
        "application/xml": {"schema": {"$ref": format!("#/components/schemas/{name}")}},
        "application/json": {"schema": {
            "type": "object",
            "properties": {s.singular: {"$ref": format!("#/components/schemas/{name}")}},
            "required": [s.singular],
        }},
    });
    if let Output::File(_, media) = output {
        content[media] = json!({"schema": {"type": "string", "contentMediaType": media}});
    }
    (
        status,
        json!({"description": format!("The {}.", s.singular), "headers": headers, "content": content}),
    )
}

/// The success of a list: a page of its records with the count, or with `group_by` their
/// sums by group; adds the record's schemas.
fn list_success(
    op: &Described,
    schema: fn() -> Schema,
    mut headers: Map<String, Value>,
    schemas: &mut Map<String, Value>,
) -> (u16, Value) {
    let s = schema();
    let name = register(&s, schemas);
    headers.insert(
        "X-Total-Count".into(),
        json!({"$ref": "#/components/headers/X-Total-Count"}),
    );
    let (xml_list, json_list) = list_schemas(&s, &name);
    let grouped = op.params.iter().any(|(name, _, _)| *name == "group_by");
    let (xml_list, json_list) = if grouped {
        let (xml_groups, json_groups) = groups_schemas(s.singular);
        (
            json!({"anyOf": [xml_list, xml_groups]}),
            json!({"anyOf": [json_list, json_groups]}),
        )
    } else {
        (xml_list, json_list)
    };
    let description = if grouped {
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

/// A page of a list in XML and in JSON, its records those of the schema `name`: in JSON
/// one record is an object, several an array.
fn list_schemas(s: &Schema, name: &str) -> (Value, Value) {
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
    (xml_list, json_list)
}

/// The success of an operation answering a file, in each of its media types.
fn bytes_success(media: &[&str], headers: Map<String, Value>) -> (u16, Value) {
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

/// The answer of a list with `group_by`: `{singular}-groups` (one currency) or
/// `{singular}-group-lists` (several), each group its sums, count and keys.
fn groups_schemas(singular: &str) -> (Value, Value) {
    let groups = format!("{singular}-groups");
    let lists = format!("{singular}-group-lists");
    let group = json!({
        "type": "object",
        "description": "The group's sums (total_gross, total_net …), its count and the values \
            of its keys.",
    });
    let xml = json!({
        "anyOf": [
            {"type": "object", "xml": {"name": groups}, "properties": {
                "currency_code": {"type": "string", "xml": {"attribute": true}},
            }},
            {"type": "object", "xml": {"name": lists}},
        ],
    });
    let json = json!({
        "anyOf": [
            {"type": "object", "properties": {groups.as_str(): group.clone()}, "required": [groups]},
            {"type": "object", "properties": {lists.as_str(): group}, "required": [lists]},
        ],
    });
    (xml, json)
}

/// Adds the record schema (and its input schema) of `s` once; its name.
fn register(s: &Schema, schemas: &mut Map<String, Value>) -> String {
    let name = s.singular.to_owned();
    if schemas.contains_key(&name) {
        return name;
    }
    let mut all = Map::new();
    let mut xml_fields = Map::new();
    let mut json_fields = Map::new();
    let mut required = Vec::new();
    for f in s.fields {
        all.insert(f.name.into(), answer_schema(f));
        if f.access == Access::Write {
            // A part made on its own names its document, which nested in one it does not.
            let owner = s.owner.is_some_and(|(owner, _)| owner == f.name);
            if f.mandatory || owner {
                required.push(Value::String(f.name.into()));
            }
            xml_fields.insert(f.name.into(), input_schema(f, Media::Xml));
            json_fields.insert(f.name.into(), input_schema(f, Media::Json));
        }
    }
    schemas.insert(
        name.clone(),
        json!({"type": "object", "xml": {"name": s.singular}, "properties": all}),
    );
    for (suffix, fields) in [("", xml_fields), ("-json", json_fields)] {
        schemas.insert(
            format!("{name}-input{suffix}"),
            json!({
                "type": "object",
                "xml": {"name": s.singular},
                "description": "The fields marked required must be given. Read-only and \
                    unknown fields are ignored.",
                "properties": fields,
                "required": required,
            }),
        );
        schemas.insert(
            format!("{name}-changes{suffix}"),
            json!({
                "type": "object",
                "xml": {"name": s.singular},
                "description": "Only the fields sent change; a required field cannot be \
                    emptied. Read-only and unknown fields are ignored.",
                "properties": fields,
            }),
        );
    }
    name
}

/// The media type a request body is written in: XML holds only text, JSON also numbers,
/// booleans and null.
#[derive(Clone, Copy, PartialEq)]
enum Media {
    Xml,
    Json,
}

/// A field's schema in an answer: text, described. What the service writes is what it
/// stored or computed, so the answer holds no input rules (a computed address is longer
/// than any one field may be).
fn answer_schema(f: &Field) -> Value {
    let mut s = json!({"type": "string", "description": f.doc});
    if f.access == Access::Read {
        s["readOnly"] = true.into();
    }
    s
}

/// A writable field's schema in a request: its text, or in JSON also a number or boolean
/// (read as their text, booleans as 1 and 0) and null (empty: the value is cleared) where
/// the field takes them. A mandatory field is never empty.
fn input_schema(f: &Field, media: Media) -> Value {
    let doc = match kind_note(f.kind) {
        Some(note) => format!("{} ({note})", f.doc),
        None => f.doc.to_owned(),
    };
    let mut text = text_schema(f.kind, f.positive, !f.mandatory);
    if media == Media::Xml || f.kind == Kind::Recipients {
        text["description"] = doc.into();
        return text;
    }
    let mut alternatives = vec![text];
    // A boolean is read as 1 or 0, wherever that text is a value of the field.
    match f.kind {
        Kind::Text => alternatives.push(json!({"type": ["number", "boolean"]})),
        Kind::Integer => {
            alternatives.push(json!({"type": "integer", "minimum": -INT_MAX, "maximum": INT_MAX}));
            alternatives.push(json!({"type": "boolean"}));
        }
        Kind::Decimal if f.positive => {
            alternatives.push(json!({"type": "integer", "minimum": 1, "maximum": 1e11}));
            alternatives.push(json!({"const": true}));
        }
        Kind::Decimal => {
            alternatives.push(json!({"type": "integer", "minimum": -1e15, "maximum": 1e15}));
            alternatives.push(json!({"type": "boolean"}));
        }
        Kind::Bool => alternatives.push(json!({"enum": [true, false, 0, 1]})),
        _ => {}
    }
    if !f.mandatory {
        // An empty object reads as an empty element, as null does.
        alternatives.push(json!({"type": "null"}));
        alternatives.push(json!({"type": "object", "maxProperties": 0}));
    }
    json!({"anyOf": alternatives, "description": doc})
}

/// The text a field of `kind` takes, as `schema::Field::parse` reads it (trimmed; words in
/// any case), and empty (the value cleared) when `blank`.
fn text_schema(kind: Kind, positive: bool, blank: bool) -> Value {
    let optional = if blank { "?" } else { "" };
    let trimmed =
        |inner: &str| json!({"type": "string", "pattern": format!(r"^\s*({inner}){optional}\s*$")});
    let format_or_blank = |format: &str| {
        if blank {
            json!({"type": "string", "anyOf": [{"format": format}, {"pattern": r"^\s*$"}]})
        } else {
            json!({"type": "string", "format": format})
        }
    };
    match kind {
        Kind::Text if blank => {
            json!({"type": "string", "maxLength": crate::limits::TEXT_CHARS_MAX})
        }
        Kind::Text => {
            json!({"type": "string", "minLength": 1, "maxLength": crate::limits::TEXT_CHARS_MAX})
        }
        Kind::Integer => trimmed("[+-]?[0-9]{1,18}"),
        // Positive amounts stay under `limits::AMOUNT_MAX` (12 digits).
        Kind::Decimal if positive => {
            trimmed(r"[+]?([1-9][0-9]{0,11}([.][0-9]{1,10})?|0?[.]0{0,4}[1-9][0-9]{0,4})")
        }
        Kind::Decimal => trimmed(r"[+-]?([0-9]{1,15}([.][0-9]{1,10})?|[.][0-9]{1,10})"),
        Kind::Date => format_or_blank("date"),
        Kind::DateTime => json!({"type": "string"}),
        Kind::Bool => trimmed(&format!("1|0|{}|{}", any_case("true"), any_case("false"))),
        Kind::Enum(words) => trimmed(&alternatives(words)),
        Kind::Country => trimmed(&alternatives(crate::domain::codes::COUNTRIES)),
        Kind::Currency => trimmed(&alternatives(crate::domain::codes::CURRENCIES)),
        Kind::File => json!({
            "type": "string",
            "contentEncoding": "base64",
            "pattern": BASE64_FILE,
        }),
        Kind::Email => format_or_blank("email"),
        Kind::Iban => format_or_blank("iban"),
        Kind::Bic => trimmed("[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?"),
        Kind::UnitCode => trimmed("[A-Z0-9]{2,3}"),
        Kind::Words(words) => {
            let one = alternatives(words);
            json!({"type": "string", "pattern": format!(r"^\s*(({one})?\s*(,\s*({one})?\s*)*)$")})
        }
        Kind::Recipients => recipients_schema(),
        // Mandatory wherever it is used: never blank.
        Kind::Tag => json!({
            "type": "string",
            "pattern": r"^[^,\r\n]*[^,\r\n\s][^,\r\n]*$",
            "maxLength": crate::limits::TAG_NAME_CHARS_MAX,
        }),
    }
}

/// The recipients of a message: `to`, `cc` and `bcc`, at least one. One child holds an
/// address or a comma-separated list of them; a child given more than once (XML) or as
/// an array (JSON) adds its addresses.
fn recipients_schema() -> Value {
    let addresses = |name: &str| {
        json!({"anyOf": [
            {"type": "string", "maxLength": crate::limits::TEXT_CHARS_MAX},
            {
                "type": "array",
                "maxItems": crate::limits::RECIPIENTS_MAX,
                "items": {
                    "type": "string",
                    "maxLength": crate::limits::TEXT_CHARS_MAX,
                    "xml": {"name": name},
                },
            },
        ]})
    };
    json!({
        "type": "object",
        "properties": {"to": addresses("to"), "cc": addresses("cc"), "bcc": addresses("bcc")},
        "additionalProperties": false,
        "minProperties": 1,
    })
}

/// The largest integer a field takes: 18 digits (`schema::parse_integer`).
const INT_MAX: i64 = 999_999_999_999_999_999;

/// Base64 as `records::decode_base64` reads it: padded, with canonical final bits, ASCII
/// white space anywhere, and at least one byte (a file is never empty).
const BASE64_FILE: &str = concat!(
    r"^[\t\n\f\r ]*(([A-Za-z0-9+/][\t\n\f\r ]*){4})*",
    r"(([A-Za-z0-9+/][\t\n\f\r ]*){4}",
    r"|([A-Za-z0-9+/][\t\n\f\r ]*){2}[AEIMQUYcgkosw048][\t\n\f\r ]*=[\t\n\f\r ]*",
    r"|[A-Za-z0-9+/][\t\n\f\r ]*[AQgw][\t\n\f\r ]*=[\t\n\f\r ]*=[\t\n\f\r ]*)$"
);

/// What the reference adds to a field's description about the text its kind takes.
fn kind_note(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Date => Some("YYYY-MM-DD"),
        Kind::DateTime => Some("ISO 8601 with UTC offset"),
        Kind::Bool => Some("1 or 0; true and false (any case) are read too"),
        Kind::Iban => Some("ISO 13616, check digits verified; spaces allowed"),
        _ => None,
    }
}

/// A regular expression matching `word` in any case, as the service reads words.
fn any_case(word: &str) -> String {
    word.chars()
        .map(|c| {
            if c.is_ascii_alphabetic() {
                format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase())
            } else if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c.to_string()
            } else {
                format!("\\{c}")
            }
        })
        .collect()
}

/// Any one of `words`, in any case.
fn alternatives(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| any_case(w))
        .collect::<Vec<_>>()
        .join("|")
}

fn shape_schema(shape: &Shape) -> Value {
    match shape {
        // An empty value is no value: the parameter is not given.
        Shape::Text => json!({"type": "string"}),
        Shape::Id => json!({"type": "string", "pattern": "^([1-9][0-9]{0,17})?$"}),
        Shape::Page => json!({"type": "string", "pattern": "^(1000000|[1-9][0-9]{0,5})?$"}),
        // Clamped to `limits::PER_PAGE_MAX`, not refused.
        Shape::PerPage => json!({"type": "string", "pattern": "^([1-9][0-9]{0,17})?$"}),
        Shape::Ids => json!({
            "type": "string",
            "pattern": "^([1-9][0-9]{0,17}(,[1-9][0-9]{0,17})*)?$",
        }),
        Shape::Serials => json!({
            "type": "string",
            "pattern": "^(0*[1-9][0-9]{0,17}(,0*[1-9][0-9]{0,17})*)?$",
        }),
        Shape::RequiredIds => {
            json!({"type": "string", "pattern": "^[1-9][0-9]{0,17}(,[1-9][0-9]{0,17})*$"})
        }
        Shape::RequiredId => json!({"type": "string", "pattern": "^[1-9][0-9]{0,17}$"}),
        Shape::Date => json!({"type": "string", "anyOf": [{"format": "date"}, {"maxLength": 0}]}),
        Shape::Pattern(p) => {
            json!({"type": "string", "pattern": format!("^({})?$", p.trim_start_matches('^').trim_end_matches('$'))})
        }
        Shape::OneOf(words) => {
            json!({"type": "string", "pattern": format!("^({})?$", alternatives(words))})
        }
        Shape::AnyOf(words) => {
            let one = alternatives(words);
            json!({"type": "string", "pattern": format!("^(({one})(,({one}))*)?$")})
        }
        Shape::Numbered(prefix) => json!({
            "type": "object",
            "patternProperties": {format!("^{prefix}[1-9][0-9]{{0,17}}$"): {"type": "string"}},
            "additionalProperties": false,
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
                // A line break lost from a string continuation leaves its indentation.
                if op.summary.contains("  ") {
                    undescribed.push(format!("{} {path}: spaces in a row", verb.name()));
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
                if d.trim().is_empty() || d.starts_with(" (") || d.contains("  ") {
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

    /// Every status a store failure answers is one the reference lists for every
    /// operation: a full disk's 507 too.
    #[test]
    fn every_status_of_a_store_failure_is_in_the_reference() {
        use crate::caps::StoreError;
        use crate::http::error::ApiError;
        let doc: Value = serde_json::from_str(&document()).unwrap();
        let op = &doc["paths"]["/invoices"]["post"]["responses"];
        for e in [
            StoreError::Conflict,
            StoreError::TooLarge,
            StoreError::Backend("b".into()),
            StoreError::UnknownOutcome("u".into()),
            StoreError::Unavailable("n".into()),
            StoreError::Full("f".into()),
        ] {
            let status = ApiError::from(e.clone()).status().to_string();
            assert!(
                doc["components"]["responses"][&status].is_object() && op[&status].is_object(),
                "{e:?} answers {status}, which the reference does not list"
            );
        }
    }

    /// An e-mail's recipients are `to`, `cc` and `bcc` children, not text.
    #[test]
    fn email_recipients_are_described_as_their_elements() {
        let doc: Value = serde_json::from_str(&document()).unwrap();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for name in ["email-input", "email-input-json"] {
            let r = &schemas[name]["properties"]["recipients"];
            assert_eq!(r["type"], "object", "{name}: {r}");
            assert_eq!(r["additionalProperties"], false, "{name}: {r}");
            for child in ["to", "cc", "bcc"] {
                let kinds: Vec<_> = r["properties"][child]["anyOf"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{name}.recipients.{child}: {r}"))
                    .iter()
                    .map(|a| a["type"].clone())
                    .collect();
                assert_eq!(kinds, ["string", "array"], "{name}.recipients.{child}");
            }
            assert!(
                schemas[name]["required"]
                    .as_array()
                    .unwrap()
                    .contains(&"recipients".into()),
                "{name}"
            );
        }
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

    /// XML holds only text: an XML request body's fields are strings, while the same
    /// field in JSON also takes what the JSON reader turns into its text.
    #[test]
    fn xml_inputs_take_text_and_json_inputs_also_json_values() {
        let doc: Value = serde_json::from_str(&document()).unwrap();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        let inputs: Vec<_> = schemas
            .iter()
            .filter(|(name, _)| name.ends_with("-input") || name.ends_with("-changes"))
            .collect();
        assert!(inputs.len() > 20, "{} input schemas", inputs.len());
        for (name, schema) in inputs {
            for (field, f) in schema["properties"].as_object().unwrap() {
                // Recipients are the one field of child elements (`to`, `cc`, `bcc`).
                let kind = if field == "recipients" {
                    "object"
                } else {
                    "string"
                };
                assert_eq!(f["type"], kind, "{name}.{field} in XML: {f}");
            }
            let json = &schemas[&format!("{name}-json")];
            assert_eq!(
                json["properties"].as_object().unwrap().len(),
                schema["properties"].as_object().unwrap().len(),
                "{name}"
            );
        }
        let client = &schemas["client-changes-json"]["properties"];
        let types: Vec<_> = client["due_days"]["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["type"].clone())
            .collect();
        assert!(
            types.contains(&json!("null")) && types.contains(&json!("integer")),
            "{types:?}"
        );
    }
}
