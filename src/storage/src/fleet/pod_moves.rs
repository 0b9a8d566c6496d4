//! A merchant's move between pods while every replica keeps serving it (docs/operations.md,
//! "Moving a merchant between pods").
//!
//! Its webhook deliveries pause (each endpoint is marked paused; a delivery in flight is
//! recorded and the endpoint given back), and it is copied whole, with its sign-ins, into the
//! new pod while it is written as usual, read back and compared table by table, and caught up
//! with what changed meanwhile (`Db::catch_up_ahead`, pass after pass). Then its
//! writes are held in the old pod: its row is locked, so every replica's next write waits on its claim, and so do
//! uploads and logs. Under the hold only what changed since the copy is written across
//! (`Db::catch_up_into`); the same commit that releases the hold marks it moved, so the
//! writes that waited go to the new pod. Then the directory says where it is (every replica hears it), deliveries resume there
//! from their cursors, and the old pod's rows are removed. Ids, event numbers, webhook cursors
//! and tokens are the same on both sides.

use std::path::Path;
use std::time::{Duration, Instant};

use super::catch_up::Plan as CatchUpPlan;
use crate::fleet::archive_rows::MoveFrom;
use crate::fleet::digest::Digest;
use crate::fleet::moves::{digest_of, save, Laps, Scratch};
use crate::fleet::Fleet;
use crate::Db;
use ports::fleet::ImportRefused;
use ports::fleet::{MoveError, PodMoved};

/// How long the move waits for deliveries in flight to finish before it gives up.
const PAUSE_WAIT: Duration = Duration::from_secs(30);

/// At most this many catch-ups before the hold; fewer once one writes no more than
/// [`AHEAD_ENOUGH`] rows (a few milliseconds of upserts under the hold).
const AHEAD_PASSES: usize = 3;
const AHEAD_ENOUGH: u64 = 20;

impl Fleet {
    /// Moves merchant `merchant_id` to pod `to`, its archive kept in `scratch` meanwhile.
    pub async fn move_to_pod(
        &self,
        merchant_id: i64,
        to: &str,
        scratch: &Path,
    ) -> Result<PodMoved, MoveError> {
        let started = Instant::now();
        let to_index = self
            .pods
            .index_of(to)
            .ok_or_else(|| MoveError::Refused(format!("there is no pod named {to}")))?;
        let from_index = self.pods.look_up(merchant_id).await?;
        let (source, target) = (
            self.pods.pod(from_index).clone(),
            self.pods.pod(to_index).clone(),
        );
        if from_index == to_index {
            return Err(MoveError::Refused(format!(
                "merchant {merchant_id} is already in pod {to}"
            )));
        }
        let key =
            source.db.merchant_key(merchant_id).await?.ok_or_else(|| {
                MoveError::Refused(format!("no merchant has the id {merchant_id}"))
            })?;
        // What a move that stopped short left in the target is not the merchant's.
        if target.db.merchant(merchant_id).await?.is_some() {
            target.db.remove_merchant(merchant_id).await?;
        }
        let mut laps = Laps::start();
        // Paused before the copy, the copy's endpoints are paused too: no dispatcher of the
        // target delivers from them before the switch.
        let owner = format!("move-{}", uuid::Uuid::new_v4());
        pause_webhooks(&source.db, merchant_id, &owner).await?;
        laps.lap("pause");
        // The copy, while the merchant is written as usual: what changes meanwhile is caught
        // up under the hold.
        let mark = source.db.change_mark().await?;
        let plan = source.db.catch_up_plan().await?;
        let copied = copy_verified(&source.db, &target.db, merchant_id, scratch, &mut laps).await;
        let copied = match copied {
            Ok(copied) => copied,
            Err(e) => {
                source.db.resume_webhooks(merchant_id, &owner).await?;
                return Err(abandon(&target.db, merchant_id, e).await);
            }
        };

        let mark = catch_up_ahead(&source.db, &target.db, merchant_id, mark, &plan).await;
        laps.lap("catch-up-ahead");

        let hold = source.db.hold_merchant(merchant_id).await?;
        laps.lap("hold");
        let held = Instant::now();
        if let Err(e) = source
            .db
            .catch_up_into(&target.db, merchant_id, &mark, &plan)
            .await
        {
            hold.release(None).await?;
            source.db.resume_webhooks(merchant_id, &owner).await?;
            return Err(abandon(&target.db, merchant_id, e.into()).await);
        }
        laps.lap("catch-up");
        hold.release(Some(&target.name)).await?;
        let held_millis = held.elapsed().as_millis();
        self.pods.place(merchant_id, &key, to_index).await?;
        target.db.resume_webhooks(merchant_id, &owner).await?;
        laps.lap("switch");
        source.db.remove_merchant(merchant_id).await?;
        laps.lap("remove");
        Ok(PodMoved {
            merchant_id,
            key,
            from: source.name,
            to: target.name,
            tables: copied.0,
            rows: copied.1,
            held_millis,
            millis: started.elapsed().as_millis(),
            phases: laps.phases,
        })
    }
}

