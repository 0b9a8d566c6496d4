//! Whole requests: any bytes, sent as they are on a socket to the real server (one per fuzzing
//! process, on a temporary SQLite file with the demo tenant). `TOKEN` in the input becomes a
//! valid owner token so the fuzzer reaches past the gate. Whatever arrives, the server answers
//! below 500 or closes the connection; a 5xx, a panic that kills it, or a refused connection
//! is a crash.
#![no_main]
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use merchantd::config::Settings;
use merchantd::domain::now_millis;
use merchantd::domain::oauth::token::NewFamily;
use merchantd::startup::{Application, Signals};

struct Server {
    port: u16,
    token: String,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(start)
}

fn start() -> Server {
    let dir = std::env::temp_dir().join(format!("merchantd-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let settings = Settings {
        bind: "127.0.0.1:0".into(),
        database_url: format!("sqlite://{}", dir.join("merchantd.db").display()),
        tenants: Path::new(env!("CARGO_MANIFEST_DIR")).join("../tenants"),
        pbkdf2_iterations: 1_000,
        workers: 1,
        log_level: "off".into(),
        client_request_timeout_secs: 1,
        api_requests_per_second_per_token: 0,
        api_requests_per_second_per_merchant: 0,
        oauth_requests_per_minute: 1_000_000,
        ..Settings::default()
    };
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        actix_rt::System::new().block_on(async move {
            let app = Application::build(settings, Signals::Ignore)
                .await
                .expect("the server starts");
            let demo = app
                .tenants()
                .iter()
                .find(|t| t.key == "demo")
                .expect("the demo tenant");
            let token = merchantd::crypto::random_token("mcd_at_");
            let family = NewFamily {
                id: format!("fuzz-{}", std::process::id()),
                merchant_id: demo.id,
                employee_id: demo.users["owner@demo.test"],
                application_id: *demo.applications.values().next().expect("an application"),
                scope: "read write admin".into(),
            };
            app.db()
                .issue_access_token(
                    &family,
                    &merchantd::crypto::sha256_hex(&token),
                    now_millis() + 86_400_000,
                )
                .await
                .expect("a token");
            sender
                .send(Server {
                    port: app.port(),
                    token,
                })
                .expect("the fuzzer waits");
            app.run_until_stopped().await.expect("the server runs");
        });
    });
    receiver.recv().expect("the server started")
}

fn with_token(data: &[u8], token: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + token.len());
    let mut rest = data;
    while let Some(at) = rest.windows(5).position(|w| w == b"TOKEN") {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(token);
        rest = &rest[at + 5..];
    }
    out.extend_from_slice(rest);
    out
}

fuzz_target!(|data: &[u8]| {
    let server = server();
    let request = with_token(data, server.token.as_bytes());
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("the server is up");
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
    if stream.write_all(&request).is_err() {
        return; // the server closed early on a malformed head: an answer of its own
    }
    stream.shutdown(Shutdown::Write).ok();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    if answer.starts_with(b"HTTP/1.1 5") || answer.starts_with(b"HTTP/1.0 5") {
        let head = String::from_utf8_lossy(&answer[..answer.len().min(600)]);
        panic!(
            "a server error for {:?}:\n{head}",
            String::from_utf8_lossy(data)
        );
    }
});
