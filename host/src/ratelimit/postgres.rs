//! The rate limit windows of every host on a PostgreSQL store: rows of `faktura_rate`
//! (made by `crate::postgres`), counted in one statement each, so that the hosts allow a
//! bucket's limit once between them. It holds no schema.

use crate::postgres::Pool;

/// The windows in the database of the store.
pub(super) struct Windows {
    pool: Pool,
}

fn pg(e: impl std::fmt::Display) -> String {
    format!("PostgreSQL: {e}")
}

impl Windows {
    pub(super) fn new(pool: Pool) -> Windows {
        Windows { pool }
    }

    /// Counts a request of `bucket` in the window starting at `window` when it is under
    /// `limit`, in one statement (no transaction to collide): the count with it, or `None`
    /// when the window is full. The bucket's older windows go when a new one begins.
    pub(super) async fn count(
        &self,
        bucket: &str,
        window: u64,
        limit: u32,
    ) -> Result<Option<u32>, String> {
        let conn = self.pool.get().await.map_err(|e| e.to_string())?;
        let window = window as i64;
        let stmt = conn
            .prepare_cached(
                "INSERT INTO faktura_rate (bucket, window_start, hits) VALUES ($1, $2, 1) \
                 ON CONFLICT (bucket, window_start) DO UPDATE SET hits = faktura_rate.hits + 1 \
                 WHERE faktura_rate.hits < $3 RETURNING hits",
            )
            .await
            .map_err(pg)?;
        let row = conn
            .query_opt(&stmt, &[&bucket, &window, &(limit as i32)])
            .await
            .map_err(pg)?;
        let hits = row.map(|r| r.get::<_, i32>(0) as u32);
        if hits == Some(1) {
            conn.execute(
                "DELETE FROM faktura_rate WHERE bucket = $1 AND window_start < $2",
                &[&bucket, &window],
            )
            .await
            .map_err(pg)?;
        }
        Ok(hits)
    }
}
