//! The portal's HTML: a document's page, a client's session, and the pages that say why a
//! link opens nothing. Every text that comes from the store or the request is written
//! escaped (`esc`, the `(text)` parts of `html!`); markup is written only from literals
//! and static texts here. The pages
//! need no script, no inline style and nothing from another origin: one stylesheet
//! (`style.css`, beside the pages), forms that post back to the page's own address, the
//! GiroCode as inline SVG.

use std::fmt::Write as _;

use super::texts::Lang;
use crate::domain::documents::{DocKind, Shown};
use crate::domain::portal::{ClientPage, DocumentPage, Listed, OfferState, Seller};

/// Writes a text into HTML, escaped (also inside attribute values). Every markup byte is
/// ASCII, so the text is cut only at character boundaries.
pub(super) fn esc(m: &mut String, text: &str) {
    let mut from = 0;
    for (at, byte) in text.bytes().enumerate() {
        let entity = match byte {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        m.push_str(&text[from..at]);
        m.push_str(entity);
        from = at + 1;
    }
    m.push_str(&text[from..]);
}

/// Writes a text of several lines, each escaped, joined by line breaks.
fn lines(m: &mut String, text: &str) {
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            m.push_str("<br>");
        }
        esc(m, line);
    }
}

/// Writes markup to a page: each literal as it is, each `(text)` escaped (`esc`), each
/// `[markup]` as it is, which must be a `&'static str` of this file; a page is written
/// in pieces, without formatting (the portal's pages are its most frequent answers).
macro_rules! html {
    ($m:expr; $($part:tt)*) => {{
        let m: &mut String = $m;
        $(html!(@part m, $part);)*
    }};
    (@part $m:ident, $markup:literal) => {
        $m.push_str($markup)
    };
    (@part $m:ident, ($text:expr)) => {
        esc($m, $text)
    };
    (@part $m:ident, [$markup:expr]) => {{
        let markup: &'static str = $markup;
        $m.push_str(markup)
    }};
}

/// What the page says happened, after a form was sent (`?done=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Done {
    Accepted,
    Declined,
    Commented,
}

impl Done {
    pub(super) fn parse(s: &str) -> Option<Done> {
        match s {
            "accept" => Some(Done::Accepted),
            "decline" => Some(Done::Declined),
            "comment" => Some(Done::Commented),
            _ => None,
        }
    }
}

/// A page in its frame: head, the seller's header, `main` (written by `main`), the
/// seller's footer.
fn frame(
    lang: Lang,
    title: &str,
    seller: Option<&Seller>,
    main: impl FnOnce(&mut String),
) -> String {
    let mut out = String::with_capacity(8192);
    let m = &mut out;
    html!(m; "<!doctype html>\n<html lang=\"" [lang.code()] "\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"robots\" content=\"noindex, nofollow\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>" (title) "</title>\n<link rel=\"stylesheet\" href=\"style.css\">\n</head>\n<body>\n");
    if let Some(seller) = seller.filter(|s| !s.name.is_empty()) {
        html!(m; "<header class=\"masthead\"><div class=\"wrap\"><p class=\"seller-name\">"
            (&seller.name) "</p>");
        if !seller.address.is_empty() {
            html!(m; "<p class=\"seller-address\">" (&seller.address.join(" · ")) "</p>");
        }
        m.push_str("</div></header>\n");
    }
    m.push_str("<main class=\"wrap\">\n");
    main(m);
    m.push_str("</main>\n");
    if let Some(seller) = seller {
        footer(m, lang, seller);
    }
    m.push_str("</body>\n</html>\n");
    out
}

/// The seller's name and how to reach them: the parts given, separated by dots.
fn footer(m: &mut String, lang: Lang, seller: &Seller) {
    let start = m.len();
    let separate = |m: &mut String| {
        m.push_str(if m.len() == start {
            "<footer class=\"wrap site-footer\"><p>"
        } else {
            " <span aria-hidden=\"true\">·</span> "
        });
    };
    if !seller.name.is_empty() {
        separate(m);
        html!(m; "<strong>" (&seller.name) "</strong>");
    }
    for line in &seller.address {
        separate(m);
        esc(m, line);
    }
    if !seller.email.is_empty() {
        separate(m);
        html!(m; "<a href=\"mailto:" (&seller.email) "\">" (&seller.email) "</a>");
    }
    if !seller.phone.is_empty() {
        let dial: String = seller
            .phone
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == '+')
            .collect();
        separate(m);
        html!(m; "<a href=\"tel:" (&dial) "\">" (&seller.phone) "</a>");
    }
    if !seller.vat_number.is_empty() {
        separate(m);
        html!(m; [lang.pick("VAT ID", "USt-IdNr.")] " " (&seller.vat_number));
    }
    if m.len() > start {
        m.push_str("</p></footer>\n");
    }
}

