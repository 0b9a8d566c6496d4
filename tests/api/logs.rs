//! `/log` (api-reference.md Log; examples §2.16): the worked example, headers named in every
//! 400, updates and completion, deletes, the per-merchant counter and tenant isolation.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::contract::Checked;
use crate::helpers::{send, TestApp};

/// Files a log under `object`/`identifier` with `tags` and returns its id.
async fn file_log(
    app: &TestApp,
    token: &str,
    tags: &str,
    object: &str,
    identifier: &str,
    data: Value,
) -> String {
    let (status, body) = send(
        app,
        Method::POST,
        "/log",
        token,
        &[
            ("tag", tags),
            ("object", object),
            ("identifier", identifier),
        ],
        Some(data),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let logs = body["logs"].as_object().unwrap();
    assert_eq!(logs.len(), 1, "{body}");
    logs.keys().next().unwrap().clone()
}

fn ids(body: &Value) -> Vec<String> {
    body["logs"]
        .as_object()
        .unwrap_or_else(|| panic!("no logs in {body}"))
        .keys()
        .cloned()
        .collect()
}

/// The 400's `details`, asserting the envelope names every problem.
fn bad_request_details(status: StatusCode, body: &Value) -> Vec<String> {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], 400, "{body}");
    let record = &body["api"]["message"]["error"]["101"];
    assert_eq!(record["code"], "validationError", "{body}");
    assert_eq!(record["statusCode"], 400, "{body}");
    body["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().to_owned())
        .collect()
}

