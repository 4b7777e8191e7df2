//! `ApiError`: every failure of a request maps to exactly one status and an `<errors>` body.

use crate::caps::StoreError;
use crate::codec::{DecodeError, Element};
use crate::domain;

#[derive(Debug)]
pub enum ApiError {
    /// 400: malformed body, missing or invalid fields, rule violations; one message each.
    BadRequest(Vec<String>),
    /// 401: no API key, or one that matches no user.
    Unauthorized,
    /// 403: the key is valid but its user may not do this.
    Forbidden(String),
    /// 404: no such path, or no such record in the caller's account.
    NotFound(String),
    /// 409: the request clashes with a record that exists; the message names it.
    Duplicate(String),
    /// 422: an `Idempotency-Key` sent again with another request than its first.
    Unprocessable(String),
    /// 405: the path exists but not with this method.
    MethodNotAllowed(Vec<&'static str>),
    /// 413: the body is over `limits::BODY_BYTES_MAX`.
    PayloadTooLarge,
    /// 414: the query string is over `limits::QUERY_BYTES_MAX`.
    UriTooLong,
    /// 415: a request body in a format the API does not read.
    UnsupportedMediaType(String),
    /// 413: a change too large for the store to take in one transaction.
    TooLarge(String),
    /// 429: the account used up its requests of the window (limit, reset as Unix seconds).
    TooManyRequests(u32, u64),
    /// 500: a bug or a storage failure; the details go to the log, never to the client.
    Internal(String),
    /// 503: a capability the request needs (PDF rendering, mail) failed or is missing; the
    /// message says which, and the request can be tried again.
    Unavailable(String),
    /// 507: the store's disk is full, so the change could not be made durable; the message
    /// says whether it may have been made.
    InsufficientStorage(String),
    /// Another writer got in the way (a serialization failure of a networked store):
    /// `in_write` runs the transaction again; 503 if that keeps happening.
    Busy,
}

impl ApiError {
    pub fn bad(msg: impl Into<String>) -> ApiError {
        ApiError::BadRequest(vec![msg.into()])
    }

    /// `value` when no error was found, else a 400 that lists every error at once.
    pub fn checked<T>(value: T, errors: Vec<String>) -> Result<T, ApiError> {
        if errors.is_empty() {
            Ok(value)
        } else {
            Err(ApiError::BadRequest(errors))
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            ApiError::BadRequest(_) => 400,
            ApiError::Unauthorized => 401,
            ApiError::Forbidden(_) => 403,
            ApiError::NotFound(_) => 404,
            ApiError::Duplicate(_) => 409,
            ApiError::Unprocessable(_) => 422,
            ApiError::MethodNotAllowed(_) => 405,
            ApiError::PayloadTooLarge | ApiError::TooLarge(_) => 413,
            ApiError::UriTooLong => 414,
            ApiError::UnsupportedMediaType(_) => 415,
            ApiError::TooManyRequests(..) => 429,
            ApiError::Internal(_) => 500,
            ApiError::Unavailable(_) | ApiError::Busy => 503,
            ApiError::InsufficientStorage(_) => 507,
        }
    }

    pub fn messages(&self) -> Vec<String> {
        match self {
            ApiError::BadRequest(m) => m.clone(),
            ApiError::Unauthorized => vec![
                "authentication required: send a valid API key in the X-ServiceApiKey header \
                 or the api_key query parameter"
                    .into(),
            ],
            ApiError::Forbidden(m)
            | ApiError::NotFound(m)
            | ApiError::Duplicate(m)
            | ApiError::Unprocessable(m)
            | ApiError::UnsupportedMediaType(m)
            | ApiError::TooLarge(m)
            | ApiError::Unavailable(m)
            | ApiError::InsufficientStorage(m) => vec![m.clone()],
            ApiError::MethodNotAllowed(allowed) => {
                vec![format!("method not allowed; use {}", allowed.join(", "))]
            }
            ApiError::UriTooLong => vec![format!(
                "the query string is longer than {} bytes",
                crate::limits::QUERY_BYTES_MAX
            )],
            ApiError::PayloadTooLarge => vec![format!(
                "the request body is larger than {} bytes",
                crate::limits::BODY_BYTES_MAX
            )],
            ApiError::TooManyRequests(limit, reset) => vec![format!(
                "rate limit of {limit} requests per 15 minutes exceeded; the window resets at {}",
                crate::domain::date::format_datetime(*reset as i64)
            )],
            ApiError::Internal(_) => vec!["internal error".into()],
            ApiError::Busy => vec![
                "the store was busy with other changes to the same data and this one was not \
                 made; send the request again"
                    .into(),
            ],
        }
    }

    pub fn to_element(&self) -> Element {
        Element::node(
            "errors",
            self.messages()
                .into_iter()
                .map(|m| Element::text("error", m))
                .collect(),
        )
    }
}

impl From<domain::Error> for ApiError {
    fn from(e: domain::Error) -> ApiError {
        match e {
            domain::Error::Invalid(m) => ApiError::BadRequest(m),
            domain::Error::NotFound(m) => ApiError::NotFound(m),
            domain::Error::Duplicate(m) => ApiError::Duplicate(m),
            domain::Error::Forbidden(m) => ApiError::Forbidden(m),
            domain::Error::Unavailable(m) => ApiError::Unavailable(m),
            domain::Error::Store(e) => ApiError::from(e),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::TooLarge => ApiError::TooLarge(
                "the change is larger than the store takes in one request".into(),
            ),
            StoreError::UnknownOutcome(_) => ApiError::Unavailable(
                "the store's connection was lost while the change was committed: it may or \
                 may not have been made; read it back before sending it again, or send it \
                 again with the same Idempotency-Key"
                    .into(),
            ),
            StoreError::Conflict => ApiError::Busy,
            StoreError::Unavailable(m) => {
                eprintln!("faktura: store unavailable: {m}");
                ApiError::Unavailable(
                    "the store cannot be reached now; nothing was changed, send the request \
                     again later"
                        .into(),
                )
            }
            StoreError::Full(m) => {
                eprintln!("faktura: store full: {m}");
                ApiError::InsufficientStorage(
                    "the server's disk is full and the change could not be made durable: it \
                     may not have been made; read it back before sending it again, or send it \
                     again with the same Idempotency-Key"
                        .into(),
                )
            }
            StoreError::Backend(_) => ApiError::Internal(e.to_string()),
        }
    }
}

impl From<DecodeError> for ApiError {
    fn from(e: DecodeError) -> ApiError {
        ApiError::BadRequest(vec![e.0])
    }
}