/// The class of a status badge.
fn status_class(shown: Shown) -> &'static str {
    match shown {
        Shown::Open | Shown::Completed | Shown::Created | Shown::Draft => "status-open",
        Shown::Overdue => "status-overdue",
        Shown::Paid | Shown::Won | Shown::Cleared => "status-done",
        Shown::Canceled | Shown::Lost => "status-closed",
    }
}

/// A document's page. `token` is the link's own token: the page's forms and downloads are
/// addressed relative to it, so that the page works behind any `public_url`.
pub(super) fn document(
    page: &DocumentPage,
    token: &str,
    form_token: &str,
    done: Option<Done>,
) -> String {
    let lang = Lang::of(&page.locale);
    let heading = heading(lang, page);
    let number = number(page);
    let title = format!("{heading} {number} – {}", page.seller.name);
    frame(
        lang,
        title.trim_end_matches(" – "),
        Some(&page.seller),
        |m| {
            if let Some(done) = done {
                done_notice(m, lang, done);
            }
            html!(m; "<section class=\"doc-head\"><p class=\"kind\">" (heading) "</p><h1>"
                (number) "</h1><p class=\"status " [status_class(page.shown)] "\">"
                (lang.status(page.shown)) "</p></section>\n<div class=\"overview\">\n");
            facts_card(m, lang, page);
            if let Some(p) = &page.payment {
                payment_card(m, lang, page, p, token);
            }
            m.push_str("</div>\n");
            if !page.intro.trim().is_empty() {
                m.push_str("<p class=\"text\">");
                lines(m, &page.intro);
                m.push_str("</p>\n");
            }
            items_card(m, lang, page);
            if page.doc.tax_free {
                html!(m; "<p class=\"text\">" [lang.pick(
                    "No tax is charged on this document.",
                    "Auf dieses Dokument wird keine Steuer berechnet."
                )] "</p>\n");
            }
            if !page.note.trim().is_empty() {
                m.push_str("<p class=\"text\">");
                lines(m, &page.note);
                m.push_str("</p>\n");
            }
            downloads_card(m, lang, page, token);
            if let Some(offer) = &page.offer {
                offer_card(m, lang, page.shown, offer, token, form_token);
            }
            comments_card(m, lang, page, token, form_token);
        },
    )
}

/// The page's heading: the document's title, else the name of its kind.
fn heading(lang: Lang, page: &DocumentPage) -> &str {
    match page.doc.title.trim() {
        "" => lang.kind(page.doc.kind),
        title => title,
    }
}

/// The number under the heading. A reminder has no number of its own: its heading is its
/// subject.
fn number(page: &DocumentPage) -> &str {
    match page.doc.formatted_number.as_str() {
        "" => page.printed.title.as_str(),
        number => number,
    }
}

/// The line that says what the form just sent did.
fn done_notice(m: &mut String, lang: Lang, done: Done) {
    let text = match done {
        Done::Accepted => lang.pick(
            "Thank you: you accepted the offer.",
            "Vielen Dank: Sie haben das Angebot angenommen.",
        ),
        Done::Declined => lang.pick(
            "You declined the offer. Thank you for letting us know.",
            "Sie haben das Angebot abgelehnt. Danke für Ihre Rückmeldung.",
        ),
        Done::Commented => lang.pick(
            "Thank you: your message was sent.",
            "Vielen Dank: Ihre Nachricht wurde gesendet.",
        ),
    };
    html!(m; "<p class=\"notice\" role=\"status\">" [text] "</p>\n");
}

/// The card of the document's facts as its PDF prints them (dates, numbers), and whom it
/// is for.
fn facts_card(m: &mut String, lang: Lang, page: &DocumentPage) {
    m.push_str("<section class=\"card facts\">\n<dl>\n");
    for (label, value) in &page.printed.meta {
        html!(m; "<div><dt>" (&lang.label(page.doc.kind, label)) "</dt><dd>" (value)
            "</dd></div>\n");
    }
    if !page.printed.recipient.is_empty() {
        html!(m; "<div class=\"recipient\"><dt>" [lang.pick("For", "Für")] "</dt><dd>");
        lines(m, &page.printed.recipient.join("\n"));
        m.push_str("</dd></div>\n");
    }
    m.push_str("</dl>\n</section>\n");
}

