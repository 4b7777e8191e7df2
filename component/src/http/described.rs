//! What the API reference (`openapi`) says of each route, declared beside the route
//! (`router`) and the handlers that read the parameters: the methods, query parameters,
//! and record shapes. Only types, so that the route table, the handlers and the
//! generator can all name them.

use super::Method;
use crate::domain::schema::Field;

/// A method a route takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    Head,
    Post,
    Put,
    Delete,
}

impl Verb {
    pub fn of(m: &Method) -> Option<Verb> {
        Some(match m {
            Method::Get => Verb::Get,
            Method::Head => Verb::Head,
            Method::Post => Verb::Post,
            Method::Put => Verb::Put,
            Method::Delete => Verb::Delete,
            Method::Other(_) => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Head => "HEAD",
            Verb::Post => "POST",
            Verb::Put => "PUT",
            Verb::Delete => "DELETE",
        }
    }
}

/// A query parameter of an operation.
#[derive(Debug, Clone)]
pub struct Param {
    pub name: &'static str,
    pub shape: Shape,
    pub doc: &'static str,
}

impl Param {
    pub const fn new(name: &'static str, shape: Shape, doc: &'static str) -> Param {
        Param { name, shape, doc }
    }
}

/// What a query parameter takes.
#[derive(Debug, Clone)]
pub enum Shape {
    Text,
    /// A positive integer.
    Id,
    /// A page number, up to `limits::PAGE_MAX`.
    Page,
    /// Records per page: any positive number, more than `limits::PER_PAGE_MAX` taken as it.
    PerPage,
    /// Positive integers, comma-separated (any of them).
    Ids,
    /// Like `Ids`, each also with leading zeros (a number shown padded).
    Serials,
    /// Like `Ids`, and the parameter must be given.
    RequiredIds,
    /// One positive integer, and the parameter must be given.
    RequiredId,
    /// Text matching this regular expression.
    Pattern(String),
    Date,
    /// One of the words (case-insensitive).
    OneOf(&'static [&'static str]),
    /// Any of the words, comma-separated.
    AnyOf(&'static [&'static str]),
    /// A family of parameters, each named by this prefix and a positive integer (an id),
    /// each a text.
    Numbered(&'static str),
}

/// The record shape of a resource: its root element names and fields, and the list
/// filters its fields give.
pub struct Schema {
    pub singular: &'static str,
    pub plural: &'static str,
    pub fields: &'static [Field],
    /// List filters, each naming the field it matches.
    pub filters: Vec<(&'static str, &'static str)>,
    /// The field naming the record the records belong to, when a list must name one (and
    /// whether it takes several, comma-separated).
    pub owner: Option<(&'static str, bool)>,
}

/// What a route is about, from which its operations are described.
#[derive(Clone, Copy)]
pub enum About {
    /// Records of one resource: list and create on the collection, get, update and delete
    /// on a member.
    Records(fn() -> Schema),
    /// Records with list parameters of their own (documents: invoices and credit notes,
    /// whose parameters include `group_by`; clients): as records, with those parameters
    /// and a HEAD count.
    Documents(fn() -> Schema, &'static [Param]),
    /// The operations listed.
    Ops(&'static [(Verb, Op)]),
}

impl About {
    /// The operation listed for `verb`; a HEAD the GET serves is described by the GET.
    pub fn op(&self, verb: Verb) -> Option<&'static Op> {
        let About::Ops(ops) = *self else {
            return None;
        };
        let find = |want: Verb| ops.iter().find(|(v, _)| *v == want).map(|(_, op)| op);
        find(verb).or_else(|| (verb == Verb::Head).then(|| find(Verb::Get)).flatten())
    }

    /// Whether the operation of `verb` takes the query parameter `name` as its own (its
    /// handler reads and checks it), rather than as the API's common parameter.
    pub fn takes(&self, verb: Verb, name: &str) -> bool {
        self.op(verb)
            .is_some_and(|op| op.params.iter().any(|p| p.name == name))
    }
}

/// One operation described by hand, for routes that are not plain records.
#[derive(Clone, Copy)]
pub struct Op {
    pub summary: &'static str,
    pub params: &'static [Param],
    pub input: Input,
    pub output: Output,
}

impl Op {
    /// An operation answering `output`, taking no body and no parameters of its own.
    pub const fn new(summary: &'static str, output: Output) -> Op {
        Op {
            summary,
            params: &[],
            input: Input::Nothing,
            output,
        }
    }

    /// The operation, taking these query parameters as its own.
    pub const fn params(self, params: &'static [Param]) -> Op {
        Op { params, ..self }
    }

    /// The operation, taking this body.
    pub const fn input(self, input: Input) -> Op {
        Op { input, ..self }
    }
}

#[derive(Clone, Copy)]
pub enum Input {
    Nothing,
    /// A new record of this shape; `true` when the body may be empty.
    Record(fn() -> Schema, bool),
    /// Changes to a record of this shape: only the fields sent.
    Change(fn() -> Schema),
}

#[derive(Clone, Copy)]
pub enum Output {
    /// A record with this status.
    Record(u16, fn() -> Schema),
    /// A list of records.
    List(fn() -> Schema),
    /// An empty answer (XML: none; JSON: `{}`), 200.
    Empty,
    /// Bytes of one of these media types.
    Bytes(&'static [&'static str]),
    /// A record holding a file in base64 (XML and JSON), or the file's bytes (this media
    /// type).
    File(fn() -> Schema, &'static str),
}
