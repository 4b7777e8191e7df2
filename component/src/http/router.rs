//! Which handler serves a method and path under `/api`: one table of routes, read by the
//! router, by the `Allow` header of a 405, and by the isolation tests, which send another
//! account's key to every route that takes an id.

use super::described::{About, Input, Op, Output, Verb};
use super::documents::{self, Comments, Items, Payments, Tags, parts};
use super::error::ApiError;
use super::query::Query;
use super::records::{
    self, CLIENT_PROPERTIES, CLIENT_TAGS, CLIENTS, COUNTRY_TAXES, EMAIL_TEMPLATES,
    INCOMING_PROPERTIES, SUPPLIERS, TAXES, TEMPLATES, USER_PROPERTIES, Wire,
};
use super::{Call, Request, Response, clients, incomings, runs, settings, templates, webhooks};
use crate::caps::Caps;
use crate::domain::Ctx;
use crate::domain::documents::{Action, DocKind};

/// Stands for a record id in a route's path: the id of a record of the collection named by
/// the segment before it.
pub const ID: &str = "{id}";

/// One path under `/api` and the handler of each method it takes. HEAD is served by the
/// GET handler unless the route names its own.
pub struct Route {
    pub path: &'static [&'static str],
    handlers: &'static [(Verb, Handler)],
    /// What the route is about, for the API description (`openapi`).
    pub about: About,
}

type Answer = Result<Response, ApiError>;

/// A handler with the value its routes share: the resource, or the kind of document.
#[derive(Clone, Copy)]
enum Handler {
    Plain(fn(&Call<'_>) -> Answer),
    Records(fn(&Call<'_>, &'static Wire) -> Answer, &'static Wire),
    Doc(fn(&Call<'_>, DocKind) -> Answer, DocKind),
}

impl Route {
    /// The methods of this route as an `Allow` header lists them.
    pub fn methods(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for (verb, _) in self.handlers {
            out.push(verb.name());
            if *verb == Verb::Get && !self.handlers.iter().any(|(v, _)| *v == Verb::Head) {
                out.push(Verb::Head.name());
            }
        }
        out
    }

    /// The methods of this route, HEAD included where GET serves it.
    pub fn verbs(&self) -> impl Iterator<Item = Verb> + '_ {
        let head_of_get = self.handlers.iter().any(|(v, _)| *v == Verb::Get)
            && !self.handlers.iter().any(|(v, _)| *v == Verb::Head);
        self.handlers
            .iter()
            .map(|(v, _)| *v)
            .chain(head_of_get.then_some(Verb::Head))
    }

    /// A route of the test build, not part of the API.
    pub fn is_internal(&self) -> bool {
        self.path.first() == Some(&"_test")
    }

    /// The collection whose record id the path takes, if it takes one.
    pub fn id_of(&self) -> Option<&'static str> {
        let at = self.path.iter().position(|s| *s == ID)?;
        at.checked_sub(1).map(|before| self.path[before])
    }

    /// The id in `segments` if they are this route's path.
    fn matches<'s>(&self, segments: &[&'s str]) -> Option<&'s str> {
        if self.path.len() != segments.len() {
            return None;
        }
        let mut id = "";
        for (want, got) in self.path.iter().zip(segments) {
            if *want == ID {
                id = got;
            } else if want != got {
                return None;
            }
        }
        Some(id)
    }

    fn handler(&self, verb: Verb) -> Option<Handler> {
        let find = |v: Verb| self.handlers.iter().find(|(w, _)| *w == v).map(|(_, h)| *h);
        find(verb).or_else(|| (verb == Verb::Head).then(|| find(Verb::Get)).flatten())
    }
}

/// Every route the API serves.
pub fn routes() -> impl Iterator<Item = &'static Route> {
    TABLE.iter().flat_map(|t| t.iter())
}

pub(super) fn route(
    caps: &Caps,
    ctx: &Ctx,
    req: &Request,
    query: &Query,
    segments: &[&str],
) -> Result<Response, ApiError> {
    let Some((route, id)) = routes().find_map(|r| Some((r, r.matches(segments)?))) else {
        return Err(ApiError::NotFound(format!("no resource at {}", req.path)));
    };
    let Some((verb, handler)) = Verb::of(&req.method).and_then(|v| Some((v, route.handler(v)?)))
    else {
        return Err(ApiError::MethodNotAllowed(route.methods()));
    };
    if !route.about.takes(verb, "format") {
        super::check_format(query)?;
    }
    let call = Call {
        caps,
        ctx,
        req,
        query,
        id,
    };
    match handler {
        Handler::Plain(f) => f(&call),
        Handler::Records(f, wire) => f(&call, wire),
        Handler::Doc(f, kind) => f(&call, kind),
    }
}

