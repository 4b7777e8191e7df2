//! Base rates of § 247 BGB (`/api/base-rates`): the rate valid from a day on, which
//! default interest of § 288 BGB adds its points to. A new account starts with the rates
//! the Deutsche Bundesbank published from 2002 on; later ones are added through the API.

use rust_decimal::Decimal;

use super::super::date::Date;
use super::super::records::{self, Draft, Resource, Rules};
use super::super::schema::{Changes, Field, Kind, Scalar};
use super::super::{Ctx, Error};
use crate::caps::{Read, Write};

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the base rate (read only; assigned on create)."),
    Field::new("valid_from", Kind::Date)
        .mandatory()
        .doc("The day the rate is valid from, until the next one; one rate per day."),
    Field::new("rate", Kind::Decimal)
        .mandatory()
        .doc("The base rate in percent, −10 to 20 (it may be negative, as from 2013 to 2022)."),
];

pub static BASE_RATES: Resource = Resource::new("base-rates", "base rate", FIELDS, &BaseRateRules);

struct BaseRateRules;

/// The lowest and highest rate a base rate may have.
const RATE_MIN: i64 = -10;
const RATE_MAX: i64 = 20;

impl Rules for BaseRateRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        if let Some(rate) = d.record.get("rate").and_then(Scalar::as_dec)
            && !(Decimal::from(RATE_MIN)..=Decimal::from(RATE_MAX)).contains(&rate)
        {
            d.errors.push(format!(
                "rate must be between {RATE_MIN} and {RATE_MAX}, got {rate}"
            ));
        }
        let Some(Scalar::Date(day)) = d.record.get("valid_from").cloned() else {
            return Ok(());
        };
        // An account holds a few dozen rates: read them all.
        let same = records::load_all(d.txn.as_read(), &BASE_RATES, d.ctx.account_id)?
            .into_iter()
            .find(|r| r.id() != d.record.id() && r.get("valid_from") == Some(&Scalar::Date(day)));
        if let Some(other) = same {
            d.errors.push(format!(
                "valid_from {day} already has base rate {}",
                other.id()
            ));
        }
        Ok(())
    }
}

/// The account's base rates (valid from, rate), sorted by day.
pub fn rates(txn: &dyn Read, account: u64) -> Result<Vec<(Date, Decimal)>, Error> {
    let mut out: Vec<(Date, Decimal)> = records::load_all(txn, &BASE_RATES, account)?
        .iter()
        .filter_map(|r| match (r.get("valid_from"), r.get("rate")) {
            (Some(Scalar::Date(d)), Some(rate)) => rate.as_dec().map(|rate| (*d, rate)),
            _ => None,
        })
        .collect();
    out.sort_by_key(|(d, _)| *d);
    Ok(out)
}

/// The base rate of each half-year as the Deutsche Bundesbank published it (§ 247 BGB,
/// "Basiszinssatz"), from its introduction on 1 January 2002 to 1 January 2026.
pub const PUBLISHED: &[(&str, &str)] = &[
    ("2002-01-01", "2.57"),
    ("2002-07-01", "2.47"),
    ("2003-01-01", "1.97"),
    ("2003-07-01", "1.22"),
    ("2004-01-01", "1.14"),
    ("2004-07-01", "1.13"),
    ("2005-01-01", "1.21"),
    ("2005-07-01", "1.17"),
    ("2006-01-01", "1.37"),
    ("2006-07-01", "1.95"),
    ("2007-01-01", "2.70"),
    ("2007-07-01", "3.19"),
    ("2008-01-01", "3.32"),
    ("2008-07-01", "3.19"),
    ("2009-01-01", "1.62"),
    ("2009-07-01", "0.12"),
    ("2010-01-01", "0.12"),
    ("2010-07-01", "0.12"),
    ("2011-01-01", "0.12"),
    ("2011-07-01", "0.37"),
    ("2012-01-01", "0.12"),
    ("2012-07-01", "0.12"),
    ("2013-01-01", "-0.13"),
    ("2013-07-01", "-0.38"),
    ("2014-01-01", "-0.63"),
    ("2014-07-01", "-0.73"),
    ("2015-01-01", "-0.83"),
    ("2015-07-01", "-0.83"),
    ("2016-01-01", "-0.83"),
    ("2016-07-01", "-0.88"),
    ("2017-01-01", "-0.88"),
    ("2017-07-01", "-0.88"),
    ("2018-01-01", "-0.88"),
    ("2018-07-01", "-0.88"),
    ("2019-01-01", "-0.88"),
    ("2019-07-01", "-0.88"),
    ("2020-01-01", "-0.88"),
    ("2020-07-01", "-0.88"),
    ("2021-01-01", "-0.88"),
    ("2021-07-01", "-0.88"),
    ("2022-01-01", "-0.88"),
    ("2022-07-01", "-0.88"),
    ("2023-01-01", "1.62"),
    ("2023-07-01", "3.12"),
    ("2024-01-01", "3.62"),
    ("2024-07-01", "3.37"),
    ("2025-01-01", "2.27"),
    ("2025-07-01", "1.27"),
    ("2026-01-01", "1.27"),
];

/// Gives a new account the published base rates.
pub fn seed(ctx: &Ctx, txn: &mut dyn Write) -> Result<(), Error> {
    for (day, rate) in PUBLISHED {
        let changes = Changes {
            values: vec![
                (
                    "valid_from",
                    Some(Scalar::Date(
                        Date::parse(day).expect("published days are dates"),
                    )),
                ),
                (
                    "rate",
                    Some(Scalar::Dec(
                        rate.parse().expect("published rates are decimals"),
                    )),
                ),
            ],
            ..Changes::default()
        };
        records::create(ctx, txn, &BASE_RATES, &changes)?;
    }
    Ok(())
}
