//! W8: imports of incoming e-invoices, `POST /api/incomings` with the file in base64, in
//! two variants: the KoSIT XRechnung CII sample as XML, and a Factur-X PDF carrying it.
//!
//! The service refuses a second incoming of the same supplier and number (409), so every
//! request carries an invoice number of its own: the sample's number (the first `<ram:ID>`
//! of `<rsm:ExchangedDocument>`) becomes a fixed-length one, made of a prefix, the number
//! of the script run, the wrk thread and a count. Its length is fixed so that only the few
//! base64 characters covering it change from one request to the next: the script holds
//! the base64 of the file before and after them and encodes just those bytes anew.
//!
//! Each measurement imports into accounts created for it, each request into the next in
//! turn. The service matches the sample's seller to one supplier per account and looks the
//! number up among the supplier's incomings (through an index; a build that scanned them
//! would slow down as a supplier's incomings grow, which this layout keeps visible). The
//! accounts are as many as make each supplier end a measurement run at the XML variant's
//! goal with [`PER_SUPPLIER`] incomings, whatever its length: about what a regular
//! supplier of one business sends over some years. Both variants, and every round of a
//! comparison, start from empty accounts.
//!
//! The PDF is `facturx-gs.pdf` (a one-page invoice made PDF/A-3b by Ghostscript, the XML
//! attached by the `factur-x` library) written anew from its objects: its page, font,
//! colour profile, metadata, `/Names /EmbeddedFiles` and `/AF` as they are, the embedded
//! XML stream replaced by the sample with its number field, uncompressed, and a fresh
//! cross-reference table. The importer reads it as it reads the original, except that
//! there is no stream to inflate.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{Context as _, bail};

use crate::client::{self, Call};
use crate::host::{Binary, KEY};
use crate::workloads::Workload;

/// The KoSIT sample, relative to the workspace root.
const CII: &str = "tests/einvoice/samples/01.01a-INVOICE_uncefact.xml";
/// The Factur-X PDF carrying that sample, relative to the workspace root.
const FACTURX: &str = "tests/einvoice/incoming/facturx-gs.pdf";

/// The digits after a number's prefix: run (4), wrk thread (2), count (10).
const DIGITS: usize = 16;

/// The goal of the XML variant, imports per second.
pub(crate) const GOAL_CII: f64 = 300.0;

/// The goal of the PDF variant, imports per second.
pub(crate) const GOAL_FACTURX: f64 = 100.0;

/// The incomings each supplier holds at the end of a measurement run at [`GOAL_CII`].
const PER_SUPPLIER: f64 = 100.0;

/// The accounts a measurement of `seconds` imports into.
pub(crate) fn account_count(seconds: u64) -> usize {
    (GOAL_CII * seconds as f64 / PER_SUPPLIER).ceil() as usize
}

/// Scripts and pre-checks written so far: each gets numbers of its own.
static RUNS: AtomicU32 = AtomicU32::new(1);

/// An e-invoice file to import, with where its invoice number is.
pub(crate) struct Upload {
    /// The variant's name in the list of failed measurements and in the log.
    pub(crate) short: &'static str,
    /// The variant's name in the report's table.
    pub(crate) label: &'static str,
    /// The script's file name in target/bench, without `.lua`.
    file: &'static str,
    /// The name sent as `filename`.
    filename: &'static str,
    /// `W8C-` or `W8P-`: the variant, so that the two never share a number.
    prefix: &'static str,
    /// The file with a number of the fixed length in place.
    bytes: Vec<u8>,
    /// Where the number starts in `bytes`.
    at: usize,
}

impl Upload {
    fn len(&self) -> usize {
        self.prefix.len() + DIGITS
    }

    /// The file with `number` (of the fixed length) in place.
    fn with_number(&self, number: &str) -> Vec<u8> {
        assert_eq!(number.len(), self.len());
        let mut bytes = self.bytes.clone();
        bytes[self.at..self.at + number.len()].copy_from_slice(number.as_bytes());
        bytes
    }

    /// The body of an import of the file with `number`.
    fn body(&self, number: &str) -> String {
        format!(
            "<incoming><filename>{}</filename><base64file>{}</base64file></incoming>",
            self.filename,
            base64(&self.with_number(number))
        )
    }

    /// The number the script of run `run` sends as the `n`th request of wrk thread
    /// `thread`; the script makes the same with `string.format`.
    fn number(&self, run: u32, thread: u32, n: u64) -> String {
        format!("{}{run:04}{thread:02}{n:010}", self.prefix)
    }

