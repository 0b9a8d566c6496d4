//! `merchantd tenant export` and `merchantd tenant import`: a merchant's archive to a file and
//! back, the operator API's export and import without a server (docs/operator.md, "Export and
//! import"); `merchantd tenant move`: merchants from a stopped server's database into another,
//! how they leave the SQLite file for PostgreSQL (docs/operations.md).

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use crate::config::Settings;
use crate::db::Db;
use crate::metrics::Metrics;
use crate::services::archive::ImportRefused;
use crate::services::moves::Mover;
use crate::services::operator::Operator;

pub async fn export(settings: &Settings, key: &str, out: Option<&Path>) -> anyhow::Result<()> {
    let database = Db::connect(&settings.database_url, Metrics::new()).await?;
    let merchant_id = database.merchant_id_by_key(key).await?;
    let chunks = Operator::new(database.clone()).export(merchant_id).await;
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
    let imported = Operator::new(database.clone()).import(file).await;
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
        let phases: serde_json::Map<String, serde_json::Value> = moved
            .phases
            .iter()
            .map(|(step, ms)| (step.to_string(), serde_json::json!(ms)))
            .collect();
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
