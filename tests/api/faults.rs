//! The fault matrix (issue 21; docs/operations.md, "When the database is away"): each way a
//! database can be away, under load. Clients write and read the whole time; for each fault no
//! request outlives its deadline, every failure is a 503 with the envelope and message 121
//! (on SQLite, whose cache is the truth, reads never fail), readiness turns false during the
//! fault and true after it, every write answered 201 is stored, and a SQLite file passes
//! `PRAGMA integrity_check`.
//!
//! PostgreSQL runs as a private cluster the test makes with `initdb` and `pg_ctl` in a
//! temporary folder, so stopping it disturbs no other test. SQLite lives on a small tmpfs the
//! test mounts, so its disk can really fill.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::{spawn_app_on, Backend, TestApp, TestDb};

/// Longer than any timeout of the server (a pool waits 10 s for a connection), so a request
/// that reaches it hangs.
const DEADLINE: Duration = Duration::from_secs(20);

struct Answer {
    title: Option<String>,
    status: StatusCode,
    body: Value,
    took: Duration,
}

/// Clients writing a category and reading the list in turn until stopped.
struct Load {
    stop: Arc<AtomicBool>,
    /// 503s answered so far.
    unavailable: Arc<std::sync::atomic::AtomicUsize>,
    /// Whether reads must answer 200 whatever the fault: on SQLite (one process) the cache is
    /// the truth; on PostgreSQL a replica that cannot reach the database answers reads 503.
    reads_stay_up: bool,
    clients: tokio::task::JoinHandle<Vec<Vec<Answer>>>,
}

