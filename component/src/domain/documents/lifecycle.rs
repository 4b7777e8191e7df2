//! The lifecycle of a document: the stored `Status`, the `Shown` status (with the derived
//! OVERDUE), the `Event`s that happen to a document, and the one `transition` function that
//! decides which event is allowed in which state. Pure: no storage, no clock.

use super::super::Error;
use super::kind::DocKind;

/// The stored state. OVERDUE is not stored: an OPEN document past its due date reads as
/// OVERDUE (see `Shown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Draft,
    Open,
    Paid,
    Canceled,
}

impl Status {
    /// How the status shows when that does not depend on the day: every status but OPEN
    /// (OPEN or OVERDUE by the due date).
    pub fn shown_as_stored(self) -> Option<Shown> {
        match self {
            Status::Draft => Some(Shown::Draft),
            Status::Paid => Some(Shown::Paid),
            Status::Canceled => Some(Shown::Canceled),
            Status::Open => None,
        }
    }
}

/// The stored statuses that show as themselves.
pub const SHOWN_AS_STORED: [Status; 3] = [Status::Draft, Status::Paid, Status::Canceled];

/// The status as the API shows and filters it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shown {
    Draft,
    Open,
    Overdue,
    Paid,
    Canceled,
}

impl Shown {
    pub const ALL: [Shown; 5] = [
        Shown::Draft,
        Shown::Open,
        Shown::Overdue,
        Shown::Paid,
        Shown::Canceled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Shown::Draft => "DRAFT",
            Shown::Open => "OPEN",
            Shown::Overdue => "OVERDUE",
            Shown::Paid => "PAID",
            Shown::Canceled => "CANCELED",
        }
    }

    pub fn parse(s: &str) -> Option<Shown> {
        Shown::ALL
            .into_iter()
            .find(|st| st.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// What happens to a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Edit,
    Complete,
    /// A payment was booked; `settled` when it pays the document in full or is marked so.
    Pay {
        settled: bool,
    },
    /// A payment was deleted; `settled` when the remaining payments still settle it.
    Unpay {
        settled: bool,
    },
    Cancel,
    Uncancel {
        settled: bool,
    },
}

fn state_error(state: Status, what: &str) -> String {
    let shown = match state {
        Status::Draft => "DRAFT",
        Status::Open => "OPEN",
        Status::Paid => "PAID",
        Status::Canceled => "CANCELED",
    };
    format!("{what}; this {{doc}} is {shown}")
}

/// The lifecycle: the one place that decides which event is allowed in which state.
/// Refusals name the document as `{doc}`; `refusal` puts the kind's name in.
pub fn transition(state: Status, event: Event) -> Result<Status, String> {
    use Event::*;
    use Status::*;
    let settle = |settled: bool| if settled { Paid } else { Open };
    match (state, event) {
        (Draft, Edit) => Ok(Draft),
        (Open | Paid | Canceled, Edit) => {
            Err(state_error(state, "only a DRAFT {doc} can be changed"))
        }
        (Draft, Complete) => Ok(Open),
        (Open | Paid | Canceled, Complete) => {
            Err(state_error(state, "only a DRAFT {doc} can be completed"))
        }
        (Open, Pay { settled }) => Ok(settle(settled)),
        (Draft | Paid | Canceled, Pay { .. }) => Err(state_error(
            state,
            "payments can be booked only for OPEN or OVERDUE {doc}s",
        )),
        (Open | Paid, Unpay { settled }) => Ok(settle(settled)),
        (Canceled, Unpay { .. }) => Ok(Canceled),
        (Draft, Unpay { .. }) => Err(state_error(state, "a draft has no payments")),
        (Open | Paid, Cancel) => Ok(Canceled),
        (Draft, Cancel) => Err(state_error(
            state,
            "a DRAFT {doc} cannot be canceled (delete it instead)",
        )),
        (Canceled, Cancel) => Err(state_error(state, "the {doc} is already canceled")),
        (Canceled, Uncancel { settled }) => Ok(settle(settled)),
        (Draft | Open | Paid, Uncancel { .. }) => Err(state_error(
            state,
            "only a CANCELED {doc} can be uncanceled",
        )),
    }
}

/// A lifecycle refusal as the client reads it.
pub fn refusal(kind: DocKind, message: String) -> Error {
    Error::invalid(message.replace("{doc}", kind.label()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lifecycle_allows_only_its_transitions() {
        use Event::*;
        use Status::*;
        let ok = |s, e, want| assert_eq!(transition(s, e), Ok(want), "{s:?} {e:?}");
        let no = |s, e| assert!(transition(s, e).is_err(), "{s:?} {e:?}");
        ok(Draft, Edit, Draft);
        no(Open, Edit);
        ok(Draft, Complete, Open);
        no(Open, Complete);
        no(Draft, Pay { settled: false });
        ok(Open, Pay { settled: false }, Open);
        ok(Open, Pay { settled: true }, Paid);
        no(Paid, Pay { settled: true });
        ok(Paid, Unpay { settled: false }, Open);
        ok(Open, Cancel, Canceled);
        ok(Paid, Cancel, Canceled);
        no(Draft, Cancel);
        no(Canceled, Cancel);
        ok(Canceled, Uncancel { settled: true }, Paid);
        no(Open, Uncancel { settled: false });
    }
}
