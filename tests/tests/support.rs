//! What the test modules share beyond the harness: the two document kinds as data
//! (`Kind`), `per_kind!`, which runs one test for each kind, and the requests and bodies
//! most document tests start with. No test lives here.

use faktura_tests::{App, Reply};

/// A kind of document as the API spells it. Every kind shares every line of document code
/// (ARCHITECTURE.md), so a test written against a `Kind` runs for each of them; what
/// differs between them is these names and the names made of them, and what the kind does
/// (payments, a due date, reductions).
pub(crate) struct Kind {
    /// The root element of one document (`invoice`), the first word of the elements and
    /// collections of its parts (`invoice-items`) and, with an `s`, its collection.
    pub singular: &'static str,
    /// The kind in messages: `invoice`, `credit note`.
    pub label: &'static str,
    /// The kind in field names: the first word of the number field (`invoice_number`), of
    /// the kind's settings (`invoice_intro`).
    pub range: &'static str,
    /// The number prefix a fresh account uses.
    pub number_pre: &'static str,
    /// The status a draft completes to.
    pub completed: &'static str,
    /// Whether it takes payments, falls due (OVERDUE) and is canceled (invoices and credit
    /// notes).
    pub billing: bool,
    /// Whether it has a reduction, a currency and a quote (all but delivery notes).
    pub priced: bool,
    /// The name of its PDF before `_{id}.pdf`.
    pub file_stem: &'static str,
}

pub(crate) static INVOICES: Kind = Kind {
    singular: "invoice",
    label: "invoice",
    range: "invoice",
    number_pre: "INV-",
    completed: "OPEN",
    billing: true,
    priced: true,
    file_stem: "invoice",
};

pub(crate) static CREDIT_NOTES: Kind = Kind {
    singular: "credit-note",
    label: "credit note",
    range: "credit_note",
    number_pre: "CN-",
    completed: "OPEN",
    billing: true,
    priced: true,
    file_stem: "credit_note",
};

pub(crate) static OFFERS: Kind = Kind {
    singular: "offer",
    label: "offer",
    range: "offer",
    number_pre: "OFR-",
    completed: "OPEN",
    billing: false,
    priced: true,
    file_stem: "offer",
};

pub(crate) static CONFIRMATIONS: Kind = Kind {
    singular: "confirmation",
    label: "confirmation",
    range: "confirmation",
    number_pre: "OC-",
    completed: "COMPLETED",
    billing: false,
    priced: true,
    file_stem: "confirmation",
};

pub(crate) static DELIVERY_NOTES: Kind = Kind {
    singular: "delivery-note",
    label: "delivery note",
    range: "delivery_note",
    number_pre: "DN-",
    completed: "CREATED",
    billing: false,
    priced: false,
    file_stem: "delivery-note",
};

impl Kind {
    /// The number field: `invoice_number`.
    pub(crate) fn number(&self) -> String {
        format!("{}_number", self.range)
    }

    /// The field naming the document on its items, payments, comments and tags:
    /// `invoice_id`.
    pub(crate) fn parent(&self) -> String {
        format!("{}_id", self.range)
    }

    /// The payment field that settles the document whatever is left open:
    /// `mark_invoice_as_paid`.
    pub(crate) fn mark_paid(&self) -> String {
        format!("mark_{}_as_paid", self.range)
    }

    /// An element as the kind names it: `named("items")` is `invoice-items`; likewise the
    /// parts (`item`, `payment`, `comments`, `tags`, ...), and `groups` and `params`, the
    /// root of a grouped list and of the parameters it echoes.
    pub(crate) fn named(&self, name: &str) -> String {
        format!("{}-{name}", self.singular)
    }

    /// The collection: `/api/invoices`.
    pub(crate) fn list(&self) -> String {
        format!("/api/{}s", self.singular)
    }

    /// One document: `/api/invoices/7`.
    pub(crate) fn at(&self, id: u64) -> String {
        format!("{}/{id}", self.list())
    }

    /// A document body: `<invoice>{inner}</invoice>`.
    pub(crate) fn body(&self, inner: &str) -> String {
        format!("<{0}>{inner}</{0}>", self.singular)
    }

    /// The collection of a part (`items`, `payments`, `comments`, `tags`):
    /// `/api/invoice-items`.
    pub(crate) fn parts(&self, collection: &str) -> String {
        format!("/api/{}", self.named(collection))
    }

    /// The parts of one document: `/api/invoice-items?invoice_id=7`.
    pub(crate) fn parts_of(&self, collection: &str, id: u64) -> String {
        format!("{}?{}={id}", self.parts(collection), self.parent())
    }

    /// A part's body naming its document: `<invoice-payment><invoice_id>7</invoice_id>…`
    /// for the part `payment`.
    pub(crate) fn part(&self, part: &str, id: u64, inner: &str) -> String {
        format!(
            "<{element}><{parent}>{id}</{parent}>{inner}</{element}>",
            element = self.named(part),
            parent = self.parent()
        )
    }
}