/// The card of the downloads: the PDF, and the e-invoice when one was issued.
fn downloads_card(m: &mut String, lang: Lang, page: &DocumentPage, token: &str) {
    html!(m; "<section class=\"card actions\" aria-label=\""
        [lang.pick("Downloads", "Downloads")] "\">\n<a class=\"button\" href=\"" (token)
        "/pdf\" download>" [lang.pick("Download PDF", "PDF herunterladen")] "</a>\n");
    if let Some(profile) = page.einvoice {
        let name = if profile.is_xrechnung() {
            "XRechnung"
        } else {
            "Factur-X"
        };
        html!(m; "<a class=\"button secondary\" href=\"" (token) "/e-invoice\" download>"
            [lang.pick("Download e-invoice", "E-Rechnung herunterladen")] " (" [name]
            ")</a>\n");
    }
    m.push_str("</section>\n");
}

/// The card of what is open: the amount, when it is due, the cash discount while it
/// applies, and how to pay it by transfer when the account has an IBAN.
fn payment_card(
    m: &mut String,
    lang: Lang,
    page: &DocumentPage,
    p: &crate::domain::portal::Payment,
    token: &str,
) {
    let overdue = page.shown == Shown::Overdue;
    html!(m; "<section class=\"card pay\">\n<h2>" [lang.pick("Amount due", "Offener Betrag")]
        "</h2>\n<p class=\"amount\">" (&p.amount) "</p>\n<p class=\"due"
        [if overdue { " overdue" } else { "" }] "\">"
        [if overdue {
            lang.pick("Was due on", "War fällig am")
        } else {
            lang.pick("Due on", "Fällig am")
        }] " " (&p.due_date) "</p>\n");
    if let Some((until, amount)) = &p.discount {
        html!(m; "<p class=\"discount\">" [lang.pick("Paid by", "Bei Zahlung bis")] " "
            (until) ": " (amount) "</p>\n");
    }
    if p.iban.trim().is_empty() {
        m.push_str("</section>\n");
        return;
    }
    m.push_str("<div class=\"transfer\">\n");
    if let Some(version) = &page.girocode {
        girocode_figure(m, lang, token, version);
    }
    bank_details(m, lang, p);
    m.push_str("</div>\n</section>\n");
}

/// The GiroCode of the transfer, as an image of its own: drawing a code costs more than
/// the rest of the page, and a browser keeps it for as long as the code stays the same
/// (`portal::girocode`).
fn girocode_figure(m: &mut String, lang: Lang, token: &str, version: &str) {
    html!(m; "<figure class=\"girocode\"><img src=\"" (token) "/girocode.svg?v=" (version)
        "\" alt=\"GiroCode\" width=\"168\" height=\"168\"><figcaption>"
        [lang.pick(
            "Scan with your banking app to pay",
            "Mit der Banking-App scannen und bezahlen"
        )] "</figcaption></figure>\n");
}

/// The account to transfer to: holder, IBAN, BIC when given, and the reference.
fn bank_details(m: &mut String, lang: Lang, p: &crate::domain::portal::Payment) {
    html!(m; "<dl class=\"bank\">\n<div><dt>" [lang.pick("Account holder", "Kontoinhaber")]
        "</dt><dd>" (&p.owner) "</dd></div>\n<div><dt>IBAN</dt><dd class=\"mono\">"
        (&grouped(&p.iban)) "</dd></div>\n");
    if !p.bic.trim().is_empty() {
        html!(m; "<div><dt>BIC</dt><dd class=\"mono\">" (&p.bic) "</dd></div>\n");
    }
    html!(m; "<div><dt>" [lang.pick("Reference", "Verwendungszweck")]
        "</dt><dd class=\"mono\">" (&p.reference) "</dd></div>\n</dl>\n");
}

