//! What the end-to-end benchmarks share: the server on a temporary SQLite file with the demo
//! tenant, and a full-scope token for its owner.

use merchantd::config::Settings;
use merchantd::domain::now_millis;
use merchantd::domain::oauth::token::NewFamily;
use merchantd::startup::{Application, Signals};

/// A running server: its address, a token, and the folder holding its database.
pub struct Server {
    pub base: String,
    pub token: String,
    _dir: tempfile::TempDir,
}

/// Starts the server (in this actix system) and mints the demo owner's token.
#[allow(dead_code)] // each bench is its own crate; not all of them use every helper
pub async fn start() -> Server {
    start_with(|_| {}).await
}

/// [`start`] with settings changed first.
pub async fn start_with(tweak: impl FnOnce(&mut Settings)) -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut settings = Settings {
        bind: "127.0.0.1:0".into(),
        database_url: format!("sqlite://{}", dir.path().join("bench.db").display()),
        tenants: std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tenants")),
        pbkdf2_iterations: 1_000,
        log_level: "off".into(),
        // One client measuring on purpose sends more than a token's share.
        api_requests_per_second_per_token: 0,
        api_requests_per_second_per_merchant: 0,
        ..Settings::default()
    };
    tweak(&mut settings);
    let app = Application::build(settings, Signals::Ignore)
        .await
        .expect("server");
    let demo = app
        .tenants()
        .iter()
        .find(|t| t.key == "demo")
        .expect("demo tenant")
        .clone();
    let token = merchantd::crypto::random_token("mcd_at_");
    app.db()
        .issue_access_token(
            &NewFamily {
                id: "bench".into(),
                merchant_id: demo.id,
                employee_id: demo.users["owner@demo.test"],
                application_id: demo.applications["demo-pos"],
                scope: "read write admin".into(),
            },
            &merchantd::crypto::sha256_hex(&token),
            now_millis() + 3_600_000,
        )
        .await
        .expect("token");
    let base = format!("http://127.0.0.1:{}", app.port());
    actix_rt::spawn(app.run_until_stopped());
    Server {
        base,
        token,
        _dir: dir,
    }
}
