//! The layer rules of STYLE.md and docs/architecture.md, kept by a test rather than by memory:
//! which top-level module of `src/` may name which (`crate::x` anywhere in its files, `use`
//! groups included), that only the storage layer speaks SQL, and that the modules form no
//! cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module and the modules it may use. `startup` and `cli` assemble everything.
const ALLOWED: &[(&str, &[&str])] = &[
    ("crypto", &[]),
    ("metrics", &[]),
    ("config", &["crypto"]),
    ("telemetry", &["config"]),
    // Typed values and rules: no I/O, no other layer.
    ("domain", &["crypto"]),
    // The storage layer never calls up.
    ("db", &["domain", "crypto", "metrics"]),
    // The authorization server's rules: neither HTTP nor storage.
    ("oauth", &["domain", "crypto"]),
    ("tenants", &["domain", "db", "crypto"]),
    ("services", &["domain", "db"]),
    // Actors know no wire.
    ("actors", &["domain", "db", "oauth", "crypto", "metrics"]),
    // Handlers never touch storage.
    (
        "http",
        &[
            "actors", "services", "oauth", "domain", "config", "metrics", "crypto",
        ],
    ),
    ("startup", &["*"]),
    ("cli", &["*"]),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`src/http/auth.rs` → `http`).
fn module_of(file: &Path) -> String {
    let rel = file.strip_prefix(src()).expect("under src");
    let first = rel.components().next().expect("a component");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_owned()
}

/// Every top-level module a source text names through `crate::`.
fn named_modules(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let head = item.trim().split("::").next().unwrap_or("").trim();
                if !head.is_empty() {
                    found.insert(head.to_owned());
                }
            }
        } else {
            let head: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.insert(head);
        }
    }
    found
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let tops: BTreeSet<String> = files
        .iter()
        .map(|f| module_of(f))
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = module_of(file);
        if from == "lib" || from == "main" {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("read file");
        let to: Vec<String> = named_modules(&text)
            .into_iter()
            .filter(|m| tops.contains(m) && *m != from)
            .collect();
        edges.entry(from).or_default().extend(to);
    }
    edges
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut broken = Vec::new();
    for (from, to) in graph() {
        let Some(may) = allowed.get(from.as_str()) else {
            broken.push(format!(
                "{from}: a new top-level module; give it a rule in ALLOWED"
            ));
            continue;
        };
        for target in to {
            if !may.contains(&"*") && !may.contains(&target.as_str()) {
                broken.push(format!("{from} uses {target}"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "layer rules broken:\n{}",
        broken.join("\n")
    );
}

#[test]
fn only_the_storage_layer_speaks_sql() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let speaking: Vec<String> = files
        .iter()
        .filter(|f| module_of(f) != "db")
        .filter(|f| {
            std::fs::read_to_string(f)
                .expect("read file")
                .contains("sqlx")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(speaking.is_empty(), "sqlx outside src/db: {speaking:?}");
}

#[test]
fn the_top_level_modules_form_no_cycle() {
    let edges = graph();
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for node in edges.keys() {
        if let Some(cycle) = visit(node, &edges, &mut Vec::new(), &mut done) {
            panic!("module cycle: {}", cycle.join(" → "));
        }
    }
}

#[test]
fn the_rule_reader_sees_use_groups_and_paths() {
    let text = "use crate::{db::Db, domain::{Role, now_millis}};\nlet x = crate::http::x();";
    let found = named_modules(text);
    for m in ["db", "domain", "http"] {
        assert!(found.contains(m), "{m} in {found:?}");
    }
}
