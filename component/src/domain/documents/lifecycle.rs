//! The lifecycle of a document: the stored `Status`, the `Shown` status (with the derived
//! OVERDUE), the `Event`s that happen to a document, and the one `transition` function that
//! decides which event is allowed in which state, for each kind's `Lifecycle`. Pure: no
//! storage, no clock.

use super::super::Error;
use super::kind::{DocKind, Lifecycle};

/// The stored state. OVERDUE is not stored: an OPEN document of a kind that falls due
/// reads as OVERDUE past its due date (see `Shown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Draft,
    Open,
    Paid,
    Canceled,
    /// An offer the client accepted.
    Won,
    /// An offer the client declined.
    Lost,
    /// An offer or confirmation that was invoiced.
    Cleared,
    /// A confirmation sent.
    Completed,
    /// A delivery note made.
    Created,
}

impl Status {
    pub const ALL: [Status; 9] = [
        Status::Draft,
        Status::Open,
        Status::Paid,
        Status::Canceled,
        Status::Won,
        Status::Lost,
        Status::Cleared,
        Status::Completed,
        Status::Created,
    ];

    /// How the status shows when that does not depend on the day: every status but OPEN
    /// (OPEN or OVERDUE by the due date, where the kind falls due).
    pub fn shown_as_stored(self) -> Option<Shown> {
        Some(match self {
            Status::Draft => Shown::Draft,
            Status::Paid => Shown::Paid,
            Status::Canceled => Shown::Canceled,
            Status::Won => Shown::Won,
            Status::Lost => Shown::Lost,
            Status::Cleared => Shown::Cleared,
            Status::Completed => Shown::Completed,
            Status::Created => Shown::Created,
            Status::Open => return None,
        })
    }

    /// The statuses a document of the lifecycle can be in.
    pub fn of(lifecycle: Lifecycle) -> &'static [Status] {
        use Status::*;
        match lifecycle {
            Lifecycle::Billing => &[Draft, Open, Paid, Canceled],
            Lifecycle::Offer => &[Draft, Open, Won, Lost, Canceled, Cleared],
            Lifecycle::Confirmation => &[Draft, Completed, Canceled, Cleared],
            Lifecycle::Delivery => &[Draft, Created],
            Lifecycle::Template => &[Draft],
        }
    }
}

/// The status as the API shows and filters it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shown {
    Draft,
    Open,
    Overdue,
    Paid,
    Canceled,
    Won,
    Lost,
    Cleared,
    Completed,
    Created,
}

impl Shown {
    pub const ALL: [Shown; 10] = [
        Shown::Draft,
        Shown::Open,
        Shown::Overdue,
        Shown::Paid,
        Shown::Canceled,
        Shown::Won,
        Shown::Lost,
        Shown::Cleared,
        Shown::Completed,
        Shown::Created,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Shown::Draft => "DRAFT",
            Shown::Open => "OPEN",
            Shown::Overdue => "OVERDUE",
            Shown::Paid => "PAID",
            Shown::Canceled => "CANCELED",
            Shown::Won => "WON",
            Shown::Lost => "LOST",
            Shown::Cleared => "CLEARED",
            Shown::Completed => "COMPLETED",
            Shown::Created => "CREATED",
        }
    }

    pub fn parse(s: &str) -> Option<Shown> {
        Shown::ALL
            .into_iter()
            .find(|st| st.as_str().eq_ignore_ascii_case(s.trim()))
    }

    /// The statuses a document of `kind` can show, in the order the API lists them.
    pub fn of(kind: DocKind) -> Vec<Shown> {
        let mut out: Vec<Shown> = Vec::new();
        for status in Status::of(kind.lifecycle()) {
            match status.shown_as_stored() {
                Some(shown) => out.push(shown),
                None => {
                    out.push(Shown::Open);
                    if kind.spec().falls_due {
                        out.push(Shown::Overdue);
                    }
                }
            }
        }
        out
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
    /// The client accepted an offer.
    Win,
    /// The client declined an offer.
    Lose,
    /// The document was invoiced.
    Clear,
    /// The invoicing was taken back.
    Unclear,
}

impl Event {
    /// The event's name in refusals.
    fn name(self) -> &'static str {
        match self {
            Event::Edit => "changed",
            Event::Complete => "completed",
            Event::Pay { .. } => "paid",
            Event::Unpay { .. } => "unpaid",
            Event::Cancel => "canceled",
            Event::Uncancel { .. } => "uncanceled",
            Event::Win => "won",
            Event::Lose => "lost",
            Event::Clear => "cleared",
            Event::Unclear => "uncleared",
        }
    }
}

