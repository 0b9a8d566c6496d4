//! [`FleetStore`] over the fleet's databases: each call about merchants goes to the pods
//! holding them; a new merchant goes to the pod holding fewest.

use std::path::Path;

use domain::fleet::operator::{MerchantSummary, OperatorToken};
use domain::fleet::tenant::{AppliedTenant, Manifest};
use domain::Failure;
use ports::fleet::{Answer, FleetStore, ImportRefused, Imported, MoveError, PodMoved};
use tokio::sync::mpsc;

use crate::fleet::Fleet;
use crate::Db;

impl FleetStore for Fleet {
    fn operator_token<'a>(&'a self, hash: &'a str) -> Answer<'a, Option<OperatorToken>> {
        Box::pin(async move { Ok(self.db.operator_token(hash).await?) })
    }

    fn insert_operator_token<'a>(
        &'a self,
        hash: &'a str,
        token: &'a OperatorToken,
    ) -> Answer<'a, ()> {
        Box::pin(async move { Ok(self.db.insert_operator_token(hash, token).await?) })
    }

    fn create_merchants<'a>(
        &'a self,
        manifests: &'a [&'a Manifest],
        pbkdf2_iterations: u32,
    ) -> Answer<'a, Vec<Result<AppliedTenant, String>>> {
        Box::pin(self.create_placed(manifests, pbkdf2_iterations))
    }

    fn set_suspended<'a>(&'a self, ids: &'a [i64], since: Option<i64>) -> Answer<'a, Vec<i64>> {
        Box::pin(async move {
            let mut found = Vec::with_capacity(ids.len());
            for (db, ids) in self.by_pod(ids).await? {
                found.extend(db.set_suspended(&ids, since).await?);
            }
            Ok(found)
        })
    }

    fn schedule_deletion<'a>(&'a self, ids: &'a [i64], after: i64) -> Answer<'a, Vec<(i64, i64)>> {
        Box::pin(async move {
            let mut found = Vec::with_capacity(ids.len());
            for (db, ids) in self.by_pod(ids).await? {
                found.extend(db.schedule_deletion(&ids, after).await?);
            }
            Ok(found)
        })
    }

    fn purge_due(&self, now: i64) -> Answer<'_, usize> {
        Box::pin(async move {
            let mut removed = 0;
            for pod in self.pods.all() {
                for merchant_id in pod.db.merchants_due_for_deletion(now).await? {
                    if pod.db.delete_merchant(merchant_id, now).await? {
                        if self.pods.is_fleet() {
                            self.pods.place(merchant_id, "", 0).await?;
                        }
                        tracing::info!(merchant_id, pod = %pod.name, "a deleted merchant's rows were removed");
                        removed += 1;
                    }
                }
            }
            Ok(removed)
        })
    }

    fn merchants<'a>(
        &'a self,
        ids: Option<&'a [i64]>,
        after: i64,
        limit: i64,
    ) -> Answer<'a, Vec<MerchantSummary>> {
        Box::pin(async move {
            if !self.pods.is_fleet() {
                return Ok(self.db.merchant_summaries(ids, after, limit).await?);
            }
            // Each pod's first page, merged by id; a merchant still in the pod it is leaving
            // is shown from the pod that holds it.
            let mut all = Vec::new();
            for (k, pod) in self.pods.all().iter().enumerate() {
                for summary in pod.db.merchant_summaries(ids, after, limit).await? {
                    if self.pods.index_for(summary.id).await? == k {
                        all.push(summary);
                    }
                }
            }
            all.sort_by_key(|s| s.id);
            all.truncate(usize::try_from(limit).unwrap_or(0));
            Ok(all)
        })
    }

    fn export(&self, merchant_id: i64) -> Answer<'_, Option<mpsc::Receiver<Vec<u8>>>> {
        Box::pin(self.export_with(merchant_id, false))
    }

    fn import<'a>(
        &'a self,
        path: &'a Path,
        pod: Option<&'a str>,
    ) -> Answer<'a, Result<Imported, ImportRefused>> {
        Box::pin(Fleet::import(self, path, pod))
    }

    fn move_to_pod<'a>(
        &'a self,
        merchant_id: i64,
        to: &'a str,
        scratch: &'a Path,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<PodMoved, MoveError>> + Send + 'a>>
    {
        Box::pin(Fleet::move_to_pod(self, merchant_id, to, scratch))
    }
}

impl Fleet {
    /// The ids grouped by the pod holding each.
    async fn by_pod(&self, ids: &[i64]) -> Result<Vec<(Db, Vec<i64>)>, Failure> {
        let mut groups: Vec<Vec<i64>> = vec![Vec::new(); self.pods.all().len()];
        for &id in ids {
            groups[self.pods.index_for(id).await?].push(id);
        }
        Ok(groups
            .into_iter()
            .enumerate()
            .filter(|(_, ids)| !ids.is_empty())
            .map(|(k, ids)| (self.pods.pod(k).db.clone(), ids))
            .collect())
    }

    /// Creates the merchants in the pod holding fewest (one transaction there), and records
    /// where they are. A key another pod holds is refused.
    async fn create_placed(
        &self,
        manifests: &[&Manifest],
        pbkdf2_iterations: u32,
    ) -> Result<Vec<Result<AppliedTenant, String>>, Failure> {
        let pod = self.pods.for_new_merchant(None).await?;
        let db = self.pods.pod(pod).db.clone();
        let mut here = Vec::with_capacity(manifests.len());
        let mut elsewhere = Vec::with_capacity(manifests.len());
        for manifest in manifests {
            elsewhere.push(self.taken_elsewhere(manifest, pod).await?);
            if elsewhere.last().is_some_and(Option::is_none) {
                here.push(*manifest);
            }
        }
        let mut created = db
            .create_merchants(&here, pbkdf2_iterations)
            .await?
            .into_iter();
        let mut out = Vec::with_capacity(manifests.len());
        for refused in elsewhere {
            match refused {
                Some(why) => out.push(Err(why)),
                None => {
                    let outcome = created
                        .next()
                        .unwrap_or_else(|| Err("not created".to_owned()));
                    if let Ok(applied) = &outcome {
                        if pod > 0 {
                            self.pods.place(applied.id, &applied.key, pod).await?;
                        }
                    }
                    out.push(outcome);
                }
            }
        }
        Ok(out)
    }

    /// Why the manifest's key or one of its client ids is taken in a pod other than `pod`.
    async fn taken_elsewhere(
        &self,
        manifest: &Manifest,
        pod: usize,
    ) -> Result<Option<String>, Failure> {
        let key = &manifest.merchant_key;
        for (k, other) in self.pods.all().iter().enumerate() {
            if k == pod {
                continue;
            }
            if let Some(id) = other.db.merchant_with_key(key).await? {
                return Ok(Some(format!("merchant {id} already has the key {key}")));
            }
            for app in &manifest.applications {
                let client_id = &app.client_id;
                if other.db.find_client(client_id).await?.is_some() {
                    return Ok(Some(format!(
                        "applications ({client_id}): client_id: already registered by another \
                         merchant"
                    )));
                }
            }
        }
        Ok(None)
    }
}