/// A route of one operation: its path, the verb and handler, and what the operation is.
macro_rules! op_route {
    ($path:expr, $verb:expr, $handler:expr, $op:expr) => {
        Route {
            path: $path,
            handlers: &[($verb, $handler)],
            about: About::Ops(&[($verb, $op)]),
        }
    };
}

/// A resource of plain records: list and create, then get, update and delete by id
/// (`without_update`: get and delete).
macro_rules! records {
    ($plural:literal, $wire:expr) => {
        records!(@ $plural, $wire, [(Verb::Put, Handler::Records(records::update, $wire)),])
    };
    ($plural:literal, $wire:expr, without_update) => {
        records!(@ $plural, $wire, [])
    };
    (@ $plural:literal, $wire:expr, [$($update:tt)*]) => {
        &[
            Route {
                path: &[$plural],
                handlers: &[
                    (Verb::Get, Handler::Records(records::list, $wire)),
                    (Verb::Post, Handler::Records(records::create, $wire)),
                ],
                about: About::Records(|| ($wire).schema()),
            },
            Route {
                path: &[$plural, ID],
                handlers: &[
                    (Verb::Get, Handler::Records(records::get, $wire)),
                    $($update)*
                    (Verb::Delete, Handler::Records(records::delete, $wire)),
                ],
                about: About::Records(|| ($wire).schema()),
            },
        ]
    };
}

/// A document kind: its collection, its members, their completion, PDF and e-mail; the
/// kind's other actions are listed with it (`action!`, `signature!`, `einvoice!`,
/// `letter!`).
macro_rules! documents {
    ($plural:literal, $kind:expr) => {
        &[
            Route {
                path: &[$plural],
                handlers: &[
                    (
                        Verb::Get,
                        Handler::Doc(|c, k| documents::list(c, k, false), $kind),
                    ),
                    (
                        Verb::Head,
                        Handler::Doc(|c, k| documents::list(c, k, true), $kind),
                    ),
                    (Verb::Post, Handler::Doc(documents::create, $kind)),
                ],
                about: About::Documents(|| documents::schema($kind), documents::list_params($kind)),
            },
            member!($plural, $kind, get, delete, update),
            action!(
                $plural,
                $kind,
                "complete",
                Action::Complete,
                Op::new(
                    "Complete a draft: its number is fixed, its PDF (and, for invoices and \
                     credit notes, its e-invoices) made; the kind's completed status",
                    Output::Empty
                )
                .input(Input::Record(documents::complete_schema, true))
            ),
            op_route!(
                &[$plural, ID, "pdf"],
                Verb::Get,
                Handler::Doc(documents::pdf, $kind),
                Op::new(
                    "The PDF of a completed document: a pdf record with the file in \
                         base64, or the bytes with format=pdf or Accept: application/pdf",
                    Output::File(documents::pdf_schema, "application/pdf"),
                )
                .params(documents::PDF_PARAMS)
            ),
            op_route!(
                &[$plural, ID, "email"],
                Verb::Post,
                Handler::Doc(documents::email, $kind),
                Op::new(
                    "Send a completed document by e-mail, its PDF (and e-invoice) attached",
                    Output::Empty,
                )
                .input(Input::Record(documents::email_schema, false))
            ),
            op_route!(
                &[$plural, ID, "renew-link"],
                Verb::Put,
                Handler::Doc(documents::renew_link, $kind),
                Op::new(
                    "Give a completed document a new link to the customer portal \
                         (customerportal_url, working portal_link_days from now); the \
                         old link answers 404 from now on",
                    Output::Record(200, || documents::schema($kind)),
                )
            ),
        ]
    };
}

/// `cancel` and `uncancel` of a kind.
macro_rules! cancel {
    ($plural:literal, $kind:expr) => {
        &[
            action!(
                $plural,
                $kind,
                "cancel",
                Action::Cancel,
                Op::new("Cancel a completed document", Output::Empty)
            ),
            action!(
                $plural,
                $kind,
                "uncancel",
                Action::Uncancel,
                Op::new(
                    "Take a cancellation back: an invoice or credit note the status its \
                     payments and due date give, an offer OPEN, a confirmation COMPLETED",
                    Output::Empty
                )
            ),
        ]
    };
}

