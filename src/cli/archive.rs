//! `merchantd tenant export` and `merchantd tenant import`: a merchant's archive to a file and
//! back, the operator API's export and import without a server (docs/operator.md, "Export and
//! import"): how a merchant leaves the SQLite file for PostgreSQL.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use crate::config::Settings;
use crate::db::Db;
use crate::metrics::Metrics;
use crate::services::archive::ImportRefused;
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
