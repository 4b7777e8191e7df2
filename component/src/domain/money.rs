//! Money: item and document totals, taxes grouped by (name, rate), reductions and cash
//! discount, in decimal arithmetic with commercial rounding to cents.
//!
//! The rules (API conventions, Money):
//! - item unreduced = quantity × unit_price; an item reduction "10" subtracts 10, "10%"
//!   subtracts 10 % of it;
//! - NET documents: prices are net, tax = net × rate / 100 per tax group;
//!   GROSS documents: prices are gross, net = gross / (1 + rate / 100) per tax group;
//! - the document reduction applies to the sum of the items (net for NET, gross for GROSS)
//!   and is spread over the tax groups in proportion to their amounts, cent-exact;
//! - total_net = Σ group nets, total_gross = total_net + Σ tax amounts;
//! - a tax-free document (client without tax) uses rate 0 for every item.

use rust_decimal::{Decimal, RoundingStrategy};

/// Rounds half away from zero to two decimal places.
pub fn round_commercial_2(d: Decimal) -> Decimal {
    d.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

/// A reduction as written by clients: "10" (an amount) or "10%" (a percentage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    Amount(Decimal),
    Percent(Decimal),
}

impl Reduction {
    /// Parses "10", "10.5", "10%", " 10 % "; empty means no reduction.
    pub fn parse(s: &str) -> Result<Option<Reduction>, String> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(None);
        }
        let (number, percent) = match s.strip_suffix('%') {
            Some(n) => (n.trim(), true),
            None => (s, false),
        };
        let value = super::schema::parse_decimal(number)
            .filter(|v| !v.is_sign_negative())
            .ok_or_else(|| {
                format!("reduction must be an amount or a percentage like 10 or 10%, got \"{s}\"")
            })?;
        if percent && value > Decimal::ONE_HUNDRED {
            return Err(format!("reduction must be at most 100%, got \"{s}\""));
        }
        Ok(Some(if percent {
            Reduction::Percent(value)
        } else {
            Reduction::Amount(value)
        }))
    }

    /// The amount taken off `base`, rounded to cents and never more than `base`.
    pub fn amount_of(self, base: Decimal) -> Decimal {
        let raw = match self {
            Reduction::Amount(a) => a,
            Reduction::Percent(p) => base * p / Decimal::ONE_HUNDRED,
        };
        round_commercial_2(raw).min(base.max(Decimal::ZERO))
    }
}

/// Whether prices are net or gross.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceBasis {
    Net,
    Gross,
}

/// One item as the calculation needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub quantity: Decimal,
    pub unit_price: Decimal,
    pub tax_name: String,
    pub tax_rate: Decimal,
    pub reduction: Option<Reduction>,
}

/// Totals of one item, before the document reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LineTotals {
    pub net_unreduced: Decimal,
    pub gross_unreduced: Decimal,
    pub net: Decimal,
    pub gross: Decimal,
}

/// One line of the taxes array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxGroup {
    pub name: String,
    pub rate: Decimal,
    /// The group's net after the document reduction.
    pub net: Decimal,
    pub amount: Decimal,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Totals {
    pub lines: Vec<LineTotals>,
    pub taxes: Vec<TaxGroup>,
    pub total_net: Decimal,
    pub total_gross: Decimal,
    /// Before the document reduction.
    pub total_net_unreduced: Decimal,
    pub total_gross_unreduced: Decimal,
    /// The document reduction, on the document's price basis.
    pub total_reduction: Decimal,
}

fn factor(rate: Decimal) -> Decimal {
    Decimal::ONE + rate / Decimal::ONE_HUNDRED
}

/// Net of a gross amount at a rate, to cents.
fn net_of(gross: Decimal, rate: Decimal) -> Decimal {
    round_commercial_2(gross / factor(rate))
}

/// Tax of a net amount at a rate, to cents.
fn tax_of(net: Decimal, rate: Decimal) -> Decimal {
    round_commercial_2(net * rate / Decimal::ONE_HUNDRED)
}

