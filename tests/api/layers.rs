//! The layer rules of STYLE.md and docs/architecture.md that the compiler cannot keep. The
//! layers are crates (`src/<crate>/`): a crate can only name the crates its manifest lists, so
//! what stays to check is that each manifest lists only the crates below it, that only the
//! storage crate speaks SQL or knows which database it is, where JSON is built and where actor
//! state is read, and the sizes of functions and files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each crate and the crates of this workspace it may depend on. The binary (`merchantd`)
/// assembles everything.
const ALLOWED: &[(&str, &[&str])] = &[
    ("merchantd-macros", &[]),
    ("merchantd-metrics", &[]),
    // Typed values and rules: no I/O, no other layer.
    ("merchantd-domain", &["merchantd-macros"]),
    ("merchantd-config", &["merchantd-domain"]),
    // The storage seam: what the engine asks of storage, in domain types.
    ("merchantd-ports", &["merchantd-domain"]),
    // The storage adapters never call up.
    (
        "merchantd-storage",
        &["merchantd-domain", "merchantd-ports", "merchantd-metrics"],
    ),
    ("merchantd-memory", &["merchantd-domain", "merchantd-ports"]),
    // Actors know no wire and no database: only the ports.
    (
        "merchantd-engine",
        &[
            "merchantd-domain",
            "merchantd-ports",
            "merchantd-metrics",
            "merchantd-config",
        ],
    ),
    // Handlers never touch storage.
    (
        "merchantd-api",
        &[
            "merchantd-domain",
            "merchantd-engine",
            "merchantd-ports",
            "merchantd-metrics",
            "merchantd-config",
        ],
    ),
    // The webhook dispatcher: the log's deliveries out over HTTP, endpoints turned off through
    // their merchant's writer.
    (
        "merchantd-webhooks",
        &[
            "merchantd-domain",
            "merchantd-engine",
            "merchantd-ports",
            "merchantd-metrics",
            "merchantd-config",
        ],
    ),
    // The contract: the OpenAPI document of the HTTP surface, from the declarations.
    (
        "merchantd-openapi",
        &[
            "merchantd-domain",
            "merchantd-engine",
            "merchantd-api",
            "merchantd-config",
        ],
    ),
    ("merchantd", &["*"]),
];

/// Crates that may depend on these only to test (the engine's own tests run on memory).
const TEST_ONLY: &[(&str, &[&str])] = &[("merchantd-engine", &["merchantd-memory"])];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn src() -> PathBuf {
    root().join("src")
}

/// Every crate of the workspace: its name, its folder and its manifest.
fn crates() -> Vec<(String, PathBuf, toml::Table)> {
    let mut manifests = vec![root()];
    for entry in std::fs::read_dir(src()).expect("read src") {
        let dir = entry.expect("entry").path();
        if dir.join("Cargo.toml").is_file() {
            manifests.push(dir);
        }
    }
    manifests.sort();
    manifests
        .into_iter()
        .map(|dir| {
            let text = std::fs::read_to_string(dir.join("Cargo.toml")).expect("read manifest");
            let table: toml::Table = text.parse().expect("a manifest");
            let name = table["package"]["name"]
                .as_str()
                .expect("a name")
                .to_owned();
            (name, dir, table)
        })
        .collect()
}

