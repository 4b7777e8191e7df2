//! What the portal's pages say, in English and in German (the client's `locale` picks):
//! headings, buttons, notices, status names, and the PDF's labels, which the PDF itself
//! writes in English.

use std::borrow::Cow;

use crate::domain::documents::{DocKind, Shown};

/// The language of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lang {
    En,
    De,
}

impl Lang {
    pub(super) fn of(locale: &str) -> Lang {
        if locale.trim().to_ascii_lowercase().starts_with("de") {
            Lang::De
        } else {
            Lang::En
        }
    }

    pub(super) fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::De => "de",
        }
    }

    /// `en` or `de`, as this page speaks.
    pub(super) fn pick(self, en: &'static str, de: &'static str) -> &'static str {
        match self {
            Lang::En => en,
            Lang::De => de,
        }
    }

    /// The name of a kind of document.
    pub(super) fn kind(self, kind: DocKind) -> &'static str {
        match self {
            Lang::En => kind.title(),
            Lang::De => kind.spec().title_de,
        }
    }

    pub(super) fn status(self, shown: Shown) -> &'static str {
        let (en, de) = match shown {
            Shown::Draft => ("Draft", "Entwurf"),
            Shown::Open => ("Open", "Offen"),
            Shown::Overdue => ("Overdue", "Überfällig"),
            Shown::Paid => ("Paid", "Bezahlt"),
            Shown::Canceled => ("Canceled", "Storniert"),
            Shown::Won => ("Accepted", "Angenommen"),
            Shown::Lost => ("Declined", "Abgelehnt"),
            Shown::Cleared => ("Invoiced", "Abgerechnet"),
            Shown::Completed => ("Confirmed", "Bestätigt"),
            Shown::Created => ("Issued", "Ausgestellt"),
        };
        self.pick(en, de)
    }

    /// A label the PDF writes in English, in this page's language: a row of the meta
    /// block, a column of the item table, a row of the totals, a line of an item.
    pub(super) fn label<'a>(self, kind: DocKind, english: &'a str) -> Cow<'a, str> {
        if self == Lang::En {
            return Cow::Borrowed(english);
        }
        if english
            .strip_suffix(" number")
            .is_some_and(|k| k == kind.title())
        {
            return Cow::Borrowed("Nummer");
        }
        if let Some(rest) = english.strip_prefix("Reduction ") {
            return Cow::Owned(format!("Rabatt {rest}"));
        }
        Cow::Borrowed(match english {
            "Date" => "Datum",
            "Due date" => "Fällig am",
            "Valid until" => "Gültig bis",
            "Client number" => "Kundennummer",
            "Delivery date" => "Lieferdatum",
            "Supply date" => "Leistungsdatum",
            "Item" => "Bezeichnung",
            "Quantity" => "Menge",
            "Unit" => "Einheit",
            "Unit price" => "Einzelpreis",
            "Tax" => "USt.",
            "Total" => "Gesamt",
            "Subtotal" => "Zwischensumme",
            "Total net" => "Summe netto",
            "Optional: not included in the total" => "Optional: nicht in der Summe enthalten",
            other => other,
        })
    }
}
