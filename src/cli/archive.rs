//! `merchantd tenant export` and `merchantd tenant import`: a merchant's archive to a file and
//! back, the operator API's export and import without a server (docs/operator.md, "Export and
//! import"); `merchantd tenant move`: merchants from a stopped server's database into another,
//! how they leave the SQLite file for PostgreSQL (docs/operations.md).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;

use crate::config::Settings;
use crate::db::fleet::{Fleet, Mover};
use crate::db::Db;
use crate::engine::fleet::operator::{ImportRefused, Operator};
use crate::metrics::Metrics;

pub async fn export(settings: &Settings, key: &str, out: Option<&Path>) -> anyhow::Result<()> {
    let database = Db::connect(&settings.database_url, Metrics::new()).await?;
    let merchant_id = database.merchant_id_by_key(key).await?;
    let chunks = Operator::new(Arc::new(Fleet::on(database.clone())))
        .export(merchant_id)
        .await;
    let mut sink: Box<dyn Write> = match out {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        )),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut chunks = chunks
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .ok_or_else(|| anyhow::anyhow!("no merchant has the key {key}"))?;
    let mut last = Vec::new();
    while let Some(chunk) = chunks.recv().await {
        sink.write_all(&chunk)?;
        last = chunk;
    }
    sink.flush()?;
    database.close().await;
    // The export's task ends the archive with its end line; without it, it stopped short.
    let tail = String::from_utf8_lossy(&last);
    match tail.lines().last() {
        Some(line) if line.starts_with("{\"end\":") => Ok(()),
        _ => anyhow::bail!("the export stopped before its end (see the log): the archive is cut"),
    }
}

pub async fn import(settings: &Settings, file: &Path) -> anyhow::Result<()> {
    let database = Db::connect(&settings.database_url, Metrics::new()).await?;
    let _serving = database.lock_for_serving().map_err(|e| {
        anyhow::anyhow!(
            "{e}. Send the archive to the running server instead: POST /operator/merchant/import \
             (Content-Type: application/x-ndjson)."
        )
    })?;
    database.migrate().await?;
    let imported = Operator::new(Arc::new(Fleet::on(database.clone())))
        .import(file, None)
        .await;
    database.close().await;
    match imported.map_err(|e| anyhow::anyhow!("{e}"))? {
        Ok(imported) => {
            let printed = serde_json::json!({
                "id": imported.merchant_id,
                "key": imported.key,
                "tables": imported.totals.tables,
                "rows": imported.totals.rows,
            });
            println!("{}", serde_json::to_string_pretty(&printed)?);
            Ok(())
        }
        Err(ImportRefused::Invalid(why)) => anyhow::bail!("not imported: {why}"),
        Err(ImportRefused::Conflict(why)) => anyhow::bail!("not imported: {why}"),
    }
}

/// `merchantd tenant move`: the named merchants (every one when none is named) from the
/// configured database, which no server may be writing to, into the database at `to`.
pub async fn move_merchants(settings: &Settings, keys: &[String], to: &str) -> anyhow::Result<()> {
    if !to.contains("://") {
        return move_between_pods(settings, keys, to).await;
    }
    let source = Db::connect(&settings.database_url, Metrics::new()).await?;
    let _serving = source.lock_for_serving().map_err(|e| {
        anyhow::anyhow!("{e}. A move needs the source's server stopped: no write may be lost.")
    })?;
    let target = Db::connect(to, Metrics::new()).await?;
    let _target_serving = target.lock_for_serving()?;
    source.migrate().await?;
    target.migrate().await?;
    let ids = match keys {
        [] => source.merchant_ids().await?,
        keys => {
            let mut ids = Vec::with_capacity(keys.len());
            for key in keys {
                ids.push(source.merchant_id_by_key(key).await?);
            }
            ids
        }
    };
    let scratch = std::env::temp_dir();
    let mut mover = Mover::begin(&source, &target, &scratch)
        .await
        .map_err(|e| anyhow::anyhow!("nothing moved: {e}"))?;
    let (mut merchants, mut rows) = (0u64, 0u64);
    let started = std::time::Instant::now();
    for id in ids {
        let moved = mover.move_merchant(id).await.map_err(|e| {
            anyhow::anyhow!("merchant {id} not moved ({merchants} moved before it): {e}")
        })?;
        merchants += 1;
        rows += moved.rows;
        let phases = phase_map(&moved.phases);
        let printed = serde_json::json!({
            "id": moved.merchant_id,
            "key": moved.key,
            "tables": moved.tables,
            "rows": moved.rows,
            "milliseconds": moved.millis,
            "finishedEarlierCopy": moved.finished_earlier_copy,
            "phaseMilliseconds": phases,
        });
        println!("{printed}");
    }
    source.close().await;
    target.close().await;
    eprintln!(
        "moved {merchants} merchant(s), {rows} rows, in {} ms",
        started.elapsed().as_millis()
    );
    Ok(())
}

/// `merchantd tenant move KEY... --to POD`: the named merchants into pod `POD` of the
/// configured fleet while the replicas keep serving them (services::pod_moves).
async fn move_between_pods(settings: &Settings, keys: &[String], to: &str) -> anyhow::Result<()> {
    if keys.is_empty() {
        anyhow::bail!("name the merchants to move into pod {to} (their manifest keys)");
    }
    let pods = open_pods(settings).await?;
    let operator = Operator::new(Arc::new(Fleet::new(pods.clone())));
    let scratch = std::env::temp_dir();
    let mut outcome = Ok(());
    for key in keys {
        let Some(id) = pods.merchant_by_key(key).await? else {
            outcome = Err(anyhow::anyhow!("no merchant has the key {key}"));
            break;
        };
        match operator.move_to_pod(id, to, &scratch).await {
            Ok(moved) => {
                let phases = phase_map(&moved.phases);
                let printed = serde_json::json!({
                    "id": moved.merchant_id,
                    "key": moved.key,
                    "from": moved.from,
                    "to": moved.to,
                    "tables": moved.tables,
                    "rows": moved.rows,
                    "heldMilliseconds": moved.held_millis,
                    "milliseconds": moved.millis,
                    "phaseMilliseconds": phases,
                });
                println!("{printed}");
            }
            Err(e) => {
                outcome = Err(anyhow::anyhow!("merchant {key} not moved: {e}"));
                break;
            }
        }
    }
    for pod in pods.all() {
        pod.db.close().await;
    }
    outcome
}

/// The configured database and pods, connected and migrated.
pub(super) async fn open_pods(settings: &Settings) -> anyhow::Result<crate::db::fleet::pods::Pods> {
    let home = Db::connect(&settings.database_url, Metrics::new()).await?;
    home.migrate().await?;
    let mut others = Vec::new();
    for (name, url) in crate::db::fleet::pods::parse_pods(&settings.pods)? {
        let db = Db::connect(&url, Metrics::new()).await?;
        others.push(crate::db::fleet::pods::Pod { name, db });
    }
    Ok(crate::db::fleet::pods::Pods::open(home, others).await?)
}

/// A move's steps and their milliseconds, as its printed line shows them.
fn phase_map(phases: &[(&'static str, u128)]) -> serde_json::Map<String, serde_json::Value> {
    phases
        .iter()
        .map(|(step, ms)| (step.to_string(), serde_json::json!(ms)))
        .collect()
}
