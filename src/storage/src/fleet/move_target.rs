//! What a move of merchants between databases asks of each (docs/operations.md, "From SQLite
//! to PostgreSQL"): the source's identity and the last id it handed out, and whether a target
//! can take the source's merchants with every id kept.

use crate::fleet::archive_rows::{allocator_next, ImportError};
use crate::{Db, DbError};
use domain::crypto::{hex, random_bytes};

impl Db {
    /// This database's identity, made on first use: what a target records its merchants came
    /// from.
    pub async fn identity(&self) -> Result<String, DbError> {
        let mut tx = self.begin().await?;
        sqlx::query(
            "INSERT INTO database_identity (k, id) VALUES (1, $1) ON CONFLICT (k) DO NOTHING",
        )
        .bind(hex(&random_bytes::<16>()))
        .execute(tx.conn()?)
        .await?;
        let (id,): (String,) = sqlx::query_as("SELECT id FROM database_identity WHERE k = 1")
            .fetch_one(tx.conn()?)
            .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// The last id this database's allocator handed out (0 for none).
    pub async fn ids_handed_out(&self) -> Result<i64, DbError> {
        let mut conn = self.pool().acquire().await?;
        Ok(allocator_next(&mut conn, self.backend()).await? - 1)
    }

    /// The identity of the database a move brought merchant `merchant_id` here from, if one
    /// did.
    pub async fn moved_in_from(&self, merchant_id: i64) -> Result<Option<String>, DbError> {
        let row: Option<(String,)> =
            sqlx::query_as("SELECT source FROM merchants_moved_in WHERE merchant_id = $1")
                .bind(merchant_id)
                .fetch_optional(self.pool())
                .await?;
        Ok(row.map(|(source,)| source))
    }

    /// Whether this database can take merchants of the database `source` with their ids: every
    /// merchant here came from `source` by a move (this reads every merchant here), and, as
    /// [`Db::check_no_ids_since`] tells each time, no id was handed out here since (a server on
    /// this database may have made some). Ids of the two would otherwise meet. The last id
    /// moves from `source` brought, and why the merchants here refuse a move if they do.
    pub async fn check_move_target(
        &self,
        source: &str,
    ) -> Result<(i64, Option<ImportError>), DbError> {
        let (others,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM merchants m WHERE NOT EXISTS \
             (SELECT 1 FROM merchants_moved_in v WHERE v.merchant_id = m.id AND v.source = $1)",
        )
        .bind(source)
        .fetch_one(self.pool())
        .await?;
        let refused = (others > 0).then(|| {
            ImportError::Conflict(format!(
                "the target holds {others} merchant(s) that did not move there from this source; \
                 a move keeps every id, so it goes into an empty database or one that only moves \
                 from this source have filled"
            ))
        });
        let (through,): (Option<i64>,) =
            sqlx::query_as("SELECT MAX(ids_through) FROM merchants_moved_in WHERE source = $1")
                .bind(source)
                .fetch_one(self.pool())
                .await?;
        Ok((through.unwrap_or(0), refused))
    }

    /// Refuses when this database handed out ids past `through`, the last one moves brought.
    pub async fn check_no_ids_since(&self, through: i64) -> Result<(), ImportError> {
        let handed_out = self.ids_handed_out().await?;
        if handed_out > through {
            return Err(ImportError::Conflict(format!(
                "the target has handed out ids of its own (up to {handed_out}, past the {through} \
                 moves brought): a server has written there, and the source's ids could meet \
                 them"
            )));
        }
        Ok(())
    }
}
