//! The README's "Your first request" runs as written (issue 13): its `sh` blocks are run in
//! order by one bash, against the real server and database, with `cargo run -q -- …` standing
//! for the built binary and the server's address for `http://127.0.0.1:8080`. Each answer is
//! compared with the one the README shows under the command: the same fields, the same values,
//! except what differs from run to run (ids, times, the dates of the records).
//!
//! `README_SHOW=1` prints the answers (to refresh the README after a change of the API).

use std::process::Command;

use serde_json::Value;

use crate::backend_tests;
use crate::helpers::binary;

const README: &str = include_str!("../../README.md");
const SECTION: &str = "## Your first request";
const ADDRESS: &str = "http://127.0.0.1:8080";
const END: &str = "@@end-of-block@@";

/// A command block of the section and the answer shown under it.
struct Block {
    code: String,
    answer: Option<Value>,
}

fn blocks() -> Vec<Block> {
    let start = README.find(SECTION).expect("the README has the section");
    let rest = &README[start + SECTION.len()..];
    let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    let mut blocks: Vec<Block> = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        let body = body.join("\n");
        match info.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["sh"] => blocks.push(Block {
                code: body,
                answer: None,
            }),
            ["json"] => {
                let shown = serde_json::from_str(&body)
                    .unwrap_or_else(|e| panic!("a shown answer is not JSON ({e}): {body}"));
                blocks
                    .last_mut()
                    .expect("an answer follows a command")
                    .answer = Some(shown);
            }
            _ => {} // `sh no-run`: shown, run by another test (the login flow needs a person)
        }
    }
    blocks
}

/// Run-to-run differences: ids, record dates, times, and numbers inside messages.
fn volatile(key: &str) -> bool {
    key == "id"
        || key.ends_with("Id")
        || key.ends_with("Date")
        || key.to_ascii_lowercase().ends_with("timestamp")
        || key == "executionTime_milliSeconds"
        || key == "time"
        || key == "uptime"
}

fn digits_out(text: &str) -> String {
    text.chars().filter(|c| !c.is_ascii_digit()).collect()
}

fn compare(key: &str, shown: &Value, got: &Value, path: &str) -> Result<(), String> {
    let mismatch = || {
        Err(format!(
            "{path}: the README shows {shown}, the server said {got}"
        ))
    };
    match (shown, got) {
        (Value::Object(a), Value::Object(b)) => {
            // A collection keyed by id: compared in order, whatever the ids.
            let by_id = !a.is_empty() && a.keys().all(|k| k.parse::<i64>().is_ok());
            if by_id {
                if a.len() != b.len() || !b.keys().all(|k| k.parse::<i64>().is_ok()) {
                    return mismatch();
                }
                for (i, (x, y)) in a.values().zip(b.values()).enumerate() {
                    compare(key, x, y, &format!("{path}[{i}]"))?;
                }
                return Ok(());
            }
            let (mut ka, mut kb): (Vec<_>, Vec<_>) = (a.keys().collect(), b.keys().collect());
            ka.sort();
            kb.sort();
            if ka != kb {
                return Err(format!(
                    "{path}: the README shows fields {ka:?}, the server said {kb:?}"
                ));
            }
            for (k, x) in a {
                compare(k, x, &b[k], &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .try_for_each(|(i, (x, y))| compare(key, x, y, &format!("{path}[{i}]"))),
        (Value::Number(_), Value::Number(_)) | (Value::String(_), Value::String(_))
            if volatile(key) =>
        {
            Ok(())
        }
        (Value::String(a), Value::String(b)) if key == "details" || key == "message" => {
            if digits_out(a) == digits_out(b) {
                Ok(())
            } else {
                mismatch()
            }
        }
        _ if shown == got => Ok(()),
        _ => mismatch(),
    }
}

/// The whole section as one script: a `cargo run` that runs the built binary, the test
/// server's address, and a marker after each block's output.
fn script(blocks: &[Block], address: &str) -> String {
    let mut script = String::from(
        "set -eu\n\
         cargo() {\n\
           [ \"$1\" = run ] || { echo \"unexpected: cargo $*\" >&2; return 1; }\n\
           while [ \"$1\" != -- ]; do shift; done; shift\n\
           \"$MERCHANTD_BIN\" \"$@\"\n\
         }\n",
    );
    for block in blocks {
        script.push_str(&block.code.replace(ADDRESS, address));
        script.push_str(&format!("\necho\necho {END}\n"));
    }
    script
}

backend_tests! {
    async fn the_readmes_first_request_runs_as_written(app) {
        let blocks = blocks();
        assert!(blocks.iter().filter(|b| b.answer.is_some()).count() >= 5, "the section shows its answers");
        let mut bash = Command::new("bash");
        bash.arg("-c")
            .arg(script(&blocks, &app.address))
            .env("MERCHANTD_BIN", binary())
            .env("MERCHANTD_DATABASE_URL", &app.database.url)
            .current_dir(app.database.dir());
        // Off the test's thread: the server under test runs on it.
        let out = tokio::task::spawn_blocking(move || bash.output().expect("bash"))
            .await
            .expect("the script ran");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        let outputs: Vec<&str> = stdout.split(END).collect();
        let mut differ = Vec::new();
        for (i, block) in blocks.iter().enumerate() {
            let Some(shown) = &block.answer else { continue };
            let text = outputs[i].trim();
            let got: Value = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("block {i} answered no JSON ({e}): {text}"));
            if std::env::var_os("README_SHOW").is_some() {
                eprintln!("block {i}:\n{}", serde_json::to_string_pretty(&got).unwrap());
            }
            if let Err(why) = compare("", shown, &got, "answer") {
                differ.push(format!("block {i} ({}…): {why}", block.code.lines().next().unwrap_or("")));
            }
        }
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    }
}

#[test]
fn the_comparison_catches_a_changed_answer() {
    let shown = serde_json::json!({"products": {"10": {"id": 10, "name": "Latte", "stockLeft": -2}},
        "api": {"executionTime_milliSeconds": 3}});
    let same = serde_json::json!({"products": {"77": {"id": 77, "name": "Latte", "stockLeft": -2}},
        "api": {"executionTime_milliSeconds": 9}});
    assert_eq!(compare("", &shown, &same, "answer"), Ok(()));
    let other = serde_json::json!({"products": {"77": {"id": 77, "name": "Latte", "stockLeft": 0}},
        "api": {"executionTime_milliSeconds": 9}});
    assert!(compare("", &shown, &other, "answer").is_err());
    let more = serde_json::json!({"products": {"77": {"id": 77, "name": "Latte", "stockLeft": -2, "x": 1}},
        "api": {"executionTime_milliSeconds": 9}});
    assert!(compare("", &shown, &more, "answer").is_err());
}
