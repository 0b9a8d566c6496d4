//! The migrations, compiled into the storage crate: what `sqlx::migrate!` does, without sqlx's
//! procedural macros (they build a second copy of sqlx for the compiler, a good part of a cold
//! build). Each file `NNNN_description.sql` of `migrations/<database>/` becomes
//! `(NNNN, "description", its text)`, named and ordered as sqlx names and orders them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let mut out = String::new();
    for (name, folder) in [("SQLITE", "sqlite"), ("POSTGRES", "postgres")] {
        let dir = root.join(folder);
        println!("cargo:rerun-if-changed={}", dir.display());
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .map(|entry| entry.expect("a directory entry").path())
            .filter(|path| path.extension().is_some_and(|e| e == "sql"))
            .collect();
        files.sort();
        let _ = writeln!(out, "pub(crate) static {name}: &[(i64, &str, &str)] = &[");
        for path in files {
            let file = path.file_name().expect("a file name").to_string_lossy();
            let (version, rest) = file
                .split_once('_')
                .unwrap_or_else(|| panic!("{file}: a migration is NNNN_description.sql"));
            let version: i64 = version
                .parse()
                .unwrap_or_else(|_| panic!("{file}: a migration's name starts with its number"));
            let description = rest.trim_end_matches(".sql").replace('_', " ");
            let _ = writeln!(
                out,
                "    ({version}, {description:?}, include_str!({:?})),",
                path.canonicalize().expect("a migration's path")
            );
        }
        out.push_str("];\n");
    }
    let target = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("migrations.rs");
    std::fs::write(target, out).expect("writing the migrations");
}
