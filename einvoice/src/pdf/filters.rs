//! The filters a stream's data passes through: Flate (zlib or raw deflate), inflated in
//! chunks and stopped as soon as a limit is passed, and the PNG and TIFF predictors. Any
//! other filter is refused by the caller (`xref`).

use flate2::{Decompress, FlushDecompress, Status};

use super::syntax::{Dict, dict_int};
use super::{PdfError, malformed};
use crate::limits::{PDF_CHUNK, PDF_RATIO_EXEMPT};

/// `input` inflated into `out` (empty at first), stopped as soon as it passes `stream_max`
/// bytes, `ratio_max` times its own size (past `PDF_RATIO_EXEMPT`) or `left`. When it
/// fails, what it inflated until then stays in `out`, for the caller to count.
pub(super) fn inflate(
    input: &[u8],
    stream_max: usize,
    ratio_max: usize,
    left: usize,
    out: &mut Vec<u8>,
) -> Result<(), PdfError> {
    let ratio_cap = input.len().saturating_mul(ratio_max).max(PDF_RATIO_EXEMPT);
    let zlib = match input {
        [a, b, ..] => {
            (a & 0x0f) == 8 && (a >> 4) <= 7 && ((u16::from(*a) << 8) | u16::from(*b)) % 31 == 0
        }
        _ => false,
    };
    let mut d = Decompress::new(zlib);
    let mut chunk = vec![0u8; PDF_CHUNK];
    loop {
        let (in_before, out_before) = (d.total_in(), d.total_out());
        let at = usize::try_from(in_before).map_or(input.len(), |n| n.min(input.len()));
        let status = d
            .decompress(&input[at..], &mut chunk, FlushDecompress::None)
            .map_err(|e| malformed(format!("corrupt Flate data: {e}")))?;
        let produced =
            usize::try_from(d.total_out() - out_before).map_or(chunk.len(), |n| n.min(chunk.len()));
        let total = out.len() + produced;
        if total > stream_max {
            return Err(PdfError::TooLarge(format!(
                "a stream inflates past {stream_max} bytes"
            )));
        }
        if total > ratio_cap {
            return Err(PdfError::TooLarge(format!(
                "a stream inflates more than {ratio_max} times its size"
            )));
        }
        if total > left {
            return Err(PdfError::TooLarge(
                "the streams inflate past their limit in all".into(),
            ));
        }
        out.extend_from_slice(&chunk[..produced]);
        match status {
            Status::StreamEnd => return Ok(()),
            Status::Ok | Status::BufError => {
                if d.total_in() == in_before && d.total_out() == out_before {
                    // The input is used up before the end of the Flate data.
                    return Err(PdfError::Truncated);
                }
            }
        }
    }
}

/// `data` with the predictor of `parms` undone.
pub(super) fn unpredict(data: Vec<u8>, parms: &Dict) -> Result<Vec<u8>, PdfError> {
    let int = |key: &[u8], default: i64| dict_int(parms, key).unwrap_or(default);
    let predictor = int(b"Predictor", 1);
    if predictor <= 1 || data.is_empty() {
        return Ok(data);
    }
    let colors = int(b"Colors", 1);
    let bpc = int(b"BitsPerComponent", 8);
    let columns = int(b"Columns", 1);
    if !(1..=32).contains(&colors) || ![1, 2, 4, 8, 16].contains(&bpc) || columns < 1 {
        return Err(malformed("predictor parameters out of range"));
    }
    // At most 32 × 16 bits.
    let pixel_bits = usize::try_from(colors * bpc).unwrap_or(512);
    let bpp = pixel_bits.div_ceil(8);
    let row = usize::try_from(columns)
        .ok()
        .and_then(|c| c.checked_mul(pixel_bits))
        .map(|bits| bits.div_ceil(8))
        .filter(|&r| r <= data.len())
        .ok_or_else(|| malformed("a predictor row is longer than the stream"))?;
    match predictor {
        2 => {
            if bpc != 8 {
                return Err(malformed("TIFF predictor with other than 8 bits"));
            }
            let mut data = data;
            for r in data.chunks_mut(row) {
                for i in bpp..r.len() {
                    r[i] = r[i].wrapping_add(r[i - bpp]);
                }
            }
            Ok(data)
        }
        10..=15 => {
            let mut out = Vec::with_capacity(data.len());
            let mut prev = vec![0u8; row];
            let mut cur = vec![0u8; row];
            for line in data.chunks(row + 1) {
                let Some((&kind, src)) = line.split_first() else {
                    break;
                };
                for (i, &x) in src.iter().enumerate() {
                    let a = if i >= bpp { cur[i - bpp] } else { 0 };
                    let b = prev[i];
                    let c = if i >= bpp { prev[i - bpp] } else { 0 };
                    cur[i] = match kind {
                        0 => x,
                        1 => x.wrapping_add(a),
                        2 => x.wrapping_add(b),
                        3 => x.wrapping_add(((u16::from(a) + u16::from(b)) / 2).to_le_bytes()[0]),
                        4 => x.wrapping_add(paeth(a, b, c)),
                        _ => return Err(malformed("unknown PNG predictor")),
                    };
                }
                out.extend_from_slice(&cur[..src.len()]);
                std::mem::swap(&mut prev, &mut cur);
            }
            Ok(out)
        }
        _ => Err(malformed(format!("unknown predictor {predictor}"))),
    }
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let (ia, ib, ic) = (i16::from(a), i16::from(b), i16::from(c));
    let p = ia + ib - ic;
    let (pa, pb, pc) = ((p - ia).abs(), (p - ib).abs(), (p - ic).abs());
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}
