//! A merchant's move from one database to another while no server writes to the source
//! (docs/operations.md, "From SQLite to PostgreSQL"): its archive with its sign-ins, imported
//! into the target with every id kept, the target's copy read back and compared table by table
//! with what left the source, and only then the source's rows removed.

use std::path::{Path, PathBuf};
use std::time::Instant;

use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use crate::fleet::archive_rows::{ImportError, MoveFrom};
use crate::fleet::digest::Digest;
use crate::fleet::Fleet;
use crate::{Db, DbError};
use domain::fleet::archive::Line;
use domain::Failure;
use ports::fleet::ImportRefused;
use ports::fleet::MoveError;

/// A merchant moved.
#[derive(Debug, Clone)]
pub struct Moved {
    pub merchant_id: i64,
    pub key: String,
    pub tables: u64,
    pub rows: u64,
    /// From the export's start to the source's rows removed.
    pub millis: u128,
    /// An earlier run had copied and committed it but stopped before removing it from the
    /// source: this one verified that copy and removed it.
    pub finished_earlier_copy: bool,
    /// Milliseconds of each step, in order: `export`, `import`, `verify`, `remove`.
    pub phases: Vec<(&'static str, u128)>,
}

/// The time of each step of a move.
pub(crate) struct Laps {
    last: Instant,
    pub(crate) phases: Vec<(&'static str, u128)>,
}

impl Laps {
    pub(crate) fn start() -> Self {
        Self {
            last: Instant::now(),
            phases: Vec::with_capacity(4),
        }
    }

    /// Ends step `name`, the next one starts.
    pub(crate) fn lap(&mut self, name: &'static str) {
        self.phases.push((name, self.last.elapsed().as_millis()));
        self.last = Instant::now();
    }
}

impl From<DbError> for MoveError {
    fn from(error: DbError) -> Self {
        MoveError::Failed(error.into())
    }
}

impl From<ImportError> for MoveError {
    fn from(error: ImportError) -> Self {
        match error {
            ImportError::Db(error) => error.into(),
            refused => MoveError::Refused(refused.to_string()),
        }
    }
}

/// The archive between its export and its import, removed when dropped: it holds the
/// merchant's data and its tokens' digests, so only this user may read it.
pub(crate) struct Scratch(pub(crate) PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// One run of moves from `source` to `target` (both migrated).
pub struct Mover<'a> {
    source: &'a Db,
    target: &'a Db,
    /// A folder for each merchant's archive between its export and its import.
    scratch: &'a Path,
    /// The source's identity, as the target records it.
    identity: String,
    /// The last id the target may have handed out: what moves from the source brought.
    through: i64,
    /// Why the target takes no new copy from the source, if it does not (merchants of its own).
    refused: Option<String>,
}

impl<'a> Mover<'a> {
    /// Reads once whether `target` can take the source's merchants with their ids
    /// ([`Db::check_move_target`], which reads every merchant of the target); each new copy
    /// then checks only that no id was handed out there since.
    pub async fn begin(
        source: &'a Db,
        target: &'a Db,
        scratch: &'a Path,
    ) -> Result<Mover<'a>, MoveError> {
        let identity = source.identity().await?;
        let (through, refused) = target.check_move_target(&identity).await?;
        Ok(Self {
            source,
            target,
            scratch,
            identity,
            through,
            refused: refused.map(|why| why.to_string()),
        })
    }