/// An IBAN in groups of four, as it is printed.
fn grouped(iban: &str) -> String {
    let mut out = String::with_capacity(iban.len() + iban.len() / 4);
    for (i, c) in iban.chars().filter(|c| !c.is_whitespace()).enumerate() {
        if i > 0 && i % 4 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// The card of the items: their table as the PDF prints it, then the totals.
fn items_card(m: &mut String, lang: Lang, page: &DocumentPage) {
    let table = &page.printed.items;
    if table.header.is_empty() {
        return;
    }
    let kind = page.doc.kind;
    let headers: Vec<_> = table.header.iter().map(|h| lang.label(kind, h)).collect();
    html!(m; "<section class=\"card items\">\n<h2>" [lang.pick("Items", "Positionen")]
        "</h2>\n<table class=\"lines\">\n<thead><tr>");
    for (i, h) in headers.iter().enumerate() {
        html!(m; "<th scope=\"col\"" [num_class(table, i)] ">" (h) "</th>");
    }
    m.push_str("</tr></thead>\n<tbody>\n");
    for row in &table.rows {
        m.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let label = headers.get(i).map(|h| h.as_ref()).unwrap_or("");
            if i == 0 {
                item_title_cell(m, lang, kind, label, cell);
            } else {
                html!(m; "<td data-label=\"" (label) "\"" [num_class(table, i)] ">" (cell)
                    "</td>");
            }
        }
        m.push_str("</tr>\n");
    }
    m.push_str("</tbody>\n</table>\n");
    totals_table(m, lang, page);
    m.push_str("</section>\n");
}

/// The class attribute of column `i` of the items: numbers align right.
fn num_class(table: &crate::caps::Table, i: usize) -> &'static str {
    if table.right_aligned.contains(&(i as u32)) {
        " class=\"num\""
    } else {
        ""
    }
}

/// The first cell of an item's row (each cell carries its column's label, which narrow
/// screens show beside it): its first line as the title, the lines after it as the
/// item's text.
fn item_title_cell(m: &mut String, lang: Lang, kind: DocKind, label: &str, cell: &str) {
    let mut rest = cell.lines();
    let title = rest.next().unwrap_or("");
    html!(m; "<td data-label=\"" (label) "\"><span class=\"item-title\">" (title) "</span>");
    let text: Vec<_> = rest.map(|line| lang.label(kind, line)).collect();
    if !text.is_empty() {
        m.push_str("<span class=\"item-text\">");
        lines(m, &text.join("\n"));
        m.push_str("</span>");
    }
    m.push_str("</td>");
}

/// The totals under the items, the last one (the grand total) marked.
fn totals_table(m: &mut String, lang: Lang, page: &DocumentPage) {
    if page.printed.totals.is_empty() {
        return;
    }
    m.push_str("<table class=\"totals\">\n<tbody>\n");
    let last = page.printed.totals.len() - 1;
    for (i, (label, value)) in page.printed.totals.iter().enumerate() {
        html!(m; "<tr" [if i == last { " class=\"grand\"" } else { "" }]
            "><th scope=\"row\">" (&lang.label(page.doc.kind, label))
            "</th><td class=\"num\">" (value) "</td></tr>\n");
    }
    m.push_str("</tbody>\n</table>\n");
}

/// The card of an offer's answer: the form while it can be answered, else why it cannot.
fn offer_card(
    m: &mut String,
    lang: Lang,
    shown: Shown,
    offer: &OfferState,
    token: &str,
    form_token: &str,
) {
    html!(m; "<section class=\"card answer\">\n<h2>" [lang.pick("Your answer", "Ihre Antwort")]
        "</h2>\n");
    match offer {
        OfferState::Answerable(until) => answer_form(m, lang, until, token, form_token),
        OfferState::Lapsed(until) => {
            html!(m; "<p class=\"note\">"
                [lang.pick("This offer was valid until", "Dieses Angebot galt bis zum")] " "
                (until) ". "
                [lang.pick(
                    "Please contact us for a new one.",
                    "Bitte sprechen Sie uns für ein neues Angebot an."
                )] "</p>\n");
        }
        OfferState::Settled => {
            html!(m; "<p class=\"note\">" [settled(lang, shown)] "</p>\n");
        }
    }
    m.push_str("</section>\n");
}

