//! The change-event log (events issue): appended with every write, read back as a live stream
//! (`GET /events`, resumable with `Last-Event-ID`) and as delta reads (`changedSince`).

use std::collections::BTreeSet;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::{send_full, TestApp};
use crate::{backend_tests, backend_tests_with};

/// One parsed server-sent event.
#[derive(Debug, Clone)]
pub(crate) struct Sse {
    pub(crate) id: i64,
    pub(crate) kind: String,
    pub(crate) data: Value,
}

/// A reader of `GET /events` that yields events (comments and `retry` skipped).
pub(crate) struct Stream {
    body: reqwest::Response,
    buffer: String,
    /// The server said `event: end` or closed the stream (not merely silent).
    ended: bool,
}

impl Stream {
    pub(crate) async fn open(app: &TestApp, token: &str, headers: &[(&str, &str)]) -> Self {
        let mut request = app.api(Method::GET, "/events", token);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Self::of(request.checked().await.expect("GET /events"))
    }

    /// A stream over an answer to `GET /events`.
    pub(crate) fn of(res: reqwest::Response) -> Self {
        assert_eq!(res.status(), StatusCode::OK);
        assert!(res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream"));
        Self {
            body: res,
            buffer: String::new(),
            ended: false,
        }
    }

    /// The next event, or `None` when the stream ended or nothing came within `wait`.
    pub(crate) async fn next(&mut self, wait: Duration) -> Option<Sse> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut id = None;
                let mut kind = String::new();
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        id = v.parse().ok();
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        kind = v.to_owned();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data = v.to_owned();
                    }
                }
                if kind == "end" {
                    self.ended = true;
                    return None;
                }
                if let Some(id) = id {
                    let data = serde_json::from_str(&data).expect("event data is JSON");
                    return Some(Sse { id, kind, data });
                }
                continue;
            }
            match tokio::time::timeout(wait, self.body.chunk()).await {
                Ok(Ok(Some(chunk))) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                Ok(_) => {
                    self.ended = true;
                    return None;
                }
                Err(_) => return None,
            }
        }
    }

    /// Whether the server ends the stream within `wait` (events before the end are skipped).
    pub(crate) async fn ends_within(&mut self, wait: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        while !self.ended {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() || (self.next(left).await.is_none() && !self.ended) {
                break;
            }
        }
        self.ended
    }

    pub(crate) async fn take(&mut self, n: usize) -> Vec<Sse> {
        let mut out = Vec::new();
        while out.len() < n {
            match self.next(Duration::from_secs(10)).await {
                Some(event) => out.push(event),
                None => break,
            }
        }
        out
    }
}

