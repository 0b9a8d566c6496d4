//! Deliveries from one server: every event once, in order, signed; retries, filters and resends.

use super::*;

backend_tests! {
    // Acceptance 1: 1,000 writes, every event delivered once, in order, each signature
    // verified by the Standard Webhooks library; events the filter leaves out never come.
    async fn a_thousand_writes_arrive_signed_in_order_and_none_missing(app) {
        let receiver = Receiver::start().await;
        let token = app.owner_token().await;
        let merchant = app.tenant("demo").id;
        let (hook, secret) = create(&app, &token, &receiver.url, json!(["category"])).await;
        categories(&app, &token, 1_000, 8).await;
        let (status, _) = send(&app, Method::POST, "/product", &token, &[],
            Some(json!({"products": {"p": {"name": "Not delivered"}}}))).await;
        assert_eq!(status, StatusCode::CREATED);
        let expected = logged(&app.sql, merchant, "category.").await;
        assert_eq!(expected.len(), 1_000);
        wait_for(Duration::from_secs(90), "1,000 deliveries", || receiver.got().len() >= 1_000).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let got = receiver.got();
        let delivered: Vec<(i64, String, i64)> = got.iter().map(said).collect();
        assert_eq!(delivered, expected, "exactly the logged events, in order, once each");
        for received in &got {
            verify(received, &secret, merchant);
        }
        let (status, body) = send(&app, Method::GET, "/webhook/delivery", &token,
            &[("webhookId", &hook.to_string()), ("status", "succeeded"), ("limit", "1000")], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let listed = body["deliveries"].as_array().unwrap();
        assert_eq!(listed.len(), 1_000);
        assert_eq!(listed[0]["sequence"], expected.last().unwrap().0, "newest first");
        assert_eq!(listed[0]["attempts"][0]["statusCode"], 204);
        assert_eq!(listed[0]["messageId"], format!("msg_{merchant}_{}", expected.last().unwrap().0));
        let metrics = app.metrics_text().await;
        assert!(crate::helpers::metric_value(&metrics, "webhook_deliveries_total", "result=\"succeeded\"") >= 1_000.0);
        assert!(metrics.contains("webhook_delivery_latency_seconds_count"));
        assert!(metrics.contains("webhook_queue_depth"));
    }

    // Acceptance 2: a receiver down for a while gets every event after retries, in order; the
    // attempts are listed with their statuses.
    async fn a_receiver_that_fails_for_a_while_gets_everything_in_order(app) {
        let receiver = Receiver::start().await;
        receiver.fail(true);
        let token = app.owner_token().await;
        let merchant = app.tenant("demo").id;
        let (hook, secret) = create(&app, &token, &receiver.url, json!(["category.created"])).await;
        categories(&app, &token, 20, 1).await;
        wait_for(Duration::from_secs(20), "four failed attempts", || receiver.got().len() >= 4).await;
        let first = receiver.got()[0].seq();
        assert!(receiver.got().iter().all(|r| r.seq() == first), "nothing overtakes a failing delivery");
        receiver.fail(false);
        wait_for(Duration::from_secs(30), "20 accepted deliveries", || receiver.accepted().len() >= 20).await;
        let expected = logged(&app.sql, merchant, "category.created").await;
        let accepted: Vec<(i64, String, i64)> = receiver.accepted().iter().map(said).collect();
        assert_eq!(accepted, expected);
        let failed_tries = receiver.got().iter().filter(|r| r.status == 500).count();
        for received in receiver.got() {
            verify(&received, &secret, merchant);
        }
        let (status, body) = send(&app, Method::GET, "/webhook/delivery", &token,
            &[("webhookId", &hook.to_string()), ("limit", "1000")], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let head = body["deliveries"].as_array().unwrap().iter()
            .find(|d| d["sequence"] == first).expect("the first delivery is listed");
        assert_eq!(head["status"], "succeeded");
        let statuses: Vec<i64> = head["attempts"].as_array().unwrap().iter()
            .map(|a| a["statusCode"].as_i64().unwrap()).collect();
        assert_eq!(statuses.len(), failed_tries + 1, "{head}");
        assert!(statuses[..failed_tries].iter().all(|s| *s == 500) && statuses[failed_tries] == 204, "{statuses:?}");
        assert_eq!(head["attempts"][0]["response"], "receiver down for maintenance");
        assert!(head["attempts"][0]["durationMs"].is_i64());
        assert_eq!(head["attemptCount"], failed_tries as i64 + 1);
        let metrics = app.metrics_text().await;
        assert!(crate::helpers::metric_value(&metrics, "webhook_deliveries_total", "result=\"retrying\"") >= 4.0);
    }

    // Rotating the secret: deliveries carry both signatures through the overlap, so a
    // receiver holding either verifies them.
    async fn a_rotated_secret_signs_beside_the_old_one(app) {
        let receiver = Receiver::start().await;
        let token = app.owner_token().await;
        let merchant = app.tenant("demo").id;
        let (hook, old) = create(&app, &token, &receiver.url, json!(["category"])).await;
        let (status, body, headers) = send_full(&app, Method::PUT, "/webhook", &token, &[],
            Some(json!({"webhooks": {"r": {"id": hook, "rotateSecret": true}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(headers["cache-control"], "no-store");
        let new = body["webhooks"]["r"]["secret"].as_str().unwrap().to_owned();
        assert_ne!(new, old);
        let (_, listed) = send(&app, Method::GET, "/webhook", &token, &[], None).await;
        assert!(!listed.to_string().contains("whsec_"), "a read never shows a secret: {listed}");
        categories(&app, &token, 1, 1).await;
        wait_for(Duration::from_secs(20), "a delivery", || !receiver.got().is_empty()).await;
        let received = &receiver.got()[0];
        assert_eq!(received.header("webhook-signature").split(' ').count(), 2);
        verify(received, &old, merchant);
        verify(received, &new, merchant);
        let events = logged(&app.sql, merchant, "webhook.").await;
        let kinds: Vec<&str> = events.iter().map(|e| e.1.as_str()).collect();
        assert_eq!(kinds, ["webhook.created", "webhook.updated", "webhook.secret_rotated"]);
        // Events reach `read` streams and other endpoints: they show the URL's origin only,
        // never its path or query (where a receiver's credentials may be).
        let (data,): (String,) = sqlx::query_as(
            "SELECT data FROM events WHERE merchant_id = $1 AND event_type = 'webhook.created'")
            .bind(merchant).fetch_one(&app.sql).await.unwrap();
        let shown: Value = serde_json::from_str(&data).unwrap();
        assert!(receiver.url.contains("receiver-credential"));
        assert_eq!(shown["url"].as_str().unwrap(), receiver.url.split("/hooks").next().unwrap());
        assert!(!data.contains("receiver-credential"), "{data}");
    }

    // Isolation: another merchant neither sees nor touches an endpoint or its deliveries, and
    // a token without admin cannot even read them.
    async fn another_merchants_webhooks_are_invisible_and_untouchable(app) {
        let receiver = Receiver::start().await;
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let (hook, _) = create(&app, &demo, &receiver.url, json!([])).await;
        let id = hook.to_string();
        let (status, body) = send(&app, Method::GET, "/webhook", &other, &[("webhookIds", &id), ("deleted", "true")], None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["webhooks"], json!({}));
        let (status, _) = send(&app, Method::GET, "/webhook/delivery", &other, &[("webhookId", &id)], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = send(&app, Method::POST, "/webhook/resend", &other, &[],
            Some(json!({"webhookId": hook, "sequences": [1]}))).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = send(&app, Method::PUT, "/webhook", &other, &[],
            Some(json!({"webhooks": {"x": {"id": hook, "url": "http://127.0.0.1:1/stolen", "rotateSecret": true}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        let (status, _) = send(&app, Method::DELETE, "/webhook", &other, &[("webhookIds", &id)], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, body) = send(&app, Method::GET, "/webhook", &demo, &[("webhookId", &id)], None).await;
        assert_eq!(body["webhooks"][&id]["url"], receiver.url);
        let reader = app.token_for("demo", "owner@demo.test", "read write", 3600).await;
        let (status, _) = send(&app, Method::GET, "/webhook", &reader, &[], None).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, _) = send(&app, Method::GET, "/webhook/delivery", &reader, &[("webhookId", &id)], None).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, body) = send(&app, Method::GET, "/webhook/delivery", &demo, &[("status", "lost")], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let details = body["error"]["details"].to_string();
        assert!(details.contains("webhookId: the header is missing.") && details.contains("status: must be pending, succeeded or failed."), "{details}");
    }
}

backend_tests_with! {
    |s| s.webhook_retry_for_secs = 1;
    // An endpoint failing for the whole retry window is turned off, with `webhook.disabled`
    // saying why; turned on again, its failed delivery can be resent.
    async fn an_endpoint_failing_past_the_window_is_turned_off_and_can_resend(app) {
        let receiver = Receiver::start().await;
        receiver.fail(true);
        let token = app.owner_token().await;
        let merchant = app.tenant("demo").id;
        let (hook, _) = create(&app, &token, &receiver.url, json!(["category"])).await;
        categories(&app, &token, 1, 1).await;
        let id = hook.to_string();
        let mut record = Value::Null;
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let (_, body) = send(&app, Method::GET, "/webhook", &token, &[("webhookId", &id)], None).await;
            record = body["webhooks"][&id].clone();
            if record["active"] == false {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(record["active"], false, "{record}");
        let reason = record["disabledReason"].as_str().unwrap();
        assert!(reason.contains("the last attempt: HTTP 500"), "{reason}");
        let disabled = logged(&app.sql, merchant, "webhook.disabled").await;
        assert_eq!(disabled.len(), 1);
        // The endpoint is turned off during the last attempt, whose outcome (the delivery
        // failed) is written with the dispatcher's batch right after: wait for it.
        let mut body = Value::Null;
        while Instant::now() < deadline {
            body = send(&app, Method::GET, "/webhook/delivery", &token,
                &[("webhookId", &id), ("status", "failed")], None).await.1;
            if !body["deliveries"].as_array().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let failed = body["deliveries"].as_array().unwrap();
        assert_eq!(failed.len(), 1, "{body}");
        let seq = failed[0]["sequence"].as_i64().unwrap();

        receiver.fail(false);
        let (status, body) = send(&app, Method::PUT, "/webhook", &token, &[],
            Some(json!({"webhooks": {"on": {"id": hook, "active": true}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert!(body["webhooks"]["on"]["disabledReason"].is_null());
        let (status, body) = send(&app, Method::POST, "/webhook/resend", &token, &[],
            Some(json!({"webhookId": hook, "sequences": [seq]}))).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["resent"], json!([seq]));
        wait_for(Duration::from_secs(20), "the resent delivery", || {
            receiver.accepted().iter().any(|r| r.seq() == seq)
        }).await;
        let (status, _) = send(&app, Method::POST, "/webhook/resend", &token, &[],
            Some(json!({"webhookId": hook, "sequences": [seq + 1000]}))).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
}

backend_tests_with! {
    |s| s.webhook_allow_private_addresses = false;
    // Acceptance 6: URLs at loopback, private, link-local and metadata addresses are refused
    // with a message that says why and which setting allows them.
    async fn private_addresses_are_refused_unless_allowed(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, "/webhook", &token, &[],
            Some(json!({"webhooks": {
                "loop": {"url": "http://127.0.0.1:9000/hook"},
                "lan": {"url": "https://10.1.2.3/hook"},
                "meta": {"url": "http://169.254.169.254/latest/meta-data/"},
                "name": {"url": "http://localhost:8080/hook"},
                "v6": {"url": "http://[::1]/hook"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let details = body["error"]["details"].to_string();
        for expected in [
            "loop: url: 127.0.0.1 is a loopback address; webhooks are delivered to public addresses only (an operator can allow others with the setting webhook_allow_private_addresses).",
            "lan: url: 10.1.2.3 is a private address",
            "meta: url: 169.254.169.254 is a link-local (cloud metadata) address",
            "name: url: localhost is a loopback address",
            "v6: url: ::1 is a loopback address",
        ] {
            assert!(details.contains(expected), "{expected} in {details}");
        }
        assert!(!body.to_string().contains("whsec_"), "no secret for refused objects");
        // A public address is taken (its events filter keeps the dispatcher from calling it).
        let (status, body) = send(&app, Method::POST, "/webhook", &token, &[],
            Some(json!({"webhooks": {"w": {"url": "https://93.184.216.34/hook", "events": ["stock_count.completed"]}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
}
