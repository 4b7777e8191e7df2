//! The document's objects by number: the cross-reference data (tables, streams, hybrid
//! files, incremental updates) or, when that is broken, a scan of the file for `N G obj`;
//! object streams; the data of a stream and its filters. Every read is charged against
//! the bounds of `limits`.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::filters::{inflate, unpredict};
use super::syntax::{Dict, Obj, Parser, dict_get, dict_int, dict_name_is, indirect, is_ws, marker};
use super::{PdfError, find, lossy, malformed, rfind};
use crate::limits::{
    PDF_STREAM_END_SLACK, PDF_STREAMS_FACTOR, PDF_VALUES_FACTOR, PDF_WORK_FACTOR, PDF_WORK_FLOOR,
    PdfLimits,
};

/// Where an object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Loc {
    Free,
    At(usize),
    /// In the object stream of that number, at that index.
    InStream(u32, u32),
}

/// An object stream, decoded.
struct ObjStm {
    data: Vec<u8>,
    first: usize,
    members: Vec<(u32, usize)>,
    by_num: HashMap<u32, usize>,
}

pub(super) struct Doc<'a> {
    pdf: &'a [u8],
    pub(super) limits: PdfLimits,
    pub(super) xref: HashMap<u32, Loc>,
    pub(super) root: Option<u32>,
    pub(super) encrypted: bool,
    /// Each object stream decoded, or why it could not be: one that fails is not decoded
    /// again for every object it is said to hold.
    objstms: HashMap<u32, Result<Rc<ObjStm>, PdfError>>,
    /// Objects being resolved, innermost last: one of them again is a loop.
    active: Vec<u32>,
    inflated: usize,
    work: usize,
    endstreams: Option<Vec<usize>>,
}

impl<'a> Doc<'a> {
    pub(super) fn new(pdf: &'a [u8], limits: &PdfLimits) -> Self {
        Doc {
            pdf,
            limits: *limits,
            xref: HashMap::new(),
            root: None,
            encrypted: false,
            objstms: HashMap::new(),
            active: Vec::new(),
            inflated: 0,
            work: 0,
            endstreams: None,
        }
    }

