//! Tenant manifests through the real CLI (DESIGN §3): idempotent, precise errors, all or nothing.

use std::path::Path;
use std::process::Output;

use merchantd::db::Db;
use merchantd::metrics::Metrics;

use crate::db_tests;
use crate::helpers::{binary, dump_database, TestDb, FIXTURE_SECRETS};

fn apply(db: &TestDb, files: &[&Path]) -> Output {
    std::process::Command::new(binary())
        .arg("tenant")
        .arg("apply")
        .args(files)
        .arg("--database-url")
        .arg(&db.url)
        .env("MERCHANTD_PBKDF2_ITERATIONS", "1000")
        .env("RUST_LOG", "trace")
        .output()
        .expect("run merchantd")
}

fn repo(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

async fn dump(db: &TestDb) -> Vec<String> {
    let database = Db::connect(&db.url, Metrics::new()).await.unwrap();
    database.migrate().await.unwrap();
    let rows = dump_database(&crate::helpers::raw_pool(&db.url).await).await;
    database.close().await;
    rows
}

fn write(db: &TestDb, name: &str, text: &str) -> std::path::PathBuf {
    let path = db.dir().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const BROKEN_ROLE: &str = r#"
[merchant]
key = "broken"
name = "Broken Ltd"

[[users]]
email = "boss@broken.test"
password = "a-long-enough-password"
role = "boss"
"#;

db_tests! {
    async fn applying_the_demo_manifest_twice_changes_nothing(db) {
        let first = apply(&db, &[&repo("tenants/demo.toml")]);
        assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
        let ids: serde_json::Value = serde_json::from_slice(&first.stdout).expect("JSON ids");
        assert_eq!(ids[0]["key"], "demo");
        assert!(ids[0]["id"].as_i64().unwrap() > 0);
        assert!(ids[0]["stores"]["high-street"].as_i64().is_some());
        assert!(ids[0]["users"]["owner@demo.test"].as_i64().is_some());
        assert!(ids[0]["applications"]["demo-pos"].as_i64().is_some());
        let before = dump(&db).await;
        assert!(before.iter().any(|r| r.starts_with("merchants:")));

        let second = apply(&db, &[&repo("tenants/demo.toml")]);
        assert!(second.status.success());
        let again: serde_json::Value = serde_json::from_slice(&second.stdout).unwrap();
        assert_eq!(ids, again, "the same ids both times");
        assert_eq!(before, dump(&db).await, "the second apply wrote nothing");
    }

    async fn a_manifest_with_an_unknown_role_is_rejected_and_nothing_is_written(db) {
        let broken = write(&db, "broken.toml", BROKEN_ROLE);
        let empty = dump(&db).await;
        // The good file comes first: it must not be written either.
        let out = apply(&db, &[&repo("tests/fixtures/second.toml"), &broken]);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("broken.toml: users[0] (boss@broken.test): role: unknown role \"boss\""),
            "{stderr}"
        );
        assert_eq!(empty, dump(&db).await);
    }

    async fn syntax_errors_bad_urls_and_duplicate_emails_are_named(db) {
        let cases = [
            ("syntax.toml", "[merchant]\nkey = \"s\"\nname = \"unterminated\n", "syntax.toml: TOML syntax error at line 3"),
            (
                "url.toml",
                "[merchant]\nkey = \"u\"\nname = \"U\"\n[[applications]]\nname = \"A\"\nclient_id = \"u-app\"\nclient_secret = \"u-app-secret-123\"\nredirect_uris = [\"http://evil.example/cb\"]\n",
                "url.toml: applications[0] (u-app): redirect_uris[0]:",
            ),
            (
                "dup.toml",
                "[merchant]\nkey = \"d\"\nname = \"D\"\n[[users]]\nemail = \"a@d.test\"\npassword = \"password-one\"\nrole = \"owner\"\n[[users]]\nemail = \"A@d.test\"\npassword = \"password-two\"\nrole = \"guest\"\n",
                "dup.toml: users[1]: email: duplicate email \"a@d.test\"",
            ),
        ];
        let empty = dump(&db).await;
        for (name, text, expected) in cases {
            let file = write(&db, name, text);
            let out = apply(&db, &[&file]);
            assert!(!out.status.success(), "{name}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains(expected), "{name}: {stderr}");
        }
        assert_eq!(empty, dump(&db).await);
    }

    async fn a_client_id_of_another_merchant_is_rejected_and_nothing_is_written(db) {
        assert!(apply(&db, &[&repo("tenants/demo.toml")]).status.success());
        let before = dump(&db).await;
        let thief = write(
            &db,
            "thief.toml",
            "[merchant]\nkey = \"thief\"\nname = \"T\"\n[[applications]]\nname = \"Mine\"\nclient_id = \"demo-pos\"\nclient_secret = \"a-different-secret\"\nredirect_uris = [\"https://t.example/cb\"]\n",
        );
        let out = apply(&db, &[&thief]);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("thief.toml: applications (demo-pos): client_id: already registered"), "{stderr}");
        assert_eq!(before, dump(&db).await);
    }

    async fn no_password_or_secret_is_stored_or_logged_by_apply(db) {
        let out = apply(&db, &[&repo("tenants/demo.toml"), &repo("tests/fixtures/second.toml")]);
        assert!(out.status.success());
        let logs = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(logs.contains("INSERT INTO employees") || logs.contains("employees"), "trace logging ran");
        let rows = dump(&db).await.join("\n");
        assert!(rows.contains("pbkdf2-sha256$"), "passwords are stored hashed");
        for secret in FIXTURE_SECRETS {
            assert!(!logs.contains(secret), "{secret} appeared in the logs");
            assert!(!rows.contains(secret), "{secret} appeared in the database");
        }
    }
}
