//! The PostgreSQL faults: a cluster of the test's own stopped, refusing and crashed, and a
//! black hole between the server and it.

use super::*;

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
