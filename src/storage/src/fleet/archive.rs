//! A merchant's archive through the operator's realm (docs/operator.md, "Export and import"):
//! the export streams from a task of its own; the import reads an archive the HTTP layer has
//! saved to a file, line by line, into one transaction.

use std::path::Path;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

use crate::fleet::archive_rows::{Exported, ImportError, Importer, MoveFrom};
use crate::fleet::digest::Digest;
use crate::fleet::pods::{HOME, ID_RANGE};
use crate::fleet::Fleet;
use crate::Db;
use domain::fleet::archive::{Header, Line, Totals};
use domain::Failure;
use ports::fleet::{ImportRefused, Imported};

/// Chunks of the archive in flight between the export's task and its reader.
const CHUNKS_IN_FLIGHT: usize = 8;

impl Fleet {
    /// Merchant `merchant_id`'s archive as a stream of chunks; `None` when there is no such
    /// merchant. An archive cut by a failure lacks its end line, which an import refuses.
    pub async fn export(
        &self,
        merchant_id: i64,
    ) -> Result<Option<mpsc::Receiver<Vec<u8>>>, Failure> {
        self.export_with(merchant_id, false).await
    }

    /// [`Fleet::export`], with the merchant's credentials when `credentials` (a move's).
    pub(crate) async fn export_with(
        &self,
        merchant_id: i64,
        credentials: bool,
    ) -> Result<Option<mpsc::Receiver<Vec<u8>>>, Failure> {
        let db = self.pods.of(merchant_id).await?;
        if db.merchant(merchant_id).await?.is_none() {
            return Ok(None);
        }
        let (sender, receiver) = mpsc::channel(CHUNKS_IN_FLIGHT);
        tokio::spawn(async move {
            match db.export_merchant(merchant_id, &sender, credentials).await {
                Ok(Exported::Whole(totals)) => tracing::info!(
                    merchant_id,
                    tables = totals.tables,
                    rows = totals.rows,
                    "merchant exported"
                ),
                Ok(ended) => tracing::warn!(merchant_id, ?ended, "merchant export not finished"),
                Err(error) => tracing::error!(merchant_id, %error, "merchant export failed"),
            }
        });
        Ok(Some(receiver))
    }

    /// Imports the archive in the file at `path`: every row or none. In a fleet it goes to the
    /// pod named, else to the pod whose id range holds the archive's merchant, and the
    /// directory records it there; its id and key may be taken in no pod.
    pub async fn import(
        &self,
        path: &Path,
        pod: Option<&str>,
    ) -> Result<Result<Imported, ImportRefused>, Failure> {
        if !self.pods.is_fleet() {
            if let Some(name) = pod.filter(|name| *name != HOME) {
                return Ok(Err(no_pod(name)));
            }
            return Stop::answer(self.import_file(&self.db, path, None, None, None).await);
        }
        let header = match read_header(path).await {
            Ok(header) => header,
            Err(stop) => return Stop::answer(Err(stop)),
        };
        let target = match self.import_target(&header, pod).await? {
            Ok(target) => target,
            Err(refused) => return Ok(Err(refused)),
        };
        let db = self.pods.pod(target).db.clone();
        let range = (target as i64 * ID_RANGE, (target as i64 + 1) * ID_RANGE);
        let imported = self.import_file(&db, path, None, None, Some(range)).await;
        if let Ok(imported) = &imported {
            if target > 0 {
                self.pods
                    .place(imported.merchant_id, &imported.key, target)
                    .await?;
            }
        }
        Stop::answer(imported)
    }

    /// The pod a fleet's import goes to, or why none may take it.
    async fn import_target(
        &self,
        header: &Header,
        pod: Option<&str>,
    ) -> Result<Result<usize, ImportRefused>, Failure> {
        let own = usize::try_from(header.merchant_id / ID_RANGE).unwrap_or(usize::MAX);
        let target = match pod {
            Some(name) => match self.pods.index_of(name) {
                Some(k) => k,
                None => return Ok(Err(no_pod(name))),
            },
            None => own,
        };
        // Ids of a range no pod has would be handed out again by a pod added later.
        if own >= self.pods.all().len() || target >= self.pods.all().len() {
            return Ok(Err(ImportRefused::Conflict(format!(
                "the archive's merchant {} has ids from a range this fleet's {} pods do not \
                 have: it belongs to a fleet with more pods",
                header.merchant_id,
                self.pods.all().len()
            ))));
        }
        for (k, other) in self.pods.all().iter().enumerate() {
            if k == target {
                continue; // the import itself checks the pod it goes to
            }
            let taken = match other.db.merchant(header.merchant_id).await? {
                Some(_) => Some(header.merchant_id),
                None => other.db.merchant_with_key(&header.key).await?,
            };
            if let Some(id) = taken {
                return Ok(Err(ImportRefused::Conflict(format!(
                    "merchant {id} of pod {} already has the archive's id {} or key {}",
                    other.name, header.merchant_id, header.key
                ))));
            }
        }
        Ok(Ok(target))
    }

