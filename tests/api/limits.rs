//! Limits against slow and greedy clients: a slowloris crowd does not keep a normal client
//! waiting, and its connections are cut once their request head is late; an id list is
//! bounded.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::backend_tests;
use crate::helpers::{send, spawn_app_with, Backend};

/// A client that sends a request head one byte a second and never finishes it. Returns what
/// the server answered before closing (empty if it just closed).
async fn slowloris(port: u16, seconds: u64) -> Vec<u8> {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)).await else {
        return Vec::new();
    };
    if stream
        .write_all(b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .is_err()
    {
        return Vec::new();
    }
    for _ in 0..seconds {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if stream.write_all(b"a").await.is_err() {
            break;
        }
    }
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(2), stream.read_to_end(&mut answer)).await;
    answer
}

#[actix_rt::test]
async fn a_slowloris_crowd_does_not_keep_a_normal_client_waiting() {
    let app = spawn_app_with(Backend::Sqlite, |s| s.client_request_timeout_secs = 2)
        .await
        .expect("app");
    let crowd: Vec<_> = (0..300)
        .map(|_| tokio::spawn(slowloris(app.port, 6)))
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;

    // A normal client, each request on a new connection, while the crowd trickles.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut slowest = Duration::ZERO;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(4) {
        let t = Instant::now();
        let res = client.get(app.url("/status")).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        slowest = slowest.max(t.elapsed());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!("slowest normal request beside 300 slow clients: {slowest:?}");
    assert!(slowest < Duration::from_millis(100), "{slowest:?}");

    // The crowd was cut off once its heads were late: 408, well before it would have finished.
    let mut timed_out = 0;
    for slow in crowd {
        let answer = slow.await.unwrap();
        if String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 408") {
            timed_out += 1;
        }
    }
    assert!(
        timed_out >= 290,
        "only {timed_out} of 300 slow clients got 408"
    );
}

backend_tests! {
    async fn an_id_list_is_bounded(app) {
        let token = app.owner_token().await;
        let many: Vec<String> = (1..=1_001).map(|i| i.to_string()).collect();
        let (status, body) = send(&app, Method::GET, "/product", &token,
            &[("productIds", &many.join(","))], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(body["error"]["details"][0].as_str().unwrap().contains("at most 1000 ids"), "{body}");
        let enough = many[..1_000].join(",");
        let (status, _) = send(&app, Method::GET, "/product", &token, &[("productIds", &enough)], None).await;
        assert_eq!(status, StatusCode::OK);
    }
}