/// The workspace crates a manifest's `section` names (by package, whatever the key).
fn internal(manifest: &toml::Table, section: &str) -> BTreeSet<String> {
    let Some(deps) = manifest.get(section).and_then(|d| d.as_table()) else {
        return BTreeSet::new();
    };
    deps.iter()
        .filter_map(|(key, spec)| {
            let spec = spec.as_table()?;
            spec.get("path")?;
            Some(
                spec.get("package")
                    .and_then(|p| p.as_str())
                    .unwrap_or(key)
                    .to_owned(),
            )
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The Rust files of a crate's `src/` (the binary's own, without the crates inside `src/`).
fn files_of(name: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for (crate_name, dir, _) in crates() {
        if crate_name != name {
            continue;
        }
        if crate_name == "merchantd" {
            for entry in std::fs::read_dir(src()).expect("read src") {
                let path = entry.expect("entry").path();
                if path.is_dir() && !path.join("Cargo.toml").is_file() {
                    rust_files(&path, &mut files);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        } else {
            rust_files(&dir.join("src"), &mut files);
        }
    }
    files.sort();
    files
}

#[test]
fn each_crate_depends_only_on_the_crates_below_it() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let test_only: BTreeMap<&str, &[&str]> = TEST_ONLY.iter().copied().collect();
    let mut broken = Vec::new();
    for (name, _, manifest) in crates() {
        let Some(may) = allowed.get(name.as_str()) else {
            broken.push(format!("{name}: a new crate; give it a rule in ALLOWED"));
            continue;
        };
        if may.contains(&"*") {
            continue;
        }
        for dep in internal(&manifest, "dependencies") {
            if !may.contains(&dep.as_str()) {
                broken.push(format!("{name} depends on {dep}"));
            }
        }
        let tests_may = test_only.get(name.as_str()).copied().unwrap_or(&[]);
        for dep in internal(&manifest, "dev-dependencies") {
            if !may.contains(&dep.as_str()) && !tests_may.contains(&dep.as_str()) {
                broken.push(format!("{name}'s tests depend on {dep}"));
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
fn only_the_storage_crate_speaks_sql() {
    let mut found = Vec::new();
    for (name, _, manifest) in crates() {
        let deps = manifest.get("dependencies").and_then(|d| d.as_table());
        if name != "merchantd-storage" && deps.is_some_and(|d| d.contains_key("sqlx")) {
            found.push(format!("{name} depends on sqlx"));
        }
        if name == "merchantd-storage" || name == "merchantd" {
            continue;
        }
        for file in files_of(&name) {
            if std::fs::read_to_string(&file)
                .expect("read")
                .contains("sqlx")
            {
                found.push(file.display().to_string());
            }
        }
    }
    assert!(found.is_empty(), "sqlx outside src/storage: {found:?}");
}

/// A file's code without its `#[cfg(test)]` module (tests may build what they compare with).
fn without_tests(text: &str) -> &str {
    text.split("#[cfg(test)]").next().unwrap_or(text)
}

/// Every file of the crates `crates` whose code (comments and strings aside, tests left out)
/// contains one of `needles`, with the needle found.
fn files_saying(crates: &[&str], needles: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for name in crates {
        // A module's tests (`tests.rs` beside it) may build what they compare with.
        for file in files_of(name)
            .into_iter()
            .filter(|f| !f.ends_with("tests.rs"))
        {
            let text = std::fs::read_to_string(&file).expect("read file");
            // Whitespace out, so a call split over lines reads as one.
            let code: String = code_only(without_tests(&text))
                .into_iter()
                .filter(|c| !c.is_whitespace())
                .collect();
            for needle in needles {
                let squeezed: String = needle.chars().filter(|c| !c.is_whitespace()).collect();
                if code.contains(&squeezed) {
                    let rel = file.strip_prefix(src()).expect("under src");
                    found.push(format!("{}: {needle}", rel.display()));
                }
            }
        }
    }
    found
}

/// What building JSON looks like: serializing to text or values, `json!`, rendering methods.
const JSON_BUILDERS: &[&str] = &[
    "json!",
    "serde_json::to_string",
    "serde_json::to_vec",
    "serde_json::to_writer",
    "serde_json::to_value",
    "fn to_json",
    "fn write_json",
    "Value::from(",
];

/// JSON nobody is shown: the write inputs the catalogue import builds from file rows, as an API
/// client would send them (what the resources' rules read), and a refresh successor sealed for
/// an idempotent retry (encrypted bytes, never a body).
const NOT_SHOWN: &[&str] = &[
    "engine/src/catalogue/import/mod.rs: json!",
    "engine/src/catalogue/import/mod.rs: Value::from(",
    "domain/src/oauth/seal.rs: serde_json::to_vec",
];

#[test]
fn the_engine_and_the_domain_build_no_json() {
    let found: Vec<String> = files_saying(&["merchantd-engine", "merchantd-domain"], JSON_BUILDERS)
        .into_iter()
        .filter(|f| !NOT_SHOWN.contains(&f.as_str()))
        .collect();
    assert!(
        found.is_empty(),
        "JSON is built by the read side (src/api/src/views) alone:\n{}",
        found.join("\n")
    );
}

#[test]
fn handlers_never_read_actor_state() {
    let found: Vec<String> = files_saying(
        &["merchantd-api"],
        &[
            "MerchantState",
            "merchant::state",
            "merchant::history",
            "merchants.snapshot(",
            "merchants.sales::<",
            "Entry<",
        ],
    )
    .into_iter()
    .filter(|f| f.starts_with("api/src/http/"))
    .collect();
    assert!(
        found.is_empty(),
        "handlers ask the read side (src/api/src/views), not the actors' state:\n{}",
        found.join("\n")
    );
}

#[test]
fn only_the_storage_crate_knows_which_database_it_is() {
    let others: Vec<&str> = ALLOWED
        .iter()
        .map(|(name, _)| *name)
        .filter(|n| !matches!(*n, "merchantd-storage" | "merchantd"))
        .collect();
    let found = files_saying(&others, &["Backend", "is_shared(", ".backend()"]);
    assert!(
        found.is_empty(),
        "the SQLite-or-PostgreSQL choice is made inside src/storage:\n{}",
        found.join("\n")
    );
}

/// The longest a source file may be.
const MAX_FILE_LINES: usize = 600;

/// The server's crates, and the tests and benches beside them.
#[test]
fn no_file_is_longer_than_the_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches"] {
        rust_files(&root.join(dir), &mut files);
    }
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = std::fs::read_to_string(file).expect("read").lines().count();
            let rel = file.strip_prefix(root).expect("under the package");
            (lines > MAX_FILE_LINES).then(|| format!("{}: {lines} lines", rel.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files longer than {MAX_FILE_LINES} lines (split them by what they hold):\n{}",
        long.join("\n")
    );
}

/// The longest a function under `src/` may be, from its `fn` line to its closing brace.
const MAX_FN_LINES: usize = 100;

/// The source with the contents of comments, string literals and char literals blanked out
/// (newlines kept, so line numbers stay true): what is left is code, whose braces can be
/// counted.
fn code_only(text: &str) -> Vec<char> {
    let src: Vec<char> = text.chars().collect();
    let mut out = src.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in &mut out[from..to.min(src.len())] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let mut i = 0;
    while i < src.len() {
        let end = match (src[i], src.get(i + 1).copied()) {
            ('/', Some('/')) => line_comment_end(&src, i),
            ('/', Some('*')) => block_comment_end(&src, i),
            ('"', _) => string_end(&src, i),
            ('\'', _) => match char_literal_end(&src, i) {
                Some(end) => end,
                None => i + 1, // a lifetime or a label
            },
            _ => i + 1,
        };
        if end > i + 1 {
            blank(&mut out, i, end);
        }
        i = end;
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Past the end of the `//` comment at `at` (its newline stays code).
fn line_comment_end(src: &[char], at: usize) -> usize {
    (at..src.len())
        .find(|&i| src[i] == '\n')
        .unwrap_or(src.len())
}

/// Past the end of the `/*` comment at `at`; block comments nest.
fn block_comment_end(src: &[char], at: usize) -> usize {
    let (mut depth, mut i) = (0, at);
    while i < src.len() {
        match (src[i], src.get(i + 1).copied()) {
            ('/', Some('*')) => (depth, i) = (depth + 1, i + 2),
            ('*', Some('/')) => {
                (depth, i) = (depth - 1, i + 2);
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    src.len()
}

/// Past the end of the string literal whose opening quote is at `at`: a raw one (`r"…"`,
/// `br#"…"#`) when an `r` and hashes stand just before the quote, else one with escapes.
fn string_end(src: &[char], at: usize) -> usize {
    let hashes = src[..at].iter().rev().take_while(|&&c| c == '#').count();
    let r = at.checked_sub(hashes + 1).filter(|&r| src[r] == 'r');
    let starts_word = |i: usize| i == 0 || !is_ident(src[i - 1]);
    let raw = r
        .is_some_and(|r| starts_word(r) || (matches!(src[r - 1], 'b' | 'c') && starts_word(r - 1)));
    let mut i = at + 1;
    while i < src.len() {
        if raw {
            if src[i] == '"'
                && src[i + 1..]
                    .iter()
                    .take(hashes)
                    .filter(|&&c| c == '#')
                    .count()
                    == hashes
            {
                return i + 1 + hashes;
            }
            i += 1;
        } else {
            match src[i] {
                '\\' => i += 2,
                '"' => return i + 1,
                _ => i += 1,
            }
        }
    }
    src.len()
}

/// Past the end of the char literal at `at` (`'{'`, `'\''`, `'\u{7b}'`), or `None` when the
/// quote starts a lifetime or a label (`'a`, `'static`, `'outer:`).
fn char_literal_end(src: &[char], at: usize) -> Option<usize> {
    match (src.get(at + 1), src.get(at + 2)) {
        (Some('\\'), _) => {
            let close = (at + 3..src.len()).find(|&i| src[i] == '\'')?;
            Some(close + 1)
        }
        (Some(_), Some('\'')) => Some(at + 3),
        _ => None,
    }
}

/// Every function with a body in a source text: its name, the line of its `fn` (from 1) and
/// its length in lines, up to the line of its closing brace.
fn function_lengths(text: &str) -> Vec<(String, usize, usize)> {
    let code = code_only(text);
    let line_at = |i: usize| 1 + code[..i].iter().filter(|&&c| c == '\n').count();
    let mut found = Vec::new();
    let mut i = 0;
    while i + 2 < code.len() {
        let keyword = code[i] == 'f'
            && code[i + 1] == 'n'
            && (i == 0 || !is_ident(code[i - 1]))
            && code[i + 2].is_whitespace();
        if !keyword {
            i += 1;
            continue;
        }
        let name: String = code[i + 2..]
            .iter()
            .skip_while(|c| c.is_whitespace())
            .take_while(|&&c| is_ident(c) || c == '$')
            .collect();
        if let Some((open, close)) = body(&code, i + 2) {
            found.push((name, line_at(i), line_at(close) - line_at(i) + 1));
            // Functions nested in this one are measured too.
            i = open;
        }
        i += 1;
    }
    found
}

/// The braces of the body of the function whose signature starts at `from`, or `None` for a
/// declaration without one (`fn f(x: [u8; 4]);`).
fn body(code: &[char], from: usize) -> Option<(usize, usize)> {
    let mut nesting = 0i32; // () and [] in the signature
    let mut open = None;
    for (i, &c) in code.iter().enumerate().skip(from) {
        match c {
            '(' | '[' => nesting += 1,
            ')' | ']' => nesting -= 1,
            ';' if nesting == 0 => return None,
            '{' if nesting == 0 => {
                open = Some(i);
                break;
            }
            _ => {}
        }
    }
    let open = open?;
    let mut depth = 0;
    for (i, &c) in code.iter().enumerate().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((open, i));
                }
            }
            _ => {}
        }
    }
    None
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let mut long = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read file");
        let rel = file
            .strip_prefix(src().parent().expect("root"))
            .expect("under the root");
        for (name, line, length) in function_lengths(&text) {
            if length > MAX_FN_LINES {
                long.push(format!("{}:{line} {name}: {length} lines", rel.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions longer than {MAX_FN_LINES} lines (split them):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_length_reader_skips_braces_in_literals_and_comments() {
    let text = r##"fn outer() {
    let open = '{';
    let quote = '\'';
    let escaped = '\u{7b}';
    let s = "}} \" }";
    let raw = r#"}" }"#;
    let bytes = br"}";
    // } a comment
    /* } /* nested } */ } */
    fn inner<'a>(x: &'a [u8; 4]) -> &'a str { 'label: loop { break 'label; } "" }
}
trait T {
    fn declared(x: [u8; 4]);
}
fn fnord() -> fn(i64) -> i64 { |_| 0 }
"##;
    let found = function_lengths(text);
    let lengths: Vec<(&str, usize, usize)> = found
        .iter()
        .map(|(name, line, length)| (name.as_str(), *line, *length))
        .collect();
    assert_eq!(
        lengths,
        [("outer", 1, 11), ("inner", 10, 1), ("fnord", 15, 1)],
        "{found:?}"
    );
}
