//! The syntax of PDF objects: `Obj`, and the `Parser` that reads them from bytes (strings,
//! names, numbers, arrays, dictionaries, references, `N G obj` and the start of a
//! stream). It knows no file layout: where objects are is `xref`'s.

use super::{PdfError, lossy, malformed};

/// A PDF object. Streams keep their dictionary and where their data starts in the file.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Obj {
    Null,
    Bool,
    Int(i64),
    Real,
    Str(Vec<u8>),
    Name(Vec<u8>),
    Array(Vec<Obj>),
    Dict(Dict),
    Ref(u32),
    Stream(Dict, usize),
}

pub(super) type Dict = Vec<(Vec<u8>, Obj)>;

pub(super) fn dict_get<'d>(d: &'d Dict, key: &[u8]) -> Option<&'d Obj> {
    d.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

pub(super) fn dict_int(d: &Dict, key: &[u8]) -> Option<i64> {
    match dict_get(d, key) {
        Some(Obj::Int(n)) => Some(*n),
        _ => None,
    }
}

pub(super) fn dict_name_is(d: &Dict, key: &[u8], name: &[u8]) -> bool {
    matches!(dict_get(d, key), Some(Obj::Name(n)) if n == name)
}

pub(super) fn is_ws(c: u8) -> bool {
    matches!(c, b'\0' | b'\t' | b'\n' | 0x0c | b'\r' | b' ')
}