    /// The script's body: each request the file with a number of its own, sent with each
    /// of `keys` in turn, each answer checked for 201 (see [`crate::wrk`]). `RUN` is set
    /// by the script's header.
    fn lua(&self, keys: &[String]) -> String {
        // The bytes whose base64 changes: from the group of three holding the number's
        // first byte to the group holding its last.
        let start = self.at / 3 * 3;
        let end = (self.at + self.len()).div_ceil(3) * 3;
        assert!(
            end <= self.bytes.len(),
            "the number is at the file's very end"
        );
        let raw = |bytes: &[u8]| bytes.iter().map(|b| format!("\\{b}")).collect::<String>();
        format!(
            "local OPEN = \"<incoming><filename>{filename}</filename><base64file>{before}\"\n\
             local CLOSE = \"{after}</base64file></incoming>\"\n\
             local HEAD, TAIL = \"{head}\", \"{tail}\"\n\
             local PREFIX = \"{prefix}\"\n\
             local ALPHABET = \"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/\"\n\
             local function base64(s)\n  local out = {{}}\n  for i = 1, #s, 3 do\n    \
             local a, b, c = string.byte(s, i, i + 2)\n    local v = a * 65536 + b * 256 + c\n    \
             for shift = 18, 0, -6 do\n      local k = math.floor(v / 2 ^ shift) % 64 + 1\n      \
             out[#out + 1] = string.sub(ALPHABET, k, k)\n    end\n  end\n  return table.concat(out)\nend\n\
             local keyed = {{}}\nfor i, key in ipairs({{{keys}}}) do\n  \
             keyed[i] = {{ [\"X-ServiceApiKey\"] = key, [\"Content-Type\"] = \"application/xml\" }}\nend\n\
             local threads = {{}}\nfunction setup(thread)\n  thread:set(\"offset\", #threads)\n  \
             table.insert(threads, thread)\nend\n\
             local n = 0\nrequest = function()\n  \
             local number = string.format(\"%s%04d%02d%010d\", PREFIX, RUN, offset, n)\n  \
             local account = keyed[(n + offset) % #keyed + 1]\n  n = n + 1\n  \
             return wrk.format(\"POST\", \"/api/incomings\", account, OPEN .. base64(HEAD .. number .. TAIL) .. CLOSE)\nend\n\
             {check}",
            filename = self.filename,
            before = base64(&self.bytes[..start]),
            after = base64(&self.bytes[end..]),
            head = raw(&self.bytes[start..self.at]),
            tail = raw(&self.bytes[self.at + self.len()..end]),
            prefix = self.prefix,
            keys = keys
                .iter()
                .map(|k| format!("\"{k}\""))
                .collect::<Vec<_>>()
                .join(", "),
            check = expect_status(201),
        )
    }
}

/// Lua that counts the answers other than `status` over all threads and prints the count
/// and the first of them, as [`crate::wrk`] reads them. Needs the `threads` table of the
/// script's `setup`.
fn expect_status(status: u16) -> String {
    format!(
        "unexpected = 0\nresponse = function(status, headers, body)\n  if status ~= {status} then\n    \
         unexpected = unexpected + 1\n    \
         if first == nil then first = status .. \" \" .. string.sub(body, 1, 400) end\n  end\nend\n\
         done = function(summary, latency, requests)\n  local count, sample = 0, nil\n  \
         for _, thread in ipairs(threads) do\n    count = count + thread:get(\"unexpected\")\n    \
         sample = sample or thread:get(\"first\")\n  end\n  \
         io.write(string.format(\"Answers other than {status}: %d\\n\", count))\n  \
         if sample then\n    io.write(\"First answer other than {status}: \" .. string.gsub(sample, \"%s+\", \" \") .. \"\\n\")\n  end\nend\n"
    )
}

/// The two files W8 imports, read from the repository.
pub(crate) struct Uploads {
    pub(crate) cii: Upload,
    pub(crate) facturx: Upload,
}

impl Uploads {
    pub(crate) fn read(root: &Path) -> anyhow::Result<Uploads> {
        let read =
            |path: &str| std::fs::read(root.join(path)).with_context(|| format!("reading {path}"));
        let xml = read(CII)?;
        let cii = Upload {
            short: "W8 XRechnung CII",
            label: "W8 XRechnung CII POST /api/incomings (XML)",
            file: "w8-import-cii",
            ..with_number_field(&xml, "01.01a-INVOICE_uncefact.xml", "W8C-")
                .with_context(|| format!("the invoice number of {CII}"))?
        };
        let pdf = read(FACTURX)?;
        let facturx = Upload {
            short: "W8 Factur-X PDF",
            label: "W8 Factur-X PDF POST /api/incomings (PDF)",
            file: "w8-import-facturx",
            ..facturx(&pdf, &with_number_field(&xml, "facturx-gs.pdf", "W8P-")?)
                .with_context(|| format!("writing {FACTURX} anew"))?
        };
        Ok(Uploads { cii, facturx })
    }
}

