//! The QR matrix of a text at error correction level M, with the mask ISO/IEC 18004
//! (7.8.3) asks for: the one whose penalty is lowest. qrcodegen encodes the code; the mask
//! is chosen here. Written by hand because no kept crate scores masks cheaply: qrcodegen
//! (and the `qrcode` crate before it) walks eight masked copies module by module, which was
//! a quarter of a completed invoice's time in the guest (W9 COMPLETE). Here each row and
//! column is a `u128` of modules and the four penalty rules are operations on whole lines;
//! the result is qrcodegen's own choice, bit for bit
//! (`tests::every_mask_and_the_choice_are_qrcodegens`). Codes wider than a line (version
//! 28 and up, far beyond a GiroCode's 331 bytes) are left to qrcodegen whole.

use qrcodegen::{Mask, QrCode, QrCodeEcc, QrSegment, Version};

/// One row or column: bit `i` is module `i`, set where dark.
type Line = u128;

/// Modules a [`Line`] holds.
const LINE_MODULES: usize = Line::BITS as usize;

/// The penalty weights of ISO/IEC 18004 table 11 (qrcodegen's `PENALTY_N1..N4`).
const N1: u32 = 3;
const N2: u32 = 3;
const N3: u32 = 40;
const N4: u32 = 10;

/// Rows of modules of `text` at level M, true where dark, without the quiet zone; empty
/// when the text does not fit a code.
pub(super) fn matrix(text: &str) -> Vec<Vec<bool>> {
    let segments = QrSegment::make_segments(text);
    let encode = |mask: Option<Mask>| {
        QrCode::encode_segments_advanced(
            &segments,
            QrCodeEcc::Medium,
            Version::MIN,
            Version::MAX,
            mask,
            false,
        )
    };
    let Ok(first) = encode(Some(Mask::new(0))) else {
        return Vec::new();
    };
    if first.size() as usize > LINE_MODULES {
        return encode(None).map(|c| rows_of(&c)).unwrap_or_default();
    }
    let code = Code::of(&first);
    let mut grid = Grid::new(code.size);
    let mut best = (u32::MAX, 0);
    for mask in 0..8 {
        code.masked(mask, &mut grid);
        let penalty = grid.penalty();
        if penalty < best.0 {
            best = (penalty, mask);
        }
    }
    code.masked(best.1, &mut grid);
    (0..code.size)
        .map(|y| (0..code.size).map(|x| grid.rows[y] >> x & 1 == 1).collect())
        .collect()
}

/// A code's rows as qrcodegen drew them.
fn rows_of(code: &QrCode) -> Vec<Vec<bool>> {
    let size = code.size();
    (0..size)
        .map(|y| (0..size).map(|x| code.get_module(x, y)).collect())
        .collect()
}

/// What every masking of one code starts from.
struct Code {
    size: usize,
    /// The code masked with mask 0, its format modules light: rows and columns.
    base: Grid,
    /// Where the data modules are (the mask applies to them only).
    data: Grid,
    /// The format information's modules: column, row, bit of the format word.
    format: Vec<(usize, usize, u32)>,
}

impl Code {
    fn of(first: &QrCode) -> Code {
        let size = first.size() as usize;
        let version = usize::from(first.version().value());
        let format = format_modules(size);
        let mut base = Grid::new(size);
        for y in 0..size {
            for x in 0..size {
                if first.get_module(x as i32, y as i32) {
                    base.set(x, y);
                }
            }
        }
        for &(x, y, _) in &format {
            base.rows[y] &= !(1 << x);
            base.cols[x] &= !(1 << y);
        }
        Code {
            size,
            base,
            data: data_modules(version, size),
            format,
        }
    }

    /// The code with `mask` (0..8) into `grid`.
    fn masked(&self, mask: u8, grid: &mut Grid) {
        let full = ones(self.size);
        let rows: [Line; 12] = std::array::from_fn(|y| periodic(|x| flips(mask, x, y), 6) & full);
        let cols: [Line; 6] = std::array::from_fn(|x| periodic(|y| flips(mask, x, y), 12) & full);
        for y in 0..self.size {
            grid.rows[y] = self.base.rows[y] ^ (self.data.rows[y] & rows[y % 12]);
        }
        for x in 0..self.size {
            grid.cols[x] = self.base.cols[x] ^ (self.data.cols[x] & cols[x % 6]);
        }
        let word = format_word(mask);
        for &(x, y, bit) in &self.format {
            if word >> bit & 1 == 1 {
                grid.set(x, y);
            }
        }
    }
}

