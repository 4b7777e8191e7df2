//! The query string: parameters, paging and `order_by`.

use crate::domain::schema::Field;
use crate::limits;

use super::error::ApiError;

#[derive(Debug, Default)]
pub(crate) struct Query {
    params: Vec<(String, String)>,
}

impl Query {
    pub(super) fn parse(raw: &str) -> Result<Query, ApiError> {
        if raw.len() > limits::QUERY_BYTES_MAX {
            return Err(ApiError::UriTooLong);
        }
        let params = form_urlencoded::parse(raw.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        Ok(Query { params })
    }

    /// A comma-separated list parameter, empty entries dropped.
    pub(super) fn list(&self, name: &str) -> Vec<&str> {
        self.get(name)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The tag filters as given: `tags` (all of them) and `tags_any` (any of them).
    pub(super) fn tags(&self) -> (Vec<String>, Vec<String>) {
        let owned = |name| self.list(name).into_iter().map(str::to_owned).collect();
        (owned("tags"), owned("tags_any"))
    }

    /// A comma-separated list parameter, each entry as `pick` reads it. An entry it reads
    /// as nothing adds "`name` must list `what`, got …" to `errors`, and the rest are read
    /// on, so that every wrong entry is reported.
    pub(super) fn picked<T>(
        &self,
        name: &str,
        what: &str,
        errors: &mut Vec<String>,
        pick: impl Fn(&str) -> Option<T>,
    ) -> Vec<T> {
        let mut picked = Vec::new();
        for entry in self.list(name) {
            match pick(entry) {
                Some(value) => picked.push(value),
                None => errors.push(format!("{name} must list {what}, got \"{entry}\"")),
            }
        }
        picked
    }

    /// A comma-separated list of ids: each 1 to 18 digits without sign or leading zero, as
    /// the reference's id lists say (`Shape::Ids`).
    pub(super) fn ids(&self, name: &str) -> Result<Vec<u64>, ApiError> {
        self.list(name)
            .into_iter()
            .map(|v| {
                let is_id = (1..=18).contains(&v.len())
                    && !v.starts_with('0')
                    && v.bytes().all(|b| b.is_ascii_digit());
                is_id.then(|| v.parse().ok()).flatten().ok_or_else(|| {
                    ApiError::bad(format!("{name} must list positive integers, got \"{v}\""))
                })
            })
            .collect()
    }

    /// A positive integer parameter (an id).
    pub(super) fn id(&self, name: &str) -> Result<Option<u64>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .map(Some)
                .ok_or_else(|| {
                    ApiError::bad(format!("{name} must be a positive integer, got \"{v}\""))
                }),
        }
    }

    /// A date parameter (YYYY-MM-DD).
    pub(super) fn date(&self, name: &str) -> Result<Option<crate::domain::date::Date>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => crate::domain::date::Date::parse(v.trim())
                .map(Some)
                .ok_or_else(|| {
                    ApiError::bad(format!("{name} must be a date as YYYY-MM-DD, got \"{v}\""))
                }),
        }
    }

    /// Every parameter's name and value, in the order given.
    pub(super) fn params(&self) -> impl Iterator<Item = (&str, &str)> {
        self.params.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The first value of a parameter; an empty value counts as absent.
    pub(super) fn get(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| v.as_str())
    }

    /// `page` and `per_page`: defaults 1 and 100, per_page clamped to the maximum.
    pub(super) fn paging(&self) -> Result<(u32, u32), ApiError> {
        let positive = |name: &str, default: u32| -> Result<u32, ApiError> {
            match self.get(name) {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n >= 1)
                    .map(|n| n.min(u32::MAX as u64) as u32)
                    .ok_or_else(|| {
                        ApiError::bad(format!("{name} must be a positive integer, got \"{v}\""))
                    }),
            }
        };
        let page = positive("page", 1)?;
        if page > limits::PAGE_MAX {
            return Err(ApiError::bad(format!(
                "page must be at most {}",
                limits::PAGE_MAX
            )));
        }
        let per_page = positive("per_page", limits::PER_PAGE_DEFAULT)?.min(limits::PER_PAGE_MAX);
        Ok((page, per_page))
    }

    /// `order_by=field [ASC|DESC], ...` over the given fields.
    pub(super) fn order(
        &self,
        fields: &'static [Field],
    ) -> Result<Vec<(&'static str, bool)>, ApiError> {
        let Some(raw) = self.get("order_by") else {
            return Ok(Vec::new());
        };
        let mut order = Vec::new();
        for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let mut words = part.split([' ', '+']).filter(|w| !w.is_empty());
            let name = words.next().unwrap_or_default();
            let field = fields
                .iter()
                .find(|f| f.name == name && !f.single_only)
                .ok_or_else(|| ApiError::bad(format!("order_by: unknown field \"{name}\"")))?;
            let desc = match words.next() {
                None => false,
                Some(d) if d.eq_ignore_ascii_case("asc") => false,
                Some(d) if d.eq_ignore_ascii_case("desc") => true,
                Some(d) => {
                    return Err(ApiError::bad(format!(
                        "order_by: direction must be ASC or DESC, got \"{d}\""
                    )));
                }
            };
            if words.next().is_some() {
                return Err(ApiError::bad(format!("order_by: cannot read \"{part}\"")));
            }
            order.push((field.name, desc));
        }
        if order.len() > limits::ORDER_KEYS_MAX {
            return Err(ApiError::bad(format!(
                "order_by takes at most {} fields",
                limits::ORDER_KEYS_MAX
            )));
        }
        Ok(order)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::templates::TEMPLATES;

    #[test]
    fn paging_defaults_clamps_and_refuses() {
        let p = |q: &str| Query::parse(q).unwrap().paging();
        assert_eq!(p("").unwrap(), (1, 100));
        assert_eq!(p("page=2&per_page=5000").unwrap(), (2, 1000));
        assert!(p("per_page=-1").is_err());
        assert!(p("per_page=0").is_err());
        assert!(p("page=abc").is_err());
        assert!(p("page=99999999999").is_err());
    }

    #[test]
    fn order_by_reads_fields_and_directions() {
        let o = |q: &str| Query::parse(q).unwrap().order(TEMPLATES.fields);
        assert_eq!(
            o("order_by=name+DESC,id").unwrap(),
            vec![("name", true), ("id", false)]
        );
        assert_eq!(o("order_by=name%20asc").unwrap(), vec![("name", false)]);
        assert!(o("order_by=nope").is_err());
        assert!(o("order_by=name+sideways").is_err());
        assert!(o("order_by=base64file").is_err());
    }
}