/// `clear` and `unclear` of a kind that is invoiced (offers, confirmations).
macro_rules! clear {
    ($plural:literal, $kind:expr) => {
        &[
            action!(
                $plural,
                $kind,
                "clear",
                Action::Clear,
                Op::new("Mark the document as invoiced: CLEARED", Output::Empty)
            ),
            action!(
                $plural,
                $kind,
                "unclear",
                Action::Unclear,
                Op::new(
                    "Take the invoicing back: an offer WON, a confirmation COMPLETED",
                    Output::Empty
                )
            ),
        ]
    };
}

/// The upload of a signed PDF.
macro_rules! signature {
    ($plural:literal, $kind:expr) => {
        &[op_route!(
            &[$plural, ID, "upload-signature"],
            Verb::Put,
            Handler::Doc(documents::upload_signature, $kind),
            Op::new(
                "Upload the signed PDF of a completed document",
                Output::Empty,
            )
            .input(Input::Record(documents::signature_schema, false))
        )]
    };
}

/// The e-invoice of a kind that issues them.
macro_rules! einvoice {
    ($plural:literal, $kind:expr) => {
        &[op_route!(
            &[$plural, ID, "e-invoice"],
            Verb::Get,
            Handler::Doc(documents::einvoice, $kind),
            Op::new(
                "The e-invoice (EN 16931 XML) issued when the document was completed",
                Output::Bytes(&["application/xml"]),
            )
            .params(documents::EINVOICE_PARAMS)
        )]
    };
}

/// Sending as a letter through the postal add-on.
macro_rules! letter {
    ($plural:literal, $kind:expr) => {
        &[op_route!(
            &[$plural, ID, "mail"],
            Verb::Post,
            Handler::Doc(documents::post, $kind),
            Op::new(
                "Send a completed document as a letter through the postal add-on",
                Output::Empty,
            )
            .input(Input::Record(documents::letter_schema, true))
        )]
    };
}

/// A new document's body made from an offer or confirmation, ready to POST. Stands
/// before the kind's members, whose id it would otherwise be read as.
macro_rules! preset {
    ($plural:literal, $kind:expr) => {
        &[op_route!(
            &[$plural, "preset"],
            Verb::Get,
            Handler::Doc(documents::preset, $kind),
            Op::new(
                "A new document made from an offer or an order confirmation (its client, \
                     texts and items), not stored: the body to POST",
                Output::Record(200, || documents::schema($kind)),
            )
            .params(documents::preset_params($kind))
        )]
    };
}

macro_rules! action {
    ($plural:literal, $kind:expr, $path:literal, $action:expr, $op:expr) => {
        op_route!(
            &[$plural, ID, $path],
            Verb::Put,
            Handler::Doc(|c, k| documents::action(c, k, $action), $kind),
            $op
        )
    };
}

/// A part of a document with its own collection: list and create (the document named in
/// the query or body), get and delete by id, and update for parts that can be changed.
macro_rules! part {
    ($path:literal, $kind:expr, $part:ty $(, $changeable:ident)?) => {
        &[
            Route {
                path: &[$path],
                handlers: &[
                    (Verb::Get, Handler::Doc(parts::list::<$part>, $kind)),
                    (Verb::Post, Handler::Doc(parts::create::<$part>, $kind)),
                ],
                about: About::Records(|| parts::schema::<$part>($kind)),
            },
            Route {
                path: &[$path, ID],
                handlers: &[
                    (Verb::Get, Handler::Doc(parts::get::<$part>, $kind)),
                    $((Verb::Put, Handler::Doc(|c, k| parts::$changeable::<$part>(c, k), $kind)),)?
                    (Verb::Delete, Handler::Doc(parts::delete::<$part>, $kind)),
                ],
                about: About::Records(|| parts::schema::<$part>($kind)),
            },
        ]
    };
}