/// Catches the copy up while the merchant is written as usual, pass after pass until a pass
/// finds few changes (Ghostferry's iterations), so the hold writes only what changed during
/// the last one; the mark for the hold's catch-up. A pass that fails leaves the copy as it
/// was: the hold's catch-up then starts from the mark before it.
async fn catch_up_ahead(
    source: &Db,
    target: &Db,
    merchant_id: i64,
    mut mark: String,
    plan: &CatchUpPlan,
) -> String {
    for _ in 0..AHEAD_PASSES {
        match source
            .catch_up_ahead(target, merchant_id, &mark, plan)
            .await
        {
            Ok((next, written)) => {
                mark = next;
                if written <= AHEAD_ENOUGH {
                    break;
                }
            }
            Err(e) => {
                tracing::warn!(merchant_id, error = %e, "a move's catch-up before the hold failed; the hold catches up all");
                break;
            }
        }
    }
    mark
}

/// A move given up before its switch: the copy leaves the target; the source is whole.
async fn abandon(target: &Db, merchant_id: i64, error: MoveError) -> MoveError {
    if let Err(removal) = target.remove_merchant(merchant_id).await {
        tracing::warn!(merchant_id, error = %removal, "a failed move's copy stays in the target");
    }
    error
}

/// Waits until the move holds every endpoint's lease of the merchant (no delivery in flight).
async fn pause_webhooks(db: &Db, merchant_id: i64, owner: &str) -> Result<(), MoveError> {
    let deadline = Instant::now() + PAUSE_WAIT;
    loop {
        if db.pause_webhooks(merchant_id, owner).await? {
            return Ok(());
        }
        if Instant::now() >= deadline {
            db.resume_webhooks(merchant_id, owner).await?;
            return Err(MoveError::Refused(format!(
                "merchant {merchant_id}'s webhook deliveries did not pause within {} s",
                PAUSE_WAIT.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Copies the merchant whole into `target` and compares the copy with the source, table by
/// table; its tables and rows.
async fn copy_verified(
    source: &Db,
    target: &Db,
    merchant_id: i64,
    scratch: &Path,
    laps: &mut Laps,
) -> Result<(u64, u64), MoveError> {
    let file = Scratch(scratch.join(format!(
        "merchantd-pod-move-{}.ndjson",
        uuid::Uuid::new_v4()
    )));
    let exported = Fleet::on(source.clone())
        .export_with(merchant_id, true)
        .await?
        .ok_or_else(|| MoveError::Refused(format!("no merchant has the id {merchant_id}")))?;
    save(exported, &file.0).await?;
    let mut sent = Digest::default();
    let moving = MoveFrom {
        source: String::new(),
        ids_through: 0,
        between_pods: true,
    };
    let imported = Fleet::on(target.clone())
        .import_moving(&file.0, moving, &mut sent)
        .await?
        .map_err(|refused| match refused {
            ImportRefused::Invalid(why) | ImportRefused::Conflict(why) => MoveError::Refused(why),
        })?;
    laps.lap("copy");
    let landed = digest_of(target, merchant_id).await?;
    let differences = sent.differences(&landed);
    laps.lap("verify");
    if !differences.is_empty() {
        let tables: Vec<String> = differences
            .iter()
            .map(|(table, sent, landed)| format!("{table} ({sent} rows sent, {landed} stored)"))
            .collect();
        return Err(MoveError::Differs(tables.join(", ")));
    }
    Ok((imported.totals.tables, imported.totals.rows))
}
