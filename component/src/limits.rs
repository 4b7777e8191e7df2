//! Every input has a named limit, here and nowhere else; what reading an e-invoice (its
//! XML, the PDF it came in) may cost is bounded in `faktura_einvoice::limits`.

/// Largest request body accepted, in bytes (a template file of ~15 MiB in base64 fits).
pub const BODY_BYTES_MAX: usize = 20 * 1024 * 1024;

/// Largest e-invoice file an incoming invoice may be imported from (decoded).
pub const INCOMING_FILE_BYTES_MAX: usize = 10 * 1024 * 1024;
/// Deepest element nesting of a request document.
pub const XML_DEPTH_MAX: usize = 16;
/// Most elements in one request document.
pub const XML_ELEMENTS_MAX: usize = 20_000;
/// Longest text of one element, in bytes (base64 files are the long ones).
pub const TEXT_BYTES_MAX: usize = BODY_BYTES_MAX;
/// Longest query string, in bytes.
pub const QUERY_BYTES_MAX: usize = 8 * 1024;
/// Largest page of a list.
pub const PER_PAGE_MAX: u32 = 1000;
/// Page size when the request names none.
pub const PER_PAGE_DEFAULT: u32 = 100;
/// Largest page number (keeps offsets far from overflow).
pub const PAGE_MAX: u32 = 1_000_000;
/// Longest ordinary text field, in characters.
pub const TEXT_CHARS_MAX: usize = 10_000;
/// Index entries (keys, and the few bytes some keep) fetched from the store per scan call.
/// Three in unit tests, so that their few entries span several calls.
#[cfg(not(test))]
pub const INDEX_SCAN_BATCH: u32 = 4096;
#[cfg(test)]
pub const INDEX_SCAN_BATCH: u32 = 3;
/// Entries fetched from the store per scan call.
pub const SCAN_BATCH: u32 = 512;
/// Documents read in one call into the store when a request reads many by id (the matches
/// of a filter no index answers alone, a page's documents): few calls, a bounded
/// batch in memory. Two in unit tests, so that their few documents span several batches
/// (`http::grouping_tests`).
#[cfg(not(test))]
pub const LOAD_BATCH: usize = 256;
#[cfg(test)]
pub const LOAD_BATCH: usize = 2;
/// Unfiltered pages starting at most this far in are read straight from the records;
/// deeper ones collect ids from an index first.
pub const DIRECT_PAGE_START_MAX: usize = 5_000;
/// Keys of one order_by parameter.
pub const ORDER_KEYS_MAX: usize = 4;
/// Items of one document.
pub const ITEMS_MAX: usize = 1000;
/// Largest amount or price, in absolute value.
pub const AMOUNT_MAX: i64 = 1_000_000_000_000;
/// Recipients of one e-mail (to, cc and bcc together).
pub const RECIPIENTS_MAX: usize = 50;
/// Payments of one document.
pub const PAYMENTS_MAX: usize = 1000;
/// Comments of one document (the service's own included).
pub const COMMENTS_MAX: usize = 10_000;
/// Tags of one document.
pub const TAGS_MAX: usize = 100;
/// Longest tag name, in characters.
pub const TAG_NAME_CHARS_MAX: usize = 100;
/// Most days from a document's date to its due or cash discount date (payment terms).
pub const TERM_DAYS_MAX: i64 = 3650;
/// Most digits a number is padded to (`number_length`).
pub const NUMBER_LENGTH_MAX: i64 = 20;
/// Longest number prefix (`number_pre`), in characters.
pub const NUMBER_PRE_CHARS_MAX: usize = 40;
/// Shortest and longest API key, in characters.
pub const API_KEY_CHARS_MIN: usize = 16;
pub const API_KEY_CHARS_MAX: usize = 256;
/// Longest account name, in characters.
pub const ACCOUNT_NAME_CHARS_MAX: usize = 200;
/// Longest file name the service makes, in characters.
pub const FILENAME_CHARS_MAX: usize = 120;
/// Most paragraphs read from a template file.
pub const TEMPLATE_PARAGRAPHS_MAX: usize = 200;
/// Largest uncompressed part of a docx template that is read, in bytes.
pub const DOCX_PART_BYTES_MAX: u64 = 8 * 1024 * 1024;
/// Longest `public_url` setting, in bytes (a portal link is it and about 60 bytes more).
pub const PUBLIC_URL_BYTES_MAX: usize = 200;
/// Requests one portal link (a document's, or a client's session) may make in a minute.
pub const PORTAL_REQUESTS_PER_MINUTE: u32 = 60;
/// Longest name of the person who accepts or declines an offer in the portal, in characters.
pub const PORTAL_NAME_CHARS_MAX: usize = 100;
/// Longest comment sent from the portal, in characters.
pub const PORTAL_COMMENT_CHARS_MAX: usize = 2000;
/// Largest form body the portal reads, in bytes.
pub const PORTAL_FORM_BYTES_MAX: usize = 16 * 1024;
/// Records a migration step changes in one write transaction.
pub const MIGRATION_BATCH: u32 = 1000;
/// Webhooks of one account.
pub const WEBHOOKS_MAX: usize = 20;
/// Longest webhook URL, in characters.
pub const WEBHOOK_URL_CHARS_MAX: usize = 2000;
/// The time a receiver has for one delivery, from connecting to the end of its answer.
pub const WEBHOOK_TIMEOUT_MS: u64 = 10_000;
/// Most of a receiver's answer that is read.
pub const WEBHOOK_ANSWER_BYTES_MAX: usize = 64 * 1024;
/// Most of a receiver's answer that the delivery log keeps.
pub const WEBHOOK_ANSWER_LOGGED_BYTES_MAX: usize = 1024;
/// Deliveries sent in one go (all at once, so that a slow receiver holds up none of the
/// others), and of those at most this many to one webhook.
pub const DELIVERY_BATCH: u32 = 128;
pub const DELIVERY_BATCH_PER_WEBHOOK: usize = 32;
/// How long one upkeep pass goes on sending deliveries go after go while some are due.
pub const DELIVERY_PASS_SECONDS: i64 = 10;
/// Pending deliveries looked at for one go.
pub const DELIVERY_SCAN: u32 = 1000;
/// Deliveries past their keeping removed per account and upkeep.
pub const DELIVERY_EXPIRE_BATCH: u32 = 500;

/// Most bytes of writes a write transaction holds back to send together
/// (`caps::Held`, the store's `write-many`); more are sent at once.
pub const HELD_WRITE_BYTES_MAX: usize = 1024 * 1024;

/// Most times a write transaction runs when other writers keep getting in the way (a
/// serialization failure of a networked store); then 503.
pub const WRITE_TRIES: u32 = 16;
