//! What both modes measure: the data set seeded through the API, the wrk Lua scripts of
//! the workloads, and one measurement of a script against a host.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};

use crate::Config;
use crate::client::{self, Call, Reply};
use crate::host::KEY;
use crate::wrk::{Figures, Load};

/// The invoice item of every created invoice, five times over in W2's. Its title is the
/// item name (BT-153) every e-invoice needs.
pub(crate) const ITEM: &str = "<invoice-item><title>Beratung</title><quantity>3</quantity><unit_price>100</unit_price></invoice-item>";

/// The seller with every term XRechnung asks for, set before anything is seeded: each
/// invoice completed after it has its e-invoices.
const SELLER: &str = "<settings><company_name>Faktura Bench GmbH</company_name>\
    <company_street>Hauptstraße 1</company_street><company_zip>10115</company_zip>\
    <company_city>Berlin</company_city><company_country_code>DE</company_country_code>\
    <company_vat_number>DE123456789</company_vat_number><company_tax_number>30/123/45678</company_tax_number>\
    <company_contact_name>Erika Muster</company_contact_name><company_phone>+49 30 1234567</company_phone>\
    <company_email>rechnung@example.com</company_email>\
    <company_bank_iban>DE02120300000000202051</company_bank_iban><company_bank_bic>BYLADEM1001</company_bank_bic>\
    </settings>";

/// The e-invoice W7 fetches.
const EINVOICE_QUERY: &str = "e-invoice?profile=xrechnung-cii";

/// The ids of a seeded data set and how long seeding took.
pub(crate) struct Seeded {
    pub(crate) clients: Vec<u64>,
    pub(crate) invoices: Vec<u64>,
    /// The completed invoices, every tenth.
    pub(crate) completed: Vec<u64>,
    pub(crate) seed_secs: f64,
    pub(crate) complete_secs: f64,
}

/// About a thousand of `ids`, spread over all of them.
fn spread(ids: &[u64]) -> Vec<u64> {
    ids.iter()
        .copied()
        .step_by((ids.len() / 1000).max(1))
        .collect()
}

impl Seeded {
    /// About a thousand invoice ids spread over the whole data set, for W1.
    pub(crate) fn sample(&self) -> Vec<u64> {
        spread(&self.invoices)
    }

    /// About a thousand ids of completed invoices spread over the data set, for W7.
    pub(crate) fn completed_sample(&self) -> Vec<u64> {
        spread(&self.completed)
    }
}

/// Changes the settings of the host at `addr` by `body` (`<settings>…</settings>`) and
/// checks that each of `expect` is in the settings it answers with: a build that does not
/// know a setting ignores it.
pub(crate) fn settings(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    body: &str,
    expect: &[&str],
) -> anyhow::Result<()> {
    let reply = rt.block_on(client::once(
        addr,
        KEY,
        &Call::with("PUT", "/api/settings", body),
    ))?;
    if reply.status != 200 {
        bail!(
            "PUT /api/settings answered {}: {}",
            reply.status,
            reply.body
        );
    }
    if let Some(missing) = expect.iter().find(|e| !reply.body.contains(*e)) {
        bail!(
            "PUT /api/settings {body} answered settings without {missing}: {}",
            reply.body
        );
    }
    Ok(())
}

/// Sets `einvoice_pdf` on the host at `addr`: with it, each completion renders its PDF as a
/// Factur-X hybrid.
pub(crate) fn einvoice_pdf(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    on: bool,
) -> anyhow::Result<()> {
    let element = format!("<einvoice_pdf>{}</einvoice_pdf>", u8::from(on));
    settings(
        rt,
        addr,
        &format!("<settings>{element}</settings>"),
        &[&element],
    )
}

/// Completes the invoice `id` on the host at `addr`; what it answered unless 2xx.
pub(crate) fn complete(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    id: u64,
) -> anyhow::Result<Result<(), String>> {
    let path = format!("/api/invoices/{id}/complete");
    let reply = rt.block_on(client::once(
        addr,
        KEY,
        &Call::with("PUT", path.as_str(), "<complete/>"),
    ))?;
    Ok(if (200..300).contains(&reply.status) {
        Ok(())
    } else {
        Err(describe("PUT", &path, &reply))
    })
}