fn is_delim(c: u8) -> bool {
    matches!(
        c,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

fn is_regular(c: u8) -> bool {
    !is_ws(c) && !is_delim(c)
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Reads objects from `buf` from `pos` on.
pub(super) struct Parser<'b> {
    pub(super) buf: &'b [u8],
    pub(super) pos: usize,
    pub(super) depth_max: usize,
    pub(super) values: usize,
    pub(super) values_max: usize,
}

impl<'b> Parser<'b> {
    fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    pub(super) fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Skips whitespace and comments.
    pub(super) fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if is_ws(c) {
                self.pos += 1;
            } else if c == b'%' {
                while self.peek().is_some_and(|c| c != b'\r' && c != b'\n') {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    /// The run of regular characters at the position (maybe empty).
    pub(super) fn token(&mut self) -> &'b [u8] {
        let start = self.pos;
        while self.peek().is_some_and(is_regular) {
            self.pos += 1;
        }
        self.buf.get(start..self.pos).unwrap_or_default()
    }

    /// Whether the next token is `word`; consumed when it is.
    pub(super) fn next_is(&mut self, word: &[u8]) -> bool {
        let save = self.pos;
        self.skip_ws();
        if self.token() == word {
            true
        } else {
            self.pos = save;
            false
        }
    }

    fn expect(&mut self, word: &[u8]) -> Result<(), PdfError> {
        self.skip_ws();
        let t = self.token();
        if t == word {
            Ok(())
        } else if t.is_empty() && self.at_end() {
            Err(PdfError::Truncated)
        } else {
            Err(malformed(format!(
                "`{}` where `{}` belongs",
                lossy(t),
                lossy(word)
            )))
        }
    }

    /// A non-negative integer token.
    pub(super) fn uint(&mut self) -> Result<u64, PdfError> {
        self.skip_ws();
        let t = self.token();
        if t.is_empty() {
            return Err(if self.at_end() {
                PdfError::Truncated
            } else {
                malformed("a number is missing")
            });
        }
        let mut n: u64 = 0;
        for &d in t {
            if !d.is_ascii_digit() {
                return Err(malformed(format!("`{}` is not a number", lossy(t))));
            }
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(d - b'0')))
                .ok_or_else(|| malformed("a number is too large"))?;
        }
        Ok(n)
    }

    pub(super) fn value(&mut self, depth: usize) -> Result<Obj, PdfError> {
        self.values += 1;
        if self.values > self.values_max {
            return Err(PdfError::TooLarge(format!(
                "an object holds more than {} values",
                self.values_max
            )));
        }
        if depth > self.depth_max {
            return Err(PdfError::TooLarge(format!(
                "objects nest deeper than {}",
                self.depth_max
            )));
        }
        self.skip_ws();
        let Some(c) = self.peek() else {
            return Err(PdfError::Truncated);
        };
        match c {
            b'/' => {
                self.pos += 1;
                Ok(Obj::Name(self.name()))
            }
            b'(' => {
                self.pos += 1;
                self.literal().map(Obj::Str)
            }
            b'<' if self.buf.get(self.pos + 1) == Some(&b'<') => {
                self.pos += 2;
                self.dict(depth).map(Obj::Dict)
            }
            b'<' => {
                self.pos += 1;
                self.hex().map(Obj::Str)
            }
            b'[' => {
                self.pos += 1;
                self.array(depth)
            }
            b'+' | b'-' | b'.' | b'0'..=b'9' => self.number(),
            _ => match self.token() {
                b"true" | b"false" => Ok(Obj::Bool),
                b"null" => Ok(Obj::Null),
                b"" => Err(malformed(format!("unexpected `{}`", char::from(c)))),
                t => Err(malformed(format!("unexpected `{}`", lossy(t)))),
            },
        }
    }

    fn name(&mut self) -> Vec<u8> {
        let raw = self.token();
        let mut out = Vec::with_capacity(raw.len());
        let mut i = 0;
        while let Some(&c) = raw.get(i) {
            if c == b'#'
                && let Some(hi) = raw.get(i + 1).copied().and_then(hex_value)
                && let Some(lo) = raw.get(i + 2).copied().and_then(hex_value)
            {
                out.push((hi << 4) | lo);
                i += 3;
            } else {
                out.push(c);
                i += 1;
            }
        }
        out
    }

    fn literal(&mut self) -> Result<Vec<u8>, PdfError> {
        let mut out = Vec::new();
        let mut open = 0usize;
        loop {
            let Some(c) = self.peek() else {
                return Err(PdfError::Truncated);
            };
            self.pos += 1;
            match c {
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return Err(PdfError::Truncated);
                    };
                    self.pos += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'b' => out.push(0x08),
                        b'f' => out.push(0x0c),
                        b'0'..=b'7' => {
                            let mut v = u32::from(e - b'0');
                            for _ in 0..2 {
                                match self.peek() {
                                    Some(d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        self.pos += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push(v.to_le_bytes()[0]);
                        }
                        // A line continuation.
                        b'\r' => {
                            if self.peek() == Some(b'\n') {
                                self.pos += 1;
                            }
                        }
                        b'\n' => {}
                        other => out.push(other),
                    }
                }
                b'(' => {
                    open += 1;
                    out.push(c);
                }
                b')' => {
                    if open == 0 {
                        return Ok(out);
                    }
                    open -= 1;
                    out.push(c);
                }
                b'\r' => {
                    out.push(b'\n');
                    if self.peek() == Some(b'\n') {
                        self.pos += 1;
                    }
                }
                _ => out.push(c),
            }
        }
    }

    fn hex(&mut self) -> Result<Vec<u8>, PdfError> {
        let mut out = Vec::new();
        let mut high: Option<u8> = None;
        loop {
            let Some(c) = self.peek() else {
                return Err(PdfError::Truncated);
            };
            self.pos += 1;
            if c == b'>' {
                if let Some(h) = high {
                    out.push(h << 4);
                }
                return Ok(out);
            }
            if is_ws(c) {
                continue;
            }
            let Some(v) = hex_value(c) else {
                return Err(malformed("a hex string holds a character that is not hex"));
            };
            match high.take() {
                Some(h) => out.push((h << 4) | v),
                None => high = Some(v),
            }
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Dict, PdfError> {
        let mut d = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => return Err(PdfError::Truncated),
                Some(b'>') if self.buf.get(self.pos + 1) == Some(&b'>') => {
                    self.pos += 2;
                    return Ok(d);
                }
                Some(b'/') => {
                    self.pos += 1;
                    let key = self.name();
                    let value = self.value(depth + 1)?;
                    d.push((key, value));
                }
                Some(_) => return Err(malformed("a dictionary key is not a name")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Obj, PdfError> {
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => return Err(PdfError::Truncated),
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Obj::Array(items));
                }
                Some(_) => items.push(self.value(depth + 1)?),
            }
        }
    }

    /// A number, or a reference `N G R`.
    fn number(&mut self) -> Result<Obj, PdfError> {
        let t = self.token();
        let digits = match t.first() {
            Some(b'-' | b'+') => &t[1..],
            _ => t,
        };
        let negative = t.first() == Some(&b'-');
        if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
            let mut n: i64 = 0;
            for &d in digits {
                match n
                    .checked_mul(10)
                    .and_then(|n| n.checked_add(i64::from(d - b'0')))
                {
                    Some(m) => n = m,
                    // Beyond any count or offset this reader uses.
                    None => return Ok(Obj::Real),
                }
            }
            if negative {
                return Ok(Obj::Int(-n));
            }
            if t.first() != Some(&b'+')
                && let Ok(num) = u32::try_from(n)
                && self.reference_follows()
            {
                return Ok(Obj::Ref(num));
            }
            return Ok(Obj::Int(n));
        }
        if digits.iter().any(u8::is_ascii_digit)
            && digits.iter().all(|&c| c.is_ascii_digit() || c == b'.')
        {
            return Ok(Obj::Real);
        }
        Err(malformed(format!("`{}` is not a number", lossy(t))))
    }

    /// After an object number: whether `G R` follows (consumed when it does).
    fn reference_follows(&mut self) -> bool {
        let save = self.pos;
        self.skip_ws();
        let generation = self.token();
        if !generation.is_empty()
            && generation.len() <= 5
            && generation.iter().all(u8::is_ascii_digit)
        {
            self.skip_ws();
            if self.token() == b"R" {
                return true;
            }
        }
        self.pos = save;
        false
    }
}

