//! Metrics: the registry of one runtime and what it counts, written out in the Prometheus
//! text format for `/metrics` (served by `operations.rs`).
//!
//! It counts what the host sees of a request (its route pattern, method, status and time,
//! and the outcome the component names in `OUTCOME`), guest traps and deadline stops, the
//! instance pool, store commits, PDF rendering and the mail outbox. It knows no route of
//! the API: a route is the path with its numbers as `{id}` (`pattern`), so that it stays
//! true when the component gains routes; and it tells no answer's meaning from its route
//! or status: the component says it. It depends on no other module of the host: the
//! engines report through the handles it gives them (`StoreMetrics`, `PdfMetrics`).

use std::collections::HashSet;
use std::sync::{PoisonError, RwLock};
use std::time::Duration;

use hyper::header::{HeaderName, HeaderValue};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::prometheus_text;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// What the component says an answer is, where its status does not tell: `einvoice-refused`
/// (an e-invoice refused, a draft's or one whose data fails its profile's rules) is counted
/// in `einvoice_refusals`. The component sets it (`component/src/http/mod.rs`, `OUTCOME`);
/// the server takes it off every answer before the answer leaves, so that clients never
/// see it.
pub(crate) const OUTCOME: HeaderName = HeaderName::from_static("x-faktura-outcome");