fn state_error(state: Status, what: &str) -> String {
    let shown = match state.shown_as_stored() {
        Some(s) => s.as_str(),
        None => "OPEN",
    };
    format!("{what}; this {{doc}} is {shown}")
}

/// The lifecycle: the one place that decides which event is allowed in which state.
/// Refusals name the document as `{doc}`; `refusal` puts the kind's name in.
pub fn transition(kind: DocKind, state: Status, event: Event) -> Result<Status, String> {
    match kind.lifecycle() {
        Lifecycle::Billing => billing(state, event),
        Lifecycle::Offer => offer(state, event),
        Lifecycle::Confirmation => confirmation(state, event),
        Lifecycle::Delivery => delivery(state, event),
        Lifecycle::Template => common(state, event),
    }
}

/// What no lifecycle allows, or what every one decides alike: edits in DRAFT only.
fn common(state: Status, event: Event) -> Result<Status, String> {
    match (state, event) {
        (Status::Draft, Event::Edit) => Ok(Status::Draft),
        (_, Event::Edit) => Err(state_error(state, "only a DRAFT {doc} can be changed")),
        (Status::Draft, Event::Cancel) => Err(state_error(
            state,
            "a DRAFT {doc} cannot be canceled (delete it instead)",
        )),
        (Status::Canceled, Event::Cancel) => {
            Err(state_error(state, "the {doc} is already canceled"))
        }
        (_, Event::Complete) => Err(state_error(state, "only a DRAFT {doc} can be completed")),
        (_, Event::Uncancel { .. }) => Err(state_error(
            state,
            "only a CANCELED {doc} can be uncanceled",
        )),
        (_, event) => Err(state_error(
            state,
            &format!("this {{doc}} cannot be {} now", event.name()),
        )),
    }
}

fn billing(state: Status, event: Event) -> Result<Status, String> {
    use Event::*;
    use Status::*;
    let settle = |settled: bool| if settled { Paid } else { Open };
    match (state, event) {
        (Draft, Complete) => Ok(Open),
        (Open, Pay { settled }) => Ok(settle(settled)),
        (Draft | Paid | Canceled, Pay { .. }) => Err(state_error(
            state,
            "payments can be booked only for OPEN or OVERDUE {doc}s",
        )),
        (Open | Paid, Unpay { settled }) => Ok(settle(settled)),
        (Canceled, Unpay { .. }) => Ok(Canceled),
        (Draft, Unpay { .. }) => Err(state_error(state, "a draft has no payments")),
        (Open | Paid, Cancel) => Ok(Canceled),
        (Canceled, Uncancel { settled }) => Ok(settle(settled)),
        (Draft | Open | Paid | Canceled, Edit | Complete | Cancel | Uncancel { .. }) => {
            common(state, event)
        }
        (_, Win | Lose | Clear | Unclear) | (Won | Lost | Cleared | Completed | Created, _) => {
            common(state, event)
        }
    }
}

fn offer(state: Status, event: Event) -> Result<Status, String> {
    use Event::*;
    use Status::*;
    match (state, event) {
        (Draft, Complete) => Ok(Open),
        (Open, Win) => Ok(Won),
        (Open, Lose) => Ok(Lost),
        (Won | Lost, Win | Lose) => {
            Err(state_error(state, "only an OPEN {doc} can be won or lost"))
        }
        (Won, Clear) => Ok(Cleared),
        (Cleared, Unclear) => Ok(Won),
        (Open | Won | Lost, Cancel) => Ok(Canceled),
        (Cleared, Cancel) => Err(state_error(
            state,
            "a CLEARED {doc} was invoiced: unclear it before it is canceled",
        )),
        (Canceled, Uncancel { .. }) => Ok(Open),
        (_, Pay { .. } | Unpay { .. }) => Err(state_error(state, "a {doc} takes no payments")),
        (_, Edit | Complete | Cancel | Uncancel { .. } | Win | Lose | Clear | Unclear) => {
            common(state, event)
        }
    }
}

