//! The portal's HTML: a document's page, a client's session, and the pages that say why a
//! link opens nothing. Every text that comes from the store or the request is written
//! through `Esc`, which escapes it; markup is written only from literals here. The pages
//! need no script, no inline style and nothing from another origin: one stylesheet
//! (`style.css`, beside the pages), forms that post back to the page's own address, the
//! GiroCode as inline SVG.

use std::fmt::{self, Display, Write as _};

use super::texts::Lang;
use crate::domain::documents::{DocKind, Shown};
use crate::domain::portal::{ClientPage, DocumentPage, Listed, OfferState, Seller};

/// A text written into HTML, escaped (also inside attribute values).
pub(super) struct Esc<'a>(pub(super) &'a str);

impl Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..at])?;
            f.write_str(match rest.as_bytes()[at] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[at + 1..];
        }
        f.write_str(rest)
    }
}

/// A text of several lines, each escaped, joined by line breaks.
struct Lines<'a>(&'a str);

impl Display for Lines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, line) in self.0.lines().enumerate() {
            if i > 0 {
                f.write_str("<br>")?;
            }
            Esc(line).fmt(f)?;
        }
        Ok(())
    }
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

/// The frame of every page: head, the seller's header, `main`, the seller's footer.
fn frame(lang: Lang, title: &str, seller: Option<&Seller>, main: &str) -> String {
    let mut out = String::with_capacity(main.len() + 2048);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"robots\" content=\"noindex, nofollow\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>{}</title>\n<link rel=\"stylesheet\" href=\"style.css\">\n</head>\n<body>\n",
        lang.code(),
        Esc(title)
    );
    if let Some(seller) = seller.filter(|s| !s.name.is_empty()) {
        let _ = write!(
            out,
            "<header class=\"masthead\"><div class=\"wrap\"><p class=\"seller-name\">{}</p>",
            Esc(&seller.name)
        );
        if !seller.address.is_empty() {
            let _ = write!(
                out,
                "<p class=\"seller-address\">{}</p>",
                Esc(&seller.address.join(" · "))
            );
        }
        out.push_str("</div></header>\n");
    }
    let _ = write!(out, "<main class=\"wrap\">\n{main}</main>\n");
    if let Some(seller) = seller {
        out.push_str(&footer(lang, seller));
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The seller's name and how to reach them.
fn footer(lang: Lang, seller: &Seller) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !seller.name.is_empty() {
        parts.push(format!("<strong>{}</strong>", Esc(&seller.name)));
    }
    for line in &seller.address {
        parts.push(Esc(line).to_string());
    }
    if !seller.email.is_empty() {
        parts.push(format!(
            "<a href=\"mailto:{0}\">{0}</a>",
            Esc(&seller.email)
        ));
    }
    if !seller.phone.is_empty() {
        let dial: String = seller
            .phone
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == '+')
            .collect();
        parts.push(format!(
            "<a href=\"tel:{}\">{}</a>",
            Esc(&dial),
            Esc(&seller.phone)
        ));
    }
    if !seller.vat_number.is_empty() {
        parts.push(format!(
            "{} {}",
            lang.pick("VAT ID", "USt-IdNr."),
            Esc(&seller.vat_number)
        ));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "<footer class=\"wrap site-footer\"><p>{}</p></footer>\n",
        parts.join(" <span aria-hidden=\"true\">·</span> ")
    )
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
    let mut m = String::with_capacity(8192);
    if let Some(done) = done {
        done_notice(&mut m, lang, done);
    }
    let _ = writeln!(
        m,
        "<section class=\"doc-head\"><p class=\"kind\">{}</p><h1>{}</h1>\
         <p class=\"status {}\">{}</p></section>",
        Esc(&heading),
        Esc(number),
        status_class(page.shown),
        Esc(lang.status(page.shown))
    );
    m.push_str("<div class=\"overview\">\n");
    facts_card(&mut m, lang, page);
    if let Some(p) = &page.payment {
        payment_card(&mut m, lang, page, p, token);
    }
    m.push_str("</div>\n");
    if !page.intro.trim().is_empty() {
        let _ = writeln!(m, "<p class=\"text\">{}</p>", Lines(&page.intro));
    }
    items_card(&mut m, lang, page);
    if page.doc.tax_free {
        let _ = writeln!(
            m,
            "<p class=\"text\">{}</p>",
            Esc(lang.pick(
                "No tax is charged on this document.",
                "Auf dieses Dokument wird keine Steuer berechnet."
            ))
        );
    }
    if !page.note.trim().is_empty() {
        let _ = writeln!(m, "<p class=\"text\">{}</p>", Lines(&page.note));
    }
    downloads_card(&mut m, lang, page, token);
    if let Some(offer) = &page.offer {
        offer_card(&mut m, lang, page.shown, offer, token, form_token);
    }
    comments_card(&mut m, lang, page, token, form_token);
    let title = format!("{heading} {number} – {}", page.seller.name);
    frame(lang, title.trim_end_matches(" – "), Some(&page.seller), &m)
}