/// The route of every path that no route of the API can have, and of the paths past
/// `ROUTES_MAX`.
const OTHER: &str = "other";
/// Most segments after `/api` a route has (the API's deepest have three:
/// `/api/invoices/{id}/pdf`).
const SEGMENTS_MAX: usize = 4;
/// Longest word of a route (`half-written-client`, `country-taxes`).
const WORD_BYTES_MAX: usize = 32;
/// Most distinct routes counted. `pattern` keeps only paths of the API's shape, but any
/// word of that shape passes, so a client sending made-up paths could otherwise grow the
/// label set without end; the API has fewer than a hundred routes.
const ROUTES_MAX: usize = 256;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    method: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
    method: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EInvoiceLabels {
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutboxLabels {
    state: &'static str,
}

/// The histogram of a request's time, built on first use of a route and method.
type Durations = Family<RouteLabels, Histogram, fn() -> Histogram>;

fn request_seconds() -> Histogram {
    // 1 ms to 16 s: a GET takes milliseconds, the deadline is 30 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// What a storage engine reports of its commits.
#[derive(Clone)]
pub(crate) struct StoreMetrics {
    batches: Counter,
    commit_seconds: Histogram,
}

impl Default for StoreMetrics {
    fn default() -> StoreMetrics {
        StoreMetrics {
            batches: Counter::default(),
            // 0.1 ms (a cached fsync) to 1.6 s.
            commit_seconds: Histogram::new(exponential_buckets(0.0001, 2.0, 15)),
        }
    }
}

impl StoreMetrics {
    /// A batch of writers' transactions was committed (redb: without fsync; PostgreSQL:
    /// one transaction).
    pub(crate) fn batch_committed(&self) {
        self.batches.inc();
    }

    /// A commit that made the batches before it durable took `took` (redb: the fsync;
    /// PostgreSQL: the COMMIT).
    pub(crate) fn durable_commit(&self, took: Duration) {
        self.commit_seconds.observe(took.as_secs_f64());
    }
}

/// What the renderer reports of its PDFs.
#[derive(Clone)]
pub(crate) struct PdfMetrics {
    render_seconds: Histogram,
}

impl Default for PdfMetrics {
    fn default() -> PdfMetrics {
        PdfMetrics {
            // 5 ms to 10 s.
            render_seconds: Histogram::new(exponential_buckets(0.005, 2.0, 12)),
        }
    }
}

impl PdfMetrics {
    /// A PDF took `took` to render.
    pub(crate) fn rendered(&self, took: Duration) {
        self.render_seconds.observe(took.as_secs_f64());
    }
}

/// Every metric of one runtime. A runtime has its own, so that hosts in one process (the
/// tests) count apart.
pub(crate) struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    durations: Durations,
    guest_traps: Counter,
    deadline_stops: Counter,
    instances_in_use: Gauge,
    instances_max: Gauge,
    pub(crate) store: StoreMetrics,
    outbox: Family<OutboxLabels, Gauge>,
    pub(crate) pdf: PdfMetrics,
    einvoice_refusals: Family<EInvoiceLabels, Counter>,
    /// The routes counted so far; at most `ROUTES_MAX`.
    routes: RwLock<HashSet<String>>,
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let metrics = Metrics {
            registry: Registry::with_prefix("faktura"),
            requests: Family::default(),
            durations: Durations::new_with_constructor(request_seconds),
            guest_traps: Counter::default(),
            deadline_stops: Counter::default(),
            instances_in_use: Gauge::default(),
            instances_max: Gauge::default(),
            store: StoreMetrics::default(),
            outbox: Family::default(),
            pdf: PdfMetrics::default(),
            einvoice_refusals: Family::default(),
            routes: RwLock::new(HashSet::new()),
        };
        metrics.register()
    }

    fn register(mut self) -> Metrics {
        let r = &mut self.registry;
        r.register(
            "http_requests",
            "Requests answered, by route pattern, method and status",
            self.requests.clone(),
        );
        r.register(
            "http_request_duration_seconds",
            "Time from a request's arrival to its response head, by route pattern and method",
            self.durations.clone(),
        );
        r.register(
            "guest_traps",
            "Requests whose component instance trapped (a panic, memory past its limit), \
             deadline stops aside",
            self.guest_traps.clone(),
        );
        r.register(
            "guest_deadline_stops",
            "Requests whose component instance was stopped at the request deadline",
            self.deadline_stops.clone(),
        );
        r.register(
            "instances_in_use",
            "Component instances serving requests and upkeep now",
            self.instances_in_use.clone(),
        );
        r.register(
            "instances_max",
            "Component instances the pool holds; further requests wait for one",
            self.instances_max.clone(),
        );
        r.register(
            "store_commit_batches",
            "Store commits: on redb one per batch of writers, on PostgreSQL one per \
             transaction",
            self.store.batches.clone(),
        );
        r.register(
            "store_commit_duration_seconds",
            "Durable commits: on redb each fsync (it covers every batch before it), on \
             PostgreSQL each COMMIT",
            self.store.commit_seconds.clone(),
        );
        r.register(
            "mail_outbox_messages",
            "Messages in the mail outbox, by state: queued (waiting for delivery) or \
             failed (refused for good); on PostgreSQL letters too",
            self.outbox.clone(),
        );
        r.register(
            "pdf_render_duration_seconds",
            "Time to render one PDF",
            self.pdf.render_seconds.clone(),
        );
        r.register(
            "einvoice_refusals",
            "E-invoices refused, by route: a draft's, or one whose data fails the rules of its \
             profile (as the component marks its answers)",
            self.einvoice_refusals.clone(),
        );
        self
    }

    /// Counts an answered request, and what the component said it was (`OUTCOME`).
    pub(crate) fn request(
        &self,
        method: &hyper::Method,
        path: &str,
        status: u16,
        outcome: Option<&HeaderValue>,
        took: Duration,
    ) {
        let route = self.route(path);
        let method = method_label(method);
        if outcome.is_some_and(|o| o == "einvoice-refused") {
            self.einvoice_refusals
                .get_or_create(&EInvoiceLabels {
                    route: route.clone(),
                })
                .inc();
        }
        self.durations
            .get_or_create(&RouteLabels {
                route: route.clone(),
                method,
            })
            .observe(took.as_secs_f64());
        self.requests
            .get_or_create(&RequestLabels {
                route,
                method,
                status,
            })
            .inc();
    }

    /// Counts a guest that ended in an error: stopped at its deadline, or trapped.
    pub(crate) fn guest_failed(&self, at_deadline: bool) {
        if at_deadline {
            self.deadline_stops.inc();
        } else {
            self.guest_traps.inc();
        }
    }

    /// The route label of `path`: its pattern while fewer than `ROUTES_MAX` are counted or
    /// it is one of them, else `other`.
    fn route(&self, path: &str) -> String {
        let Some(pattern) = pattern(path) else {
            return OTHER.into();
        };
        // Every request reads the set; only a route's first request writes it.
        let known = self.routes.read().unwrap_or_else(PoisonError::into_inner);
        if known.contains(&pattern) {
            return pattern;
        }
        drop(known);
        let mut routes = self.routes.write().unwrap_or_else(PoisonError::into_inner);
        if routes.len() >= ROUTES_MAX && !routes.contains(&pattern) {
            return OTHER.into();
        }
        routes.insert(pattern.clone());
        pattern
    }

    /// The exposition, with the gauges as read now: the instances serving and the pool's
    /// size, and the outbox's backlog (`None` when it could not be counted: the gauges
    /// keep what they last read).
    pub(crate) fn exposition(
        &self,
        instances_in_use: usize,
        instances_max: usize,
        outbox: Option<(u64, u64)>,
    ) -> String {
        self.instances_max.set(instances_max as i64);
        self.instances_in_use.set(instances_in_use as i64);
        if let Some((queued, failed)) = outbox {
            for (state, n) in [("queued", queued), ("failed", failed)] {
                self.outbox
                    .get_or_create(&OutboxLabels { state })
                    .set(n as i64);
            }
        }
        let mut text = String::new();
        prometheus_text::encode(&mut text, &self.registry)
            .expect("writing to a String does not fail");
        text
    }
}