/// Whether mask `mask` flips module (`x`, `y`) other than mask 0 does: the difference of
/// the two patterns (qrcodegen's `apply_mask`), since the base is masked with mask 0.
fn flips(mask: u8, x: usize, y: usize) -> bool {
    let pattern = |mask: u8| match mask {
        0 => (x + y).is_multiple_of(2),
        1 => y.is_multiple_of(2),
        2 => x.is_multiple_of(3),
        3 => (x + y).is_multiple_of(3),
        4 => (x / 3 + y / 2).is_multiple_of(2),
        5 => x * y % 2 + x * y % 3 == 0,
        6 => (x * y % 2 + x * y % 3).is_multiple_of(2),
        _ => ((x + y) % 2 + x * y % 3).is_multiple_of(2),
    };
    pattern(0) != pattern(mask)
}

/// A line whose bit `i` is `bit(i % period)`: every mask pattern repeats every 6 modules
/// along a row and every 12 down a column.
fn periodic(bit: impl Fn(usize) -> bool, period: usize) -> Line {
    let mut line: Line = (0..period).filter(|&i| bit(i)).map(|i| 1 << i).sum();
    let mut width = period;
    while width < LINE_MODULES {
        line |= line << width;
        width *= 2;
    }
    line
}

/// The 15 bits of format information for level M and `mask`, with their BCH code and
/// the standard's XOR mask.
fn format_word(mask: u8) -> u32 {
    // Level M is 0b00 in the format information.
    let data = u32::from(mask);
    let mut rem = data;
    for _ in 0..10 {
        rem = (rem << 1) ^ ((rem >> 9) * 0x537);
    }
    (data << 10 | rem) ^ 0x5412
}

/// The modules of both copies of the format information: column, row, bit.
fn format_modules(size: usize) -> Vec<(usize, usize, u32)> {
    let mut at = Vec::with_capacity(30);
    for i in 0..6 {
        at.push((8, i, i as u32));
    }
    at.extend([(8, 7, 6), (8, 8, 7), (7, 8, 8)]);
    for i in 9..15 {
        at.push((14 - i, 8, i as u32));
    }
    for i in 0..8 {
        at.push((size - 1 - i, 8, i as u32));
    }
    for i in 8..15 {
        at.push((8, size - 15 + i, i as u32));
    }
    at
}

/// Where the data modules of a code of `version` are: all but the finder patterns with
/// their separators and format areas, the timing patterns, the alignment patterns and the
/// version information.
fn data_modules(version: usize, size: usize) -> Grid {
    let mut function = Grid::new(size);
    let mut fill = |x0: usize, y0: usize, w: usize, h: usize| {
        for y in y0..y0 + h {
            for x in x0..x0 + w {
                function.set(x, y);
            }
        }
    };
    fill(6, 0, 1, size);
    fill(0, 6, size, 1);
    fill(0, 0, 9, 9);
    fill(size - 8, 0, 8, 9);
    fill(0, size - 8, 9, 8);
    let centres = alignment_centres(version, size);
    let last = centres.len().saturating_sub(1);
    for (i, &cx) in centres.iter().enumerate() {
        for (j, &cy) in centres.iter().enumerate() {
            let corner = (i == 0 && (j == 0 || j == last)) || (i == last && j == 0);
            if !corner {
                fill(cx - 2, cy - 2, 5, 5);
            }
        }
    }
    if version >= 7 {
        fill(size - 11, 0, 3, 6);
        fill(0, size - 11, 6, 3);
    }
    let full = ones(size);
    Grid {
        size,
        rows: function.rows.iter().map(|r| !r & full).collect(),
        cols: function.cols.iter().map(|c| !c & full).collect(),
    }
}

