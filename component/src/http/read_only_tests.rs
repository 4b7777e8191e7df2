//! A GET never writes: every GET route of the table, asked for record 1 of a store that
//! holds one of everything, is answered from a store that refuses to begin a write. The
//! exceptions are stated here, each with its reason; today there are none under `/api`.

use std::cell::RefCell;

use super::Method;
use super::consistency_tests::world;
use super::golden::World;
use super::router::{ID, routes};
use crate::caps::{Read, Store, StoreError, Write};

/// A store that reads `inner` and refuses every write, noting who asked.
struct ReadOnly<'a> {
    inner: &'a dyn Store,
    asked: RefCell<u32>,
}

impl Store for ReadOnly<'_> {
    fn begin_read(&self) -> Result<Box<dyn Read>, StoreError> {
        self.inner.begin_read()
    }

    fn begin_write(&self) -> Result<Box<dyn Write>, StoreError> {
        *self.asked.borrow_mut() += 1;
        Err(StoreError::Unavailable("this store refuses writes".into()))
    }
}

/// The consistency world with one record of each kind this round added.
pub(super) fn everything() -> World {
    let w = world();
    for (path, body) in [
        ("/api/units", "<unit><name>Stunde</name></unit>"),
        (
            "/api/articles",
            "<article><title>Beratung</title><sales_price>100</sales_price></article>",
        ),
        (
            "/api/contacts",
            "<contact><client_id>1</client_id><name>Anna Buch</name></contact>",
        ),
        (
            "/api/offers",
            "<offer><client_id>1</client_id><offer-items><offer-item><title>A</title>\
             <unit_price>10</unit_price></offer-item></offer-items></offer>",
        ),
        (
            "/api/confirmations",
            "<confirmation><client_id>1</client_id><confirmation-items><confirmation-item>\
             <title>A</title><unit_price>10</unit_price></confirmation-item>\
             </confirmation-items></confirmation>",
        ),
        (
            "/api/delivery-notes",
            "<delivery-note><client_id>1</client_id><delivery-note-items><delivery-note-item>\
             <title>A</title></delivery-note-item></delivery-note-items></delivery-note>",
        ),
        (
            "/api/reminders",
            "<reminder><invoice_id>1</invoice_id></reminder>",
        ),
        (
            "/api/recurrings",
            "<recurring><client_id>1</client_id><recurring-items><recurring-item>\
             <title>Miete</title><unit_price>100</unit_price></recurring-item>\
             </recurring-items></recurring>",
        ),
    ] {
        w.ok(Method::Post, path, body);
    }
    // Completed, so that their PDFs are read as issued.
    for kind in [
        "offers",
        "confirmations",
        "delivery-notes",
        "reminders",
        "credit-notes",
    ] {
        w.ok(Method::Put, &format!("/api/{kind}/1/complete"), "");
    }
    w
}

/// The filter naming the parent of a list of parts: `invoice-items` → `invoice_id`.
fn parent_filter(collection: &str) -> String {
    let parent = [
        "-email-receivers",
        "-items",
        "-payments",
        "-comments",
        "-tags",
    ]
    .iter()
    .find_map(|suffix| collection.strip_suffix(suffix))
    .unwrap_or("client");
    format!("{}_id", parent.replace('-', "_"))
}

#[test]
fn no_get_route_begins_a_write() {
    let w = everything();
    let mut asked = Vec::new();
    let mut served = 0;
    for route in routes().filter(|r| !r.is_internal()) {
        if !route.verbs().any(|v| v.name() == "GET") {
            continue;
        }
        let path: Vec<&str> = route
            .path
            .iter()
            .map(|s| if *s == ID { "1" } else { s })
            .collect();
        let path = format!("/api/{}", path.join("/"));
        let store = ReadOnly {
            inner: &w.store,
            asked: RefCell::new(0),
        };
        let mut answer = super::handle(&w.caps_on(&store), &w.request(Method::Get, &path));
        if answer.status == 400 {
            // A list of a document's parts needs its document.
            let parent = parent_filter(route.path[0]);
            answer = super::handle(
                &w.caps_on(&store),
                &w.request(Method::Get, &format!("{path}?{parent}=1")),
            );
        }
        if *store.asked.borrow() > 0 {
            asked.push(format!("{path}: {}", answer.status));
        }
        assert!(answer.status < 500, "{path}: {}", answer.status);
        served += 1;
    }
    assert_eq!(asked, Vec::<String>::new(), "GET routes that began a write");
    // The wrapper sees a write where there is one.
    let store = ReadOnly {
        inner: &w.store,
        asked: RefCell::new(0),
    };
    let mut post = w.request(Method::Post, "/api/units");
    post.body = super::Body::Bytes(b"<unit><name>Tag</name></unit>".to_vec());
    let answer = super::handle(&w.caps_on(&store), &post);
    assert_eq!((answer.status, *store.asked.borrow()), (503, 1));
    assert!(served > 60, "only {served} GET routes");
}