/// The page's heading: the document's title, else the name of its kind.
fn heading(lang: Lang, page: &DocumentPage) -> String {
    match page.doc.title.trim() {
        "" => lang.kind(page.doc.kind).to_owned(),
        title => title.to_owned(),
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
    let _ = writeln!(m, "<p class=\"notice\" role=\"status\">{}</p>", Esc(text));
}

/// The card of the document's facts as its PDF prints them (dates, numbers), and whom it
/// is for.
fn facts_card(m: &mut String, lang: Lang, page: &DocumentPage) {
    m.push_str("<section class=\"card facts\">\n<dl>\n");
    for (label, value) in &page.printed.meta {
        let _ = writeln!(
            m,
            "<div><dt>{}</dt><dd>{}</dd></div>",
            Esc(&lang.label(page.doc.kind, label)),
            Esc(value)
        );
    }
    if !page.printed.recipient.is_empty() {
        let _ = writeln!(
            m,
            "<div class=\"recipient\"><dt>{}</dt><dd>{}</dd></div>",
            Esc(lang.pick("For", "Für")),
            Lines(&page.printed.recipient.join("\n"))
        );
    }
    m.push_str("</dl>\n</section>\n");
}

/// The card of the downloads: the PDF, and the e-invoice when one was issued.
fn downloads_card(m: &mut String, lang: Lang, page: &DocumentPage, token: &str) {
    let _ = write!(
        m,
        "<section class=\"card actions\" aria-label=\"{}\">\n\
         <a class=\"button\" href=\"{}/pdf\" download>{}</a>\n",
        Esc(lang.pick("Downloads", "Downloads")),
        Esc(token),
        Esc(lang.pick("Download PDF", "PDF herunterladen"))
    );
    if let Some(profile) = page.einvoice {
        let name = if profile.is_xrechnung() {
            "XRechnung"
        } else {
            "Factur-X"
        };
        let _ = writeln!(
            m,
            "<a class=\"button secondary\" href=\"{}/e-invoice\" download>{} ({})</a>",
            Esc(token),
            Esc(lang.pick("Download e-invoice", "E-Rechnung herunterladen")),
            name
        );
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
    let _ = write!(
        m,
        "<section class=\"card pay\">\n<h2>{}</h2>\n<p class=\"amount\">{}</p>\n\
         <p class=\"due{}\">{} {}</p>\n",
        Esc(lang.pick("Amount due", "Offener Betrag")),
        Esc(&p.amount),
        if overdue { " overdue" } else { "" },
        Esc(if overdue {
            lang.pick("Was due on", "War fällig am")
        } else {
            lang.pick("Due on", "Fällig am")
        }),
        Esc(&p.due_date)
    );
    if let Some((until, amount)) = &p.discount {
        let _ = writeln!(
            m,
            "<p class=\"discount\">{} {}: {}</p>",
            Esc(lang.pick("Paid by", "Bei Zahlung bis")),
            Esc(until),
            Esc(amount)
        );
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
    let _ = writeln!(
        m,
        "<figure class=\"girocode\"><img src=\"{}/girocode.svg?v={}\" alt=\"GiroCode\" \
         width=\"168\" height=\"168\"><figcaption>{}</figcaption></figure>",
        Esc(token),
        Esc(version),
        Esc(lang.pick(
            "Scan with your banking app to pay",
            "Mit der Banking-App scannen und bezahlen"
        ))
    );
}

/// The account to transfer to: holder, IBAN, BIC when given, and the reference.
fn bank_details(m: &mut String, lang: Lang, p: &crate::domain::portal::Payment) {
    let _ = write!(
        m,
        "<dl class=\"bank\">\n<div><dt>{}</dt><dd>{}</dd></div>\n\
         <div><dt>IBAN</dt><dd class=\"mono\">{}</dd></div>\n",
        Esc(lang.pick("Account holder", "Kontoinhaber")),
        Esc(&p.owner),
        Esc(&grouped(&p.iban))
    );
    if !p.bic.trim().is_empty() {
        let _ = writeln!(
            m,
            "<div><dt>BIC</dt><dd class=\"mono\">{}</dd></div>",
            Esc(&p.bic)
        );
    }
    let _ = write!(
        m,
        "<div><dt>{}</dt><dd class=\"mono\">{}</dd></div>\n</dl>\n",
        Esc(lang.pick("Reference", "Verwendungszweck")),
        Esc(&p.reference)
    );
}

/// An IBAN in groups of four, as it is printed.
fn grouped(iban: &str) -> String {
    let compact: Vec<char> = iban.chars().filter(|c| !c.is_whitespace()).collect();
    compact
        .chunks(4)
        .map(|c| c.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The card of the items: their table as the PDF prints it, then the totals.
fn items_card(m: &mut String, lang: Lang, page: &DocumentPage) {
    let table = &page.printed.items;
    if table.header.is_empty() {
        return;
    }
    let kind = page.doc.kind;
    let headers: Vec<String> = table.header.iter().map(|h| lang.label(kind, h)).collect();
    let _ = write!(
        m,
        "<section class=\"card items\">\n<h2>{}</h2>\n<table class=\"lines\">\n<thead><tr>",
        Esc(lang.pick("Items", "Positionen"))
    );
    for (i, h) in headers.iter().enumerate() {
        let _ = write!(
            m,
            "<th scope=\"col\"{}>{}</th>",
            num_class(table, i),
            Esc(h)
        );
    }
    m.push_str("</tr></thead>\n<tbody>\n");
    for row in &table.rows {
        item_row(m, lang, page, &headers, row);
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

/// One item's row. Each cell carries its column's label, which narrow screens show beside
/// it; the first cell holds the item's title and its further lines.
fn item_row(m: &mut String, lang: Lang, page: &DocumentPage, headers: &[String], row: &[String]) {
    m.push_str("<tr>");
    for (i, cell) in row.iter().enumerate() {
        let label = headers.get(i).map(String::as_str).unwrap_or("");
        if i == 0 {
            item_title_cell(m, lang, page.doc.kind, label, cell);
        } else {
            let _ = write!(
                m,
                "<td data-label=\"{}\"{}>{}</td>",
                Esc(label),
                num_class(&page.printed.items, i),
                Esc(cell)
            );
        }
    }
    m.push_str("</tr>\n");
}

/// The first cell of an item's row: its first line as the title, the lines after it as
/// the item's text.
fn item_title_cell(m: &mut String, lang: Lang, kind: DocKind, label: &str, cell: &str) {
    let mut lines = cell.lines();
    let title = lines.next().unwrap_or("");
    let rest: Vec<String> = lines.map(|l| lang.label(kind, l)).collect();
    let _ = write!(
        m,
        "<td data-label=\"{}\"><span class=\"item-title\">{}</span>",
        Esc(label),
        Esc(title)
    );
    if !rest.is_empty() {
        let _ = write!(
            m,
            "<span class=\"item-text\">{}</span>",
            Lines(&rest.join("\n"))
        );
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
        let _ = writeln!(
            m,
            "<tr{}><th scope=\"row\">{}</th><td class=\"num\">{}</td></tr>",
            if i == last { " class=\"grand\"" } else { "" },
            Esc(&lang.label(page.doc.kind, label)),
            Esc(value)
        );
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
    let _ = write!(
        m,
        "<section class=\"card answer\">\n<h2>{}</h2>\n",
        Esc(lang.pick("Your answer", "Ihre Antwort"))
    );
    match offer {
        OfferState::Answerable(until) => answer_form(m, lang, until, token, form_token),
        OfferState::Lapsed(until) => {
            let _ = writeln!(
                m,
                "<p class=\"note\">{} {}. {}</p>",
                Esc(lang.pick("This offer was valid until", "Dieses Angebot galt bis zum")),
                Esc(until),
                Esc(lang.pick(
                    "Please contact us for a new one.",
                    "Bitte sprechen Sie uns für ein neues Angebot an."
                ))
            );
        }
        OfferState::Settled => {
            let _ = writeln!(m, "<p class=\"note\">{}</p>", Esc(settled(lang, shown)));
        }
    }
    m.push_str("</section>\n");
}

/// The form that accepts or declines an offer valid `until`, signed with a name.
fn answer_form(m: &mut String, lang: Lang, until: &str, token: &str, form_token: &str) {
    let _ = write!(
        m,
        "<p>{} {}.</p>\n<form method=\"post\" action=\"{}\">\n\
         <input type=\"hidden\" name=\"form_token\" value=\"{}\">\n\
         <label for=\"name\">{}</label>\n\
         <input id=\"name\" name=\"name\" type=\"text\" autocomplete=\"name\" required \
         maxlength=\"{}\">\n<div class=\"buttons\">\n\
         <button type=\"submit\" name=\"action\" value=\"accept\">{}</button>\n\
         <button type=\"submit\" name=\"action\" value=\"decline\" class=\"secondary\">{}</button>\n\
         </div>\n</form>\n",
        Esc(lang.pick("This offer is valid until", "Dieses Angebot gilt bis zum")),
        Esc(until),
        Esc(token),
        Esc(form_token),
        Esc(lang.pick("Your name", "Ihr Name")),
        crate::limits::PORTAL_NAME_CHARS_MAX,
        Esc(lang.pick("Accept offer", "Angebot annehmen")),
        Esc(lang.pick("Decline", "Ablehnen"))
    );
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
    let _ = write!(
        m,
        "<section class=\"card comments\">\n<h2>{}</h2>\n",
        Esc(lang.pick("Questions or remarks?", "Fragen oder Anmerkungen?"))
    );
    if !page.comments.is_empty() {
        m.push_str("<ol class=\"thread\">\n");
        for (when, text) in &page.comments {
            let _ = writeln!(
                m,
                "<li><p class=\"when\">{}</p><p>{}</p></li>",
                Esc(when),
                Lines(text)
            );
        }
        m.push_str("</ol>\n");
    }
    let _ = write!(
        m,
        "<form method=\"post\" action=\"{}\">\n\
         <input type=\"hidden\" name=\"form_token\" value=\"{}\">\n\
         <input type=\"hidden\" name=\"action\" value=\"comment\">\n\
         <label for=\"comment\">{}</label>\n\
         <textarea id=\"comment\" name=\"comment\" rows=\"4\" required maxlength=\"{}\"></textarea>\n\
         <div class=\"buttons\"><button type=\"submit\" class=\"secondary\">{}</button></div>\n\
         </form>\n</section>\n",
        Esc(token),
        Esc(form_token),
        Esc(lang.pick("Your message to us", "Ihre Nachricht an uns")),
        crate::limits::PORTAL_COMMENT_CHARS_MAX,
        Esc(lang.pick("Send message", "Nachricht senden"))
    );
}

/// A client's session: the client's documents, each a link to its page.
pub(super) fn client(page: &ClientPage) -> String {
    let lang = Lang::of(&page.locale);
    let mut m = String::with_capacity(4096);
    let _ = writeln!(
        m,
        "<section class=\"doc-head\"><p class=\"kind\">{}</p><h1>{}</h1></section>",
        Esc(&page.client_name),
        Esc(lang.pick("Your documents", "Ihre Dokumente"))
    );
    m.push_str("<section class=\"card\">\n");
    if page.documents.is_empty() {
        let _ = writeln!(
            m,
            "<p class=\"note\">{}</p>",
            Esc(lang.pick(
                "There are no documents to show yet.",
                "Es gibt noch keine Dokumente."
            ))
        );
    } else {
        documents_table(&mut m, lang, &page.documents);
    }
    let _ = write!(
        m,
        "<p class=\"fine\">{} {}.</p>\n</section>\n",
        Esc(lang.pick(
            "For your security this page works until",
            "Zu Ihrer Sicherheit funktioniert diese Seite bis"
        )),
        Esc(&page.expires)
    );
    let title = format!(
        "{} – {}",
        lang.pick("Your documents", "Ihre Dokumente"),
        page.seller.name
    );
    frame(lang, title.trim_end_matches(" – "), Some(&page.seller), &m)
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
        let _ = write!(
            m,
            "<th scope=\"col\"{}>{}</th>",
            if i == 4 { " class=\"num\"" } else { "" },
            Esc(h)
        );
    }
    m.push_str("</tr></thead>\n<tbody>\n");
    for d in documents {
        let _ = writeln!(
            m,
            "<tr><td data-label=\"{}\">{}</td><td data-label=\"{}\"><a href=\"{}\">{}</a></td>\
             <td data-label=\"{}\">{}</td>\
             <td data-label=\"{}\"><span class=\"status {}\">{}</span></td>\
             <td data-label=\"{}\" class=\"num\">{}</td></tr>",
            Esc(headers[0]),
            Esc(lang.kind(d.kind)),
            Esc(headers[1]),
            Esc(&d.url),
            Esc(&d.title),
            Esc(headers[2]),
            Esc(&d.date),
            Esc(headers[3]),
            status_class(d.shown),
            Esc(lang.status(d.shown)),
            Esc(headers[4]),
            Esc(&d.total)
        );
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
    let mut m = format!(
        "<section class=\"card problem\">\n<h1>{}</h1>\n<p>{}</p>\n",
        Esc(heading),
        Esc(text)
    );
    if let Some(seller) = seller.filter(|s| !s.name.is_empty() || !s.email.is_empty()) {
        let _ = write!(
            m,
            "<p>{}</p>\n<ul class=\"contact\">\n",
            Esc(lang.pick(
                "Please contact us for a new link:",
                "Bitte wenden Sie sich für einen neuen Link an uns:"
            ))
        );
        if !seller.name.is_empty() {
            let _ = writeln!(m, "<li><strong>{}</strong></li>", Esc(&seller.name));
        }
        if !seller.email.is_empty() {
            let _ = writeln!(
                m,
                "<li><a href=\"mailto:{0}\">{0}</a></li>",
                Esc(&seller.email)
            );
        }
        if !seller.phone.is_empty() {
            let _ = writeln!(m, "<li>{}</li>", Esc(&seller.phone));
        }
        m.push_str("</ul>\n");
    }
    if let Some(back) = back {
        let _ = writeln!(
            m,
            "<p><a class=\"button secondary\" href=\"{}\">{}</a></p>",
            Esc(back),
            Esc(lang.pick("Back", "Zurück"))
        );
    }
    m.push_str("</section>\n");
    frame(lang, heading, seller, &m)
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
        assert_eq!(
            Esc("<script>alert('x') & \"y\"</script>").to_string(),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
        assert_eq!(Lines("a<b\nc").to_string(), "a&lt;b<br>c");
    }
}
