//! Pods: several PostgreSQL databases, each holding whole merchants (their records, events,
//! files and sign-ins), served by every replica (docs/operations.md, "Pods").
//!
//! The home database (`database_url`) is the first pod and keeps the directory: the
//! `merchant_placements` row of every merchant placed in another pod. A merchant without one
//! lives at home, so one pod is exactly the setup without pods. Each pod hands out ids from
//! its own range (pod `k` from `k * 2^40`), so ids never meet when merchants move.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::{Backend, Db, DbError};

/// Ids of pod `k` start at `k * ID_RANGE` (2^40: about a million million each).
pub const ID_RANGE: i64 = 1 << 40;

/// One database of the fleet.
#[derive(Clone, Debug)]
pub struct Pod {
    pub name: String,
    pub db: Db,
}

/// Every pod, and where each merchant lives. Cheap to clone.
#[derive(Clone)]
pub struct Pods {
    inner: Arc<Inner>,
}

struct Inner {
    /// The home pod first.
    pods: Vec<Pod>,
    /// Merchant id to pod index, for the merchants this process has looked up.
    placed: RwLock<HashMap<i64, usize>>,
}

impl std::fmt::Debug for Pods {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.inner.pods.iter().map(|p| p.name.as_str()).collect();
        f.debug_struct("Pods").field("pods", &names).finish()
    }
}

/// The home pod's name in placements and commands.
pub const HOME: &str = "home";

/// Parses `pods` as configured: `name=url` pairs separated by commas or whitespace.
pub fn parse_pods(text: &str) -> Result<Vec<(String, String)>, DbError> {
    let mut out: Vec<(String, String)> = Vec::new();
    for item in text.split([',', ' ', '\n', '\t']).filter(|s| !s.is_empty()) {
        let Some((name, url)) = item.split_once('=') else {
            return Err(DbError::Config(format!(
                "pods: expected name=postgres://..., found {}",
                crate::redact_url(item)
            )));
        };
        let fine_name = !name.is_empty()
            && name.len() <= 40
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !fine_name || name == HOME {
            return Err(DbError::Config(format!(
                "pods: {name:?} is not a pod name (letters, digits, '-' and '_', at most 40, \
                 and not {HOME:?}, the database_url's)"
            )));
        }
        if Backend::from_url(url)? != Backend::Postgres {
            return Err(DbError::Config(format!(
                "pods: pod {name} must be a PostgreSQL database"
            )));
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(DbError::Config(format!("pods: {name} is named twice")));
        }
        out.push((name.to_owned(), url.to_owned()));
    }
    Ok(out)
}

impl Pods {
    /// One pod: the home database alone (no directory is read).
    pub fn single(home: Db) -> Self {
        Self::new(vec![Pod {
            name: HOME.to_owned(),
            db: home,
        }])
    }

    fn new(pods: Vec<Pod>) -> Self {
        Self {
            inner: Arc::new(Inner {
                pods,
                placed: RwLock::new(HashMap::new()),
            }),
        }
    }

    /// The home database (migrated) and the other pods, each then migrated, with its id range
    /// checked: a pod whose ids run past its range was listed in another place before (pods
    /// are only ever added at the end).
    pub async fn open(home: Db, others: Vec<Pod>) -> Result<Self, DbError> {
        if others.is_empty() {
            return Ok(Self::single(home));
        }
        if home.backend() != Backend::Postgres {
            return Err(DbError::Config(
                "pods need the home database (database_url) on PostgreSQL".into(),
            ));
        }
        let mut pods = vec![Pod {
            name: HOME.to_owned(),
            db: home,
        }];
        pods.extend(others);
        // The caller migrated the home database when it opened it.
        for (k, pod) in pods.iter().enumerate() {
            if k > 0 {
                pod.db.migrate().await?;
            }
            pod.db
                .enter_id_range(k as i64 * ID_RANGE, &pod.name)
                .await?;
        }
        Ok(Self::new(pods))
    }

    pub fn home(&self) -> &Db {
        &self.inner.pods[0].db
    }

    pub fn all(&self) -> &[Pod] {
        &self.inner.pods
    }

    /// More than the home database.
    pub fn is_fleet(&self) -> bool {
        self.inner.pods.len() > 1
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.inner.pods.iter().position(|p| p.name == name)
    }

    pub fn pod(&self, index: usize) -> &Pod {
        &self.inner.pods[index.min(self.inner.pods.len() - 1)]
    }