impl Load {
    fn start(app: &Arc<TestApp>, token: &str, clients: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let unavailable = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let work: Vec<_> = (0..clients)
            .map(|c| {
                let (app, token, stop) = (app.clone(), token.to_owned(), stop.clone());
                let unavailable = unavailable.clone();
                async move {
                    let mut answers = Vec::new();
                    let mut i = 0;
                    while !stop.load(Ordering::SeqCst) {
                        let write = i % 2 == 0;
                        let title = write.then(|| format!("fault-{c}-{i}"));
                        let request = match &title {
                            Some(title) => app
                                .api(Method::POST, "/category", &token)
                                .json(&json!({"categories": {"c": {"title": title}}})),
                            None => app.api(Method::GET, "/category", &token),
                        };
                        let started = Instant::now();
                        let res = request
                            .timeout(DEADLINE)
                            .checked()
                            .await
                            .unwrap_or_else(|e| panic!("an answer within {DEADLINE:?}: {e:?}"));
                        let status = res.status();
                        let body: Value = res.json().await.expect("a JSON body");
                        answers.push(Answer {
                            title,
                            status,
                            body,
                            took: started.elapsed(),
                        });
                        i += 1;
                        if status == StatusCode::SERVICE_UNAVAILABLE {
                            unavailable.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    }
                    answers
                }
            })
            .collect();
        Self {
            stop,
            unavailable,
            reads_stay_up: app.backend == Backend::Sqlite,
            clients: tokio::spawn(join_all(work)),
        }
    }

    /// Waits for the fault to fail a request; false when none failed within `limit`.
    async fn until_unavailable(&self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while self.unavailable.load(Ordering::SeqCst) == 0 {
            if Instant::now() > until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        true
    }

    /// Stops the clients and checks every answer; the titles answered 201.
    async fn finish(self, fault: &str) -> Vec<String> {
        self.stop.store(true, Ordering::SeqCst);
        let answers: Vec<Answer> = self.clients.await.unwrap().into_iter().flatten().collect();
        let mut created = Vec::new();
        let mut unavailable = 0;
        for answer in &answers {
            let Answer {
                status, body, took, ..
            } = answer;
            assert!(*took < DEADLINE, "{fault}: a request took {took:?}");
            assert!(body["api"].is_object(), "{fault}: {body}");
            match (*status, &answer.title) {
                (StatusCode::CREATED, Some(title)) => created.push(title.clone()),
                (StatusCode::OK, None) => {}
                (StatusCode::SERVICE_UNAVAILABLE, None) if self.reads_stay_up => {
                    panic!("{fault}: a read answered 503, but the cache is the truth: {body}")
                }
                (StatusCode::SERVICE_UNAVAILABLE, _) => {
                    unavailable += 1;
                    assert_eq!(
                        body["api"]["message"]["error"]["121"]["code"], "serviceUnavailable",
                        "{fault}: {body}"
                    );
                }
                (other, _) => panic!("{fault}: {other} {body}"),
            }
        }
        println!(
            "{fault}: {} requests, {} writes answered 201, {unavailable} answered 503",
            answers.len(),
            created.len()
        );
        created
    }
}

async fn ready(app: &TestApp) -> bool {
    let res = app
        .client
        .get(app.url("/health/ready"))
        .timeout(DEADLINE)
        .send()
        .await
        .expect("readiness answers");
    res.status() == StatusCode::OK
}

/// Polls readiness while `fault` lasts; whether it was ever false.
async fn readiness_during(app: &TestApp, fault: Duration) -> bool {
    let until = Instant::now() + fault;
    let mut seen_false = false;
    while Instant::now() < until {
        seen_false |= !ready(app).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    seen_false
}

/// Waits for readiness to come back; how long it took.
async fn ready_again(app: &TestApp, fault: &str) -> Duration {
    let started = Instant::now();
    while !ready(app).await {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{fault}: readiness did not come back"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    started.elapsed()
}

async fn assert_stored(sql: &sqlx::AnyPool, created: &[String], fault: &str) {
    let stored: Vec<(String,)> = sqlx::query_as("SELECT title FROM categories")
        .fetch_all(sql)
        .await
        .unwrap();
    let stored: std::collections::BTreeSet<String> = stored.into_iter().map(|(t,)| t).collect();
    for title in created {
        assert!(
            stored.contains(title),
            "{fault}: {title} was answered 201 and is gone"
        );
    }
}

/// A PostgreSQL cluster of the test's own, run as the `postgres` user when the test runs as
/// root (initdb refuses root).
struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

impl Cluster {
    fn create() -> Self {
        let bin = postgres_bin();
        let dir = tempfile::tempdir().expect("temp dir");
        if as_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .expect("chown");
            assert!(
                status.success(),
                "the cluster's folder is given to postgres"
            );
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let cluster = Self { dir, bin, port };
        cluster.run(
            "initdb",
            &[
                "-D",
                &cluster.data(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ],
        );
        cluster.start();
        cluster
    }

    /// A new cluster holding the database `faults`, and a pool on its `postgres` database.
    async fn with_database() -> (Self, sqlx::AnyPool) {
        let cluster = Self::create();
        let admin = sql_at(&cluster.url("postgres")).await;
        sqlx::query("CREATE DATABASE faults")
            .execute(&admin)
            .await
            .unwrap();
        (cluster, admin)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let path = self.bin.join(tool);
        let mut command = if as_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&path);
            c
        } else {
            Command::new(&path)
        };
        let out = command.args(args).output().expect("run a PostgreSQL tool");
        assert!(
            out.status.success(),
            "{tool} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn start(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("log").display().to_string();
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-l",
                &log,
                "-w",
                "-o",
                &options,
                "start",
            ],
        );
    }

    fn stop_immediate(&self) {
        self.run(
            "pg_ctl",
            &["-D", &self.data(), "-m", "immediate", "-w", "stop"],
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(if as_root() { "runuser" } else { "true" })
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .args(["-D", &self.data(), "-m", "immediate", "stop"])
            .output();
    }
}

fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The newest installed PostgreSQL's programs (`pg_config --bindir`, else Debian's layout).
fn postgres_bin() -> PathBuf {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("initdb").exists() {
            return dir;
        }
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL's programs in /usr/lib/postgresql")
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    versions.sort();
    versions.pop().expect("an initdb")
}

async fn sql_at(url: &str) -> sqlx::AnyPool {
    crate::helpers::raw_pool(url).await
}

/// A PostgreSQL fault on the cluster while the load runs; checks what every fault must keep.
async fn postgres_fault(
    app: &Arc<TestApp>,
    token: &str,
    fault: &str,
    inject: impl std::future::Future<Output = ()>,
    heal: impl std::future::Future<Output = ()>,
    expect_not_ready: bool,
) -> Vec<String> {
    let load = Load::start(app, token, 6);
    tokio::time::sleep(Duration::from_millis(800)).await;
    inject.await;
    let not_ready = readiness_during(app, Duration::from_secs(3)).await;
    heal.await;
    let back = ready_again(app, fault).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let created = load.finish(fault).await;
    println!("{fault}: ready again {back:?} after healing");
    if expect_not_ready {
        assert!(not_ready, "{fault}: readiness stayed true");
    }
    assert!(!created.is_empty(), "{fault}: no write succeeded");
    created
}

#[actix_rt::test]
async fn postgres_terminated_refusing_and_crashed_under_load() {
    if crate::helpers::postgres_admin_url().is_none() {
        return; // PostgreSQL variants are skipped (helpers says so once).
    }
    let (cluster, admin) = Cluster::with_database().await;
    let url = cluster.url("faults");
    let app = Arc::new(spawn_app_on(TestDb::external(&url), |_| {}).await);
    let token = app.owner_token().await;
    let sql = sql_at(&url).await;
    let mut created = Vec::new();

    let terminate = || async {
        sqlx::query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = 'faults' AND pid <> pg_backend_pid()",
        )
        .execute(&admin)
        .await
        .unwrap();
    };
    created.extend(
        postgres_fault(
            &app,
            &token,
            "backends terminated",
            terminate(),
            async {},
            false,
        )
        .await,
    );

    let refuse = async {
        sqlx::query("ALTER DATABASE faults ALLOW_CONNECTIONS false")
            .execute(&admin)
            .await
            .unwrap();
        terminate().await;
    };
    let allow = async {
        sqlx::query("ALTER DATABASE faults ALLOW_CONNECTIONS true")
            .execute(&admin)
            .await
            .unwrap();
    };
    created.extend(postgres_fault(&app, &token, "connections refused", refuse, allow, true).await);

    admin.close().await;
    let crash = async { cluster.stop_immediate() };
    let restart = async { cluster.start() };
    created.extend(postgres_fault(&app, &token, "cluster crashed", crash, restart, true).await);

    assert_stored(&sql, &created, "postgres").await;
}

/// A TCP proxy in front of the cluster that can stop forwarding (a black hole): while it holds,
/// nothing is read or written on either side, so statements in flight and new connections wait
/// as they would behind a dead link; when it lets go, what waited flows on.
struct BlackHole {
    port: u16,
    hold: tokio::sync::watch::Sender<bool>,
}

impl BlackHole {
    async fn start(upstream: u16) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (hold, held) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let held = held.clone();
                tokio::spawn(async move {
                    let Ok(outbound) =
                        tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await
                    else {
                        return;
                    };
                    let (in_read, in_write) = inbound.into_split();
                    let (out_read, out_write) = outbound.into_split();
                    tokio::join!(
                        forward(in_read, out_write, held.clone()),
                        forward(out_read, in_write, held)
                    );
                });
            }
        });
        Self { port, hold }
    }

    fn hold(&self, on: bool) {
        self.hold.send_replace(on);
    }
}