/// `xml` with its invoice number (the text of the first `<ram:ID>` of
/// `<rsm:ExchangedDocument>`) replaced by a number of the fixed length.
fn with_number_field(
    xml: &[u8],
    filename: &'static str,
    prefix: &'static str,
) -> anyhow::Result<Upload> {
    let document =
        find(xml, b"<rsm:ExchangedDocument>", 0).context("no <rsm:ExchangedDocument>")?;
    let open = find(xml, b"<ram:ID>", document).context("no <ram:ID> in it")? + b"<ram:ID>".len();
    let close = find(xml, b"</ram:ID>", open).context("an unclosed <ram:ID>")?;
    let mut upload = Upload {
        short: "",
        label: "",
        file: "",
        filename,
        prefix,
        bytes: Vec::new(),
        at: open,
    };
    let placeholder = upload.number(0, 0, 0);
    upload.bytes = [&xml[..open], placeholder.as_bytes(), &xml[close..]].concat();
    Ok(upload)
}

/// The first `needle` in `hay` at or after `from`.
fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + from)
}

/// The Factur-X PDF `pdf` (one classic cross-reference table) written anew with `xml` as
/// its embedded file, uncompressed: the objects in their order, the one of `/Type
/// /EmbeddedFile` replaced, the offsets counted afresh.
fn facturx(pdf: &[u8], xml: &Upload) -> anyhow::Result<Upload> {
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let startxref = pdf
        .windows(9)
        .rposition(|w| w == b"startxref")
        .context("no startxref")?;
    let xref: usize = text(&pdf[startxref + 9..])
        .split_whitespace()
        .next()
        .context("no offset after startxref")?
        .parse()?;
    let table = pdf.get(xref..startxref).context("startxref out of range")?;
    let trailer = find(table, b"trailer", 0).context("no classic cross-reference table")?;
    let dict = text(&table[trailer + b"trailer".len()..]);
    if !table.starts_with(b"xref") || dict.contains("/Prev") || dict.contains("/Encrypt") {
        bail!("expected one cross-reference table and no encryption");
    }
    // (object number, offset) of each object in use.
    let mut objects = Vec::new();
    let lines = text(&table[4..trailer]);
    let mut lines = lines
        .lines()
        .map(str::split_whitespace)
        .map(Iterator::collect::<Vec<_>>);
    while let Some(head) = lines.next() {
        let [first, count] = head[..] else {
            if head.is_empty() {
                continue;
            }
            bail!(
                "a cross-reference subsection header of {} words",
                head.len()
            );
        };
        let (first, count): (u32, u32) = (first.parse()?, count.parse()?);
        for number in first..first + count {
            let entry = lines.next().context("a short subsection")?;
            if let [offset, _, "n"] = entry[..] {
                objects.push((number, offset.parse::<usize>()?));
            }
        }
    }
    objects.sort_by_key(|&(_, offset)| offset);
    let size = objects
        .iter()
        .map(|&(n, _)| n)
        .max()
        .context("no objects")?
        + 1;

    let mut out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = vec![None; size as usize];
    let mut at = None;
    for (i, &(number, offset)) in objects.iter().enumerate() {
        // An object runs to the next one, or to the table.
        let end = objects.get(i + 1).map_or(xref, |&(_, next)| next);
        let object = pdf.get(offset..end).context("an object out of range")?;
        let header = format!("{number} 0 obj");
        if !object.starts_with(header.as_bytes()) {
            bail!("object {number} is not at offset {offset}");
        }
        offsets[number as usize] = Some(out.len());
        let dict_end = find(object, b"stream", 0).unwrap_or(object.len());
        let dict = text(&object[..dict_end]).replace(' ', "");
        if dict.contains("/Type/EmbeddedFile") {
            if at.is_some() {
                bail!("more than one embedded file");
            }
            let len = xml.bytes.len();
            out.extend_from_slice(
                format!(
                    "{header}\n<<\n/Type /EmbeddedFile\n/Subtype /text#2Fxml\n/Params <<\n\
                     /ModDate (D:20231114221320+00'00')\n/Size {len}\n>>\n/Length {len}\n>>\nstream\n"
                )
                .as_bytes(),
            );
            at = Some(out.len() + xml.at);
            out.extend_from_slice(&xml.bytes);
            out.extend_from_slice(b"\nendstream\nendobj\n");
        } else {
            out.extend_from_slice(object);
        }
    }
    let at = at.context("no /Type /EmbeddedFile")?;
    let table = out.len();
    out.extend_from_slice(format!("xref\n0 {size}\n").as_bytes());
    for offset in &offsets {
        out.extend_from_slice(
            match offset {
                Some(offset) => format!("{offset:010} 00000 n \n"),
                None => "0000000000 65535 f \n".to_owned(),
            }
            .as_bytes(),
        );
    }
    out.extend_from_slice(
        format!("trailer\n{}\nstartxref\n{table}\n%%EOF\n", dict.trim()).as_bytes(),
    );
    Ok(Upload {
        short: xml.short,
        label: xml.label,
        file: xml.file,
        filename: xml.filename,
        prefix: xml.prefix,
        bytes: out,
        at,
    })
}