pub fn line_totals(line: &Line, basis: PriceBasis, tax_free: bool) -> LineTotals {
    let rate = if tax_free {
        Decimal::ZERO
    } else {
        line.tax_rate
    };
    let unreduced = round_commercial_2(line.quantity * line.unit_price);
    let reduced = match line.reduction {
        Some(r) => unreduced - r.amount_of(unreduced),
        None => unreduced,
    };
    match basis {
        PriceBasis::Net => LineTotals {
            net_unreduced: unreduced,
            gross_unreduced: unreduced + tax_of(unreduced, rate),
            net: reduced,
            gross: reduced + tax_of(reduced, rate),
        },
        PriceBasis::Gross => LineTotals {
            net_unreduced: net_of(unreduced, rate),
            gross_unreduced: unreduced,
            net: net_of(reduced, rate),
            gross: reduced,
        },
    }
}

/// Splits `total` (of either sign) over `weights` in proportion, cent-exact: the parts sum
/// to `total`.
pub fn spread(total: Decimal, weights: &[Decimal]) -> Vec<Decimal> {
    let sum: Decimal = weights.iter().sum();
    if sum.is_zero() || total.is_zero() {
        return vec![Decimal::ZERO; weights.len()];
    }
    let mut parts: Vec<Decimal> = weights
        .iter()
        .map(|w| (total * w / sum).round_dp_with_strategy(2, RoundingStrategy::ToZero))
        .collect();
    // Hand the remaining cents to the largest weights first (largest remainder method).
    let mut rest = total - parts.iter().sum::<Decimal>();
    let cent = Decimal::new(1, 2)
        * if total.is_sign_negative() {
            -Decimal::ONE
        } else {
            Decimal::ONE
        };
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|a, b| weights[*b].cmp(&weights[*a]).then(a.cmp(b)));
    let mut i = 0;
    while rest.abs() >= cent.abs() && !order.is_empty() {
        parts[order[i % order.len()]] += cent;
        rest -= cent;
        i += 1;
    }
    parts
}

/// Totals of a document.
pub fn document_totals(
    lines: &[Line],
    basis: PriceBasis,
    reduction: Option<Reduction>,
    tax_free: bool,
) -> Totals {
    let line_totals: Vec<LineTotals> = lines
        .iter()
        .map(|l| line_totals(l, basis, tax_free))
        .collect();
    // Tax groups in order of first appearance.
    let mut groups: Vec<(String, Decimal, Decimal)> = Vec::new(); // name, rate, basis sum
    for (line, totals) in lines.iter().zip(&line_totals) {
        let rate = if tax_free {
            Decimal::ZERO
        } else {
            line.tax_rate
        };
        let name = if tax_free { "" } else { line.tax_name.as_str() };
        let amount = match basis {
            PriceBasis::Net => totals.net,
            PriceBasis::Gross => totals.gross,
        };
        match groups.iter_mut().find(|(n, r, _)| n == name && *r == rate) {
            Some(g) => g.2 += amount,
            None => groups.push((name.to_owned(), rate, amount)),
        }
    }
    let basis_sum: Decimal = groups.iter().map(|g| g.2).sum();
    let total_reduction = reduction.map_or(Decimal::ZERO, |r| r.amount_of(basis_sum));
    let weights: Vec<Decimal> = groups.iter().map(|g| g.2).collect();
    let shares = spread(total_reduction, &weights);
    let mut taxes = Vec::with_capacity(groups.len());
    for ((name, rate, sum), share) in groups.into_iter().zip(shares) {
        let reduced = sum - share;
        let (net, amount) = match basis {
            PriceBasis::Net => (reduced, tax_of(reduced, rate)),
            PriceBasis::Gross => {
                let net = net_of(reduced, rate);
                (net, reduced - net)
            }
        };
        taxes.push(TaxGroup {
            name,
            rate,
            net,
            amount,
        });
    }
    let total_net: Decimal = taxes.iter().map(|t| t.net).sum();
    let total_tax: Decimal = taxes.iter().map(|t| t.amount).sum();
    let total_net_unreduced: Decimal = line_totals.iter().map(|t| t.net).sum();
    let total_gross_unreduced: Decimal = line_totals.iter().map(|t| t.gross).sum();
    let totals = Totals {
        lines: line_totals,
        total_net,
        total_gross: total_net + total_tax,
        total_net_unreduced,
        total_gross_unreduced,
        total_reduction,
        taxes,
    };
    debug_assert_eq!(
        totals.total_gross,
        totals.total_net + totals.taxes.iter().map(|t| t.amount).sum::<Decimal>()
    );
    totals
}