    /// Moves merchant `merchant_id`.
    pub async fn move_merchant(&mut self, merchant_id: i64) -> Result<Moved, MoveError> {
        let (source, target) = (self.source, self.target);
        let started = Instant::now();
        let earlier = target.moved_in_from(merchant_id).await?;
        if earlier.as_ref() == Some(&self.identity) && target.merchant(merchant_id).await?.is_some()
        {
            return finish_earlier_copy(source, target, merchant_id, started).await;
        }
        if let Some(why) = &self.refused {
            return Err(MoveError::Refused(why.clone()));
        }
        target.check_no_ids_since(self.through).await?;
        let ids_through = source.ids_handed_out().await?;
        let mut laps = Laps::start();
        let file = Scratch(
            self.scratch
                .join(format!("merchantd-move-{}.ndjson", uuid::Uuid::new_v4())),
        );
        let exported = Fleet::on(source.clone())
            .export_with(merchant_id, true)
            .await?
            .ok_or_else(|| MoveError::Refused(format!("no merchant has the id {merchant_id}")))?;
        save(exported, &file.0).await?;
        laps.lap("export");

        let mut sent = Digest::default();
        let moving = MoveFrom {
            source: self.identity.clone(),
            ids_through,
            between_pods: false,
        };
        let imported = Fleet::on(target.clone())
            .import_moving(&file.0, moving, &mut sent)
            .await?
            .map_err(|refused| match refused {
                ImportRefused::Invalid(why) | ImportRefused::Conflict(why) => {
                    MoveError::Refused(why)
                }
            })?;
        drop(file);
        // The import moved the target's allocator past every id the source handed out.
        self.through = self.through.max(ids_through);
        laps.lap("import");

        let landed = digest_of(target, merchant_id).await?;
        let differences = sent.differences(&landed);
        laps.lap("verify");
        if !differences.is_empty() {
            target.remove_merchant(merchant_id).await?;
            let tables: Vec<String> = differences
                .iter()
                .map(|(table, sent, landed)| format!("{table} ({sent} rows sent, {landed} stored)"))
                .collect();
            return Err(MoveError::Differs(tables.join(", ")));
        }
        remove_from_source(source, merchant_id, &mut laps).await?;
        Ok(Moved {
            merchant_id,
            key: imported.key,
            tables: imported.totals.tables,
            rows: imported.totals.rows,
            millis: started.elapsed().as_millis(),
            finished_earlier_copy: false,
            phases: laps.phases,
        })
    }
}

/// A merchant an earlier run committed in the target and did not remove from the source (it
/// stopped in between): the two copies compared as a move compares them, and the source's
/// removed when they are the same. A difference (a server wrote to the source after all) is
/// left for the operator: nothing is removed.
async fn finish_earlier_copy(
    source: &Db,
    target: &Db,
    merchant_id: i64,
    started: Instant,
) -> Result<Moved, MoveError> {
    let mut laps = Laps::start();
    let left = digest_of(source, merchant_id).await?;
    let landed = digest_of(target, merchant_id).await?;
    let differences = left.differences(&landed);
    laps.lap("verify");
    if !differences.is_empty() {
        let tables: Vec<&str> = differences.iter().map(|(t, _, _)| t.as_str()).collect();
        return Err(MoveError::Refused(format!(
            "an earlier move copied merchant {merchant_id} into the target and the two copies \
             now differ in {}: a server wrote to one of them; nothing was removed",
            tables.join(", ")
        )));
    }
    let key = source.merchant_key(merchant_id).await?.unwrap_or_default();
    remove_from_source(source, merchant_id, &mut laps).await?;
    Ok(Moved {
        merchant_id,
        key,
        tables: landed.tables(),
        rows: landed.rows(),
        millis: started.elapsed().as_millis(),
        finished_earlier_copy: true,
        phases: laps.phases,
    })
}

/// The last step of a move: the merchant's rows leave the source.
async fn remove_from_source(source: &Db, merchant_id: i64, laps: &mut Laps) -> Result<(), Failure> {
    source.remove_merchant(merchant_id).await?;
    laps.lap("remove");
    Ok(())
}

/// Writes an export's chunks to `path`, readable by this user only. An export that stopped
/// short lacks its end line, which the import then refuses.
pub(crate) async fn save(mut chunks: mpsc::Receiver<Vec<u8>>, path: &Path) -> Result<(), Failure> {
    let cannot =
        |e: std::io::Error| Failure::internal(format!("the move's archive cannot be written: {e}"));
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    let mut out = tokio::io::BufWriter::new(options.open(path).await.map_err(cannot)?);
    while let Some(chunk) = chunks.recv().await {
        out.write_all(&chunk).await.map_err(cannot)?;
    }
    out.flush().await.map_err(cannot)
}

/// The digest of merchant `merchant_id`'s rows in `db`, credentials included, as an export
/// reads them.
pub(crate) async fn digest_of(db: &Db, merchant_id: i64) -> Result<Digest, MoveError> {
    let mut chunks = Fleet::on(db.clone())
        .export_with(merchant_id, true)
        .await?
        .ok_or_else(|| MoveError::Differs("every table (the merchant is not there)".into()))?;
    let mut digest = Digest::default();
    let mut pending = Vec::new();
    let mut header = true;
    let mut ended = false;
    while let Some(chunk) = chunks.recv().await {
        pending.extend_from_slice(&chunk);
        let Some(last) = pending.iter().rposition(|b| *b == b'\n') else {
            continue;
        };
        for raw in pending[..last].split(|b| *b == b'\n') {
            if std::mem::take(&mut header) {
                continue;
            }
            let text = std::str::from_utf8(raw)
                .map_err(|e| Failure::internal(format!("an export line is not UTF-8: {e}")))?;
            let line = Line::parse(text).map_err(Failure::internal)?;
            ended = matches!(line, Line::End(_));
            digest.line(&line).map_err(Failure::internal)?;
        }
        pending.drain(..=last);
    }
    // A read that failed midway is no verdict on the copy (see the log for why).
    if !ended {
        return Err(Failure::internal(format!(
            "reading merchant {merchant_id} back stopped before its end"
        ))
        .into());
    }
    Ok(digest)
}