    /// The database holding the merchant.
    pub async fn of(&self, merchant_id: i64) -> Result<Db, DbError> {
        Ok(self.pod(self.index_for(merchant_id).await?).db.clone())
    }

    /// The pod index holding the merchant: from this process's memory, else the directory.
    pub async fn index_for(&self, merchant_id: i64) -> Result<usize, DbError> {
        if !self.is_fleet() {
            return Ok(0);
        }
        if let Some(index) = self.remembered(merchant_id) {
            return Ok(index);
        }
        self.look_up(merchant_id).await
    }

    fn remembered(&self, merchant_id: i64) -> Option<usize> {
        let placed = self.inner.placed.read().unwrap_or_else(|p| p.into_inner());
        placed.get(&merchant_id).copied()
    }

    /// Reads the merchant's placement from the directory, and remembers it.
    pub async fn look_up(&self, merchant_id: i64) -> Result<usize, DbError> {
        let index = match self.home().placement(merchant_id).await? {
            None => 0,
            Some(name) => self.index_of(&name).ok_or_else(|| {
                DbError::Config(format!(
                    "merchant {merchant_id} is placed in pod {name}, which is not configured"
                ))
            })?,
        };
        let mut placed = self.inner.placed.write().unwrap_or_else(|p| p.into_inner());
        placed.insert(merchant_id, index);
        Ok(index)
    }

    /// The merchant a manifest key names, wherever it is.
    pub async fn merchant_by_key(&self, key: &str) -> Result<Option<i64>, DbError> {
        if let Some((id, _)) = self.home().placed_key(key).await? {
            return Ok(Some(id));
        }
        self.home().merchant_with_key(key).await
    }

    /// Runs `work` on the merchant's pod, following a merchant that moved: the pod it left says
    /// where it went ([`DbError::Moved`]), or, once its rows are gone there, the directory.
    /// A write that waited on a move's hold goes on in the new pod.
    pub async fn following<T, F, Fut>(&self, merchant_id: i64, work: F) -> Result<T, DbError>
    where
        F: Fn(Db) -> Fut,
        Fut: std::future::Future<Output = Result<T, DbError>>,
    {
        let mut index = self.index_for(merchant_id).await?;
        for _ in 0..3 {
            let next = match work(self.pod(index).db.clone()).await {
                Err(DbError::Moved(pod)) => self.index_of(&pod).ok_or_else(|| {
                    DbError::Config(format!("merchant moved to pod {pod}, not configured"))
                })?,
                Err(DbError::Conflict(why)) if self.is_fleet() => {
                    match self.look_up(merchant_id).await? {
                        now if now == index => return Err(DbError::Conflict(why)),
                        now => now,
                    }
                }
                done => return done,
            };
            self.remember(merchant_id, next);
            index = next;
        }
        Err(DbError::Unavailable(format!(
            "merchant {merchant_id} is moving between pods; send the request again"
        )))
    }

    /// Forgets where the merchant lives (it moved): the next request reads the directory.
    pub fn forget(&self, merchant_id: i64) {
        let mut placed = self.inner.placed.write().unwrap_or_else(|p| p.into_inner());
        placed.remove(&merchant_id);
    }

    /// Forgets every placement (announcements may have been missed).
    pub fn forget_all(&self) {
        let mut placed = self.inner.placed.write().unwrap_or_else(|p| p.into_inner());
        placed.clear();
    }

    /// Remembers a placement this process made or heard of.
    pub fn remember(&self, merchant_id: i64, index: usize) {
        let mut placed = self.inner.placed.write().unwrap_or_else(|p| p.into_inner());
        placed.insert(merchant_id, index);
    }

    /// The pod a new merchant goes to: the named one, else the one holding fewest merchants.
    pub async fn for_new_merchant(&self, named: Option<&str>) -> Result<usize, DbError> {
        if let Some(name) = named {
            return self
                .index_of(name)
                .ok_or_else(|| DbError::Conflict(format!("there is no pod named {name}")));
        }
        let mut best = (0, i64::MAX);
        for (k, pod) in self.all().iter().enumerate() {
            let n = pod.db.merchants_held().await?;
            if n < best.1 {
                best = (k, n);
            }
        }
        Ok(best.0)
    }

    /// Records that pod `index` holds the merchant (the home pod: no row).
    pub async fn place(&self, merchant_id: i64, key: &str, index: usize) -> Result<(), DbError> {
        let name = (index > 0).then(|| self.pod(index).name.as_str());
        self.home().set_placement(merchant_id, key, name).await?;
        self.remember(merchant_id, index);
        Ok(())
    }

