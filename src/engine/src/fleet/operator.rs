//! The operator's realm over storage (docs/operator.md): its tokens, merchants created and
//! suspended through it, and each merchant's usage: what it holds (from the database) and what it
//! did on this replica (counted here as requests pass the gate).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use domain::crypto;
use domain::fleet::operator::{LiveUsage, MerchantSummary, OperatorToken};
use domain::fleet::tenant::AppliedTenant;
use domain::fleet::tenant::{Manifest, PasswordSpec};
use domain::now_millis;
use domain::Failure;
use ports::fleet::FleetStore;
pub use ports::fleet::{ImportRefused, Imported, MoveError, PodMoved};
use tokio::sync::mpsc;

/// A JSON object's fields, as a write body holds them.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// Why an operator's write of one merchant was refused.
#[derive(Debug, thiserror::Error)]
pub enum CreateRefused {
    /// The manifest is not valid: what and where.
    #[error("{0}")]
    Invalid(String),
    /// Another merchant has the key.
    #[error("{0}")]
    KeyTaken(String),
}

#[derive(Clone)]
pub struct Operator {
    fleet: Arc<dyn FleetStore>,
    usage: Arc<Usage>,
}

impl Operator {
    pub fn new(fleet: Arc<dyn FleetStore>) -> Self {
        Self {
            fleet,
            usage: Arc::default(),
        }
    }

    /// The token a request presents, if it is a live operator token.
    pub async fn token(&self, presented: &str) -> Result<Option<OperatorToken>, Failure> {
        let found = self
            .fleet
            .operator_token(&crypto::sha256_hex(presented))
            .await?;
        Ok(found.filter(|token| token.expires_at > now_millis()))
    }

    /// Makes a new operator token named `name`, good for `days`; its text, shown once.
    pub async fn issue_token(&self, name: &str, days: u32) -> Result<String, Failure> {
        let text = crypto::random_token(domain::fleet::operator::TOKEN_PREFIX);
        let token = OperatorToken {
            name: name.to_owned(),
            expires_at: now_millis() + i64::from(days) * 86_400_000,
        };
        self.fleet
            .insert_operator_token(&crypto::sha256_hex(&text), &token)
            .await?;
        Ok(text)
    }

    /// Creates merchants from manifests sent as JSON under client keys, in one transaction;
    /// each is created or refused, in the order sent.
    pub async fn create(
        &self,
        objects: Vec<(String, Result<JsonObject, String>)>,
        pbkdf2_iterations: u32,
    ) -> Result<Vec<(String, Result<AppliedTenant, CreateRefused>)>, Failure> {
        let mut parsed: Vec<(String, Result<Manifest, CreateRefused>)> =
            Vec::with_capacity(objects.len());
        for (key, fields) in objects {
            let manifest = fields.map_err(CreateRefused::Invalid).and_then(|fields| {
                Manifest::from_json(&format!("merchants.{key}"), fields)
                    .map_err(|e| CreateRefused::Invalid(e.to_string()))
            });
            let manifest = match manifest {
                Ok(manifest) => Ok(hash_passwords(manifest, pbkdf2_iterations).await?),
                Err(refused) => Err(refused),
            };
            parsed.push((key, manifest));
        }
        let valid: Vec<&Manifest> = parsed.iter().filter_map(|(_, m)| m.as_ref().ok()).collect();
        let mut created = match valid.is_empty() {
            true => Vec::new(),
            false => {
                self.fleet
                    .create_merchants(&valid, pbkdf2_iterations)
                    .await?
            }
        }
        .into_iter();
        Ok(parsed
            .into_iter()
            .map(|(key, manifest)| {
                let outcome = match manifest {
                    Err(refused) => Err(refused),
                    Ok(_) => match created.next() {
                        Some(Ok(applied)) => Ok(applied),
                        Some(Err(why)) => Err(CreateRefused::KeyTaken(why)),
                        None => Err(CreateRefused::Invalid("not created".into())),
                    },
                };
                (key, outcome)
            })
            .collect())
    }