    /// Imports the archive at `path`, a move's when `moving` (the source's credentials come
    /// too), each line read also into `digest` when given.
    pub(crate) async fn import_moving(
        &self,
        path: &Path,
        moving: MoveFrom,
        digest: &mut Digest,
    ) -> Result<Result<Imported, ImportRefused>, Failure> {
        Stop::answer(
            self.import_file(&self.db, path, Some(moving), Some(digest), None)
                .await,
        )
    }

    /// Imports into `db`, whose own ids are `range` in a fleet.
    async fn import_file(
        &self,
        db: &Db,
        path: &Path,
        moving: Option<MoveFrom>,
        digest: Option<&mut Digest>,
        range: Option<(i64, i64)>,
    ) -> Result<Imported, Stop> {
        let mut lines = Lines::open(path).await?;
        let header = lines.header().await?;
        let mut importer = db
            .begin_import(&header, moving)
            .await
            .map_err(|e| lines.stop(e))?;
        if let Some((from, to)) = range {
            importer.ids_of_pod(from, to);
        }
        let outcome = feed_all(&mut importer, &mut lines, digest).await;
        let totals = match outcome {
            Ok(totals) => totals,
            Err(stop) => {
                importer.abandon().await.map_err(Failure::from)?;
                return Err(stop);
            }
        };
        let totals = importer.finish(totals).await.map_err(|e| lines.stop(e))?;
        Ok(Imported {
            merchant_id: header.merchant_id,
            key: header.key,
            totals,
        })
    }
}

/// How an import stopped short.
enum Stop {
    Refused(ImportRefused),
    Failed(Failure),
}

impl Stop {
    /// An import's outcome as its callers take it: refused (nothing stored) or failed.
    fn answer(outcome: Result<Imported, Stop>) -> Result<Result<Imported, ImportRefused>, Failure> {
        match outcome {
            Ok(imported) => Ok(Ok(imported)),
            Err(Stop::Refused(refused)) => Ok(Err(refused)),
            Err(Stop::Failed(failure)) => Err(failure),
        }
    }
}

impl From<Failure> for Stop {
    fn from(failure: Failure) -> Self {
        Stop::Failed(failure)
    }
}

/// The archive's lines, counted for the messages that name one.
struct Lines {
    lines: tokio::io::Lines<BufReader<tokio::fs::File>>,
    n: usize,
}

impl Lines {
    async fn open(path: &Path) -> Result<Self, Stop> {
        let file = tokio::fs::File::open(path)
            .await
            .map_err(|e| Failure::internal(format!("the saved archive cannot be read: {e}")))?;
        Ok(Self {
            lines: BufReader::new(file).lines(),
            n: 0,
        })
    }

    /// The first line.
    async fn header(&mut self) -> Result<Header, Stop> {
        match self.next().await? {
            Some(text) => Header::parse(&text).map_err(|why| self.invalid(why)),
            None => Err(self.invalid("the archive is empty".into())),
        }
    }

    async fn next(&mut self) -> Result<Option<String>, Stop> {
        self.n += 1;
        match self.lines.next_line().await {
            Ok(line) => Ok(line),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                Err(self.invalid("the line is not UTF-8 text".into()))
            }
            Err(e) => {
                Err(Failure::internal(format!("the saved archive cannot be read: {e}")).into())
            }
        }
    }

    fn invalid(&self, why: String) -> Stop {
        Stop::Refused(ImportRefused::Invalid(format!("line {}: {why}", self.n)))
    }

    fn stop(&self, error: ImportError) -> Stop {
        match error {
            ImportError::Invalid(why) => self.invalid(why),
            ImportError::Conflict(why) => Stop::Refused(ImportRefused::Conflict(why)),
            ImportError::Db(error) => Stop::Failed(error.into()),
        }
    }
}

/// The header of the archive at `path`.
async fn read_header(path: &Path) -> Result<Header, Stop> {
    Lines::open(path).await?.header().await
}

fn no_pod(name: &str) -> ImportRefused {
    ImportRefused::Conflict(format!("there is no pod named {name}"))
}

/// Feeds every line after the header to the import; the end line's counts. Nothing may follow
/// the end line, and an archive without one was cut.
async fn feed_all(
    importer: &mut Importer,
    lines: &mut Lines,
    mut digest: Option<&mut Digest>,
) -> Result<Totals, Stop> {
    loop {
        let Some(text) = lines.next().await? else {
            return Err(lines.invalid("the archive ends before its end line: it was cut".into()));
        };
        let line = Line::parse(&text).map_err(|why| lines.invalid(why))?;
        if let Some(digest) = digest.as_deref_mut() {
            digest.line(&line).map_err(|why| lines.invalid(why))?;
        }
        let fed = match line {
            Line::Table { table, columns } => importer.table(&table, &columns).await,
            Line::Row(values) => importer.row(&values).await,
            Line::End(totals) => {
                if lines.next().await?.is_some() {
                    return Err(lines.invalid("a line after the end line".into()));
                }
                return Ok(totals);
            }
        };
        fed.map_err(|e| lines.stop(e))?;
    }
}