async fn forward(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut held: tokio::sync::watch::Receiver<bool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if held.wait_for(|h| !*h).await.is_err() {
            return;
        }
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if held.wait_for(|h| !*h).await.is_err() || to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// The server reaches PostgreSQL through a proxy that stops forwarding for longer than a
/// request may take: requests end at `request_timeout_secs` with 503, readiness (its probe
/// bounded at 2 s) turns false, and everything flows again when the link comes back.
#[actix_rt::test]
async fn postgres_behind_a_black_hole_under_load() {
    if crate::helpers::postgres_admin_url().is_none() {
        return;
    }
    let (cluster, admin) = Cluster::with_database().await;
    admin.close().await;
    let proxy = BlackHole::start(cluster.port).await;
    let through = format!("postgres://postgres@127.0.0.1:{}/faults", proxy.port);
    let app =
        Arc::new(spawn_app_on(TestDb::external(&through), |s| s.request_timeout_secs = 3).await);
    let token = app.owner_token().await;
    let fault = "black hole";

    let load = Load::start(&app, &token, 6);
    tokio::time::sleep(Duration::from_millis(800)).await;
    proxy.hold(true);
    let not_ready = readiness_during(&app, Duration::from_secs(6)).await;
    proxy.hold(false);
    let back = ready_again(&app, fault).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let created = load.finish(fault).await;
    println!("{fault}: ready again {back:?} after the link came back");
    assert!(not_ready, "{fault}: readiness stayed true");
    assert!(!created.is_empty(), "{fault}: no write succeeded");
    assert_stored(&sql_at(&cluster.url("faults")).await, &created, fault).await;
}

/// A small filesystem of the test's own, unmounted when dropped: a tmpfs, or ext4 on a loop
/// device (whose files can be made immutable while open).
struct SmallDisk {
    dir: tempfile::TempDir,
    /// The ext4 image, beside the mount point.
    _image: Option<tempfile::NamedTempFile>,
}

fn run_ok(what: &str, command: &mut Command) {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("run {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed (the fault tests need root, as CI runs): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl SmallDisk {
    fn mount(megabytes: u32) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        run_ok(
            "mount a tmpfs",
            Command::new("mount")
                .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
                .arg(dir.path()),
        );
        Self { dir, _image: None }
    }

    fn ext4(megabytes: u64) -> Self {
        let image = tempfile::NamedTempFile::new().expect("image file");
        image
            .as_file()
            .set_len(megabytes << 20)
            .expect("size the image");
        run_ok(
            "mkfs.ext4",
            Command::new("mkfs.ext4").arg("-q").arg(image.path()),
        );
        let dir = tempfile::tempdir().expect("temp dir");
        run_ok(
            "mount the ext4 image",
            Command::new("mount")
                .args(["-o", "loop"])
                .arg(image.path())
                .arg(dir.path()),
        );
        Self {
            dir,
            _image: Some(image),
        }
    }

    /// Makes the files immutable (`chattr +i`: writes to them fail even through descriptors
    /// already open) or writable again.
    fn read_only(&self, files: &[PathBuf], on: bool) {
        run_ok(
            "chattr",
            Command::new("chattr")
                .arg(if on { "+i" } else { "-i" })
                .args(files),
        );
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills what is left with one file; its path.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.path().join("filler");
        let mut file = std::fs::File::create(&path).expect("filler");
        let block = vec![0u8; 64 * 1024];
        while file.write_all(&block).is_ok() {}
        let _ = file.sync_all();
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .output();
    }
}

/// One SQLite fault under load on `disk`: `cause` starts it (its result is what `heal` needs),
/// `heal` ends it once a write failed; then everything acknowledged is stored and the file is
/// sound.
async fn sqlite_fault<T>(
    disk: &SmallDisk,
    fault: &str,
    cause: impl FnOnce(&Path) -> T,
    heal: impl FnOnce(T),
) {
    let file = disk.path().join("merchantd.db");
    let url = format!("sqlite://{}", file.display());
    let app = Arc::new(spawn_app_on(TestDb::external(&url), |_| {}).await);
    let token = app.owner_token().await;

    let load = Load::start(&app, &token, 6);
    tokio::time::sleep(Duration::from_millis(800)).await;
    let caused = cause(disk.path());
    // SQLite may write on for a while (a full disk bites once the WAL must grow).
    let bit = load.until_unavailable(Duration::from_secs(30)).await;
    let not_ready = readiness_during(&app, Duration::from_secs(2)).await;
    heal(caused);
    let back = ready_again(&app, fault).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let created = load.finish(fault).await;
    println!("{fault}: ready again {back:?} after healing");
    assert!(bit, "{fault}: no write failed in 30 s");
    assert!(not_ready, "{fault}: readiness stayed true");

    let sql = sql_at(&url).await;
    assert_stored(&sql, &created, fault).await;
    let (check,): (String,) = sqlx::query_as("PRAGMA integrity_check")
        .fetch_one(&sql)
        .await
        .unwrap();
    assert_eq!(check, "ok");
    sql.close().await;
}

#[actix_rt::test]
async fn sqlite_on_a_full_disk_under_load() {
    let disk = SmallDisk::mount(48);
    let fill = |_: &Path| disk.fill();
    let free = |filler: PathBuf| std::fs::remove_file(filler).expect("free the disk");
    sqlite_fault(&disk, "disk full", fill, free).await;
}

#[actix_rt::test]
async fn sqlite_made_read_only_under_load() {
    let disk = SmallDisk::ext4(64);
    let files = |dir: &Path| [dir.join("merchantd.db"), dir.join("merchantd.db-wal")];
    let lock = |dir: &Path| {
        disk.read_only(&files(dir), true);
        files(dir)
    };
    let unlock = |locked: [PathBuf; 2]| disk.read_only(&locked, false);
    sqlite_fault(&disk, "read-only database file", lock, unlock).await;
}
