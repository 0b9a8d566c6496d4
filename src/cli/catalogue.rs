//! `merchantd catalogue import|export`: the catalogue file (docs/catalogue.md) through the
//! same merchant actor and rules as `POST /product/import`, run in this process on the
//! database. On SQLite this process must be the only one serving the file (a running server
//! would keep a cache that never hears of the import): use the API against it instead. On
//! PostgreSQL the import is one more replica's write, announced to the others.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use crate::config::Settings;
use crate::db::Db;
use crate::domain::batch::Answered;
use crate::domain::catalogue::file::{self as catalogue, ImportOptions, ImportReport};
use crate::engine::merchant::registry::RegistryConfig;
use crate::engine::Merchants;
use crate::metrics::Metrics;

/// What `merchantd catalogue import` was asked for.
pub struct Import<'a> {
    pub file: &'a Path,
    pub merchant: &'a str,
    pub skip_invalid: bool,
}

/// Imports the file; the report's problems are printed to standard error, row by row. An
/// import that wrote nothing because of them is an error (exit status 1).
pub async fn import(settings: &Settings, job: Import<'_>) -> anyhow::Result<ImportReport> {
    let bytes =
        std::fs::read(job.file).with_context(|| format!("reading {}", job.file.display()))?;
    let file =
        catalogue::parse(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", job.file.display()))?;
    let (database, _serving) = open(settings, true).await?;
    let merchant_id = database.merchant_id_by_key(job.merchant).await?;
    let merchants = start_merchants(&database, settings);
    let bar = progress_bar(file.products.len() as u64);
    let ticker = bar.clone();
    let options = ImportOptions {
        skip_invalid: job.skip_invalid,
        progress: Some(Arc::new(move |checked| {
            ticker.set_position(checked as u64);
            if checked as u64 >= ticker.length().unwrap_or(0) {
                ticker.set_message("writing");
            }
        })),
    };
    let answer = merchants.import(merchant_id, file, options, 0, None).await;
    bar.finish_and_clear();
    database.close().await;
    let report = match answer? {
        Answered::Fresh(report) | Answered::Replayed(report) => report,
        Answered::KeyReused => anyhow::bail!("unreachable: the command line sends no key"),
    };
    for problem in &report.problems {
        eprintln!("{problem}");
    }
    if report.refused_whole() {
        anyhow::bail!(
            "{} rows were refused (listed above); nothing was imported. Fix them, or run again \
             with --skip-invalid to import the other products.",
            report.refused_rows()
        );
    }
    Ok(report)
}

/// The merchant's catalogue file, written to `out` or standard output.
pub async fn export(settings: &Settings, merchant: &str, out: Option<&Path>) -> anyhow::Result<()> {
    let (database, _) = open(settings, false).await?;
    let merchant_id = database.merchant_id_by_key(merchant).await?;
    let merchants = start_merchants(&database, settings);
    let file = merchants.export(merchant_id).await;
    database.close().await;
    let bytes = catalogue::render(&file?)?;
    match out {
        Some(path) => {
            std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
        }
        None => {
            use std::io::Write;
            std::io::stdout().write_all(&bytes)?;
            Ok(())
        }
    }
}

/// The database; for a write, migrated and (on SQLite) with this process as its only
/// server. A read leaves the schema alone: a server may be running an older one.
async fn open(
    settings: &Settings,
    writes: bool,
) -> anyhow::Result<(Db, Option<crate::db::ServingLock>)> {
    let database = Db::connect(&settings.database_url, Metrics::new()).await?;
    if !writes {
        return Ok((database, None));
    }
    let serving = database.lock_for_serving().map_err(|e| {
        anyhow::anyhow!(
            "{e}. A running server keeps the catalogue in memory: send the file to it with \
             POST /product/import (Content-Type: text/csv) instead."
        )
    })?;
    database.migrate().await?;
    Ok((database, serving))
}

fn start_merchants(database: &Db, settings: &Settings) -> Merchants {
    Merchants::start(
        std::sync::Arc::new(database.clone()),
        Metrics::new(),
        RegistryConfig {
            idle: Duration::from_secs(settings.merchant_idle_secs),
            files_base: &settings.public_base_url(),
            product_quota: usize::try_from(settings.quota_products).unwrap_or(usize::MAX),
            window: settings.sales_window,
            write_delay: Duration::ZERO,
            render: std::sync::Arc::new(crate::views::Renderer),
        },
    )
}

/// Products checked so far, on a terminal; nothing when standard error is not one.
fn progress_bar(products: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(products);
    let style = ProgressStyle::with_template("{spinner} {bar:40} {pos}/{len} products {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message("checked");
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}
