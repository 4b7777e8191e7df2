//! Which attachment is the e-invoice: the catalog's `/Names /EmbeddedFiles` name tree and
//! its `/AF` array, else every file specification in the document; the attachment named
//! as an e-invoice is, else the only one that is XML.

use std::collections::HashSet;

use super::syntax::{Dict, Obj, dict_get, dict_name_is, text};
use super::xref::Doc;
use super::{Embedded, PdfError, malformed};

/// The names an e-invoice has, best first (compared case-insensitively).
const KNOWN_NAMES: [&str; 3] = ["factur-x.xml", "zugferd-invoice.xml", "xrechnung.xml"];

/// An attachment that may be the e-invoice.
struct Candidate {
    /// `/UF`, `/F`, the key in the name tree; as given.
    names: Vec<String>,
    /// The embedded file stream.
    file: u32,
}

#[derive(Default)]
struct Found {
    candidates: Vec<Candidate>,
    files: HashSet<u32>,
    specs: HashSet<u32>,
}

impl Doc<'_> {
    pub(super) fn find(&mut self) -> Result<Embedded, PdfError> {
        let mut found = Found::default();
        if let Some(root) = self.root {
            let Obj::Dict(catalog) = self.resolve(Obj::Ref(root))? else {
                return Err(malformed("the catalog is not a dictionary"));
            };
            if let Some(names) = dict_get(&catalog, b"Names")
                && let Obj::Dict(names) = self.resolve(names.clone())?
                && let Some(files) = dict_get(&names, b"EmbeddedFiles")
            {
                self.name_tree(files.clone(), &mut found)?;
            }
            if let Some(af) = dict_get(&catalog, b"AF")
                && let Obj::Array(specs) = self.resolve(af.clone())?
            {
                for spec in specs {
                    self.filespec(spec, None, &mut found)?;
                }
            }
            if let Some((name, file)) = self.pick(&found)? {
                return self.extract(name, file);
            }
        }
        // Attachments the catalog does not list (page annotations, broken catalogs).
        let mut nums: Vec<u32> = self.xref.keys().copied().collect();
        nums.sort_unstable();
        for num in nums {
            if found.specs.contains(&num) {
                continue;
            }
            let dict = match self.object(num) {
                Ok(Obj::Dict(d)) => d,
                Ok(_) => continue,
                Err(e @ PdfError::TooLarge(_)) => return Err(e),
                Err(_) => continue,
            };
            if dict_name_is(&dict, b"Type", b"Filespec") || dict_get(&dict, b"EF").is_some() {
                found.specs.insert(num);
                match self.candidate(&dict, None, &mut found) {
                    Ok(()) => {}
                    Err(e @ PdfError::TooLarge(_)) => return Err(e),
                    Err(_) => continue,
                }
            }
        }
        match self.pick(&found)? {
            Some((name, file)) => self.extract(name, file),
            None => Err(PdfError::NoEInvoice),
        }
    }

    /// Every file specification of the name tree `root`.
    fn name_tree(&mut self, root: Obj, found: &mut Found) -> Result<(), PdfError> {
        let mut nodes = HashSet::new();
        let mut stack = vec![(root, 0usize)];
        while let Some((node, depth)) = stack.pop() {
            if depth > self.limits.depth_max {
                return Err(PdfError::TooLarge(format!(
                    "a name tree deeper than {}",
                    self.limits.depth_max
                )));
            }
            if let Obj::Ref(n) = node
                && !nodes.insert(n)
            {
                return Err(malformed(format!("name tree node {n} is reached twice")));
            }
            let Obj::Dict(node) = self.resolve(node)? else {
                continue;
            };
            if let Some(names) = dict_get(&node, b"Names")
                && let Obj::Array(names) = self.resolve(names.clone())?
            {
                let mut pairs = names.into_iter();
                while let (Some(key), Some(spec)) = (pairs.next(), pairs.next()) {
                    let key = match key {
                        Obj::Str(k) => Some(k),
                        _ => None,
                    };
                    self.filespec(spec, key, found)?;
                }
            }
            if let Some(kids) = dict_get(&node, b"Kids")
                && let Obj::Array(kids) = self.resolve(kids.clone())?
            {
                stack.extend(kids.into_iter().rev().map(|k| (k, depth + 1)));
            }
        }
        Ok(())
    }

    fn filespec(
        &mut self,
        spec: Obj,
        key: Option<Vec<u8>>,
        found: &mut Found,
    ) -> Result<(), PdfError> {
        if let Obj::Ref(n) = spec
            && !found.specs.insert(n)
        {
            return Ok(());
        }
        match self.resolve(spec)? {
            Obj::Dict(d) => self.candidate(&d, key, found),
            // A file specification may be a plain file name: nothing embedded.
            _ => Ok(()),
        }
    }

    fn candidate(
        &mut self,
        spec: &Dict,
        key: Option<Vec<u8>>,
        found: &mut Found,
    ) -> Result<(), PdfError> {
        let Some(ef) = dict_get(spec, b"EF") else {
            return Ok(());
        };
        let Obj::Dict(ef) = self.resolve(ef.clone())? else {
            return Ok(());
        };
        let Some(&Obj::Ref(file)) = dict_get(&ef, b"F").or_else(|| dict_get(&ef, b"UF")) else {
            return Ok(());
        };
        if !found.files.insert(file) {
            return Ok(());
        }
        let mut names = Vec::new();
        for k in [&b"UF"[..], b"F"] {
            if let Some(v) = dict_get(spec, k)
                && let Obj::Str(s) = self.resolve(v.clone())?
            {
                names.push(text(&s));
            }
        }
        if let Some(k) = key {
            names.push(text(&k));
        }
        names.retain(|n| !basename(n).is_empty());
        found.candidates.push(Candidate { names, file });
        Ok(())
    }

    /// The e-invoice among the candidates: its name and file stream.
    fn pick(&mut self, found: &Found) -> Result<Option<(String, u32)>, PdfError> {
        for known in KNOWN_NAMES {
            for c in &found.candidates {
                if let Some(n) = c
                    .names
                    .iter()
                    .find(|n| basename(n).eq_ignore_ascii_case(known))
                {
                    return Ok(Some((basename(n).to_owned(), c.file)));
                }
            }
        }
        let mut xml = None;
        for c in &found.candidates {
            let named = c.names.iter().any(|n| {
                let b = basename(n);
                b.len() > 4
                    && b.is_char_boundary(b.len() - 4)
                    && b[b.len() - 4..].eq_ignore_ascii_case(".xml")
            });
            if named || self.typed_xml(c.file)? {
                if xml.is_some() {
                    return Ok(None);
                }
                let name = c
                    .names
                    .first()
                    .map(|n| basename(n).to_owned())
                    .unwrap_or_default();
                xml = Some((name, c.file));
            }
        }
        Ok(xml)
    }

    /// Whether the embedded file stream `file` says it is XML.
    fn typed_xml(&mut self, file: u32) -> Result<bool, PdfError> {
        match self.object(file) {
            Ok(Obj::Stream(d, _)) => Ok(matches!(
                dict_get(&d, b"Subtype"),
                Some(Obj::Name(n)) if n.eq_ignore_ascii_case(b"text/xml")
                    || n.eq_ignore_ascii_case(b"application/xml")
            )),
            Ok(_) => Ok(false),
            Err(e @ PdfError::TooLarge(_)) => Err(e),
            Err(_) => Ok(false),
        }
    }

    fn extract(&mut self, filename: String, file: u32) -> Result<Embedded, PdfError> {
        let Obj::Stream(dict, start) = self.object(file)? else {
            return Err(malformed("the embedded file is not a stream"));
        };
        let raw = self.stream_bytes(&dict, start)?;
        let xml = self.decode(&dict, raw)?;
        Ok(Embedded { filename, xml })
    }
}

/// The last part of a file name that may hold folders.
fn basename(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name).trim()
}