    fn parser<'b>(&self, buf: &'b [u8], pos: usize) -> Parser<'b> {
        Parser {
            buf,
            pos: pos.min(buf.len()),
            depth_max: self.limits.depth_max,
            values: 0,
            values_max: self.limits.objects_max.saturating_mul(PDF_VALUES_FACTOR),
        }
    }

    /// Counts `bytes` read by the parser against its bound.
    fn charge(&mut self, bytes: usize) -> Result<(), PdfError> {
        self.work = self.work.saturating_add(bytes);
        let max = self
            .pdf
            .len()
            .saturating_add(self.inflated)
            .saturating_mul(PDF_WORK_FACTOR)
            .saturating_add(PDF_WORK_FLOOR);
        if self.work > max {
            return Err(PdfError::TooLarge(
                "its objects overlap: reading them takes too long".into(),
            ));
        }
        Ok(())
    }

    fn too_many_objects(&self) -> PdfError {
        PdfError::TooLarge(format!("more than {} objects", self.limits.objects_max))
    }

    /// The object written at `at` in the file.
    fn parse_at(&mut self, at: usize, expect: Option<u32>) -> Result<(u32, Obj), PdfError> {
        let mut p = self.parser(self.pdf, at);
        let result = indirect(&mut p, expect);
        self.charge(p.pos.saturating_sub(at))?;
        result
    }

    // -- Cross-reference data

    pub(super) fn read_xref(&mut self) -> Result<(), PdfError> {
        let at = rfind(self.pdf, b"startxref").ok_or_else(|| malformed("no startxref"))?;
        let mut p = self.parser(self.pdf, at + b"startxref".len());
        let start = usize::try_from(p.uint()?).map_err(|_| malformed("startxref too large"))?;
        let mut visited = HashSet::new();
        let mut entries = 0usize;
        let mut next = Some(start);
        let mut newest = true;
        while let Some(off) = next {
            if !visited.insert(off) {
                return Err(malformed(
                    "the /Prev chain of cross-reference sections loops",
                ));
            }
            if visited.len() > self.limits.objects_max {
                return Err(self.too_many_objects());
            }
            let trailer = self.xref_section(off, &mut entries)?;
            if newest {
                self.encrypted = dict_get(&trailer, b"Encrypt").is_some();
                newest = false;
            }
            if self.root.is_none()
                && let Some(Obj::Ref(root)) = dict_get(&trailer, b"Root")
            {
                self.root = Some(*root);
            }
            // A hybrid file: its cross-reference stream comes before the older sections.
            if let Some(stm) = dict_int(&trailer, b"XRefStm") {
                let stm = usize::try_from(stm).map_err(|_| malformed("bad /XRefStm"))?;
                if visited.insert(stm) {
                    self.xref_stream(stm, &mut entries)?;
                }
            }
            next = match dict_get(&trailer, b"Prev") {
                Some(Obj::Int(prev)) => {
                    Some(usize::try_from(*prev).map_err(|_| malformed("bad /Prev"))?)
                }
                _ => None,
            };
        }
        if self.root.is_none() {
            return Err(malformed("the trailer names no catalog"));
        }
        Ok(())
    }

    /// Reads the section at `off` into the table (older entries never replace newer ones)
    /// and answers its trailer.
    fn xref_section(&mut self, off: usize, entries: &mut usize) -> Result<Dict, PdfError> {
        let mut p = self.parser(self.pdf, off);
        if !p.next_is(b"xref") {
            return self.xref_stream(off, entries);
        }
        let result = self.xref_table(&mut p, entries);
        self.charge(p.pos.saturating_sub(off))?;
        result
    }

    fn xref_table(&mut self, p: &mut Parser<'_>, entries: &mut usize) -> Result<Dict, PdfError> {
        while !p.next_is(b"trailer") {
            let first = p.uint()?;
            let count = p.uint()?;
            for i in 0..count {
                let offset = p.uint()?;
                p.uint()?;
                p.skip_ws();
                let loc = match p.token() {
                    b"n" => Loc::At(
                        usize::try_from(offset).map_err(|_| malformed("an offset is too large"))?,
                    ),
                    b"f" => Loc::Free,
                    [] if p.at_end() => return Err(PdfError::Truncated),
                    _ => return Err(malformed("a cross-reference entry is neither n nor f")),
                };
                *entries += 1;
                if *entries > self.limits.objects_max {
                    return Err(self.too_many_objects());
                }
                let num = first
                    .checked_add(i)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| malformed("an object number is too large"))?;
                self.xref.entry(num).or_insert(loc);
            }
        }
        match p.value(0)? {
            Obj::Dict(d) => Ok(d),
            _ => Err(malformed("the trailer is not a dictionary")),
        }
    }

    fn xref_stream(&mut self, off: usize, entries: &mut usize) -> Result<Dict, PdfError> {
        let Obj::Stream(dict, start) = self.parse_at(off, None)?.1 else {
            return Err(malformed("no cross-reference data at startxref"));
        };
        let [w0, w1, w2] = xref_widths(&dict)?;
        let index = xref_index(&dict)?;
        let raw = self.stream_bytes(&dict, start)?;
        let data = self.decode(&dict, raw)?;
        let field = |bytes: &[u8]| bytes.iter().fold(0u64, |n, &b| (n << 8) | u64::from(b));
        let mut rows = data.chunks_exact(w0 + w1 + w2);
        'sections: for (first, count) in index {
            for i in 0..count {
                let Some(row) = rows.next() else {
                    break 'sections;
                };
                *entries += 1;
                if *entries > self.limits.objects_max {
                    return Err(self.too_many_objects());
                }
                let kind = if w0 == 0 { 1 } else { field(&row[..w0]) };
                let a = field(&row[w0..w0 + w1]);
                let b = field(&row[w0 + w1..]);
                let num = first
                    .checked_add(i)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| malformed("an object number is too large"))?;
                let loc = match kind {
                    0 => Loc::Free,
                    1 => match usize::try_from(a) {
                        Ok(a) => Loc::At(a),
                        Err(_) => continue,
                    },
                    2 => match (u32::try_from(a), u32::try_from(b)) {
                        (Ok(s), Ok(i)) => Loc::InStream(s, i),
                        _ => continue,
                    },
                    // Other types are references to the null object.
                    _ => continue,
                };
                self.xref.entry(num).or_insert(loc);
            }
        }
        Ok(dict)
    }

    /// Without usable cross-reference data: every `N G obj` in the file (the last of a
    /// number wins), the members of the object streams among them, and the last trailer.
    pub(super) fn scan(&mut self) -> Result<(), PdfError> {
        let pdf = self.pdf;
        let mut markers = 0usize;
        let mut from = 0;
        while let Some(k) = find(pdf, b"obj", from) {
            from = k + 3;
            if let Some((num, at)) = marker(pdf, k) {
                markers += 1;
                if markers > self.limits.objects_max {
                    return Err(self.too_many_objects());
                }
                self.xref.insert(num, Loc::At(at));
            }
        }
        let mut trailer: Option<(usize, Dict)> = None;
        if let Some(at) = rfind(pdf, b"trailer") {
            let mut p = self.parser(pdf, at + b"trailer".len());
            let value = p.value(0);
            self.charge(p.pos.saturating_sub(at))?;
            if let Ok(Obj::Dict(d)) = value {
                trailer = Some((at, d));
            }
        }
        let mut nums: Vec<u32> = self.xref.keys().copied().collect();
        nums.sort_unstable();
        for num in nums {
            let Some(Loc::At(at)) = self.xref.get(&num).copied() else {
                continue;
            };
            let dict = match self.parse_at(at, Some(num)) {
                Ok((_, Obj::Stream(dict, _))) => dict,
                Ok(_) => continue,
                Err(e @ PdfError::TooLarge(_)) => return Err(e),
                Err(_) => continue,
            };
            if dict_name_is(&dict, b"Type", b"ObjStm") {
                let stm = match self.objstm(num) {
                    Ok(stm) => stm,
                    Err(e @ PdfError::TooLarge(_)) => return Err(e),
                    Err(_) => continue,
                };
                for (index, &(member, _)) in stm.members.iter().enumerate() {
                    let index = u32::try_from(index).unwrap_or(u32::MAX);
                    self.xref.entry(member).or_insert(Loc::InStream(num, index));
                }
                if self.xref.len() > self.limits.objects_max {
                    return Err(self.too_many_objects());
                }
            } else if dict_name_is(&dict, b"Type", b"XRef")
                && dict_get(&dict, b"Root").is_some()
                && trailer.as_ref().is_none_or(|(t, _)| *t < at)
            {
                trailer = Some((at, dict));
            }
        }
        if let Some((_, t)) = trailer {
            if let Some(Obj::Ref(root)) = dict_get(&t, b"Root") {
                self.root = Some(*root);
            }
            self.encrypted = dict_get(&t, b"Encrypt").is_some();
        }
        Ok(())
    }

    // -- Objects

    /// Object `num`, resolved through the cross-reference data (null when absent).
    pub(super) fn object(&mut self, num: u32) -> Result<Obj, PdfError> {
        if self.active.contains(&num) {
            return Err(malformed(format!("object {num} refers to itself")));
        }
        if self.active.len() >= self.limits.depth_max {
            return Err(PdfError::TooLarge(format!(
                "references nest deeper than {}",
                self.limits.depth_max
            )));
        }
        self.active.push(num);
        let result = self.load(num);
        self.active.pop();
        result
    }

    fn load(&mut self, num: u32) -> Result<Obj, PdfError> {
        match self.xref.get(&num).copied() {
            None | Some(Loc::Free) => Ok(Obj::Null),
            Some(Loc::At(at)) => Ok(self.parse_at(at, Some(num))?.1),
            Some(Loc::InStream(s, index)) => {
                let stm = self.objstm(s)?;
                let off = match stm
                    .members
                    .get(usize::try_from(index).unwrap_or(usize::MAX))
                {
                    Some(&(m, off)) if m == num => off,
                    _ => *stm.by_num.get(&num).ok_or_else(|| {
                        malformed(format!("object {num} is not in object stream {s}"))
                    })?,
                };
                let pos = stm
                    .first
                    .checked_add(off)
                    .filter(|&p| p <= stm.data.len())
                    .ok_or_else(|| malformed("an object lies outside its object stream"))?;
                let mut p = self.parser(&stm.data, pos);
                let value = p.value(0);
                self.charge(p.pos.saturating_sub(pos))?;
                value
            }
        }
    }

    /// `o`, with references followed.
    pub(super) fn resolve(&mut self, mut o: Obj) -> Result<Obj, PdfError> {
        let mut seen: Vec<u32> = Vec::new();
        while let Obj::Ref(n) = o {
            if seen.contains(&n) {
                return Err(malformed(format!("a reference to object {n} loops")));
            }
            if seen.len() >= self.limits.depth_max {
                return Err(PdfError::TooLarge(format!(
                    "references nest deeper than {}",
                    self.limits.depth_max
                )));
            }
            seen.push(n);
            o = self.object(n)?;
        }
        Ok(o)
    }

    /// Object stream `num`, decoded at most once.
    fn objstm(&mut self, num: u32) -> Result<Rc<ObjStm>, PdfError> {
        if let Some(known) = self.objstms.get(&num) {
            return known.clone();
        }
        let decoded = self.decode_objstm(num);
        self.objstms.insert(num, decoded.clone());
        decoded
    }

    fn decode_objstm(&mut self, num: u32) -> Result<Rc<ObjStm>, PdfError> {
        if !matches!(self.xref.get(&num), Some(Loc::At(_))) {
            return Err(malformed(format!("object stream {num} is not in the file")));
        }
        let Obj::Stream(dict, start) = self.object(num)? else {
            return Err(malformed(format!("object stream {num} is not a stream")));
        };
        let (Some(n), Some(first)) = (dict_int(&dict, b"N"), dict_int(&dict, b"First")) else {
            return Err(malformed("an object stream without /N or /First"));
        };
        let n = usize::try_from(n).map_err(|_| malformed("bad /N"))?;
        let first = usize::try_from(first).map_err(|_| malformed("bad /First"))?;
        if n > self.limits.objects_max {
            return Err(self.too_many_objects());
        }
        let raw = self.stream_bytes(&dict, start)?;
        let data = self.decode(&dict, raw)?;
        if first > data.len() {
            return Err(malformed("/First lies past an object stream's end"));
        }
        let mut p = self.parser(&data[..first], 0);
        let mut members = Vec::new();
        let mut by_num = HashMap::new();
        let mut header = || -> Result<(), PdfError> {
            for _ in 0..n {
                let m = u32::try_from(p.uint()?).map_err(|_| malformed("bad object number"))?;
                let off = usize::try_from(p.uint()?).map_err(|_| malformed("bad offset"))?;
                members.push((m, off));
                by_num.entry(m).or_insert(off);
            }
            Ok(())
        };
        let result = header();
        let read = p.pos;
        self.charge(read)?;
        result.map_err(|e| match e {
            PdfError::Truncated => malformed("an object stream's header is short"),
            e => e,
        })?;
        Ok(Rc::new(ObjStm {
            data,
            first,
            members,
            by_num,
        }))
    }

    /// The raw data of the stream whose data starts at `start`: `/Length` bytes when they
    /// end at `endstream`, else up to the next `endstream`.
    pub(super) fn stream_bytes(&mut self, dict: &Dict, start: usize) -> Result<&'a [u8], PdfError> {
        let pdf = self.pdf;
        let declared = match dict_get(dict, b"Length") {
            Some(o) => match self.resolve(o.clone())? {
                Obj::Int(n) => usize::try_from(n).ok(),
                _ => None,
            },
            None => None,
        };
        if let Some(n) = declared
            && let Some(end) = start.checked_add(n)
            && end <= pdf.len()
        {
            let slack = &pdf[end..pdf.len().min(end + PDF_STREAM_END_SLACK + 9)];
            let ws = slack.iter().take_while(|&&c| is_ws(c)).count();
            if slack[ws..].starts_with(b"endstream") {
                return Ok(&pdf[start..end]);
            }
        }
        let mut end = self.next_endstream(start).ok_or(PdfError::Truncated)?;
        if end > start && pdf[end - 1] == b'\n' {
            end -= 1;
        }
        if end > start && pdf[end - 1] == b'\r' {
            end -= 1;
        }
        Ok(&pdf[start..end])
    }

    /// The first `endstream` at or after `from` (all of them found once).
    fn next_endstream(&mut self, from: usize) -> Option<usize> {
        let pdf = self.pdf;
        let all = self.endstreams.get_or_insert_with(|| {
            let mut all = Vec::new();
            let mut at = 0;
            while let Some(k) = find(pdf, b"endstream", at) {
                all.push(k);
                at = k + 1;
            }
            all
        });
        let i = all.partition_point(|&k| k < from);
        all.get(i).copied()
    }

    /// A stream's data decoded by its filters. What decoding reads and inflates counts
    /// against the bounds whether or not it succeeds: a stream that fails late has cost
    /// as much as one that does not.
    pub(super) fn decode(&mut self, dict: &Dict, raw: &[u8]) -> Result<Vec<u8>, PdfError> {
        self.charge(raw.len())?;
        let filters = self.filters(dict)?;
        let parms = self.decode_parms(dict)?;
        let stream_max = self.limits.stream_bytes_max;
        let left = stream_max
            .saturating_mul(PDF_STREAMS_FACTOR)
            .saturating_sub(self.inflated);
        if filters.is_empty() {
            if raw.len() > stream_max || raw.len() > left {
                return Err(PdfError::TooLarge(format!(
                    "a stream is longer than {stream_max} bytes"
                )));
            }
            self.inflated += raw.len();
            return Ok(raw.to_vec());
        }
        let mut data: Option<Vec<u8>> = None;
        for (i, filter) in filters.iter().enumerate() {
            if filter != b"FlateDecode" && filter != b"Fl" {
                return Err(malformed(format!(
                    "the filter /{} is not supported",
                    lossy(filter)
                )));
            }
            let left = stream_max
                .saturating_mul(PDF_STREAMS_FACTOR)
                .saturating_sub(self.inflated);
            let mut out = Vec::new();
            let inflated = inflate(
                data.as_deref().unwrap_or(raw),
                stream_max,
                self.limits.inflate_ratio_max,
                left,
                &mut out,
            );
            self.inflated += out.len();
            inflated?;
            data = Some(match parms.get(i) {
                Some(Some(p)) => unpredict(out, p)?,
                _ => out,
            });
        }
        Ok(data.unwrap_or_default())
    }

    /// The names of a stream's filters (`/Filter`), in the order they apply.
    fn filters(&mut self, dict: &Dict) -> Result<Vec<Vec<u8>>, PdfError> {
        Ok(match dict_get(dict, b"Filter") {
            None => Vec::new(),
            Some(f) => match self.resolve(f.clone())? {
                Obj::Null => Vec::new(),
                Obj::Name(n) => vec![n],
                Obj::Array(a) => a
                    .into_iter()
                    .map(|f| match f {
                        Obj::Name(n) => Ok(n),
                        _ => Err(malformed("a filter is not a name")),
                    })
                    .collect::<Result<_, _>>()?,
                _ => return Err(malformed("/Filter is not a name")),
            },
        })
    }

    /// The parameters of a stream's filters (`/DecodeParms`), one per filter where given.
    fn decode_parms(&mut self, dict: &Dict) -> Result<Vec<Option<Dict>>, PdfError> {
        Ok(match dict_get(dict, b"DecodeParms") {
            None => Vec::new(),
            Some(p) => match self.resolve(p.clone())? {
                Obj::Dict(d) => vec![Some(d)],
                Obj::Array(a) => a
                    .into_iter()
                    .map(|p| match p {
                        Obj::Dict(d) => Some(d),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            },
        })
    }
}

/// The field widths of a cross-reference stream's rows (`/W [a b c]`, each at most 8
/// bytes, not all zero).
fn xref_widths(dict: &Dict) -> Result<[usize; 3], PdfError> {
    let widths: Vec<usize> = match dict_get(dict, b"W") {
        Some(Obj::Array(w)) => w
            .iter()
            .map(|w| match w {
                Obj::Int(n @ 0..=8) => usize::try_from(*n).unwrap_or(0),
                _ => 9,
            })
            .collect(),
        _ => Vec::new(),
    };
    let [w0, w1, w2] = widths[..] else {
        return Err(malformed("a cross-reference stream without /W [a b c]"));
    };
    if w0 > 8 || w1 > 8 || w2 > 8 || w0 + w1 + w2 == 0 {
        return Err(malformed("bad /W of a cross-reference stream"));
    }
    Ok([w0, w1, w2])
}

/// The subsections of a cross-reference stream (`/Index`: first object number and
/// count), by default one from 0 to `/Size`.
fn xref_index(dict: &Dict) -> Result<Vec<(u64, u64)>, PdfError> {
    let size = u64::try_from(dict_int(dict, b"Size").unwrap_or(0)).unwrap_or(0);
    Ok(match dict_get(dict, b"Index") {
        Some(Obj::Array(a)) => a
            .chunks_exact(2)
            .map(|pair| match pair {
                [Obj::Int(s), Obj::Int(n)] => Ok((
                    u64::try_from(*s).map_err(|_| malformed("bad /Index"))?,
                    u64::try_from(*n).map_err(|_| malformed("bad /Index"))?,
                )),
                _ => Err(malformed("bad /Index")),
            })
            .collect::<Result<_, _>>()?,
        _ => vec![(0, size)],
    })
}