    /// Suspends (`true`) or resumes these merchants; the ids that exist.
    pub async fn set_suspended(&self, ids: &[i64], suspended: bool) -> Result<Vec<i64>, Failure> {
        self.fleet
            .set_suspended(ids, suspended.then(now_millis))
            .await
    }

    /// Deletes these merchants after `grace_secs`: suspended now, their rows removed by the
    /// sweep ([`Operator::purge_due`]) once the time has passed. The ids that exist, with the
    /// time their rows go.
    pub async fn schedule_deletion(
        &self,
        ids: &[i64],
        grace_secs: u64,
    ) -> Result<Vec<(i64, i64)>, Failure> {
        let grace_millis = i64::try_from(grace_secs)
            .unwrap_or(i64::MAX)
            .saturating_mul(1000);
        let after = now_millis().saturating_add(grace_millis);
        self.fleet.schedule_deletion(ids, after).await
    }

    /// Removes every row of the merchants whose deletion time has passed; how many went.
    pub async fn purge_due(&self) -> Result<usize, Failure> {
        self.fleet.purge_due(now_millis()).await
    }

    /// A page of merchants by id: those after `after`, at most `limit` (of `ids` when given).
    pub async fn merchants(
        &self,
        ids: Option<&[i64]>,
        after: i64,
        limit: i64,
    ) -> Result<Vec<MerchantSummary>, Failure> {
        self.fleet.merchants(ids, after, limit).await
    }

    /// Merchant `merchant_id`'s archive as a stream of chunks; `None` when there is no such
    /// merchant. An archive cut by a failure lacks its end line, which an import refuses.
    pub async fn export(
        &self,
        merchant_id: i64,
    ) -> Result<Option<mpsc::Receiver<Vec<u8>>>, Failure> {
        self.fleet.export(merchant_id).await
    }

    /// Imports the archive in the file at `path`: every row or none. In a fleet it goes to the
    /// pod named, else to the pod whose id range holds the archive's merchant.
    pub async fn import(
        &self,
        path: &Path,
        pod: Option<&str>,
    ) -> Result<Result<Imported, ImportRefused>, Failure> {
        self.fleet.import(path, pod).await
    }

    /// Moves merchant `merchant_id` to pod `to`, its archive kept in `scratch` meanwhile.
    pub async fn move_to_pod(
        &self,
        merchant_id: i64,
        to: &str,
        scratch: &Path,
    ) -> Result<PodMoved, MoveError> {
        self.fleet.move_to_pod(merchant_id, to, scratch).await
    }

    /// What merchants did on this replica.
    pub fn usage(&self) -> &Usage {
        &self.usage
    }
}

/// The manifest with its clear passwords hashed, before any transaction: PBKDF2 takes a good
/// part of a second a password, and SQLite's one writer (every merchant's writes) must not wait
/// for it.
async fn hash_passwords(mut manifest: Manifest, iterations: u32) -> Result<Manifest, Failure> {
    tokio::task::spawn_blocking(move || {
        for user in &mut manifest.users {
            if let PasswordSpec::Plain(plain) = &user.password {
                let hashed = crypto::hash_password(plain, iterations);
                user.password = PasswordSpec::Hash(hashed);
            }
        }
        manifest
    })
    .await
    .map_err(|e| Failure::internal(format!("password hashing failed: {e}")))
}

/// Counters per merchant, bumped by the API's gate and event streams. A merchant's counters are
/// made on its first request and kept for the process's life (a few dozen bytes each).
#[derive(Default)]
pub struct Usage {
    by_merchant: RwLock<HashMap<i64, Counters>>,
}

#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    writes: AtomicU64,
    streams: AtomicI64,
}

impl Usage {
    fn with(&self, merchant_id: i64, bump: impl Fn(&Counters)) {
        {
            let map = self.by_merchant.read().unwrap_or_else(|e| e.into_inner());
            if let Some(counters) = map.get(&merchant_id) {
                bump(counters);
                return;
            }
        }
        let mut map = self.by_merchant.write().unwrap_or_else(|e| e.into_inner());
        bump(map.entry(merchant_id).or_default());
    }