/// Runs each named shared test, an `async fn name(kind: &Kind)`, once per kind as the tests
/// `name::invoices`, `name::credit_notes`, `name::offers`, `name::confirmations` and
/// `name::delivery_notes`, so that a failure names its kind. `priced:` first runs it for
/// the kinds with reductions, currencies and quotes (all but delivery notes), `billing:`
/// for invoices and credit notes (payments, due dates, cancellation) only. The test runs
/// on tokio's current-thread runtime, or with `multi_thread:` first on two workers.
macro_rules! per_kind {
    (multi_thread: $($name:ident),+ $(,)?) => {
        per_kind!(@each [tokio::test(flavor = "multi_thread", worker_threads = 2)]
            [invoices INVOICES, credit_notes CREDIT_NOTES, offers OFFERS,
             confirmations CONFIRMATIONS, delivery_notes DELIVERY_NOTES] $($name),+);
    };
    (priced: $($name:ident),+ $(,)?) => {
        per_kind!(@each [tokio::test]
            [invoices INVOICES, credit_notes CREDIT_NOTES, offers OFFERS,
             confirmations CONFIRMATIONS] $($name),+);
    };
    (billing: $($name:ident),+ $(,)?) => {
        per_kind!(@each [tokio::test] [invoices INVOICES, credit_notes CREDIT_NOTES] $($name),+);
    };
    ($($name:ident),+ $(,)?) => {
        per_kind!(@each [tokio::test]
            [invoices INVOICES, credit_notes CREDIT_NOTES, offers OFFERS,
             confirmations CONFIRMATIONS, delivery_notes DELIVERY_NOTES] $($name),+);
    };
    (@each [$test:meta] $kinds:tt $($name:ident),+) => {
        $(per_kind!(@one [$test] $kinds $name);)+
    };
    (@one [$test:meta] [$($test_name:ident $kind:ident),+] $name:ident) => {
        mod $name {
            $(
                #[$test]
                async fn $test_name() {
                    super::$name(&$crate::support::$kind).await;
                }
            )+
        }
    };
}

/// A new client with the fields `inner`; its id.
pub(crate) async fn client(app: &App, inner: &str) -> u64 {
    let r = app
        .post("/api/clients", &format!("<client>{inner}</client>"))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.id()
}

/// A new app with a client named A; the client's id.
pub(crate) async fn app_with_client() -> (App, u64) {
    let app = App::spawn().await;
    let c = client(&app, "<name>A</name>").await;
    (app, c)
}

/// A new document of `kind` with the fields `inner`, which must be created.
pub(crate) async fn create(app: &App, kind: &Kind, inner: &str) -> Reply {
    let r = app.post(&kind.list(), &kind.body(inner)).await;
    assert_eq!(r.status, 201, "{}", r.body);
    r
}

/// A new document of `kind` for `client` with the further fields `inner`, which must be
/// created.
pub(crate) async fn create_for(app: &App, kind: &Kind, client: u64, inner: &str) -> Reply {
    create(
        app,
        kind,
        &format!("<client_id>{client}</client_id>{inner}"),
    )
    .await
}

/// Completes the draft `id` of `kind`, which must succeed.
pub(crate) async fn complete(app: &App, kind: &Kind, id: u64) {
    let r = app.put(&format!("{}/complete", kind.at(id)), "").await;
    assert_eq!(r.status, 200, "{}", r.body);
}

/// Asserts how many documents of `kind` each list query selects (HEAD's `x-total-count`):
/// `(query, count)` pairs.
pub(crate) async fn assert_counts(app: &App, kind: &Kind, expected: &[(&str, u32)]) {
    for (query, count) in expected {
        let head = app
            .call("HEAD", &format!("{}?{query}", kind.list()), None)
            .await;
        let count = count.to_string();
        assert_eq!(
            head.header("x-total-count"),
            Some(count.as_str()),
            "{query}"
        );
    }
}

/// A template body: its name, type, format and the base64 of its file.
pub(crate) fn template(name: &str, ty: &str, format: &str, file: &str) -> String {
    format!(
        "<template><name>{name}</name><type>{ty}</type><format>{format}</format>\
         <base64file>{file}</base64file></template>"
    )
}

/// An item of `kind` (nested in a document body or posted alone).
pub(crate) fn item(
    kind: &Kind,
    q: &str,
    price: &str,
    tax_name: &str,
    rate: &str,
    reduction: &str,
) -> String {
    format!(
        "<{0}><title>Item</title><unit>Stück</unit><quantity>{q}</quantity><unit_price>{price}</unit_price>\
         <tax_name>{tax_name}</tax_name><tax_rate>{rate}</tax_rate><reduction>{reduction}</reduction></{0}>",
        kind.named("item")
    )
}

/// The items `items` nested in a document body: `<invoice-items>…</invoice-items>`.
pub(crate) fn items(kind: &Kind, items: &[String]) -> String {
    format!("<{0}>{1}</{0}>", kind.named("items"), items.concat())
}

/// Settings with every default a new document of `kind` takes from them; the terms and the
/// payment types apply to invoices and credit notes only.
pub(crate) fn default_settings(kind: &Kind) -> String {
    format!(
        "<settings><due_days>30</due_days><discount_rate>2</discount_rate><discount_days>10</discount_days>\
         <{0}_intro>Thanks!</{0}_intro><{0}_note>Pay soon.</{0}_note>\
         <payment_types>bank_transfer,cash</payment_types><currency_code>EUR</currency_code></settings>",
        kind.range
    )
}