/// The form that accepts or declines an offer valid `until`, signed with a name.
fn answer_form(m: &mut String, lang: Lang, until: &str, token: &str, form_token: &str) {
    html!(m; "<p>" [lang.pick("This offer is valid until", "Dieses Angebot gilt bis zum")] " "
        (until) ".</p>\n<form method=\"post\" action=\"" (token) "\">\n\
         <input type=\"hidden\" name=\"form_token\" value=\"" (form_token) "\">\n\
         <label for=\"name\">" [lang.pick("Your name", "Ihr Name")] "</label>\n\
         <input id=\"name\" name=\"name\" type=\"text\" autocomplete=\"name\" required \
         maxlength=\"" (&crate::limits::PORTAL_NAME_CHARS_MAX.to_string())
        "\">\n<div class=\"buttons\">\n\
         <button type=\"submit\" name=\"action\" value=\"accept\">"
        [lang.pick("Accept offer", "Angebot annehmen")] "</button>\n\
         <button type=\"submit\" name=\"action\" value=\"decline\" class=\"secondary\">"
        [lang.pick("Decline", "Ablehnen")] "</button>\n</div>\n</form>\n");
}

/// What became of an offer that takes no answer any more, as its status says.
fn settled(lang: Lang, shown: Shown) -> &'static str {
    match shown {
        Shown::Won | Shown::Cleared => lang.pick(
            "This offer was accepted.",
            "Dieses Angebot wurde angenommen.",
        ),
        Shown::Lost => lang.pick(
            "This offer was declined.",
            "Dieses Angebot wurde abgelehnt.",
        ),
        Shown::Draft
        | Shown::Open
        | Shown::Overdue
        | Shown::Paid
        | Shown::Canceled
        | Shown::Completed
        | Shown::Created => lang.pick(
            "This offer can no longer be answered.",
            "Dieses Angebot kann nicht mehr beantwortet werden.",
        ),
    }
}

/// The card of the comments: what the client wrote before, and a form to write more.
fn comments_card(m: &mut String, lang: Lang, page: &DocumentPage, token: &str, form_token: &str) {
    html!(m; "<section class=\"card comments\">\n<h2>"
        [lang.pick("Questions or remarks?", "Fragen oder Anmerkungen?")] "</h2>\n");
    if !page.comments.is_empty() {
        m.push_str("<ol class=\"thread\">\n");
        for (when, text) in &page.comments {
            html!(m; "<li><p class=\"when\">" (when) "</p><p>");
            lines(m, text);
            m.push_str("</p></li>\n");
        }
        m.push_str("</ol>\n");
    }
    html!(m; "<form method=\"post\" action=\"" (token) "\">\n\
         <input type=\"hidden\" name=\"form_token\" value=\"" (form_token) "\">\n\
         <input type=\"hidden\" name=\"action\" value=\"comment\">\n\
         <label for=\"comment\">" [lang.pick("Your message to us", "Ihre Nachricht an uns")]
        "</label>\n\
         <textarea id=\"comment\" name=\"comment\" rows=\"4\" required maxlength=\""
        (&crate::limits::PORTAL_COMMENT_CHARS_MAX.to_string()) "\"></textarea>\n\
         <div class=\"buttons\"><button type=\"submit\" class=\"secondary\">"
        [lang.pick("Send message", "Nachricht senden")] "</button></div>\n</form>\n</section>\n");
}

/// A client's session: the client's documents, each a link to its page.
pub(super) fn client(page: &ClientPage) -> String {
    let lang = Lang::of(&page.locale);
    let title = format!(
        "{} – {}",
        lang.pick("Your documents", "Ihre Dokumente"),
        page.seller.name
    );
    frame(
        lang,
        title.trim_end_matches(" – "),
        Some(&page.seller),
        |m| {
            html!(m; "<section class=\"doc-head\"><p class=\"kind\">" (&page.client_name)
                "</p><h1>" [lang.pick("Your documents", "Ihre Dokumente")]
                "</h1></section>\n<section class=\"card\">\n");
            if page.documents.is_empty() {
                html!(m; "<p class=\"note\">" [lang.pick(
                    "There are no documents to show yet.",
                    "Es gibt noch keine Dokumente."
                )] "</p>\n");
            } else {
                documents_table(m, lang, &page.documents);
            }
            html!(m; "<p class=\"fine\">" [lang.pick(
                "For your security this page works until",
                "Zu Ihrer Sicherheit funktioniert diese Seite bis"
            )] " " (&page.expires) ".</p>\n</section>\n");
        },
    )
}