/// W7's request for invoice `id` on the host at `addr`: Ok when it answers 200 with the XML
/// of an XRechnung CII e-invoice, else the status it answered and a description.
pub(crate) fn einvoice(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    id: u64,
) -> anyhow::Result<Result<(), (u16, String)>> {
    let path = format!("/api/invoices/{id}/{EINVOICE_QUERY}");
    let reply = rt.block_on(client::once(addr, KEY, &Call::get(path.as_str())))?;
    let xml = reply.content_type.starts_with("application/xml")
        && reply.body.trim_start().starts_with("<?xml")
        && reply.body.contains("CrossIndustryInvoice");
    Ok(if reply.status == 200 && xml {
        Ok(())
    } else {
        Err((reply.status, describe("GET", &path, &reply)))
    })
}

/// A request and its answer, the body cut short, for a message.
fn describe(method: &str, path: &str, reply: &Reply) -> String {
    let body: String = reply.body.chars().take(800).collect();
    format!(
        "{method} {path} answered {} ({}): {}",
        reply.status,
        if reply.content_type.is_empty() {
            "no Content-Type"
        } else {
            &reply.content_type
        },
        body.trim()
    )
}

pub(crate) fn date_text(d: time::Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), d.month() as u8, d.day())
}

/// Seeds the host at `addr`: the seller's settings, clients, invoices with two items spread
/// over two years, every tenth completed (half of those due in the future, so OPEN; the
/// others mostly OVERDUE). Seller, clients and items have what an XRechnung needs, so every
/// completed invoice has its e-invoices.
pub(crate) fn seed(
    cfg: &Config,
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
) -> anyhow::Result<Seeded> {
    let conns = cfg.connections;
    let today = time::OffsetDateTime::now_utc().date();
    // Checked for a setting every build knows: a previous one (BENCH_COMPARE) may not know
    // the e-invoice terms, and then ignores them.
    settings(
        rt,
        addr,
        SELLER,
        &["<company_name>Faktura Bench GmbH</company_name>"],
    )?;
    let clients = rt.block_on(client::each(
        addr,
        KEY,
        conns,
        cfg.clients,
        "clients",
        |i| {
            Call::with(
                "POST",
                "/api/clients",
                format!(
                    "<client><name>Bench Kunde {i}</name><zip>10115</zip><city>Berlin</city>\
                     <country_code>DE</country_code><email>kunde{i}@example.com</email>\
                     <buyer_reference>04011000-12345-03</buyer_reference></client>"
                ),
            )
        },
    ))?;
    let client_list = clients.clone();
    let n = cfg.invoices;
    let t = Instant::now();
    let invoices = rt.block_on(client::each(addr, KEY, conns, n, "invoices", move |i| {
        let date = today - time::Duration::days((i as i64 * 7919) % 730);
        let due = if i % 20 == 0 {
            today + time::Duration::days(60)
        } else {
            date + time::Duration::days(14)
        };
        Call::with(
            "POST",
            "/api/invoices",
            format!(
                "<invoice><client_id>{}</client_id><date>{}</date><due_date>{}</due_date>\
                 <invoice-items>{ITEM}<invoice-item><title>Reise</title><quantity>1</quantity>\
                 <unit_price>50.5</unit_price></invoice-item></invoice-items></invoice>",
                client_list[i % client_list.len()],
                date_text(date),
                date_text(due)
            ),
        )
    }))?;
    let seed_secs = t.elapsed().as_secs_f64();
    eprintln!(
        "seeded {n} invoices in {seed_secs:.1} s ({:.0}/s)",
        n as f64 / seed_secs
    );
    let completed: Vec<u64> = invoices.iter().copied().step_by(10).collect();
    let completing = completed.clone();
    let t = Instant::now();
    rt.block_on(client::each(
        addr,
        KEY,
        conns,
        completed.len(),
        "completions",
        move |i| {
            Call::with(
                "PUT",
                format!("/api/invoices/{}/complete", completing[i]),
                "<complete/>",
            )
        },
    ))?;
    let complete_secs = t.elapsed().as_secs_f64();
    eprintln!(
        "completed {} in {complete_secs:.1} s ({:.0}/s)",
        completed.len(),
        completed.len() as f64 / complete_secs
    );
    Ok(Seeded {
        clients,
        invoices,
        completed,
        seed_secs,
        complete_secs,
    })
}