    /// Where each pod stands: its name, merchants held, and whether this process hears its
    /// other replicas.
    pub async fn report(&self) -> Vec<(String, Result<i64, DbError>, bool)> {
        let mut out = Vec::new();
        for pod in self.all() {
            let held = pod.db.merchants_held().await;
            out.push((pod.name.clone(), held, pod.db.coherence().is_live()));
        }
        out
    }
}

impl Db {
    /// The pod a merchant is placed in, per this (home) database's directory.
    pub(crate) async fn placement(&self, merchant_id: i64) -> Result<Option<String>, DbError> {
        let started = std::time::Instant::now();
        let row: Option<(String,)> =
            sqlx::query_as("SELECT pod FROM merchant_placements WHERE merchant_id = $1")
                .bind(merchant_id)
                .fetch_optional(self.pool())
                .await?;
        self.observe("placement", started);
        Ok(row.map(|(pod,)| pod))
    }

    /// The merchant id a key names in the directory (merchants placed outside home).
    pub async fn placed_key(&self, key: &str) -> Result<Option<(i64, String)>, DbError> {
        if !crate::storable(key) {
            return Ok(None);
        }
        Ok(sqlx::query_as(
            "SELECT merchant_id, pod FROM merchant_placements WHERE merchant_key = $1",
        )
        .bind(key)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Writes (or, for home, removes) the merchant's placement and tells every replica.
    async fn set_placement(
        &self,
        merchant_id: i64,
        key: &str,
        pod: Option<&str>,
    ) -> Result<(), DbError> {
        let mut tx = self.begin().await?;
        match pod {
            Some(pod) => {
                sqlx::query(
                    "INSERT INTO merchant_placements (merchant_id, merchant_key, pod, placed_at) \
                     VALUES ($1, $2, $3, $4) ON CONFLICT (merchant_id) \
                     DO UPDATE SET pod = excluded.pod, placed_at = excluded.placed_at",
                )
                .bind(merchant_id)
                .bind(key)
                .bind(pod)
                .bind(domain::now_millis())
                .execute(tx.conn()?)
                .await?;
            }
            None => {
                sqlx::query("DELETE FROM merchant_placements WHERE merchant_id = $1")
                    .bind(merchant_id)
                    .execute(tx.conn()?)
                    .await?;
            }
        }
        tx.announce(crate::Announcement::MerchantPlaced(merchant_id));
        tx.commit().await
    }

    /// The merchant an application belongs to, when this database holds it (and the merchant
    /// did not move out).
    pub async fn application_merchant(&self, application_id: i64) -> Result<Option<i64>, DbError> {
        let row: Option<(i64,)> = sqlx::query_as(
            "SELECT a.merchant_id FROM applications a JOIN merchants m ON m.id = a.merchant_id \
             WHERE a.id = $1 AND m.moved_to IS NULL",
        )
        .bind(application_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|(m,)| m))
    }

    /// The merchant with this key here, if any.
    pub async fn merchant_with_key(&self, key: &str) -> Result<Option<i64>, DbError> {
        if !crate::storable(key) {
            return Ok(None);
        }
        let row: Option<(i64,)> =
            sqlx::query_as("SELECT id FROM merchants WHERE manifest_key = $1 AND moved_to IS NULL")
                .bind(key)
                .fetch_optional(self.pool())
                .await?;
        Ok(row.map(|(id,)| id))
    }

    /// Merchants this database holds (the ones that moved out excepted).
    pub async fn merchants_held(&self) -> Result<i64, DbError> {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM merchants WHERE moved_to IS NULL")
            .fetch_one(self.pool())
            .await?;
        Ok(n)
    }

    /// Moves the id sequence into `[from, from + ID_RANGE)` when it is below, and refuses a
    /// sequence past the range (the pod was listed at another place before).
    async fn enter_id_range(&self, from: i64, name: &str) -> Result<(), DbError> {
        let (last,): (i64,) = sqlx::query_as("SELECT last_value FROM global_id_seq")
            .fetch_one(self.pool())
            .await?;
        if last >= from + ID_RANGE {
            return Err(DbError::Config(format!(
                "pod {name} has handed out ids up to {last}, past its range from {from}: pods \
                 must keep their places in the list (add new pods at its end)"
            )));
        }
        if last < from {
            sqlx::query("SELECT setval('global_id_seq', $1, false)")
                .bind(from.max(1))
                .execute(self.pool())
                .await?;
        }
        Ok(())
    }
}

/// A merchant's writes held in the pod it is leaving: its row locked (every replica's write
/// waits on its claim) and its advisory lock taken (uploads wait), until released.
pub struct Hold {
    tx: crate::Tx,
    merchant_id: i64,
}

impl Db {
    /// Holds the merchant's writes here once the write in progress, if any, has committed.
    pub async fn hold_merchant(&self, merchant_id: i64) -> Result<Hold, DbError> {
        let mut tx = self.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(merchant_id)
            .execute(tx.conn()?)
            .await?;
        let row: Option<(i64,)> = sqlx::query_as(
            "SELECT version FROM merchants WHERE id = $1 AND moved_to IS NULL FOR UPDATE",
        )
        .bind(merchant_id)
        .fetch_optional(tx.conn()?)
        .await?;
        if row.is_none() {
            tx.rollback().await?;
            return Err(DbError::Conflict(format!(
                "merchant {merchant_id} is not held in this pod"
            )));
        }
        Ok(Hold { tx, merchant_id })
    }