/// The table of a client's documents: kind, number (the link), date, status and total.
fn documents_table(m: &mut String, lang: Lang, documents: &[Listed]) {
    let headers = [
        lang.pick("Document", "Dokument"),
        lang.pick("Number", "Nummer"),
        lang.pick("Date", "Datum"),
        lang.pick("Status", "Status"),
        lang.pick("Total", "Gesamt"),
    ];
    m.push_str("<table class=\"lines documents\">\n<thead><tr>");
    for (i, h) in headers.iter().enumerate() {
        html!(m; "<th scope=\"col\"" [if i == 4 { " class=\"num\"" } else { "" }] ">" [*h]
            "</th>");
    }
    m.push_str("</tr></thead>\n<tbody>\n");
    for d in documents {
        html!(m; "<tr><td data-label=\"" [headers[0]] "\">" [lang.kind(d.kind)]
            "</td><td data-label=\"" [headers[1]] "\"><a href=\"" (&d.url) "\">" (&d.title)
            "</a></td><td data-label=\"" [headers[2]] "\">" (&d.date)
            "</td><td data-label=\"" [headers[3]] "\"><span class=\"status "
            [status_class(d.shown)] "\">" [lang.status(d.shown)]
            "</span></td><td data-label=\"" [headers[4]] "\" class=\"num\">" (&d.total)
            "</td></tr>\n");
    }
    m.push_str("</tbody>\n</table>\n");
}

/// A page that says why nothing is shown: a heading, a sentence, and whom to contact
/// when the seller is known (an expired link). `back` links to the page a form came from.
pub(super) fn problem(
    lang: Lang,
    heading: &str,
    text: &str,
    seller: Option<&Seller>,
    back: Option<&str>,
) -> String {
    frame(lang, heading, seller, |m| {
        html!(m; "<section class=\"card problem\">\n<h1>" (heading) "</h1>\n<p>" (text)
            "</p>\n");
        if let Some(seller) = seller.filter(|s| !s.name.is_empty() || !s.email.is_empty()) {
            html!(m; "<p>" [lang.pick(
                "Please contact us for a new link:",
                "Bitte wenden Sie sich für einen neuen Link an uns:"
            )] "</p>\n<ul class=\"contact\">\n");
            if !seller.name.is_empty() {
                html!(m; "<li><strong>" (&seller.name) "</strong></li>\n");
            }
            if !seller.email.is_empty() {
                html!(m; "<li><a href=\"mailto:" (&seller.email) "\">" (&seller.email)
                    "</a></li>\n");
            }
            if !seller.phone.is_empty() {
                html!(m; "<li>" (&seller.phone) "</li>\n");
            }
            m.push_str("</ul>\n");
        }
        if let Some(back) = back {
            html!(m; "<p><a class=\"button secondary\" href=\"" (back) "\">"
                [lang.pick("Back", "Zurück")] "</a></p>\n");
        }
        m.push_str("</section>\n");
    })
}

/// The GiroCode as an SVG image: a path of the dark modules on white, with a quiet zone of
/// four modules, scaled by the page.
pub(super) fn girocode_svg(modules: &[Vec<bool>]) -> String {
    let n = modules.len();
    let side = n + 8;
    let mut path = String::with_capacity(n * n * 4);
    for (y, row) in modules.iter().enumerate() {
        let mut x = 0;
        while x < row.len() {
            if !row[x] {
                x += 1;
                continue;
            }
            let start = x;
            while x < row.len() && row[x] {
                x += 1;
            }
            let _ = write!(
                path,
                "M{} {}h{}v1h-{}z",
                start + 4,
                y + 4,
                x - start,
                x - start
            );
        }
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {side} {side}\" \
         shape-rendering=\"crispEdges\">\
         <rect width=\"{side}\" height=\"{side}\" fill=\"#fff\"/>\
         <path fill=\"#000\" d=\"{path}\"/></svg>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_markup_character_is_escaped() {
        let written = |write: fn(&mut String, &str), text: &str| {
            let mut m = String::new();
            write(&mut m, text);
            m
        };
        assert_eq!(
            written(esc, "<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
        assert_eq!(written(esc, "Müller & Söhne"), "Müller &amp; Söhne");
        assert_eq!(written(esc, ""), "");
        assert_eq!(written(lines, "a<b\nc"), "a&lt;b<br>c");
        let mut m = String::new();
        html!(&mut m; "<p class=\"" ["x"] "\">" ("<i>") "</p>");
        assert_eq!(m, "<p class=\"x\">&lt;i&gt;</p>");
    }
}