/// Creates one draft for `client` on the host at `addr` and returns its id. Invoice ids
/// grow by one with each invoice, so two such drafts bracket the invoices created between
/// them.
pub(crate) fn create_draft(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    client: u64,
) -> anyhow::Result<u64> {
    let body = format!(
        "<invoice><client_id>{client}</client_id><invoice-items>{ITEM}</invoice-items></invoice>"
    );
    Ok(
        rt.block_on(client::each(addr, KEY, 1, 1, "probe", move |_| {
            Call::with("POST", "/api/invoices", body.clone())
        }))?[0],
    )
}

/// Deletes the invoices `lo..=hi` on the host at `addr`; every one must exist.
pub(crate) fn delete_invoices(
    cfg: &Config,
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    lo: u64,
    hi: u64,
) -> anyhow::Result<()> {
    let n = usize::try_from(hi.saturating_sub(lo) + 1)?;
    rt.block_on(client::each(
        addr,
        KEY,
        cfg.connections,
        n,
        "deletions",
        move |i| Call {
            method: "DELETE",
            path: format!("/api/invoices/{}", lo + i as u64),
            body: None,
        },
    ))?;
    Ok(())
}

/// One workload: a wrk Lua script and the names it goes by.
pub(crate) struct Workload {
    /// The name in the list of failed measurements (`W1`).
    pub(crate) short: &'static str,
    /// The name in the report's table.
    pub(crate) label: &'static str,
    /// The script's file name in target/bench, without `.lua`, and the name in the log.
    pub(crate) file: &'static str,
    /// Whether each request creates an invoice.
    pub(crate) creates: bool,
    /// Whether each request sends a number the service accepts only once (an incoming's):
    /// every script written numbers its requests anew, so a script must be written for
    /// each measurement.
    pub(crate) numbered: bool,
    body: String,
}

impl Workload {
    /// A workload whose script `body` numbers its requests from `RUN`, a number the
    /// header of each script written sets anew.
    pub(crate) fn numbered(
        short: &'static str,
        label: &'static str,
        file: &'static str,
        body: String,
    ) -> Workload {
        Workload {
            short,
            label,
            file,
            creates: false,
            numbered: true,
            body,
        }
    }

    /// Writes the script to `cfg.out`, headers and key included.
    pub(crate) fn script(&self, cfg: &Config) -> anyhow::Result<PathBuf> {
        self.script_in(&cfg.out)
    }

    /// Writes the script to `dir`, headers and key included.
    pub(crate) fn script_in(&self, dir: &Path) -> anyhow::Result<PathBuf> {
        let path = dir.join(format!("{}.lua", self.file));
        let run = if self.numbered {
            format!("local RUN = {}\n", crate::imports::next_run())
        } else {
            String::new()
        };
        std::fs::write(
            &path,
            format!(
                "local KEY = \"{KEY}\"\nlocal headers = {{ [\"X-ServiceApiKey\"] = KEY, \
                 [\"Content-Type\"] = \"application/xml\" }}\n{run}{}",
                self.body
            ),
        )?;
        Ok(path)
    }
}