/// One member of a document collection by id: get and delete, and update where `$update`
/// is given.
macro_rules! member {
    ($path:literal, $kind:expr, $get:ident, $delete:ident $(, $update:ident)?) => {
        Route {
            path: &[$path, ID],
            handlers: &[
                (Verb::Get, Handler::Doc(|c, k| documents::$get(c, k), $kind)),
                $((Verb::Put, Handler::Doc(|c, k| documents::$update(c, k), $kind)),)?
                (Verb::Delete, Handler::Doc(|c, k| documents::$delete(c, k), $kind)),
            ],
            about: About::Documents(|| documents::schema($kind), &[]),
        }
    };
}

const INVOICE: DocKind = DocKind::Invoice;
const CREDIT_NOTE: DocKind = DocKind::CreditNote;
const OFFER: DocKind = DocKind::Offer;
const CONFIRMATION: DocKind = DocKind::Confirmation;
const DELIVERY_NOTE: DocKind = DocKind::DeliveryNote;
const RECURRING: DocKind = DocKind::Recurring;
const REMINDER: DocKind = DocKind::Reminder;

static TABLE: &[&[Route]] = &[
    preset!("invoices", INVOICE),
    documents!("invoices", INVOICE),
    cancel!("invoices", INVOICE),
    signature!("invoices", INVOICE),
    einvoice!("invoices", INVOICE),
    documents!("credit-notes", CREDIT_NOTE),
    cancel!("credit-notes", CREDIT_NOTE),
    signature!("credit-notes", CREDIT_NOTE),
    einvoice!("credit-notes", CREDIT_NOTE),
    letter!("credit-notes", CREDIT_NOTE),
    documents!("offers", OFFER),
    &[
        action!(
            "offers",
            OFFER,
            "win",
            Action::Win,
            Op::new("The client accepted the offer: WON", Output::Empty)
        ),
        action!(
            "offers",
            OFFER,
            "lose",
            Action::Lose,
            Op::new("The client declined the offer: LOST", Output::Empty)
        ),
    ],
    clear!("offers", OFFER),
    cancel!("offers", OFFER),
    signature!("offers", OFFER),
    letter!("offers", OFFER),
    preset!("confirmations", CONFIRMATION),
    documents!("confirmations", CONFIRMATION),
    clear!("confirmations", CONFIRMATION),
    cancel!("confirmations", CONFIRMATION),
    signature!("confirmations", CONFIRMATION),
    letter!("confirmations", CONFIRMATION),
    documents!("delivery-notes", DELIVERY_NOTE),
    letter!("delivery-notes", DELIVERY_NOTE),
    &[
        Route {
            path: &["recurrings"],
            handlers: &[
                (
                    Verb::Get,
                    Handler::Doc(|c, k| documents::list(c, k, false), RECURRING),
                ),
                (
                    Verb::Head,
                    Handler::Doc(|c, k| documents::list(c, k, true), RECURRING),
                ),
                (Verb::Post, Handler::Doc(documents::create, RECURRING)),
            ],
            about: About::Documents(
                || documents::schema(RECURRING),
                documents::list_params(RECURRING),
            ),
        },
        member!("recurrings", RECURRING, get, delete, update),
        op_route!(&["recurrings", ID, "stop"], Verb::Put, Handler::Doc(documents::stop, RECURRING), Op::new("Stop a recurring invoice: no further run until a \
                     next_creation_date is set again", Output::Record(200, || documents::schema(RECURRING)))),
    ],
    records!("recurring-email-receivers", &records::RECURRING_RECEIVERS),
    documents!("reminders", REMINDER),
    cancel!("reminders", REMINDER),
    signature!("reminders", REMINDER),
    letter!("reminders", REMINDER),
    records!("reminder-texts", &records::REMINDER_TEXTS),
    records!("base-rates", &records::BASE_RATES),
    part!("invoice-items", INVOICE, Items, update),
    part!("invoice-payments", INVOICE, Payments),
    part!("invoice-comments", INVOICE, Comments),
    part!("invoice-tags", INVOICE, Tags),
    part!("credit-note-items", CREDIT_NOTE, Items, update),
    part!("credit-note-payments", CREDIT_NOTE, Payments),
    part!("credit-note-comments", CREDIT_NOTE, Comments),
    part!("credit-note-tags", CREDIT_NOTE, Tags),
    part!("offer-items", OFFER, Items, update),
    part!("offer-comments", OFFER, Comments),
    part!("offer-tags", OFFER, Tags),
    part!("confirmation-items", CONFIRMATION, Items, update),
    part!("confirmation-comments", CONFIRMATION, Comments),
    part!("confirmation-tags", CONFIRMATION, Tags),
    part!("delivery-note-items", DELIVERY_NOTE, Items, update),
    part!("delivery-note-comments", DELIVERY_NOTE, Comments),
    part!("delivery-note-tags", DELIVERY_NOTE, Tags),
    part!("recurring-items", RECURRING, Items, update),
    part!("recurring-comments", RECURRING, Comments),
    part!("recurring-tags", RECURRING, Tags),
    part!("reminder-items", REMINDER, Items, update),
    part!("reminder-comments", REMINDER, Comments),
    part!("reminder-tags", REMINDER, Tags),
    &[
        Route {
            path: &["clients"],
            handlers: &[
                (Verb::Get, Handler::Plain(|c| clients::list(c, false))),
                (Verb::Head, Handler::Plain(|c| clients::list(c, true))),
                (Verb::Post, Handler::Records(records::create, &CLIENTS)),
            ],
            about: About::Documents(|| CLIENTS.schema(), clients::LIST_PARAMS),
        },
        Route {
            path: &["clients", ID],
            handlers: &[
                (Verb::Get, Handler::Records(records::get, &CLIENTS)),
                (Verb::Put, Handler::Records(records::update, &CLIENTS)),
                (Verb::Delete, Handler::Records(records::delete, &CLIENTS)),
            ],
            about: About::Records(|| CLIENTS.schema()),
        },
        op_route!(&["clients", ID, "portal-session"], Verb::Post, Handler::Plain(clients::portal_session), Op::new("Open the customer portal for a client: a link, working for one \
                     hour, to a page listing the client's documents, each with its \
                     portal link (for an integrator's own \"my invoices\" page to \
                     redirect to)", Output::Record(201, clients::portal_session_schema))),
        // Like the tags of documents: listed by their client, created, read and deleted.
        Route {
            path: &["client-tags"],
            handlers: &[
                (Verb::Get, Handler::Records(records::list, &CLIENT_TAGS)),
                (
                    Verb::Post,
                    Handler::Records(records::create_tag, &CLIENT_TAGS),
                ),
            ],
            about: About::Records(|| CLIENT_TAGS.schema()),
        },
        Route {
            path: &["client-tags", ID],
            handlers: &[
                (Verb::Get, Handler::Records(records::get, &CLIENT_TAGS)),
                (
                    Verb::Delete,
                    Handler::Records(records::delete, &CLIENT_TAGS),
                ),
            ],
            about: About::Records(|| CLIENT_TAGS.schema()),
        },
    ],
    records!("suppliers", &SUPPLIERS),
    records!("units", &records::UNITS),
    records!("articles", &records::ARTICLES),
    &[
        Route {
            path: &["article-tags"],
            handlers: &[
                (
                    Verb::Get,
                    Handler::Records(records::list, &records::ARTICLE_TAGS),
                ),
                (
                    Verb::Post,
                    Handler::Records(records::create_tag, &records::ARTICLE_TAGS),
                ),
            ],
            about: About::Records(|| records::ARTICLE_TAGS.schema()),
        },
        Route {
            path: &["article-tags", ID],
            handlers: &[
                (
                    Verb::Get,
                    Handler::Records(records::get, &records::ARTICLE_TAGS),
                ),
                (
                    Verb::Delete,
                    Handler::Records(records::delete, &records::ARTICLE_TAGS),
                ),
            ],
            about: About::Records(|| records::ARTICLE_TAGS.schema()),
        },
    ],
    records!("article-properties", &records::ARTICLE_PROPERTIES),
    records!("article-property-values", &records::ARTICLE_PROPERTY_VALUES),
    records!("contacts", &records::CONTACTS),
    &[
        Route {
            path: &["incomings"],
            handlers: &[
                (Verb::Get, Handler::Plain(incomings::list)),
                (Verb::Post, Handler::Plain(incomings::create)),
            ],
            about: About::Ops(&[
                (
                    Verb::Get,
                    Op::new("List the incoming invoices", Output::List(incomings::schema)).params(incomings::LIST_PARAMS),
                ),
                (
                    Verb::Head,
                    Op::new("Count the incoming invoices", Output::List(incomings::schema)).params(incomings::LIST_PARAMS),
                ),
                (
                    Verb::Post,
                    Op::new("Import an e-invoice (XRechnung or Factur-X in base64file), or \
                             enter an incoming invoice by hand", Output::Record(201, incomings::schema)).input(Input::Record(incomings::schema, false)),
                ),
            ]),
        },
        Route {
            path: &["incomings", ID],
            handlers: &[
                (Verb::Get, Handler::Plain(incomings::get)),
                (
                    Verb::Put,
                    Handler::Records(records::update, &records::INCOMINGS),
                ),
                (
                    Verb::Delete,
                    Handler::Records(records::delete, &records::INCOMINGS),
                ),
            ],
            about: About::Records(incomings::schema),
        },
        op_route!(&["incomings", ID, "file"], Verb::Get, Handler::Plain(incomings::file), Op::new("The file an incoming invoice was imported from, as received", Output::Bytes(&["application/xml", "application/pdf"]))),
        op_route!(&["incomings", ID, "pdf"], Verb::Get, Handler::Plain(incomings::pdf), Op::new("A PDF of an incoming invoice: the one it came in, or one laid out \
                     from its XML", Output::Bytes(&["application/pdf"])).params(incomings::PDF_PARAMS)),
        Route {
            path: &["incoming-items"],
            handlers: &[(
                Verb::Get,
                Handler::Records(records::list, &records::INCOMING_ITEMS),
            )],
            about: About::Records(|| records::INCOMING_ITEMS.schema()),
        },
        Route {
            path: &["incoming-items", ID],
            handlers: &[(
                Verb::Get,
                Handler::Records(records::get, &records::INCOMING_ITEMS),
            )],
            about: About::Records(|| records::INCOMING_ITEMS.schema()),
        },
    ],
    records!(
        "incoming-payments",
        &records::INCOMING_PAYMENTS,
        without_update
    ),
    records!(
        "incoming-comments",
        &records::INCOMING_COMMENTS,
        without_update
    ),
    records!("templates", &TEMPLATES),
    records!("taxes", &TAXES),
    records!("user-properties", &USER_PROPERTIES),
    records!("incoming-properties", &INCOMING_PROPERTIES),
    records!("client-properties", &CLIENT_PROPERTIES),
    records!("user-property-values", &records::USER_PROPERTY_VALUES),
    records!(
        "incoming-property-values",
        &records::INCOMING_PROPERTY_VALUES
    ),
    records!("client-property-values", &records::CLIENT_PROPERTY_VALUES),
    records!("country-taxes", &COUNTRY_TAXES),
    // The spec shows the underscore spelling for one operation; both work for all.
    records!("country_taxes", &COUNTRY_TAXES),
    records!("email-templates", &EMAIL_TEMPLATES),
    &[
        op_route!(&["templates", ID, "thumb"], Verb::Get, Handler::Plain(templates::thumbnail), Op::new("An image of a template's first page", Output::Bytes(&["image/png", "image/gif", "image/jpeg"])).params(templates::THUMB_PARAMS)),
        // The singular path only filters: /api/template?type=INVOICE.
        Route {
            path: &["template"],
            handlers: &[(Verb::Get, Handler::Plain(|c| records::list(c, &TEMPLATES)))],
            about: About::Records(|| TEMPLATES.schema()),
        },
        Route {
            path: &["webhooks"],
            handlers: &[
                (Verb::Get, Handler::Plain(webhooks::list)),
                (Verb::Post, Handler::Plain(webhooks::create)),
            ],
            about: About::Records(webhooks::schema),
        },
        Route {
            path: &["webhooks", ID],
            handlers: &[
                (Verb::Get, Handler::Plain(webhooks::get)),
                (Verb::Put, Handler::Plain(webhooks::update)),
                (Verb::Delete, Handler::Plain(webhooks::delete)),
            ],
            about: About::Records(webhooks::schema),
        },
        op_route!(&["webhooks", ID, "test"], Verb::Put, Handler::Plain(webhooks::test), Op::new("Send the webhook a webhook.test event carrying the webhook, now; answers its delivery after the attempt", Output::Record(200, webhooks::delivery_schema))),
        op_route!(&["webhooks", ID, "rotate-secret"], Verb::Put, Handler::Plain(webhooks::rotate), Op::new("Give the webhook a new signing secret, shown in this answer only; the old one signs beside it for 24 hours", Output::Record(200, webhooks::schema))),
        op_route!(&["webhook-deliveries"], Verb::Get, Handler::Plain(webhooks::deliveries_list), Op::new("The delivery log: every event sent to a webhook in the last 30 days, with its attempts", Output::List(webhooks::delivery_schema)).params(webhooks::DELIVERY_PARAMS)),
        op_route!(&["webhook-deliveries", ID], Verb::Get, Handler::Plain(webhooks::delivery_get), Op::new("One delivery of the log, with its attempts", Output::Record(200, webhooks::delivery_schema))),
        op_route!(&["webhook-deliveries", ID, "redeliver"], Verb::Put, Handler::Plain(webhooks::redeliver), Op::new("Send a delivery again now, with the same webhook-id, whatever became of it; answers it after the attempt", Output::Record(200, webhooks::delivery_schema))),
        Route {
            path: &["test-clock"],
            handlers: &[
                (Verb::Get, Handler::Plain(runs::get)),
                (Verb::Put, Handler::Plain(runs::put)),
            ],
            about: About::Ops(&[
                (
                    Verb::Get,
                    Op::new("The account's test clock: its moment in its time zone \
                             (only with FAKTURA_TEST_CLOCK=1, else 404)", Output::Record(200, runs::schema)),
                ),
                (
                    Verb::Put,
                    Op::new("Move the account's test clock forward; answers once every \
                             run due up to the new moment is made", Output::Record(200, runs::schema)).input(Input::Record(runs::schema, true)),
                ),
            ]),
        },
        Route {
            path: &["settings"],
            handlers: &[
                (Verb::Get, Handler::Plain(settings::get)),
                (Verb::Put, Handler::Plain(settings::update)),
            ],
            about: About::Ops(&[
                (
                    Verb::Get,
                    Op::new("The account's settings", Output::Record(200, settings::schema)),
                ),
                (
                    Verb::Head,
                    Op::new("The headers of the account's settings", Output::Record(200, settings::schema)),
                ),
                (
                    Verb::Put,
                    Op::new("Change the account's settings: only the fields sent", Output::Record(200, settings::schema)).input(Input::Change(settings::schema)),
                ),
            ]),
        },
    ],
    TEST_ROUTES,
];