/// The centres of the alignment patterns along either axis (qrcodegen's
/// `get_alignment_pattern_positions`).
fn alignment_centres(version: usize, size: usize) -> Vec<usize> {
    if version == 1 {
        return Vec::new();
    }
    let count = version / 7 + 2;
    let step = if version == 32 {
        26
    } else {
        (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
    };
    let mut centres: Vec<usize> = (0..count - 1).map(|i| size - 7 - i * step).collect();
    centres.push(6);
    centres.reverse();
    centres
}

/// The modules of a code as rows and as columns.
struct Grid {
    size: usize,
    rows: Vec<Line>,
    cols: Vec<Line>,
}

impl Grid {
    fn new(size: usize) -> Grid {
        Grid {
            size,
            rows: vec![0; size],
            cols: vec![0; size],
        }
    }

    fn set(&mut self, x: usize, y: usize) {
        self.rows[y] |= 1 << x;
        self.cols[x] |= 1 << y;
    }

    /// The penalty of ISO/IEC 18004 7.8.3.1, computed as qrcodegen's `get_penalty_score`.
    fn penalty(&self) -> u32 {
        let size = self.size;
        let pairs = ones(size - 1);
        let mut score = 0;
        for &line in self.rows.iter().chain(&self.cols) {
            score += runs(line, pairs) + N3 * finder_like(line, size);
        }
        // 2 × 2 blocks of one colour.
        for y in 1..size {
            let (above, below) = (self.rows[y - 1], self.rows[y]);
            let blocks = same_as_next(above, pairs) & same_as_next(below, pairs) & !(above ^ below);
            score += N2 * blocks.count_ones();
        }
        // Balance of dark and light modules.
        // A code's side is odd, so dark and light are never exactly half: the deviation
        // is at least 10 and the term at least 0.
        let dark: u32 = self.rows.iter().map(|r| r.count_ones()).sum();
        let total = (size * size) as u32;
        let deviation = (dark * 20).abs_diff(total * 10);
        score + N4 * (deviation.div_ceil(total) - 1)
    }
}

/// A line with the low `n` bits set.
fn ones(n: usize) -> Line {
    Line::MAX
        .checked_shr((LINE_MODULES - n) as u32)
        .unwrap_or(0)
}

/// `line` shifted towards lower modules by `n`: bit `i` is module `i + n`.
fn down(line: Line, n: usize) -> Line {
    line.checked_shr(n as u32).unwrap_or(0)
}

/// `line` shifted towards higher modules by `n`: bit `i` is module `i - n`, light before
/// the line's start.
fn up(line: Line, n: usize) -> Line {
    line.checked_shl(n as u32).unwrap_or(0)
}

/// Bit `i`: modules `i` and `i + 1` have one colour (`pairs`: the positions that have a
/// next module).
fn same_as_next(line: Line, pairs: Line) -> Line {
    !(line ^ down(line, 1)) & pairs
}

/// Rule 1: a run of `k ≥ 5` modules of one colour costs `N1 + (k - 5)`. A run of `k`
/// holds `k - 4` windows of five alike and starts once, so it costs its windows and
/// `N1 - 1` for its start.
fn runs(line: Line, pairs: Line) -> u32 {
    let same = same_as_next(line, pairs);
    let fives = same & down(same, 1) & down(same, 2) & down(same, 3);
    let starts = fives & !up(same, 1);
    fives.count_ones() + (N1 - 1) * starts.count_ones()
}

/// Bit `i`: modules `i .. i + k` all dark (`all`) or any of them dark (`!all`).
fn window(line: Line, k: usize, all: bool) -> Line {
    let (mut w, mut have) = (line, 1);
    let join = |a: Line, b: Line| if all { a & b } else { a | b };
    while have * 2 <= k {
        w = join(w, down(w, have));
        have *= 2;
    }
    if have < k {
        w = join(w, down(w, k - have));
    }
    w
}

/// Bit `i`: any of modules `i - k .. i` dark (light before the line's start).
fn any_dark_before(line: Line, k: usize) -> Line {
    let (mut w, mut have) = (up(line, 1), 1);
    while have * 2 <= k {
        w |= up(w, have);
        have *= 2;
    }
    if have < k {
        w |= up(w, k - have);
    }
    w
}

/// Rule 3 without its weight: patterns dark-light-dark-light-dark in the ratio
/// 1:1:3:1:1 (at any scale `n`, each run exactly that long), with light of at least `4n`
/// on one side and `n` on the other, the outside of the code counting as light; one
/// count per side that has the `4n`, as qrcodegen counts them.
fn finder_like(line: Line, size: usize) -> u32 {
    let mut count = 0;
    let mut n = 1;
    while 7 * n <= size {
        let dark_3n = window(line, 3 * n, true);
        if dark_3n == 0 {
            // No run of 3n dark modules: none of 3(n + 1) either.
            break;
        }
        let dark_n = window(line, n, true);
        let any_n = window(line, n, false);
        let core = !up(line, 1)
            & dark_n
            & !down(any_n, n)
            & down(dark_3n, 2 * n)
            & !down(any_n, 5 * n)
            & down(dark_n, 6 * n)
            & !down(line, 7 * n);
        if core != 0 {
            let after_n = !down(any_n, 7 * n);
            let after_4n = !down(window(line, 4 * n, false), 7 * n);
            let before_n = !any_dark_before(line, n);
            let before_4n = !any_dark_before(line, 4 * n);
            count += (core & before_4n & after_n).count_ones()
                + (core & after_4n & before_n).count_ones();
        }
        n += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts of every length a GiroCode can have and beyond, in the character sets the
    /// encoder distinguishes (numeric, alphanumeric, bytes, UTF-8), from a fixed seed.
    fn texts() -> Vec<String> {
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let alphabets: [&[char]; 4] = [
            &['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'],
            &[
                'A', 'B', 'Z', '0', '9', ' ', '$', '%', '*', '+', '-', '.', '/', ':',
            ],
            &['a', 'q', 'Z', '\n', '0', 'x', '~', '{', ' ', 'e'],
            &['ä', 'ß', '€', 'é', 'a', '\n', '1', 'Ω'],
        ];
        let mut texts = Vec::new();
        for len in (1..400).step_by(3).chain([700, 1100, 1500, 2000, 3000]) {
            // The long ones in digits, which a code of level M holds up to 5,596 of.
            let alphabet = alphabets[if len < 400 { (next() % 4) as usize } else { 0 }];
            texts.push(
                (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect(),
            );
        }
        texts
    }

    fn qrcodegen(text: &str, mask: Option<Mask>) -> QrCode {
        QrCode::encode_segments_advanced(
            &QrSegment::make_segments(text),
            QrCodeEcc::Medium,
            Version::MIN,
            Version::MAX,
            mask,
            false,
        )
        .unwrap()
    }

    #[test]
    fn every_mask_and_the_choice_are_qrcodegens() {
        let mut versions = std::collections::BTreeSet::new();
        for text in texts() {
            let chosen = qrcodegen(&text, None);
            versions.insert(chosen.version().value());
            let first = qrcodegen(&text, Some(Mask::new(0)));
            if first.size() as usize > LINE_MODULES {
                continue;
            }
            let code = Code::of(&first);
            let mut grid = Grid::new(code.size);
            for mask in 0..8 {
                code.masked(mask, &mut grid);
                let drawn = rows_of(&qrcodegen(&text, Some(Mask::new(mask))));
                for (y, row) in drawn.iter().enumerate() {
                    for (x, &dark) in row.iter().enumerate() {
                        assert_eq!(grid.rows[y] >> x & 1 == 1, dark, "row {y} of mask {mask}");
                        assert_eq!(grid.cols[x] >> y & 1 == 1, dark, "col {x} of mask {mask}");
                    }
                }
            }
            assert_eq!(matrix(&text), rows_of(&chosen), "mask chosen for {text:?}");
        }
        // Small and large codes, with and without version information, and the fallback.
        assert!(versions.contains(&1) && versions.contains(&7));
        assert!(
            versions.iter().any(|v| (20..28).contains(v)),
            "{versions:?}"
        );
        assert!(versions.iter().any(|&v| v >= 28), "{versions:?}");
    }

    /// The penalty rules module by module, as the standard words them (qrcodegen's
    /// reading of rule 3: each side with `4n` light counts once, the outside is light).
    /// Rule 1 weighted already, the others counts.
    fn penalty_by_modules(m: &[Vec<bool>]) -> [u32; 4] {
        let size = m.len();
        let lines: Vec<Vec<bool>> = (0..size)
            .map(|y| m[y].clone())
            .chain((0..size).map(|x| (0..size).map(|y| m[y][x]).collect()))
            .collect();
        let (mut n1, mut n3) = (0, 0);
        for line in &lines {
            let mut runs: Vec<(bool, usize)> = Vec::new();
            for &module in line {
                match runs.last_mut() {
                    Some((colour, len)) if *colour == module => *len += 1,
                    _ => runs.push((module, 1)),
                }
            }
            n1 += runs
                .iter()
                .filter(|r| r.1 >= 5)
                .map(|r| N1 + r.1 as u32 - 5)
                .sum::<u32>();
            // The outside as light runs of the code's size at either end.
            let mut padded = vec![(false, size)];
            for r in runs {
                match padded.last_mut() {
                    Some((false, len)) if !r.0 => *len += r.1,
                    _ => padded.push(r),
                }
            }
            match padded.last_mut() {
                Some((false, len)) => *len += size,
                _ => padded.push((false, size)),
            }
            for w in padded.windows(7) {
                let n = w[1].1;
                if w[1].0 && [w[2].1, w[3].1, w[4].1, w[5].1] == [n, 3 * n, n, n] {
                    n3 += u32::from(w[0].1 >= 4 * n && w[6].1 >= n);
                    n3 += u32::from(w[6].1 >= 4 * n && w[0].1 >= n);
                }
            }
        }
        let mut n2 = 0;
        for y in 1..size {
            for x in 1..size {
                let c = m[y][x];
                n2 += u32::from(m[y - 1][x - 1] == c && m[y - 1][x] == c && m[y][x - 1] == c);
            }
        }
        let dark = m.iter().flatten().filter(|&&d| d).count() as u32;
        let total = (size * size) as u32;
        let n4 = (dark * 20).abs_diff(total * 10).div_ceil(total) - 1;
        [n1, n2, n3, n4]
    }

    #[test]
    fn each_rule_counts_as_module_by_module() {
        for text in texts().iter().take(60) {
            let first = qrcodegen(text, Some(Mask::new(0)));
            let code = Code::of(&first);
            let mut grid = Grid::new(code.size);
            for mask in 0..8 {
                code.masked(mask, &mut grid);
                let rows: Vec<Vec<bool>> = (0..code.size)
                    .map(|y| (0..code.size).map(|x| grid.rows[y] >> x & 1 == 1).collect())
                    .collect();
                let [n1, n2, n3, n4] = penalty_by_modules(&rows);
                let pairs = ones(code.size - 1);
                let lines = || grid.rows.iter().chain(&grid.cols);
                assert_eq!(
                    lines().map(|&l| runs(l, pairs)).sum::<u32>(),
                    n1,
                    "rule 1, {text:?} {mask}"
                );
                assert_eq!(
                    lines().map(|&l| finder_like(l, code.size)).sum::<u32>(),
                    n3,
                    "rule 3, {text:?} {mask}"
                );
                assert_eq!(
                    grid.penalty(),
                    n1 + N2 * n2 + N3 * n3 + N4 * n4,
                    "{text:?} {mask}"
                );
            }
        }
    }

    #[test]
    fn finder_like_patterns_are_counted_at_every_scale_and_edge() {
        let line = |s: &str| -> Vec<bool> { s.chars().map(|c| c == '#').collect() };
        for (modules, expected) in [
            // The code's outside counts as light: both sides have four.
            ("#.###.#", 2),
            ("..##..######..##..", 2),
            // Light of one on both sides: neither has four.
            ("##########.#.###.#.##########", 0),
            ("#####.....#.###.#.#####", 1),
            ("#####.#.###.#....#####", 1),
            ("#####....#.###.#....#####", 2),
            ("#####...#.###.#...#####", 0),
            // A run one longer is no pattern.
            ("#.###.##", 0),
            ("#.####.#", 0),
            // Scale 2: eight light before, two after; then one after is too few.
            ("####........##..######..##..####", 1),
            ("........##..######..##.#", 0),
            // Two patterns sharing the light between them.
            ("#.###.#....#.###.#", 4),
        ] {
            let modules = line(modules);
            let bits = modules
                .iter()
                .enumerate()
                .filter(|&(_, &m)| m)
                .map(|(i, _)| 1 << i)
                .sum();
            assert_eq!(finder_like(bits, modules.len()), expected, "{modules:?}");
        }
    }
}