impl Workload {
    /// This workload sent to `hosts`: each wrk thread's connections go to one of them in
    /// turn (wrk -t2 on two hosts: half the connections on each, their figures summed by
    /// wrk itself), and 503 answers are counted apart from the other failures (`Answers
    /// 503: N`, see [`crate::wrk`]). The threads' `offset` (0, 1, …) is set as
    /// [`completions_of`] needs it; the body must define no `setup`, `response` or `done`
    /// of its own, so the W3 of [`w3`] cannot be sent this way.
    pub(crate) fn on_hosts(&self, hosts: &[SocketAddr]) -> Workload {
        let list = hosts
            .iter()
            .map(|a| format!("{{\"{}\", \"{}\"}}", a.ip(), a.port()))
            .collect::<Vec<_>>()
            .join(", ");
        Workload {
            body: format!(
                "local HOSTS = {{{list}}}\nlocal threads = {{}}\nfunction setup(thread)\n  \
                 local host = HOSTS[#threads % #HOSTS + 1]\n  \
                 thread.addr = wrk.lookup(host[1], host[2])[1]\n  \
                 thread:set(\"offset\", #threads)\n  table.insert(threads, thread)\nend\n\
                 {}\
                 unavailable = 0\nresponse = function(status, headers, body)\n  \
                 if status == 503 then\n    unavailable = unavailable + 1\n    \
                 if first_503 == nil then first_503 = string.sub(body, 1, 400) end\n  \
                 elseif status >= 400 and first == nil then\n    \
                 first = status .. \" \" .. string.sub(body, 1, 400)\n  end\nend\n\
                 done = function(summary, latency, requests)\n  local count, sample, sample_503 = 0, nil, nil\n  \
                 for _, thread in ipairs(threads) do\n    count = count + thread:get(\"unavailable\")\n    \
                 sample = sample or thread:get(\"first\")\n    sample_503 = sample_503 or thread:get(\"first_503\")\n  end\n  \
                 io.write(string.format(\"Answers 503: %d\\n\", count))\n  \
                 if sample_503 then\n    io.write(\"First 503: \" .. string.gsub(sample_503, \"%s+\", \" \") .. \"\\n\")\n  end\n  \
                 if sample then\n    io.write(\"First answer other than 2xx, 3xx or 503: \" .. string.gsub(sample, \"%s+\", \" \") .. \"\\n\")\n  end\nend\n",
                self.body
            ),
            ..*self
        }
    }
}