/// The cash discount on a gross total.
pub fn discount_amount(total_gross: Decimal, rate: Decimal) -> Decimal {
    round_commercial_2(total_gross * rate / Decimal::ONE_HUNDRED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn line(q: &str, p: &str, name: &str, rate: &str, red: &str) -> Line {
        Line {
            quantity: d(q),
            unit_price: d(p),
            tax_name: name.into(),
            tax_rate: d(rate),
            reduction: Reduction::parse(red).unwrap(),
        }
    }

    #[test]
    fn rounding_is_commercial() {
        assert_eq!(round_commercial_2(d("0.125")), d("0.13"));
        assert_eq!(round_commercial_2(d("-0.125")), d("-0.13"));
        assert_eq!(round_commercial_2(d("0.124")), d("0.12"));
    }

    #[test]
    fn reductions_parse() {
        assert_eq!(
            Reduction::parse("10").unwrap(),
            Some(Reduction::Amount(d("10")))
        );
        assert_eq!(
            Reduction::parse(" 7.5 %").unwrap(),
            Some(Reduction::Percent(d("7.5")))
        );
        assert_eq!(Reduction::parse("").unwrap(), None);
        assert!(Reduction::parse("-5").is_err());
        assert!(Reduction::parse("120%").is_err());
        assert!(Reduction::parse("ten").is_err());
    }

    #[test]
    fn a_net_invoice_with_two_rates_and_a_percent_reduction() {
        // 3 × 100.00 at 19 %, 2 × 49.99 at 7 % less 10 %, 1 × 10.00 at 19 %; document -10 %.
        let lines = [
            line("3", "100", "MwSt", "19", ""),
            line("2", "49.99", "ermäßigt", "7", "10%"),
            line("1", "10", "MwSt", "19", ""),
        ];
        let t = document_totals(
            &lines,
            PriceBasis::Net,
            Reduction::parse("10%").unwrap(),
            false,
        );
        // Item 2: 99.98 - 10.00 (9.998 rounded) = 89.98.
        assert_eq!(t.lines[1].net, d("89.98"));
        assert_eq!(t.total_net_unreduced, d("399.98"));
        // Reduction 10 % of 399.98 = 40.00 (39.998): 19 % group 310.00 → 31.00, 7 % group
        // 89.98 → 8.998 → 8.99 + the remaining cent to the larger group → 31.01 / 8.99.
        assert_eq!(t.total_reduction, d("40.00"));
        assert_eq!(t.taxes[0].net, d("278.99"));
        assert_eq!(t.taxes[1].net, d("80.99"));
        assert_eq!(t.taxes[0].amount, d("53.01")); // 278.99 × 0.19 = 53.0081
        assert_eq!(t.taxes[1].amount, d("5.67")); // 80.99 × 0.07 = 5.6693
        assert_eq!(t.total_net, d("359.98"));
        assert_eq!(t.total_gross, d("418.66"));
    }

    #[test]
    fn a_gross_invoice_takes_the_tax_out_of_the_price() {
        let lines = [line("1", "119", "MwSt", "19", "")];
        let t = document_totals(&lines, PriceBasis::Gross, None, false);
        assert_eq!(t.total_net, d("100"));
        assert_eq!(t.taxes[0].amount, d("19"));
        assert_eq!(t.total_gross, d("119"));
    }

    #[test]
    fn a_tax_free_document_has_no_tax() {
        let lines = [line("2", "50", "MwSt", "19", "")];
        let t = document_totals(&lines, PriceBasis::Net, None, true);
        assert_eq!(t.total_gross, d("100"));
        assert_eq!(t.taxes.len(), 1);
        assert_eq!(t.taxes[0].amount, Decimal::ZERO);
    }

    #[test]
    fn spreading_is_cent_exact() {
        let parts = spread(d("0.10"), &[d("1"), d("1"), d("1")]);
        assert_eq!(parts.iter().sum::<Decimal>(), d("0.10"));
        assert_eq!(parts, vec![d("0.04"), d("0.03"), d("0.03")]);
    }

    #[test]
    fn a_negative_total_is_spread_cent_exact_too() {
        let parts = spread(d("-0.05"), &[d("8.40"), d("2.10")]);
        assert_eq!(parts.iter().sum::<Decimal>(), d("-0.05"));
        assert_eq!(parts, vec![d("-0.04"), d("-0.01")]);
        let parts = spread(d("-0.10"), &[d("1"), d("1"), d("1")]);
        assert_eq!(parts, vec![d("-0.04"), d("-0.03"), d("-0.03")]);
    }

    fn arb_line() -> impl Strategy<Value = Line> {
        (
            1i64..10_000,
            0i64..10_000_000,
            prop::sample::select(vec![("A", 0i64), ("B", 7), ("C", 19), ("D", 25)]),
            prop::option::of((0i64..10_000, any::<bool>())),
        )
            .prop_map(|(q, p, (name, rate), red)| Line {
                quantity: Decimal::new(q, 2),
                unit_price: Decimal::new(p, 3),
                tax_name: name.into(),
                tax_rate: Decimal::from(rate),
                reduction: red.map(|(v, pct)| {
                    if pct {
                        Reduction::Percent(Decimal::new(v % 10_001, 2))
                    } else {
                        Reduction::Amount(Decimal::new(v, 2))
                    }
                }),
            })
    }

    proptest! {
        #[test]
        fn totals_add_up(
            lines in prop::collection::vec(arb_line(), 0..12),
            gross in any::<bool>(),
            tax_free in any::<bool>(),
            reduction in prop::option::of((0i64..100_000, any::<bool>())),
        ) {
            let basis = if gross { PriceBasis::Gross } else { PriceBasis::Net };
            let reduction = reduction.map(|(v, pct)| if pct {
                Reduction::Percent(Decimal::new(v % 10_001, 2))
            } else {
                Reduction::Amount(Decimal::new(v, 2))
            });
            let t = document_totals(&lines, basis, reduction, tax_free);
            let cents = |x: Decimal| x == round_commercial_2(x);
            // Every figure is in cents.
            prop_assert!(cents(t.total_net) && cents(t.total_gross) && cents(t.total_reduction));
            // Tax groups partition the net.
            prop_assert_eq!(t.taxes.iter().map(|g| g.net).sum::<Decimal>(), t.total_net);
            // Gross is net plus taxes.
            prop_assert_eq!(
                t.total_gross,
                t.total_net + t.taxes.iter().map(|g| g.amount).sum::<Decimal>()
            );
            // Without a document reduction, the items' nets sum to the total net (NET basis).
            if reduction.is_none() && basis == PriceBasis::Net {
                prop_assert_eq!(t.lines.iter().map(|l| l.net).sum::<Decimal>(), t.total_net);
            }
            // The reduction is what separates the reduced from the unreduced basis.
            let unreduced = match basis {
                PriceBasis::Net => t.total_net_unreduced,
                PriceBasis::Gross => t.total_gross_unreduced,
            };
            let reduced = match basis {
                PriceBasis::Net => t.total_net,
                PriceBasis::Gross => t.total_gross,
            };
            prop_assert_eq!(unreduced - t.total_reduction, reduced);
            // Groups are unique by (name, rate).
            for (i, a) in t.taxes.iter().enumerate() {
                for b in &t.taxes[i + 1..] {
                    prop_assert!(a.name != b.name || a.rate != b.rate);
                }
            }
        }
    }
}