/// Routes of the test build only: a panic, an endless loop, unbounded allocation, a create
/// that panics before its commit, a create that takes two seconds.
#[cfg(feature = "test-routes")]
const TEST_ROUTES: &[Route] = &[
    Route {
        path: &["_test", "half-written-client"],
        handlers: &[(
            Verb::Post,
            // Creates a client inside a write transaction, then panics before the commit.
            Handler::Plain(|c| {
                let changes = records::decode_changes(
                    CLIENTS.res.fields,
                    &c.req.document()?,
                    CLIENTS.singular,
                )?;
                let mut txn = c.caps.store.begin_write()?;
                crate::domain::records::create(c.ctx, txn.as_mut(), CLIENTS.res, &changes)?;
                panic!("test route: panic inside a write transaction")
            }),
        )],
        about: About::Ops(&[]),
    },
    Route {
        path: &["_test", "slow-client"],
        handlers: &[(
            Verb::Post,
            // Computes for two seconds (the clock ticks in seconds), then creates a client.
            Handler::Plain(|c| {
                let until = c.caps.clock.now_unix() + 2;
                while c.caps.clock.now_unix() < until {
                    std::hint::black_box(0u64);
                }
                records::create(c, &CLIENTS)
            }),
        )],
        about: About::Ops(&[]),
    },
    Route {
        path: &["_test", "panic"],
        handlers: &[(
            Verb::Get,
            Handler::Plain(|_| panic!("test route: deliberate panic")),
        )],
        about: About::Ops(&[]),
    },
    Route {
        path: &["_test", "loop"],
        handlers: &[(
            Verb::Get,
            // Runs until the host's deadline stops it.
            Handler::Plain(|_| {
                loop {
                    std::hint::black_box(0u64);
                }
            }),
        )],
        about: About::Ops(&[]),
    },
    Route {
        path: &["_test", "alloc"],
        handlers: &[(
            Verb::Get,
            // Allocates until the instance's memory limit stops it.
            Handler::Plain(|_| {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 16 << 20]);
                    std::hint::black_box(&hoard);
                }
            }),
        )],
        about: About::Ops(&[]),
    },
];
#[cfg(not(feature = "test-routes"))]
const TEST_ROUTES: &[Route] = &[];
