//! The layer rules of STYLE.md and docs/architecture.md, kept by a test rather than by memory:
//! which top-level module of `src/` may name which (`crate::x` anywhere in its files, `use`
//! groups included), that only the storage layer speaks SQL, that the modules form no cycle,
//! and that no function is longer than [`MAX_FN_LINES`].

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
    // The operator's realm reads manifests sent as JSON and makes its tokens.
    ("services", &["domain", "db", "tenants", "crypto"]),
    // Actors know no wire.
    ("actors", &["domain", "db", "oauth", "crypto", "metrics"]),
    // The read side: answers from the actors' snapshots, and every record's JSON.
    ("views", &["actors", "domain"]),
    // Handlers never touch storage.
    (
        "http",
        &[
            "actors", "services", "views", "oauth", "domain", "config", "metrics", "crypto",
        ],
    ),
    // The webhook dispatcher: the log's deliveries out over HTTP, endpoints turned off through
    // their merchant's writer.
    (
        "webhooks",
        &[
            "actors", "services", "views", "domain", "db", "metrics", "config", "crypto",
        ],
    ),
    // Serving HTTPS: certificates in, a TLS configuration out.
    ("tls", &[]),
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

/// A file's code without its `#[cfg(test)]` module (tests may build what they compare with).
fn without_tests(text: &str) -> &str {
    text.split("#[cfg(test)]").next().unwrap_or(text)
}

/// Every file of the top-level modules `modules` whose code (comments and strings aside,
/// tests left out) contains one of `needles`, with the needle found.
fn files_saying(modules: &[&str], needles: &[&str]) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files
        .iter()
        .filter(|f| modules.contains(&module_of(f).as_str()))
    {
        let text = std::fs::read_to_string(file).expect("read file");
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

/// Write inputs the catalogue import builds from file rows, as an API client would send them:
/// what the resources' rules read, not what anyone is shown.
const WRITE_INPUTS: &[&str] = &[
    "actors/merchant/import.rs: json!",
    "actors/merchant/import.rs: Value::from(",
];

#[test]
fn actors_and_domain_build_no_json() {
    let found: Vec<String> = files_saying(&["actors", "domain"], JSON_BUILDERS)
        .into_iter()
        .filter(|f| !WRITE_INPUTS.contains(&f.as_str()))
        .collect();
    assert!(
        found.is_empty(),
        "JSON is built by the read side (src/views) alone:\n{}",
        found.join("\n")
    );
}

#[test]
fn handlers_never_read_actor_state() {
    let found = files_saying(
        &["http"],
        &[
            "MerchantState",
            "merchant::state",
            "merchant::history",
            "merchants.snapshot(",
            "merchants.sales::<",
            "Entry<",
        ],
    );
    assert!(
        found.is_empty(),
        "handlers ask the read side (src/views), not the actors' state:\n{}",
        found.join("\n")
    );
}

#[test]
fn only_the_storage_layer_knows_which_database_it_is() {
    let mut modules: Vec<&str> = ALLOWED.iter().map(|(m, _)| *m).collect();
    modules.retain(|m| !matches!(*m, "db" | "startup" | "cli"));
    let found = files_saying(&modules, &["Backend", "is_shared(", ".backend()"]);
    assert!(
        found.is_empty(),
        "the SQLite-or-PostgreSQL choice is made inside src/db:\n{}",
        found.join("\n")
    );
}

/// The files of the merchant's actors that may name the database: its side of their storage
/// ports (`actors/storage.rs`) and the load it forwards to.
const STORAGE_ADAPTERS: &[&str] = &[
    "actors/storage.rs",
    "actors/token_storage.rs",
    "actors/pod_storage.rs",
    "actors/merchant/load.rs",
];

#[test]
fn the_actors_reach_storage_through_their_ports() {
    let found: Vec<String> = files_saying(
        &["actors"],
        &[
            "db::Db;",
            "{Db,",
            ",Db,",
            ",Db}",
            ":Db,",
            ":Db)",
            "&Db,",
            "&Db)",
            "GroupWrite",
        ],
    )
    .into_iter()
    .filter(|f| !STORAGE_ADAPTERS.iter().any(|a| f.starts_with(a)))
    .collect();
    assert!(
        found.is_empty(),
        "the actors use actors/ports.rs, not the database:\n{}",
        found.join("\n")
    );
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