/// Base64 with padding, as `base64file` takes it.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let v = chunk
            .iter()
            .enumerate()
            .fold(0u32, |v, (i, &b)| v | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                ALPHABET[(v >> (18 - 6 * i) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

/// W8 for `upload`: each request imports it with a number of its own, into each of the
/// accounts of `keys` in turn; any answer other than 201 counts as failed.
pub(crate) fn w8(upload: &Upload, keys: &[String]) -> Workload {
    Workload::numbered(upload.short, upload.label, upload.file, upload.lua(keys))
}

/// `count` new accounts on `data`, served by a host of `binary`: their API keys.
pub(crate) fn accounts(
    binary: &Binary,
    data: &Path,
    upload: &Upload,
    count: usize,
) -> anyhow::Result<Vec<String>> {
    let run = next_run();
    (0..count)
        .map(|i| binary.create_account(data, &format!("{} {run}.{i}", upload.short)))
        .collect()
}

/// The number of the next script run or pre-check.
pub(crate) fn next_run() -> u32 {
    RUNS.fetch_add(1, Ordering::Relaxed)
}

/// Imports `upload` once, with a number no script sends, on the host at `addr`: Ok when
/// it answers 201 with an incoming of that number, else a description of the answer.
pub(crate) fn import(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    upload: &Upload,
) -> anyhow::Result<Result<(), (u16, String)>> {
    let number = upload.number(next_run(), 99, 0);
    let reply = rt.block_on(client::once(
        addr,
        KEY,
        &Call::with("POST", "/api/incomings", upload.body(&number)),
    ))?;
    Ok(
        if reply.status == 201 && reply.body.contains(&format!(">{number}<")) {
            Ok(())
        } else {
            let body: String = reply.body.chars().take(800).collect();
            Err((
                reply.status,
                format!(
                    "POST /api/incomings with {} (number {number}) answered {}: {}",
                    upload.filename,
                    reply.status,
                    body.trim()
                ),
            ))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .and_then(Path::parent)
            .unwrap()
    }

    #[test]
    fn base64_as_the_rfc_has_it() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn the_number_replaces_the_samples() {
        let uploads = Uploads::read(root()).unwrap();
        for upload in [&uploads.cii, &uploads.facturx] {
            let number = upload.number(12, 1, 345);
            assert_eq!(number.len(), upload.len());
            let file = upload.with_number(&number);
            let text = String::from_utf8_lossy(&file);
            assert!(text.contains(&format!("<ram:ID>{number}</ram:ID>")));
            assert!(!text.contains("123456XX</ram:ID>"));
        }
    }

    #[test]
    fn the_pdf_has_its_objects_where_its_table_says() {
        let pdf = Uploads::read(root()).unwrap().facturx.bytes;
        let startxref = pdf.windows(9).rposition(|w| w == b"startxref").unwrap();
        let tail = String::from_utf8_lossy(&pdf[startxref + 9..]);
        let xref: usize = tail.split_whitespace().next().unwrap().parse().unwrap();
        let table = String::from_utf8_lossy(&pdf[xref..startxref]);
        assert!(table.starts_with("xref\n0 16\n"), "{table}");
        for (number, line) in table.lines().skip(2).take(16).enumerate() {
            let offset: usize = line[..10].parse().unwrap();
            if number == 0 {
                assert!(line.ends_with("f "));
            } else {
                assert!(pdf[offset..].starts_with(format!("{number} 0 obj").as_bytes()));
            }
        }
        let catalog = String::from_utf8_lossy(&pdf[..xref]);
        assert!(catalog.contains("/Names [ (factur\\055x\\056xml) 14 0 R ]"));
        assert!(catalog.contains("/AF 15 0 R"));
        assert!(table.contains("/Root 1 0 R"));
    }
}