/// The method as a label: one of the methods a client of the API may send, else `other`
/// (hyper takes any token as a method).
fn method_label(method: &hyper::Method) -> &'static str {
    use hyper::Method as M;
    match *method {
        M::GET => "GET",
        M::HEAD => "HEAD",
        M::POST => "POST",
        M::PUT => "PUT",
        M::DELETE => "DELETE",
        M::PATCH => "PATCH",
        M::OPTIONS => "OPTIONS",
        _ => OTHER,
    }
}

/// The route pattern of `path`: `/api` and its segments, each number as `{id}`. `None` for
/// a path no route of the API can have: outside `/api`, more than `SEGMENTS_MAX`
/// segments, or a segment that is neither a number nor a word of lowercase letters,
/// digits, `-` and `_`.
fn pattern(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/api")?;
    let mut out = String::from("/api");
    if rest.is_empty() {
        return Some(out);
    }
    let segments = rest.strip_prefix('/')?.split('/');
    for (i, segment) in segments.enumerate() {
        let word = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_';
        out.push('/');
        if i == SEGMENTS_MAX || segment.is_empty() || segment.len() > WORD_BYTES_MAX {
            return None;
        } else if segment.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str("{id}");
        } else if segment.bytes().all(word) {
            out.push_str(segment);
        } else {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    fn check(path: &str, expected: Option<&str>) {
        assert_eq!(super::pattern(path).as_deref(), expected, "{path}");
    }

    #[test]
    fn a_route_is_the_path_with_numbers_as_ids_and_anything_else_is_other() {
        check("/api", Some("/api"));
        check("/api/invoices", Some("/api/invoices"));
        check("/api/invoices/12", Some("/api/invoices/{id}"));
        check(
            "/api/invoices/12/e-invoice",
            Some("/api/invoices/{id}/e-invoice"),
        );
        check("/api/country-taxes/7", Some("/api/country-taxes/{id}"));
        check(
            "/api/_test/half-written-client",
            Some("/api/_test/half-written-client"),
        );
        check("/api/a/1/b/2", Some("/api/a/{id}/b/{id}"));
        check("/api/a/1/b/2/c", None);
        check("/", None);
        check("/apix", None);
        check("/index.html", None);
        check("/api/", None);
        check("/api/invoices/", None);
        check("/api//invoices", None);
        check("/api/Invoices", None);
        check("/api/invoices/12abc%20", None);
        check("/api/invoices/-1.5", None);
        check(&format!("/api/{}", "a".repeat(33)), None);
    }
}