backend_tests! {
    async fn logs_follow_the_worked_example(app) {
        let token = app.owner_token().await;
        let data = json!({"lastSync": "2026-03-28T17:45:00.000Z", "pendingBaskets": 0, "terminals": ["till-1", "till-3"]});
        let (status, body) = send(&app, Method::POST, "/log", &token,
            &[("tag", "sync,till-3"), ("object", "STORE"), ("identifier", "9")], Some(data.clone())).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let log = &body["logs"]["STORE-9:1"];
        assert_eq!(log["id"], "STORE-9:1", "{body}");
        assert_eq!(log["tags"], "sync,till-3");
        assert_eq!(log["object"], "STORE");
        assert_eq!(log["identifier"], "9");
        assert_eq!(log["data"], data);
        assert!(log["addedDate"].as_str().unwrap().ends_with('Z'), "{body}");
        assert_eq!(log["completeDate"], Value::Null);
        assert_eq!(body["api"]["message"]["success"]["200"], json!({
            "id": 200, "title": "Created", "details": "Log STORE-9:1 created.", "objectRef": "STORE-9:1"
        }));
        assert_eq!(body["api"]["codeBaseVersion"], "2.0");

        let other = file_log(&app, &token, "other", "STORE", "9", json!([1, 2, 3])).await;
        assert_eq!(other, "STORE-9:2", "n counts per merchant");
        let elsewhere = file_log(&app, &token, "sync", "STORE", "10", json!("text")).await;
        assert_eq!(elsewhere, "STORE-10:3");

        // GET: logs of STORE 9 carrying every listed tag.
        let by = |tags: &'static str| [("tag", tags), ("object", "STORE"), ("identifier", "9")];
        let (status, body) = send(&app, Method::GET, "/log", &token, &by("sync"), None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(ids(&body), ["STORE-9:1"]);
        assert_eq!(body["logs"]["STORE-9:1"]["data"], data);
        assert_eq!(body["api"]["message"], json!({}));
        let (_, body) = send(&app, Method::GET, "/log", &token, &by("sync, till-3"), None).await;
        assert_eq!(ids(&body), ["STORE-9:1"]);
        let (_, body) = send(&app, Method::GET, "/log", &token, &by("sync,other"), None).await;
        assert!(ids(&body).is_empty(), "{body}");
        let (_, body) = send(&app, Method::GET, "/log", &token, &by("other"), None).await;
        assert_eq!(ids(&body), ["STORE-9:2"]);
        assert_eq!(body["logs"]["STORE-9:2"]["data"], json!([1, 2, 3]));

        // `id` returns that log; other headers narrow it.
        let (status, body) = send(&app, Method::GET, "/log", &token, &[("id", "STORE-10:3")], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(ids(&body), ["STORE-10:3"]);
        assert_eq!(body["logs"]["STORE-10:3"]["data"], "text");
        let (_, body) = send(&app, Method::GET, "/log", &token, &[("id", "STORE-10:3"), ("tag", "other")], None).await;
        assert!(ids(&body).is_empty(), "{body}");
        let (status, body) = send(&app, Method::GET, "/log", &token, &[("id", "STORE-10:99")], None).await;
        assert_eq!(status, StatusCode::OK, "an unknown id is simply absent: {body}");
        assert!(ids(&body).is_empty());
    }

    async fn a_post_with_id_updates_and_completed_sets_and_clears_the_date(app) {
        let token = app.owner_token().await;
        let id = file_log(&app, &token, "sync,till-3", "STORE", "9", json!({"v": 1})).await;
        let headers = |completed: &'static str| {
            [("tag", "sync"), ("object", "STORE"), ("identifier", "9"), ("id", "STORE-9:1"), ("completed", completed)]
        };
        let (status, body) = send(&app, Method::POST, "/log", &token, &headers("true"), Some(json!({"v": 2}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let log = &body["logs"][&id];
        assert_eq!(log["data"], json!({"v": 2}));
        assert_eq!(log["tags"], "sync");
        let completed_at = log["completeDate"].as_str().expect("completeDate set").to_owned();
        assert_eq!(body["api"]["message"]["success"]["201"], json!({
            "id": 201, "title": "Updated", "details": "Log STORE-9:1 updated.", "objectRef": "STORE-9:1"
        }));

        // Completing again keeps the first date; an empty body keeps the data.
        let res = app.api(Method::POST, "/log", &token)
            .header("tag", "sync").header("object", "STORE").header("identifier", "9")
            .header("id", "STORE-9:1").header("completed", "true")
            .checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::CREATED);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["logs"][&id]["completeDate"], completed_at.as_str());
        assert_eq!(body["logs"][&id]["data"], json!({"v": 2}));

        let (_, body) = send(&app, Method::POST, "/log", &token, &headers("false"), Some(json!(null))).await;
        assert_eq!(body["logs"][&id]["completeDate"], Value::Null, "{body}");
        assert_eq!(body["logs"][&id]["data"], Value::Null);

        let (_, body) = send(&app, Method::GET, "/log", &token, &[("id", &id)], None).await;
        assert_eq!(body["logs"][&id]["completeDate"], Value::Null);
        assert_eq!(body["logs"][&id]["tags"], "sync");

        // A new log may be filed completed.
        let (status, body) = send(&app, Method::POST, "/log", &token,
            &[("tag", "done"), ("object", "BASKET"), ("identifier", "1053"), ("completed", "true")],
            Some(json!({}))).await;
        assert_eq!(status, StatusCode::CREATED);
        assert!(body["logs"]["BASKET-1053:2"]["completeDate"].is_string(), "{body}");

        // An id of another object and identifier than the headers name is refused.
        let (status, body) = send(&app, Method::POST, "/log", &token,
            &[("tag", "x"), ("object", "STORE"), ("identifier", "10"), ("id", "STORE-9:1")], Some(json!(1))).await;
        let details = bad_request_details(status, &body);
        assert!(details[0].starts_with("id: log STORE-9:1 is not filed under"), "{details:?}");

        // An unknown id is a 404 and nothing is created.
        let (status, body) = send(&app, Method::POST, "/log", &token,
            &[("tag", "x"), ("object", "STORE"), ("identifier", "9"), ("id", "STORE-9:77")], Some(json!(1))).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert_eq!(body["error"]["details"][0], "Log STORE-9:77 does not exist.");
        assert_eq!(body["api"]["message"]["error"]["104"]["code"], "notFound");
    }

    async fn delete_takes_the_id_header_and_needs_admin(app) {
        let token = app.owner_token().await;
        let id = file_log(&app, &token, "sync", "STORE", "9", json!({})).await;

        let writer = app.token_for("demo", "owner@demo.test", "read write", 3600).await;
        let (status, _) = send(&app, Method::DELETE, "/log", &writer, &[("id", &id)], None).await;
        assert_eq!(status, StatusCode::FORBIDDEN);

        let (status, body) = send(&app, Method::DELETE, "/log", &token, &[("id", &id)], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
        assert_eq!(body["api"]["message"]["success"]["205"], json!({
            "id": 205, "title": "Deleted", "details": "Log STORE-9:1 deleted.", "objectRef": "STORE-9:1"
        }));
        let (_, body) = send(&app, Method::GET, "/log", &token, &[("id", &id)], None).await;
        assert!(ids(&body).is_empty(), "{body}");
        let (status, body) = send(&app, Method::DELETE, "/log", &token, &[("id", &id)], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert_eq!(body["api"]["message"]["error"]["104"]["details"], "Log STORE-9:1 does not exist.");

        let (status, body) = send(&app, Method::DELETE, "/log", &token, &[], None).await;
        assert_eq!(bad_request_details(status, &body), ["id: the header is missing."]);
        assert_eq!(body["api"]["message"]["error"]["101"]["objectRef"], "id");

        // The counter never goes back: the next log takes a new n.
        let next = file_log(&app, &token, "sync", "STORE", "9", json!({})).await;
        assert_eq!(next, "STORE-9:2");

        let (status, _) = send(&app, Method::PUT, "/log", &token, &[], Some(json!({}))).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    }

    async fn every_missing_or_malformed_header_is_named(app) {
        let token = app.owner_token().await;
        let all = [("tag", "sync"), ("object", "STORE"), ("identifier", "9")];
        for method in [Method::POST, Method::GET] {
            let body = (method == Method::POST).then(|| json!({}));
            let (status, resp) = send(&app, method.clone(), "/log", &token, &[], body.clone()).await;
            assert_eq!(bad_request_details(status, &resp), [
                "tag: the header is missing.",
                "object: the header is missing.",
                "identifier: the header is missing.",
            ], "{method}");
            assert_eq!(resp["api"]["message"]["error"]["101"]["objectRef"], "tag,object,identifier");
            for left_out in 0..3 {
                let headers: Vec<(&str, &str)> =
                    all.iter().enumerate().filter(|(i, _)| *i != left_out).map(|(_, h)| *h).collect();
                let (status, resp) = send(&app, method.clone(), "/log", &token, &headers, body.clone()).await;
                let name = all[left_out].0;
                assert_eq!(bad_request_details(status, &resp), [format!("{name}: the header is missing.")],
                    "{method} without {name}");
                assert_eq!(resp["api"]["message"]["error"]["101"]["objectRef"], name);
            }
        }

        let malformed: [(&str, &str, &str); 9] = [
            ("tag", "sync,,x", "tag: item 2 is empty."),
            ("tag", "", "tag: item 1 is empty."),
            ("object", "ST ORE", "object: \"ST ORE\" is not an object key"),
            ("object", "STORE-X", "object: \"STORE-X\" is not an object key"),
            ("object", "", "object: the header is empty."),
            ("identifier", "9 9", "identifier: \"9 9\" is not an identifier"),
            ("identifier", "", "identifier: the header is empty."),
            ("id", "STORE-9", "id: \"STORE-9\" is not a log id of the form <object>-<identifier>:<n>."),
            ("completed", "yes", "completed: \"yes\" is not true or false."),
        ];
        for (name, value, expected) in malformed {
            let mut headers: Vec<(&str, &str)> = all.iter().filter(|(n, _)| *n != name).copied().collect();
            headers.push((name, value));
            let (status, resp) = send(&app, Method::POST, "/log", &token, &headers, Some(json!({}))).await;
            let details = bad_request_details(status, &resp);
            assert_eq!(details.len(), 1, "{details:?}");
            assert!(details[0].starts_with(expected), "{name}: {value:?} → {details:?}");
            assert_eq!(resp["api"]["message"]["error"]["101"]["objectRef"], name);
        }

        // Two problems at once: both named, in one answer.
        let (status, resp) = send(&app, Method::POST, "/log", &token,
            &[("tag", "a,,b"), ("identifier", "9")], Some(json!({}))).await;
        assert_eq!(bad_request_details(status, &resp), ["tag: item 2 is empty.", "object: the header is missing."]);

        // GET with a malformed id names only the id; DELETE too.
        for method in [Method::GET, Method::DELETE] {
            let (status, resp) = send(&app, method, "/log", &token, &[("id", "9:STORE")], None).await;
            let details = bad_request_details(status, &resp);
            assert_eq!(details.len(), 1, "{details:?}");
            assert!(details[0].starts_with("id: "), "{details:?}");
        }
    }

    async fn the_body_is_any_json_and_must_be_json(app) {
        let token = app.owner_token().await;
        let post = || app.api(Method::POST, "/log", &token)
            .header("tag", "t").header("object", "STORE").header("identifier", "9");
        let res = post().header("content-type", "text/plain").body("hello").checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["api"]["message"]["error"]["106"]["code"], "unsupportedMediaType", "{body}");

        let res = post().header("content-type", "application/json").body("{\"a\": ").checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);

        let res = post().header("content-type", "application/json").checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "a new log needs a body");

        // The legacy form with one postBody field is the same as a JSON body.
        let res = post().header("content-type", "application/x-www-form-urlencoded")
            .body("postBody=%7B%22legacy%22%3Atrue%7D").checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::CREATED);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["logs"]["STORE-9:1"]["data"], json!({"legacy": true}), "{body}");

        for data in [json!(42), json!("x"), json!(null), json!([{"deep": {"er": [1.5, true]}}])] {
            let (status, body) = send(&app, Method::POST, "/log", &token,
                &[("tag", "t"), ("object", "STORE"), ("identifier", "9")], Some(data.clone())).await;
            assert_eq!(status, StatusCode::CREATED);
            let (_, log) = body["logs"].as_object().unwrap().iter().next().unwrap();
            assert_eq!(log["data"], data);
        }
    }

    async fn another_merchants_log_is_invisible_undeletable_and_unchangeable(app) {
        let demo = app.owner_token().await;
        let second = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        for _ in 0..2 {
            file_log(&app, &demo, "sync", "STORE", "9", json!({"mine": true})).await;
        }
        let theirs = file_log(&app, &demo, "sync", "STORE", "9", json!({"mine": true})).await;
        assert_eq!(theirs, "STORE-9:3");

        // Invisible by id and by object.
        let (status, body) = send(&app, Method::GET, "/log", &second, &[("id", &theirs)], None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(ids(&body).is_empty(), "{body}");
        let (_, body) = send(&app, Method::GET, "/log", &second,
            &[("tag", "sync"), ("object", "STORE"), ("identifier", "9")], None).await;
        assert!(ids(&body).is_empty(), "{body}");

        // Not updatable, not deletable: exactly what an unknown id gets.
        let (status, body) = send(&app, Method::POST, "/log", &second,
            &[("tag", "x"), ("object", "STORE"), ("identifier", "9"), ("id", &theirs), ("completed", "true")],
            Some(json!({"stolen": true}))).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert_eq!(body["error"]["details"][0], format!("Log {theirs} does not exist."));
        let (status, _) = send(&app, Method::DELETE, "/log", &second, &[("id", &theirs)], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);

        let (_, body) = send(&app, Method::GET, "/log", &demo, &[("id", &theirs)], None).await;
        assert_eq!(body["logs"][&theirs]["data"], json!({"mine": true}), "{body}");
        assert_eq!(body["logs"][&theirs]["tags"], "sync");
        assert_eq!(body["logs"][&theirs]["completeDate"], Value::Null);

        // The second merchant counts on its own: its first log may share a text id with the
        // demo's, and each sees only its own.
        let own = file_log(&app, &second, "sync", "STORE", "9", json!({"second": true})).await;
        assert_eq!(own, "STORE-9:1");
        let (_, body) = send(&app, Method::GET, "/log", &second, &[("id", "STORE-9:1")], None).await;
        assert_eq!(body["logs"]["STORE-9:1"]["data"], json!({"second": true}));
        let (_, body) = send(&app, Method::GET, "/log", &demo, &[("id", "STORE-9:1")], None).await;
        assert_eq!(body["logs"]["STORE-9:1"]["data"], json!({"mine": true}));
        let (status, _) = send(&app, Method::DELETE, "/log", &second, &[("id", "STORE-9:1")], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT);
        let (_, body) = send(&app, Method::GET, "/log", &demo, &[("id", "STORE-9:1")], None).await;
        assert_eq!(ids(&body), ["STORE-9:1"], "the demo's log survives the second's delete");
    }

    async fn concurrent_posts_take_distinct_numbers(app) {
        let token = app.owner_token().await;
        let posts = (0..20).map(|i| {
            let app = &app;
            let token = &token;
            async move { file_log(app, token, "load", "TILL", &i.to_string(), json!({"i": i})).await }
        });
        let made = futures_util::future::join_all(posts).await;
        let mut numbers: Vec<i64> = made.iter()
            .map(|id| id.rsplit_once(':').unwrap().1.parse().unwrap())
            .collect();
        numbers.sort();
        assert_eq!(numbers, (1..=20).collect::<Vec<_>>());
    }
}