    /// A request of the merchant's passed the gate; `write` unless it only reads.
    pub fn note_request(&self, merchant_id: i64, write: bool) {
        self.with(merchant_id, |c| {
            c.requests.fetch_add(1, Ordering::Relaxed);
            if write {
                c.writes.fetch_add(1, Ordering::Relaxed);
            }
        });
    }

    /// An event stream of the merchant's opened (`1`) or closed (`-1`).
    pub fn note_stream(&self, merchant_id: i64, change: i64) {
        self.with(merchant_id, |c| {
            c.streams.fetch_add(change, Ordering::Relaxed);
        });
    }

    pub fn of(&self, merchant_id: i64) -> LiveUsage {
        let map = self.by_merchant.read().unwrap_or_else(|e| e.into_inner());
        map.get(&merchant_id)
            .map_or(LiveUsage::default(), Counters::read)
    }

    /// The `n` merchants with the most requests, most first.
    pub fn top(&self, n: usize) -> Vec<(i64, LiveUsage)> {
        let map = self.by_merchant.read().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<(i64, LiveUsage)> = map.iter().map(|(id, c)| (*id, c.read())).collect();
        all.sort_by(|a, b| b.1.requests.cmp(&a.1.requests).then(a.0.cmp(&b.0)));
        all.truncate(n);
        all
    }

    /// The top `n` as Prometheus text: one series per rank, labelled with the merchant's id
    /// when `with_ids` (a merchant changes rank now and then, so the series are about `n` at any
    /// time, never one per merchant of the fleet).
    pub fn render_top(&self, n: usize, with_ids: bool) -> String {
        let top = self.top(n);
        let mut out = String::new();
        for (name, help, value) in [
            (
                "merchantd_top_merchant_requests",
                "Requests since start of the merchants with the most, by rank",
                (|u: &LiveUsage| u.requests) as fn(&LiveUsage) -> u64,
            ),
            (
                "merchantd_top_merchant_writes",
                "Writes since start of the merchants with the most requests, by rank",
                |u: &LiveUsage| u.writes,
            ),
        ] {
            let _ = writeln!(out, "# HELP {name} {help}.\n# TYPE {name} gauge");
            for (rank, (merchant_id, usage)) in top.iter().enumerate() {
                let rank = rank + 1;
                let labels = match with_ids {
                    true => format!("rank=\"{rank}\",merchant_id=\"{merchant_id}\""),
                    false => format!("rank=\"{rank}\""),
                };
                let _ = writeln!(out, "{name}{{{labels}}} {}", value(usage));
            }
        }
        out
    }
}

impl Counters {
    fn read(&self) -> LiveUsage {
        LiveUsage {
            requests: self.requests.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            event_clients: self.streams.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_is_by_requests_and_renders_one_series_per_rank() {
        let usage = Usage::default();
        for merchant in 1..=20 {
            for _ in 0..merchant {
                usage.note_request(merchant, merchant % 2 == 0);
            }
        }
        let top = usage.top(3);
        assert_eq!(
            top.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
            vec![20, 19, 18]
        );
        assert_eq!(top[0].1.writes, 20);
        assert_eq!(top[1].1.writes, 0);
        let text = usage.render_top(3, true);
        assert_eq!(text.matches("merchantd_top_merchant_requests{").count(), 3);
        assert!(text.contains("merchantd_top_merchant_requests{rank=\"1\",merchant_id=\"20\"} 20"));
        let public = usage.render_top(3, false);
        assert!(public.contains("merchantd_top_merchant_requests{rank=\"1\"} 20"));
        assert!(!public.contains("merchant_id"));
        usage.note_stream(7, 1);
        usage.note_stream(7, 1);
        usage.note_stream(7, -1);
        assert_eq!(usage.of(7).event_clients, 1);
        assert_eq!(usage.of(99), LiveUsage::default());
    }
}