fn lua_list(ids: &[u64]) -> String {
    ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// A script of one request, the same every time.
fn fixed(method: &str, path: &str) -> String {
    format!("request = function()\n  return wrk.format(\"{method}\", \"{path}\", headers)\nend\n")
}

/// W1: GET of a random invoice of `sample`.
pub(crate) fn w1(sample: &[u64]) -> Workload {
    Workload {
        short: "W1",
        label: "W1 GET /api/invoices/{id}",
        file: "w1-get",
        creates: false,
        numbered: false,
        body: format!(
            "local ids = {{{}}}\nrequest = function()\n  return wrk.format(\"GET\", \"/api/invoices/\" .. ids[math.random(#ids)], headers)\nend\n",
            lua_list(sample)
        ),
    }
}

/// W2: POST of a draft with five items for a random client of `clients`.
pub(crate) fn w2(clients: &[u64]) -> Workload {
    Workload {
        short: "W2",
        label: "W2 POST /api/invoices, 5 items",
        file: "w2-create",
        creates: true,
        numbered: false,
        body: format!(
            "local clients = {{{}}}\nlocal items = \"<invoice-items>{}</invoice-items></invoice>\"\n\
             request = function()\n  return wrk.format(\"POST\", \"/api/invoices\", headers, \
             \"<invoice><client_id>\" .. clients[math.random(#clients)] .. \"</client_id>\" .. items)\nend\n",
            lua_list(clients),
            ITEM.repeat(5)
        ),
    }
}

/// W2 with its five items made from the articles `articles` (each item names an article
/// and a quantity; title, price and unit come from the article), beside W2.
pub(crate) fn w2_articles(clients: &[u64], articles: &[u64]) -> Workload {
    let items: String = articles
        .iter()
        .cycle()
        .take(5)
        .map(|a| {
            format!(
                "<invoice-item><article_id>{a}</article_id><quantity>3</quantity></invoice-item>"
            )
        })
        .collect();
    Workload {
        short: "W2 articles",
        label: "W2 POST /api/invoices, 5 items from articles",
        file: "w2-articles",
        creates: true,
        numbered: false,
        body: format!(
            "local clients = {{{}}}\nlocal items = \"<invoice-items>{items}</invoice-items></invoice>\"\n\
             request = function()\n  return wrk.format(\"POST\", \"/api/invoices\", headers, \
             \"<invoice><client_id>\" .. clients[math.random(#clients)] .. \"</client_id>\" .. items)\nend\n",
            lua_list(clients),
        ),
    }
}

/// Five articles in the catalogue of the host at `addr`, priced as [`ITEM`]: their ids.
pub(crate) fn articles(rt: &tokio::runtime::Runtime, addr: SocketAddr) -> anyhow::Result<Vec<u64>> {
    rt.block_on(client::each(addr, KEY, 1, 5, "articles", |i| {
        Call::with(
            "POST",
            "/api/articles",
            format!(
                "<article><title>Beratung {i}</title><description>Stunde</description>\
                 <sales_price>100</sales_price></article>"
            ),
        )
    }))
}

/// W3: completes the drafts `lo..=hi` (those W2 created), each once: the two wrk threads
/// take every other id, and a thread past `hi` stops.
pub(crate) fn w3(lo: u64, hi: u64) -> Workload {
    completions(
        lo,
        hi,
        "W3",
        "W3 PUT /api/invoices/{id}/complete (PDF)",
        "w3-complete",
    )
}

/// W3 with `einvoice_pdf` set (the caller sets it): each PDF a Factur-X hybrid with its
/// XML embedded. `lo..=hi` must be drafts of its own, none of them completed by W3.
pub(crate) fn w3_facturx(lo: u64, hi: u64) -> Workload {
    completions(
        lo,
        hi,
        "W3 Factur-X",
        "W3 Factur-X PDF PUT …/complete (einvoice_pdf=1)",
        "w3-complete-facturx",
    )
}

fn completions(
    lo: u64,
    hi: u64,
    short: &'static str,
    label: &'static str,
    file: &'static str,
) -> Workload {
    Workload {
        short,
        label,
        file,
        creates: false,
        numbered: false,
        body: format!(
            "local lo, hi = {lo}, {hi}\nlocal threads = 0\nfunction setup(thread)\n  thread:set(\"offset\", threads)\n  threads = threads + 1\nend\n\
             local n = 0\nrequest = function()\n  local id = lo + offset + n * 2\n  n = n + 1\n  \
             if id > hi then\n    wrk.thread:stop()\n    return wrk.format(\"GET\", \"/api/invoices/\" .. hi, headers)\n  end\n  \
             return wrk.format(\"PUT\", \"/api/invoices/\" .. id .. \"/complete\", headers, \"<complete/>\")\nend\n"
        ),
    }
}

/// W3 on the drafts `ids` (those W2 created), each completed once: thread `offset` takes
/// every other one from the `offset`th, and a thread past the end stops. The script
/// needs the threads' `offset` that [`Workload::on_hosts`] sets.
pub(crate) fn completions_of(ids: &[u64]) -> Workload {
    Workload {
        short: "W3",
        label: "W3 PUT /api/invoices/{id}/complete (PDF)",
        file: "w3-complete",
        creates: false,
        numbered: false,
        body: format!(
            "local ids = {{{}}}\nlocal n = 0\nrequest = function()\n  local i = offset + 1 + n * 2\n  n = n + 1\n  \
             if i > #ids then\n    wrk.thread:stop()\n    return wrk.format(\"GET\", \"/api/invoices/\" .. ids[#ids], headers)\n  end\n  \
             return wrk.format(\"PUT\", \"/api/invoices/\" .. ids[i] .. \"/complete\", headers, \"<complete/>\")\nend\n",
            lua_list(ids)
        ),
    }
}

/// W12: offers with five items, each created and then completed (its PDF rendered): a
/// thread sends a POST whenever no offer of its own waits for completion, else completes
/// the oldest one waiting, so about half the requests are each. The offers are of
/// `clients`.
pub(crate) fn w12(clients: &[u64]) -> Workload {
    let item = ITEM.replace("invoice-item", "offer-item");
    Workload {
        short: "W12",
        label: "W12 offer: POST with 5 items, then PUT …/complete (PDF)",
        file: "w12-offer",
        creates: false,
        numbered: false,
        body: format!(
            "local clients = {{{}}}\nlocal items = \"<offer-items>{}</offer-items></offer>\"\n\
             local waiting = {{}}\n\
             request = function()\n  local id = table.remove(waiting, 1)\n  \
             if id then\n    return wrk.format(\"PUT\", \"/api/offers/\" .. id .. \"/complete\", headers, \"<complete/>\")\n  end\n  \
             return wrk.format(\"POST\", \"/api/offers\", headers, \
             \"<offer><client_id>\" .. clients[math.random(#clients)] .. \"</client_id>\" .. items)\nend\n\
             response = function(status, headers, body)\n  if status == 201 then\n    \
             local id = string.match(body, \"<id type=\\\"integer\\\">(%d+)</id>\")\n    \
             if id then table.insert(waiting, id) end\n  end\nend\n",
            lua_list(clients),
            item.repeat(5)
        ),
    }
}

/// W7: the XRechnung CII e-invoice of a random invoice of `completed`, each a completed
/// invoice.
pub(crate) fn w7(completed: &[u64]) -> Workload {
    Workload {
        short: "W7",
        label: "W7 GET /api/invoices/{id}/e-invoice?profile=xrechnung-cii",
        file: "w7-einvoice",
        creates: false,
        numbered: false,
        body: format!(
            "local ids = {{{}}}\nrequest = function()\n  return wrk.format(\"GET\", \"/api/invoices/\" .. ids[math.random(#ids)] .. \"/{EINVOICE_QUERY}\", headers)\nend\n",
            lua_list(completed)
        ),
    }
}

/// Up to `n` links of the customer portal, renewed for the invoices of `candidates` on the
/// host at `addr` (drafts among them are skipped), whose settings name `public_url`: their
/// paths (`/portal/{token}`).
pub(crate) fn portal_links(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    candidates: &[u64],
    n: usize,
) -> anyhow::Result<Vec<String>> {
    rt.block_on(async {
        let mut conn = client::Conn::open(addr, KEY).await?;
        let mut paths = Vec::with_capacity(n);
        for id in candidates {
            if paths.len() == n {
                break;
            }
            let path = format!("/api/invoices/{id}/renew-link");
            let reply = conn.send(&Call::with("PUT", path.as_str(), "")).await?;
            if reply.status != 200 {
                continue;
            }
            let Some(url) = reply
                .body
                .split("<customerportal_url>")
                .nth(1)
                .and_then(|rest| rest.split('<').next())
            else {
                bail!("{}", describe("PUT", &path, &reply));
            };
            let at = url.find("/portal/").context("a portal link has /portal/")?;
            paths.push(url[at..].to_owned());
        }
        Ok(paths)
    })
}

/// W13: the customer portal's page of a document, the links taken in turn so that each
/// stays under its limit of requests per minute.
pub(crate) fn w13(paths: &[String]) -> Workload {
    let list = paths
        .iter()
        .map(|p| format!("\"{p}\""))
        .collect::<Vec<_>>()
        .join(",");
    Workload {
        short: "W13",
        label: "W13 GET /portal/{token} (a document's page)",
        file: "w13-portal",
        creates: false,
        numbered: false,
        body: format!(
            "local paths = {{{list}}}\nlocal at = nil\nrequest = function()\n  \
             if at == nil then at = math.random(#paths) end\n  at = at % #paths + 1\n  \
             return wrk.format(\"GET\", paths[at])\nend\n"
        ),
    }
}

/// W4: the first page of open invoices.
pub(crate) fn w4() -> Workload {
    Workload {
        short: "W4",
        label: "W4 GET ?status=OPEN&per_page=100",
        file: "w4-list-open",
        creates: false,
        numbered: false,
        body: fixed("GET", "/api/invoices?status=OPEN&per_page=100"),
    }
}

/// W5: all invoices grouped by client and month.
pub(crate) fn w5() -> Workload {
    Workload {
        short: "W5",
        label: "W5 GET ?group_by=client,month",
        file: "w5-group",
        creates: false,
        numbered: false,
        body: fixed("GET", "/api/invoices?group_by=client,month"),
    }
}

/// The count of all invoices, as HEAD answers it.
pub(crate) fn head_count() -> Workload {
    Workload {
        short: "HEAD",
        label: "HEAD /api/invoices (count)",
        file: "head-count",
        creates: false,
        numbered: false,
        body: fixed("HEAD", "/api/invoices"),
    }
}

/// One measurement: `cfg.connections` connections running `script` against the host at
/// `addr` for `cfg.seconds`.
pub(crate) fn measure(cfg: &Config, addr: SocketAddr, script: &Path) -> anyhow::Result<Figures> {
    Load {
        url: format!("http://{addr}"),
        seconds: cfg.seconds,
        connections: cfg.connections,
        key: None,
        script: Some(script),
    }
    .run()
}