fn confirmation(state: Status, event: Event) -> Result<Status, String> {
    use Event::*;
    use Status::*;
    match (state, event) {
        (Draft, Complete) => Ok(Completed),
        (Completed, Clear) => Ok(Cleared),
        (Cleared, Unclear) => Ok(Completed),
        (Completed, Cancel) => Ok(Canceled),
        (Cleared, Cancel) => Err(state_error(
            state,
            "a CLEARED {doc} was invoiced: unclear it before it is canceled",
        )),
        (Canceled, Uncancel { .. }) => Ok(Completed),
        (_, Pay { .. } | Unpay { .. }) => Err(state_error(state, "a {doc} takes no payments")),
        (_, Edit | Complete | Cancel | Uncancel { .. } | Win | Lose | Clear | Unclear) => {
            common(state, event)
        }
    }
}

fn delivery(state: Status, event: Event) -> Result<Status, String> {
    use Event::*;
    use Status::*;
    match (state, event) {
        (Draft, Complete) => Ok(Created),
        (_, Cancel | Uncancel { .. }) => Err(state_error(state, "a {doc} cannot be canceled")),
        (_, Pay { .. } | Unpay { .. }) => Err(state_error(state, "a {doc} takes no payments")),
        (_, Edit | Complete | Win | Lose | Clear | Unclear) => common(state, event),
    }
}

/// A lifecycle refusal as the client reads it.
pub fn refusal(kind: DocKind, message: String) -> Error {
    Error::invalid(message.replace("{doc}", kind.label()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(kind: DocKind, allowed: &[(Status, Event, Status)]) {
        use Event::*;
        let events = [
            Edit,
            Complete,
            Pay { settled: false },
            Pay { settled: true },
            Unpay { settled: false },
            Unpay { settled: true },
            Cancel,
            Uncancel { settled: false },
            Uncancel { settled: true },
            Win,
            Lose,
            Clear,
            Unclear,
        ];
        for state in Status::ALL {
            for event in events {
                let want = allowed
                    .iter()
                    .find(|(s, e, _)| *s == state && *e == event)
                    .map(|(_, _, to)| *to);
                let got = transition(kind, state, event);
                match want {
                    Some(to) => assert_eq!(got, Ok(to), "{kind:?} {state:?} {event:?}"),
                    // A canceled billing document stays canceled when a payment goes.
                    None if kind.lifecycle() == Lifecycle::Billing
                        && state == Status::Canceled
                        && matches!(event, Unpay { .. }) =>
                    {
                        assert_eq!(got, Ok(Status::Canceled))
                    }
                    None => assert!(got.is_err(), "{kind:?} {state:?} {event:?}: {got:?}"),
                }
            }
        }
    }

    #[test]
    fn each_lifecycle_allows_only_its_transitions() {
        use Event::*;
        use Status::*;
        let billing = [
            (Draft, Edit, Draft),
            (Draft, Complete, Open),
            (Open, Pay { settled: false }, Open),
            (Open, Pay { settled: true }, Paid),
            (Open, Unpay { settled: false }, Open),
            (Open, Unpay { settled: true }, Paid),
            (Paid, Unpay { settled: false }, Open),
            (Paid, Unpay { settled: true }, Paid),
            (Open, Cancel, Canceled),
            (Paid, Cancel, Canceled),
            (Canceled, Uncancel { settled: false }, Open),
            (Canceled, Uncancel { settled: true }, Paid),
        ];
        check(DocKind::Invoice, &billing);
        check(DocKind::CreditNote, &billing);
        check(
            DocKind::Offer,
            &[
                (Draft, Edit, Draft),
                (Draft, Complete, Open),
                (Open, Win, Won),
                (Open, Lose, Lost),
                (Won, Clear, Cleared),
                (Cleared, Unclear, Won),
                (Open, Cancel, Canceled),
                (Won, Cancel, Canceled),
                (Lost, Cancel, Canceled),
                (Canceled, Uncancel { settled: false }, Open),
                (Canceled, Uncancel { settled: true }, Open),
            ],
        );
        check(
            DocKind::Confirmation,
            &[
                (Draft, Edit, Draft),
                (Draft, Complete, Completed),
                (Completed, Clear, Cleared),
                (Cleared, Unclear, Completed),
                (Completed, Cancel, Canceled),
                (Canceled, Uncancel { settled: false }, Completed),
                (Canceled, Uncancel { settled: true }, Completed),
            ],
        );
        check(
            DocKind::DeliveryNote,
            &[(Draft, Edit, Draft), (Draft, Complete, Created)],
        );
    }

    #[test]
    fn a_refusal_names_the_state() {
        let e = transition(DocKind::Offer, Status::Lost, Event::Clear).unwrap_err();
        assert!(e.ends_with("this {doc} is LOST"), "{e}");
    }
}