async fn create_category(app: &TestApp, token: &str, title: &str) -> i64 {
    let (status, body, _) = send_full(
        app,
        Method::POST,
        "/category",
        token,
        &[],
        Some(json!({"categories": {"k": {"title": title}}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["categories"]["k"]["id"].as_i64().unwrap()
}

pub(crate) fn sequence(headers: &reqwest::header::HeaderMap) -> i64 {
    headers["x-merchant-sequence"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

backend_tests! {
    async fn a_stream_carries_every_write_in_order_and_resumes_without_gap_or_repeat(app) {
        let token = app.owner_token().await;
        let mut stream = Stream::open(&app, &token, &[]).await;
        let mut ids = Vec::new();
        for i in 0..5 {
            ids.push(create_category(&app, &token, &format!("Shelf {i}")).await);
        }
        let first = stream.take(3).await;
        assert_eq!(first.len(), 3);
        for (event, id) in first.iter().zip(&ids) {
            assert_eq!(event.kind, "category.created");
            assert_eq!(event.data["objectId"], *id);
            assert_eq!(event.data["object"]["id"], *id);
            assert_eq!(event.data["sequence"], event.id);
        }
        assert!(first.windows(2).all(|w| w[1].id == w[0].id + 1), "{first:?}");
        // The terminal drops off after three, and more happens meanwhile.
        drop(stream);
        let (status, body, _) = send_full(
            &app, Method::DELETE, "/category", &token, &[("categoryIds", &ids[0].to_string())], None,
        )
        .await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
        for i in 5..8 {
            ids.push(create_category(&app, &token, &format!("Shelf {i}")).await);
        }
        let last_seen = first[2].id.to_string();
        let mut resumed = Stream::open(&app, &token, &[("Last-Event-ID", &last_seen)]).await;
        let rest = resumed.take(6).await;
        let kinds: Vec<&str> = rest.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(
            kinds,
            ["category.created", "category.created", "category.deleted",
             "category.created", "category.created", "category.created"]
        );
        let seqs: Vec<i64> = rest.iter().map(|e| e.id).collect();
        let expected: Vec<i64> = (first[2].id + 1..=first[2].id + 6).collect();
        assert_eq!(seqs, expected, "every missed event once, in order");
        assert_eq!(rest[2].data["objectId"], ids[0]);
        assert!(rest[2].data["object"]["deleteDate"].is_string());
        assert!(resumed.next(Duration::from_millis(600)).await.is_none(), "nothing twice");
    }

    async fn a_sale_appends_its_completion_and_the_stock_it_moved(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores.values().next().copied().unwrap();
        let mut stream = Stream::open(&app, &token, &[("types", "basket.completed, stock")]).await;
        let (status, body, _) = send_full(&app, Method::POST, "/product", &token, &[], Some(json!({
            "products": {"p": {"name": "Tea", "instances": {"i": {"price": "200", "taxPercentage": "0.200"}}}}
        }))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let product = body["products"]["p"]["id"].as_i64().unwrap();
        let (status, body, _) = send_full(&app, Method::POST, "/basket", &token, &[], Some(json!({
            "baskets": {"b": {"storeId": store, "basketProducts": {"l": {"productId": product, "quantity": 2}}}}
        }))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let basket = body["baskets"]["b"]["id"].as_i64().unwrap();
        let store_header = store.to_string();
        let (_, _, headers) = send_full(&app, Method::GET, "/product", &token, &[("storeId", &store_header)], None).await;
        let before_sale = sequence(&headers).to_string();
        let (status, body, _) = send_full(&app, Method::POST, "/transaction", &token, &[], Some(json!({
            "transactions": {"t": {"basketId": basket, "type": "CASH", "amount": 400, "completed": true}}
        }))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, body, _) = send_full(&app, Method::PUT, "/basket", &token, &[], Some(json!({
            "baskets": {"b": {"id": basket, "completed": true}}
        }))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let events = stream.take(2).await;
        let kinds: BTreeSet<&str> = events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, BTreeSet::from(["basket.completed", "stock.changed"]), "{events:?}");
        let stock = events.iter().find(|e| e.kind == "stock.changed").unwrap();
        assert_eq!(stock.data["object"]["productId"], product);
        assert_eq!(stock.data["object"]["stockSold"], 2);
        assert_eq!(stock.data["object"]["stockLeft"], -2);
        let completed = events.iter().find(|e| e.kind == "basket.completed").unwrap();
        assert_eq!(completed.data["object"]["completed"], true);
        // `basket.completed` carries the object `basket.updated` carried just before it; the
        // log stores it once. Resumed between the two, the stream still has it whole.
        let updated_seq = (completed.id - 1).to_string();
        let mut resumed = Stream::open(&app, &token, &[("Last-Event-ID", &updated_seq)]).await;
        let first = resumed.take(1).await.remove(0);
        assert_eq!(first.kind, "basket.completed");
        assert_eq!(first.data["object"], completed.data["object"], "{first:?}");
        assert_eq!(first.data["object"]["id"], basket);
        let before = (completed.id - 2).to_string();
        let both = Stream::open(&app, &token, &[("Last-Event-ID", &before)]).await.take(2).await;
        assert_eq!(both[0].kind, "basket.updated", "{both:?}");
        assert_eq!(both[0].data["object"], both[1].data["object"]);
        let stored: String = sqlx::query_scalar(&format!(
            "SELECT data FROM events WHERE merchant_id = {} AND seq = {}", app.tenant("demo").id, completed.id
        )).fetch_one(&app.sql).await.unwrap();
        assert_eq!(stored, "", "stored once");
        // A till showing a store's stock learns of the sale through its delta read.
        let (status, body, _) = send_full(
            &app, Method::GET, "/product", &token,
            &[("storeId", &store_header), ("changedSince", &before_sale)], None,
        ).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["products"][product.to_string()]["stockSold"], 2, "{body}");
        let (_, body, _) = send_full(
            &app, Method::GET, "/product", &token, &[("changedSince", &before_sale)], None,
        ).await;
        assert_eq!(body["products"], json!({}), "without stock columns the product did not change");
        // Retention may cut between the two (a webhook still holding `basket.updated` moves its
        // cut there; here its time is moved back): the one kept takes the object first.
        sqlx::query(&format!("UPDATE events SET occurred_at = 0 WHERE merchant_id = {} AND seq <= {}",
            app.tenant("demo").id, completed.id - 1)).execute(&app.sql).await.unwrap();
        app.db.prune_events(1).await.unwrap();
        let kept = Stream::open(&app, &token, &[("Last-Event-ID", &updated_seq)]).await.take(1).await.remove(0);
        assert_eq!(kept.kind, "basket.completed");
        assert_eq!(kept.data["object"], completed.data["object"], "{kept:?}");
    }

    async fn changed_since_answers_exactly_the_changes_and_410_once_pruned(app) {
        let token = app.owner_token().await;
        let (status, body, headers) = send_full(&app, Method::GET, "/category", &token, &[], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let start = sequence(&headers);
        let kept = create_category(&app, &token, "Kept").await;
        let gone = create_category(&app, &token, "Gone").await;
        let (_, _, headers) = send_full(&app, Method::GET, "/category", &token, &[], None).await;
        let middle = sequence(&headers);
        assert_eq!(middle, start + 2);
        let renamed = create_category(&app, &token, "Renamed").await;
        let (status, _, _) = send_full(&app, Method::PUT, "/category", &token, &[], Some(json!({
            "categories": {"r": {"id": renamed, "title": "Renamed again"}}
        }))).await;
        assert_eq!(status, StatusCode::CREATED);
        let (status, _, _) = send_full(
            &app, Method::DELETE, "/category", &token, &[("categoryId", &gone.to_string())], None,
        ).await;
        assert_eq!(status, StatusCode::RESET_CONTENT);
        let since = middle.to_string();
        let (status, body, headers) = send_full(
            &app, Method::GET, "/category", &token, &[("changedSince", &since)], None,
        ).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let changed: BTreeSet<String> = body["categories"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(changed, BTreeSet::from([renamed.to_string(), gone.to_string()]), "{body}");
        assert!(body["categories"][gone.to_string()]["deleteDate"].is_string());
        assert_eq!(body["categories"][renamed.to_string()]["title"], "Renamed again");
        assert!(body["categories"].get(kept.to_string()).is_none());
        assert!(sequence(&headers) > middle);
        // Other resources' changes are not categories.
        let (_, body, _) = send_full(&app, Method::GET, "/store", &token, &[("changedSince", &since)], None).await;
        assert_eq!(body["stores"], json!({}));
        // A bad sequence is a 400; one the log no longer reaches is 410 (115).
        let (status, body, _) = send_full(&app, Method::GET, "/category", &token, &[("changedSince", "yesterday")], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let events = crate::digest::read_events(&app, &token).await;
        app.db.prune_events(merchantd::domain::now_millis() + 1).await.unwrap();
        // Digests follow the log lazily: what they had not taken in went in before the prune.
        let digest = crate::digest::server_digest(&app, &token, "category", 10).await;
        assert_eq!(digest, crate::digest::local_digest(&events, "category", 10));
        assert_eq!(digest["total"]["count"], 3, "{digest}");
        let (status, body, _) = send_full(&app, Method::GET, "/category", &token, &[("changedSince", &since)], None).await;
        assert_eq!(status, StatusCode::GONE, "{body}");
        assert!(body["api"]["message"]["error"]["115"].is_object(), "{body}");
        assert!(body["error"]["details"][0].as_str().unwrap().contains("read the whole list again"));
        // After a full read the till carries on from the new position.
        let (_, _, headers) = send_full(&app, Method::GET, "/category", &token, &[], None).await;
        let now = sequence(&headers).to_string();
        let (status, body, _) = send_full(&app, Method::GET, "/category", &token, &[("changedSince", &now)], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["categories"], json!({}));
    }

    async fn a_stream_ends_when_its_token_is_revoked_and_a_token_holds_few_streams(app) {
        let token = app.owner_token().await;
        let mut streams = Vec::new();
        for _ in 0..4 {
            streams.push(Stream::open(&app, &token, &[]).await);
        }
        // A fifth (a terminal reconnecting) closes the oldest: four stay open.
        let mut oldest = streams.remove(0);
        streams.push(Stream::open(&app, &token, &[]).await);
        assert!(oldest.ends_within(Duration::from_secs(3)).await, "the oldest stream ended");
        let metrics = app.metrics_text().await;
        assert!(metrics.contains("event_stream_clients 4"), "{metrics}");
        let res = app.api(Method::GET, "/events", &token).header("types", "a.b.c").checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        let res = reqwest::Client::new()
            .post(app.url("/oauth/revoke"))
            .basic_auth("demo-pos", Some("demo-pos-secret"))
            .form(&[("token", token.as_str())])
            .checked()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        for mut stream in streams {
            assert!(stream.ends_within(Duration::from_secs(12)).await, "the stream ended");
        }
    }
}

// The till of the events issue: 10,000 products read once, then 50 changes come back as
// exactly those 50 records, deleted ones marked, with a newer sequence.
backend_tests! {
    async fn a_till_keeps_ten_thousand_products_current_with_changed_since(app) {
        let token = app.owner_token().await;
        for batch in 0..50 {
            let products: serde_json::Map<String, Value> = (0..200)
                .map(|i| {
                    (format!("p{i}"), json!({"name": format!("Item {batch}-{i}"), "instances": {
                        "i": {"price": "100", "taxPercentage": "0.200"}}}))
                })
                .collect();
            let (status, body, _) = send_full(
                &app, Method::POST, "/product", &token, &[], Some(json!({"products": products})),
            ).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        let (status, body, headers) = send_full(&app, Method::GET, "/product", &token, &[], None).await;
        assert_eq!(status, StatusCode::OK);
        let all: Vec<i64> = body["products"].as_object().unwrap().keys().map(|k| k.parse().unwrap()).collect();
        assert_eq!(all.len(), 10_000);
        let since = sequence(&headers);
        // 30 renamed, 10 deleted, 10 new.
        let renamed: serde_json::Map<String, Value> = all[..30].iter()
            .map(|id| (format!("r{id}"), json!({"id": id, "name": format!("Renamed {id}")})))
            .collect();
        let (status, body, _) = send_full(&app, Method::PUT, "/product", &token, &[], Some(json!({"products": renamed}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let deleted: Vec<String> = all[100..110].iter().map(i64::to_string).collect();
        let (status, _, _) = send_full(&app, Method::DELETE, "/product", &token, &[("productIds", &deleted.join(","))], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT);
        let fresh: serde_json::Map<String, Value> = (0..10)
            .map(|i| (format!("n{i}"), json!({"name": format!("New {i}"), "instances": {
                "i": {"price": "150", "taxPercentage": "0.200"}}})))
            .collect();
        let (status, body, _) = send_full(&app, Method::POST, "/product", &token, &[], Some(json!({"products": fresh}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let created: BTreeSet<String> = body["products"].as_object().unwrap().values()
            .map(|p| p["id"].to_string()).collect();

        let (status, body, headers) = send_full(
            &app, Method::GET, "/product", &token, &[("changedSince", &since.to_string())], None,
        ).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let changed = body["products"].as_object().unwrap();
        let mut expected: BTreeSet<String> = all[..30].iter().chain(&all[100..110]).map(i64::to_string).collect();
        expected.extend(created);
        assert_eq!(changed.keys().cloned().collect::<BTreeSet<_>>(), expected);
        assert_eq!(changed.len(), 50);
        for id in &deleted {
            assert!(changed[id]["deleteDate"].is_string(), "{id} is marked deleted");
        }
        assert_eq!(changed[&all[0].to_string()]["name"], format!("Renamed {}", all[0]));
        assert!(sequence(&headers) > since);
    }
}

backend_tests! {
    async fn one_merchants_events_never_reach_another(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let mut theirs = Stream::open(&app, &other, &[("Last-Event-ID", "0")]).await;
        let (_, _, headers) = send_full(&app, Method::GET, "/category", &other, &[], None).await;
        let their_start = sequence(&headers);
        let mine = create_category(&app, &demo, "Demo only").await;
        assert!(theirs.next(Duration::from_millis(1500)).await.is_none(), "no event of another merchant");
        let (status, body, _) = send_full(
            &app, Method::GET, "/category", &other, &[("changedSince", &their_start.to_string())], None,
        ).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body["categories"].get(mine.to_string()).is_none(), "{body}");
        assert_eq!(body["categories"], json!({}));
        // Their own write reaches their stream, numbered in their own sequence.
        let own = create_category(&app, &other, "Second only").await;
        let event = theirs.next(Duration::from_secs(10)).await.expect("their event");
        assert_eq!(event.data["objectId"], own);
        assert_eq!(event.id, their_start + 1);
    }
}

backend_tests! {
    async fn a_stock_count_appends_the_wastage_basket_it_books(app) {
        let token = app.owner_token().await;
        let shop = app.tenant("demo").stores["high-street"];
        let latte = crate::shop_day::product(&app, &token, "Latte", "300").await;
        crate::shop_day::receive(&app, &token, shop, latte, 10).await;
        let mut stream = Stream::open(&app, &token, &[("types", "basket, stock_count.completed")]).await;
        let counted = crate::shop_day::count(&app, &token, shop, latte, 7).await;
        let wastage = counted["wastageBasketId"].as_i64().expect("a wastage basket");
        let events = stream.take(3).await;
        let kinds: Vec<(&str, i64)> = events
            .iter()
            .map(|e| (e.kind.as_str(), e.data["objectId"].as_i64().unwrap()))
            .collect();
        let count_id = counted["id"].as_i64().unwrap();
        assert_eq!(
            kinds,
            [("stock_count.completed", count_id), ("basket.created", wastage), ("basket.completed", wastage)]
        );
        assert_eq!(events[2].data["object"]["type"], "wastage");
    }
}

backend_tests_with! { |s| s.test_write_delay_ms = 1000;
    async fn events_of_one_object_in_one_commit_are_each_read_whole(app) {
        let token = app.owner_token().await;
        let id = create_category(&app, &token, "First").await;
        // A write holds its group for a second; three updates sent meanwhile commit together,
        // and each event carries the object as that commit left it: the same three times.
        let blocker = app.api(Method::POST, "/category", &token)
            .json(&json!({"categories": {"b": {"title": "Blocker"}}}));
        let blocker = tokio::spawn(async move { blocker.checked().await.unwrap().status() });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let updates: Vec<_> = ["Second", "Third", "Fourth"].into_iter().map(|title| {
            let update = app.api(Method::PUT, "/category", &token)
                .json(&json!({"categories": {"x": {"id": id, "title": title}}}));
            tokio::spawn(async move { update.checked().await.unwrap().status() })
        }).collect();
        assert_eq!(blocker.await.unwrap(), StatusCode::CREATED);
        for update in updates {
            assert_eq!(update.await.unwrap(), StatusCode::CREATED);
        }
        let rows: Vec<(i64, i64, String)> = sqlx::query_as(&format!(
            "SELECT seq, occurred_at, data FROM events WHERE merchant_id = {} AND object_id = {id} \
             AND event_type = 'category.updated' ORDER BY seq", app.tenant("demo").id
        )).fetch_all(&app.sql).await.unwrap();
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(rows.iter().all(|r| r.1 == rows[0].1), "one commit: {rows:?}");
        // Stored: whole, as the one before, whole again (a repeat points only at a whole one).
        let empty: Vec<bool> = rows.iter().map(|r| r.2.is_empty()).collect();
        assert_eq!(empty, [false, true, false], "{rows:?}");
        let from = (rows[0].0 - 1).to_string();
        let read = Stream::open(&app, &token, &[("Last-Event-ID", &from), ("types", "category.updated")]).await.take(3).await;
        for event in &read {
            assert_eq!(event.data["object"]["id"], id, "{read:?}");
            assert_eq!(event.data["object"]["title"], read[0].data["object"]["title"], "{read:?}");
        }
    }
}