    /// Pauses the merchant's webhook endpoints for `owner`: no dispatcher claims one, and one
    /// delivering records what it sent and gives it back. True once none is leased (no
    /// delivery is in flight).
    pub async fn pause_webhooks(&self, merchant_id: i64, owner: &str) -> Result<bool, DbError> {
        sqlx::query("UPDATE webhooks SET paused_by = $2 WHERE merchant_id = $1")
            .bind(merchant_id)
            .bind(owner)
            .execute(self.pool())
            .await?;
        let (leased,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM webhooks WHERE merchant_id = $1 AND lease_until >= $2",
        )
        .bind(merchant_id)
        .bind(domain::now_millis())
        .fetch_one(self.pool())
        .await?;
        Ok(leased == 0)
    }

    /// Ends [`Db::pause_webhooks`]: deliveries resume from the cursors.
    pub async fn resume_webhooks(&self, merchant_id: i64, owner: &str) -> Result<(), DbError> {
        sqlx::query(
            "UPDATE webhooks SET paused_by = NULL WHERE merchant_id = $1 AND paused_by = $2",
        )
        .bind(merchant_id)
        .bind(owner)
        .execute(self.pool())
        .await?;
        Ok(())
    }
}

impl crate::Tx {
    /// On PostgreSQL: takes the merchant's advisory lock (uploads of one merchant run one at a
    /// time; a move's hold takes it too) and refuses a merchant that moved out of this pod
    /// meanwhile ([`DbError::Moved`]). Writes that are not claimed (uploads, logs) begin so.
    pub async fn stay_with(&mut self, merchant_id: i64) -> Result<(), DbError> {
        if self.backend() != Backend::Postgres {
            return Ok(());
        }
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(merchant_id)
            .execute(self.conn()?)
            .await?;
        let moved: Option<(Option<String>,)> =
            sqlx::query_as("SELECT moved_to FROM merchants WHERE id = $1")
                .bind(merchant_id)
                .fetch_optional(self.conn()?)
                .await?;
        match moved {
            Some((Some(pod),)) => Err(DbError::Moved(pod)),
            _ => Ok(()),
        }
    }
}

impl Hold {
    /// Ends the hold. With a pod, the merchant is marked moved there in the same commit: the
    /// writes that waited find where to go. Without, nothing changed.
    pub async fn release(mut self, moved_to: Option<&str>) -> Result<(), DbError> {
        match moved_to {
            Some(pod) => {
                sqlx::query("UPDATE merchants SET moved_to = $2 WHERE id = $1")
                    .bind(self.merchant_id)
                    .bind(pod)
                    .execute(self.tx.conn()?)
                    .await?;
                self.tx.commit().await
            }
            None => self.tx.rollback().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_parse_with_their_names() {
        let pods = parse_pods("a=postgres://h/a, b=postgresql://h/b").unwrap_or_default();
        assert_eq!(
            pods,
            vec![
                ("a".to_owned(), "postgres://h/a".to_owned()),
                ("b".to_owned(), "postgresql://h/b".to_owned())
            ]
        );
        assert!(parse_pods("").is_ok_and(|p| p.is_empty()));
        for bad in [
            "a",
            "home=postgres://h/a",
            "a=sqlite://x.db",
            "a=postgres://h/a,a=postgres://h/b",
            "a b=postgres://h/a",
        ] {
            assert!(parse_pods(bad).is_err(), "{bad}");
        }
    }
}
