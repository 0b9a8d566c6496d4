//! The SQLite faults: a small disk of the test's own that fills or turns read-only.

use super::*;

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