/// `N G obj` and the object after it; a dictionary followed by `stream` is a stream.
pub(super) fn indirect(p: &mut Parser<'_>, expect: Option<u32>) -> Result<(u32, Obj), PdfError> {
    let num = p.uint()?;
    p.uint()?;
    p.expect(b"obj")?;
    let num = u32::try_from(num).map_err(|_| malformed("an object number is too large"))?;
    if let Some(e) = expect
        && e != num
    {
        return Err(malformed(format!(
            "the cross-reference data puts object {e} where object {num} is"
        )));
    }
    let value = p.value(0)?;
    match value {
        Obj::Dict(d) if p.next_is(b"stream") => {
            match p.peek() {
                Some(b'\r') => {
                    p.pos += 1;
                    if p.peek() == Some(b'\n') {
                        p.pos += 1;
                    }
                }
                Some(b'\n') => p.pos += 1,
                _ => {}
            }
            Ok((num, Obj::Stream(d, p.pos)))
        }
        other => Ok((num, other)),
    }
}

/// A text string (a file name): UTF-16 with its byte order mark, UTF-8, else
/// PDFDocEncoding (taken as Latin-1). Trailing NULs go.
pub(super) fn text(s: &[u8]) -> String {
    fn utf16(b: &[u8], unit: fn([u8; 2]) -> u16) -> String {
        let units = b.chunks_exact(2).map(|p| unit([p[0], p[1]]));
        char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect()
    }
    let s = if let Some(rest) = s.strip_prefix(&[0xfe, 0xff]) {
        utf16(rest, u16::from_be_bytes)
    } else if let Some(rest) = s.strip_prefix(&[0xff, 0xfe]) {
        utf16(rest, u16::from_le_bytes)
    } else if let Some(rest) = s.strip_prefix(&[0xef, 0xbb, 0xbf]) {
        String::from_utf8_lossy(rest).into_owned()
    } else if let Ok(u) = std::str::from_utf8(s) {
        u.to_owned()
    } else {
        s.iter().map(|&b| char::from(b)).collect()
    };
    s.trim_end_matches('\0').to_owned()
}

/// The object number and start of an `N G obj` marker whose `obj` is at `k`.
pub(super) fn marker(pdf: &[u8], k: usize) -> Option<(u32, usize)> {
    if pdf.get(k + 3).is_some_and(|&c| is_regular(c)) {
        return None;
    }
    // Back over whitespace, the generation, whitespace and the number, each bounded.
    let back = |end: usize, pred: fn(u8) -> bool, max: usize| -> usize {
        let mut i = end;
        while i > 0 && end - i < max && pred(pdf[i - 1]) {
            i -= 1;
        }
        i
    };
    let digit = |c: u8| c.is_ascii_digit();
    let g_end = back(k, is_ws, 16);
    let g_start = back(g_end, digit, 5);
    if g_end == k || g_start == g_end {
        return None;
    }
    let n_end = back(g_start, is_ws, 16);
    let n_start = back(n_end, digit, 10);
    if n_end == g_start || n_start == n_end {
        return None;
    }
    if n_start > 0 && is_regular(pdf[n_start - 1]) {
        return None;
    }
    let num = pdf[n_start..n_end].iter().try_fold(0u32, |n, &d| {
        n.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })?;
    Some((num, n_start))
}
