//! `/promotion` (api-reference.md Promotion; examples §2.8, §3.1-3.3): decimals as strings,
//! references to the merchant's stores and categories, and the stage filters evaluated at
//! request time.

use chrono::{Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::{send, TestApp};
use crate::{backend_tests, backend_tests_with};

/// Creates promotions under client keys; returns `(key, id)` in the order written.
async fn create(app: &TestApp, token: &str, objects: Value) -> Vec<(String, i64)> {
    let (status, body) = send(
        app,
        Method::POST,
        "/promotion",
        token,
        &[],
        Some(json!({"promotions": objects})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert!(body["api"]["message"].get("error").is_none(), "{body}");
    objects
        .as_object()
        .unwrap()
        .keys()
        .map(|k| (k.clone(), body["promotions"][k]["id"].as_i64().unwrap()))
        .collect()
}

/// The client keys of `created` whose ids a GET with `headers` returns, sorted.
async fn listed(
    app: &TestApp,
    token: &str,
    headers: &[(&str, &str)],
    created: &[(String, i64)],
) -> Vec<String> {
    let (status, body) = send(app, Method::GET, "/promotion", token, headers, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let returned = body["promotions"].as_object().unwrap();
    let mut keys: Vec<String> = created
        .iter()
        .filter(|(_, id)| returned.contains_key(&id.to_string()))
        .map(|(k, _)| k.clone())
        .collect();
    keys.sort();
    assert_eq!(
        keys.len(),
        returned.len(),
        "only promotions of this test: {body}"
    );
    keys
}

/// A date `days` from now, in the written form.
fn day(days: i64) -> String {
    (Utc::now() + Duration::days(days))
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

fn promo(start: &str, end: Option<&str>) -> Value {
    json!({"title": "10% off", "type": "percentage", "x": "10", "startDate": start, "endDate": end})
}

async fn a_category(app: &TestApp, token: &str) -> i64 {
    let res = app
        .api(Method::POST, "/category", token)
        .json(&json!({"categories": {"hot": {"title": "Hot drinks"}}}))
        .checked()
        .await
        .unwrap();
    let body: Value = res.json().await.unwrap();
    body["categories"]["hot"]["id"].as_i64().unwrap()
}

fn id_of(created: &[(String, i64)], key: &str) -> i64 {
    created.iter().find(|(k, _)| k == key).unwrap().1
}

fn keys(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

backend_tests! {
    async fn promotions_created_in_a_batch_read_back_as_the_worked_example(app) {
        let token = app.owner_token().await;
        let category = a_category(&app, &token).await;
        let store = app.tenant("demo").stores["high-street"];
        let (status, body) = send(&app, Method::POST, "/promotion", &token, &[], Some(json!({"promotions": {
            "p10": {"title": "10% off hot drinks", "type": "percentage", "x": "10",
                    "startDate": "2026-03-28 00:00:00", "endDate": "2026-04-30 00:00:00", "categoryIds": [category]},
            "three": {"title": "3 for 2", "details": "Pastries", "terms": "While stocks last", "type": "xForY",
                      "x": 3, "y": "2", "storeIds": [store], "productIds": [5, 4, 5],
                      "startDate": "2026-03-28T09:00:00.000Z", "daysAvailable": [6, 0], "automatic": true},
            "deal": {"title": "Meal deal", "type": "mealDeal", "x": "499.5", "startDate": "2026-03-28 00:00:00"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let p10 = &body["promotions"]["p10"];
        let id = p10["id"].as_i64().unwrap();
        assert_eq!(p10, &json!({"id": id, "title": "10% off hot drinks", "details": null, "terms": null,
            "type": "percentage", "x": "10", "y": null, "storeIds": [], "productIds": [], "categoryIds": [category],
            "startDate": "2026-03-28T00:00:00.000Z", "endDate": "2026-04-30T00:00:00.000Z",
            "daysAvailable": [0, 1, 2, 3, 4, 5, 6], "automatic": false, "stackable": false, "activeDate": p10["activeDate"],
            "deleteDate": null}));
        assert!(p10["activeDate"].as_str().unwrap().ends_with('Z'));
        let three = &body["promotions"]["three"];
        assert_eq!((three["x"].as_str(), three["y"].as_str()), (Some("3"), Some("2")));
        assert_eq!(three["storeIds"], json!([store]));
        assert_eq!(three["productIds"], json!([4, 5]));
        assert_eq!(three["daysAvailable"], json!([0, 6]));
        assert_eq!(three["automatic"], true);
        assert_eq!(three["endDate"], Value::Null);
        assert_eq!(body["promotions"]["deal"]["x"], "499.5");
        assert_eq!(body["api"]["message"]["success"]["200:p10"]["details"], format!("Promotion {id} created."));

        let created: Vec<(String, i64)> = ["deal", "p10", "three"].iter()
            .map(|k| (k.to_string(), body["promotions"][*k]["id"].as_i64().unwrap())).collect();
        let all = format!("{}, {}, {}", created[0].1, created[1].1, created[2].1);
        assert_eq!(listed(&app, &token, &[("promotionIds", &all)], &created).await, keys(&["deal", "p10", "three"]));
        assert_eq!(listed(&app, &token, &[("promotionId", &id.to_string())], &created).await, keys(&["p10"]));
        assert_eq!(listed(&app, &token, &[], &created).await, keys(&["deal", "p10", "three"]));
        let (_, body) = send(&app, Method::GET, "/promotion", &token, &[("promotionIds", &id.to_string())], None).await;
        assert_eq!(body["promotions"][id.to_string()], *p10, "GET reads back what the 201 showed");
    }

    async fn a_promotion_is_updated_by_post_with_id_and_by_put(app) {
        let token = app.owner_token().await;
        let [(_, id)] = create(&app, &token, json!({"p": promo("2026-03-28 00:00:00", Some("2026-04-30 00:00:00"))}))
            .await.try_into().unwrap();
        let (status, body) = send(&app, Method::POST, "/promotion", &token, &[],
            Some(json!({"promotions": {"u": {"id": id, "x": 12.5, "terms": "Not with other offers"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let u = &body["promotions"]["u"];
        assert_eq!((u["x"].as_str(), u["title"].as_str()), (Some("12.5"), Some("10% off")));
        assert_eq!(u["endDate"], "2026-04-30T00:00:00.000Z", "updates are partial");
        assert_eq!(body["api"]["message"]["success"]["201:u"]["details"], format!("Promotion {id} updated."));

        let (status, body) = send(&app, Method::PUT, "/promotion", &token, &[], Some(json!({"promotions": {"p": {
            "id": id, "type": "xForY", "x": "3", "y": "2", "endDate": null, "daysAvailable": [1, 2], "terms": null}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (_, body) = send(&app, Method::GET, "/promotion", &token, &[("promotionIds", &id.to_string())], None).await;
        let p = &body["promotions"][id.to_string()];
        assert_eq!((p["type"].as_str(), p["x"].as_str(), p["y"].as_str()), (Some("xForY"), Some("3"), Some("2")));
        assert_eq!((p["endDate"].is_null(), p["terms"].is_null()), (true, true));
        assert_eq!(p["daysAvailable"], json!([1, 2]));

        let (status, body) = send(&app, Method::PUT, "/promotion", &token, &[], Some(json!({"promotions": {"p": {"id": id, "y": null}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["api"]["message"]["error"]["110:p"]["details"], "y: required for type xForY.");
        let (status, _) = send(&app, Method::PUT, "/promotion", &token, &[], Some(json!({"promotions": {"n": promo(&day(0), None)}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "PUT only updates");
    }

    async fn deleting_a_promotion_hides_it_unless_deleted_is_true(app) {
        let token = app.owner_token().await;
        let created = create(&app, &token, json!({"a": promo(&day(-1), None), "b": promo(&day(-1), None)})).await;
        let (a, b) = (created[0].1, created[1].1);
        let (status, body) = send(&app, Method::DELETE, "/promotion", &token, &[("promotionIds", &a.to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
        assert_eq!(body["api"]["message"]["success"][format!("205:{a}")]["details"], format!("Promotion {a} deleted."));
        assert_eq!(listed(&app, &token, &[], &created).await, keys(&["b"]));
        assert_eq!(listed(&app, &token, &[("active", "true")], &created).await, keys(&["b"]));
        assert_eq!(listed(&app, &token, &[("promotionIds", &a.to_string())], &created).await, Vec::<String>::new());
        assert_eq!(listed(&app, &token, &[("deleted", "true")], &created).await, keys(&["a", "b"]));
        let (_, body) = send(&app, Method::GET, "/promotion", &token, &[("deleted", "true"), ("promotionId", &a.to_string())], None).await;
        assert!(body["promotions"][a.to_string()]["deleteDate"].is_string());
        let (status, _) = send(&app, Method::DELETE, "/promotion", &token, &[("promotionId", &b.to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "the singular header works too");
        assert_eq!(listed(&app, &token, &[], &created).await, Vec::<String>::new());
    }

    async fn one_good_and_one_bad_promotion_is_201_with_only_the_error_record(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, "/promotion", &token, &[], Some(json!({"promotions": {
            "good": promo(&day(0), None),
            "bad": {"title": "3 for 2", "type": "xForY", "x": 3, "startDate": day(0)}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["promotions"].as_object().unwrap().keys().collect::<Vec<_>>(), ["good"]);
        assert_eq!(body["api"]["message"]["error"].as_object().unwrap().len(), 1);
        assert_eq!(body["api"]["message"]["error"]["110:bad"]["details"], "y: required for type xForY.");
        assert!(body.get("error").is_none());
        let (_, body) = send(&app, Method::GET, "/promotion", &token, &[("deleted", "true")], None).await;
        assert_eq!(body["promotions"].as_object().unwrap().len(), 1, "nothing of bad was stored");
    }

    async fn every_promotion_bad_is_422_naming_each_problem(app) {
        let token = app.owner_token().await;
        let theirs = app.tenant("second").stores["market"];
        let (status, body) = send(&app, Method::POST, "/promotion", &token, &[], Some(json!({"promotions": {
            "b1": {},
            "b2": {"title": "t", "type": "bogof", "x": "1.23456", "startDate": "tomorrow", "notAField": 1},
            "b3": {"title": "t", "type": "percentage", "x": 101, "storeIds": [theirs], "categoryIds": [987654321],
                   "productIds": ["a"], "daysAvailable": [7], "automatic": "yes",
                   "startDate": "2026-04-01 00:00:00", "endDate": "2026-03-01 00:00:00"},
            "b4": {"title": "t", "type": "xForY", "x": 2, "y": 2, "startDate": "2026-04-01 00:00:00"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let details = body["error"]["details"].as_array().unwrap();
        for expected in [
            "b1: title: required field is missing.",
            "b1: type: required field is missing.",
            "b1: x: required field is missing.",
            "b1: startDate: required field is missing.",
            "b2: notAField: unknown field.",
            "b2: type: \"bogof\" is not one of percentage, xForY, mealDeal.",
            "b2: x: \"1.23456\" has more than 4 decimals.",
            &format!("b3: storeIds: {theirs} is not a store of this merchant."),
            "b3: categoryIds: 987654321 is not a category of this merchant.",
            "b3: productIds: must be an array of non-negative integers.",
            "b3: daysAvailable: must be an array of days 0-6 (0 = Sunday).",
            "b3: automatic: must be true or false.",
            "b3: x: 101 is not a percentage above 0 and at most 100 (10 % off is \"10\").",
            "b3: endDate: must be after startDate.",
            "b4: y: 2 must be more than 0 and less than x (2) for type xForY.",
        ] {
            assert!(details.contains(&json!(expected)), "{expected} in {details:?}");
        }
        assert!(details.iter().any(|d| d.as_str().unwrap().starts_with("b2: startDate: \"tomorrow\" is not a date")), "{details:?}");
        let (_, body) = send(&app, Method::GET, "/promotion", &token, &[("deleted", "true")], None).await;
        assert_eq!(body["promotions"], json!({}));
    }

    async fn another_merchants_promotions_behave_as_if_they_did_not_exist(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let [(_, theirs)] = create(&app, &demo, json!({"p": promo(&day(-1), None)})).await.try_into().unwrap();
        let (_, before) = send(&app, Method::GET, "/promotion", &demo, &[("deleted", "true")], None).await;
        let nowhere = 987_654_321;
        for id in [theirs, nowhere] {
            let (status, body) = send(&app, Method::GET, "/promotion", &other, &[("promotionIds", &id.to_string())], None).await;
            assert_eq!((status, &body["promotions"]), (StatusCode::OK, &json!({})));
            for method in [Method::POST, Method::PUT] {
                let (status, body) = send(&app, method, "/promotion", &other, &[],
                    Some(json!({"promotions": {"x": {"id": id, "title": "Mine"}}}))).await;
                assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
                assert_eq!(body["api"]["message"]["error"]["110:x"]["details"], format!("id: promotion {id} does not exist."));
            }
            let (status, body) = send(&app, Method::DELETE, "/promotion", &other, &[("promotionIds", &id.to_string())], None).await;
            assert_eq!(status, StatusCode::NOT_FOUND);
            assert_eq!(body["api"]["message"]["error"][format!("104:{id}")]["details"], format!("Promotion {id} does not exist."));
        }
        let (_, body) = send(&app, Method::GET, "/promotion", &other, &[("deleted", "true"), ("active", "true")], None).await;
        assert_eq!(body["promotions"], json!({}));
        let (_, after) = send(&app, Method::GET, "/promotion", &demo, &[("deleted", "true")], None).await;
        assert_eq!(before["promotions"], after["promotions"], "nothing of the first merchant changed");
    }

    async fn active_expired_and_imminent_filters_follow_the_dates_at_request_time(app) {
        let token = app.owner_token().await;
        let created = create(&app, &token, json!({
            "running": promo(&day(-1), Some(&day(1))),
            "open": promo(&day(-2), None),
            "ended": promo(&day(-10), Some(&day(-1))),
            "soon": promo(&day(2), Some(&day(9))),
            "later": promo(&day(30), None)})).await;
        let cases: [(&str, &str, &[&str]); 6] = [
            ("active", "true", &["open", "running"]),
            ("active", "false", &["ended", "later", "soon"]),
            ("expired", "true", &["ended"]),
            ("expired", "false", &["later", "open", "running", "soon"]),
            ("imminent", "true", &["soon"]),
            ("imminent", "false", &["ended", "later", "open", "running"]),
        ];
        for (header, value, expected) in cases {
            assert_eq!(listed(&app, &token, &[(header, value)], &created).await, keys(expected), "{header}: {value}");
        }
        let both = [("active", "false"), ("expired", "false")];
        assert_eq!(listed(&app, &token, &both, &created).await, keys(&["later", "soon"]));
        let ids = format!("{},{}", id_of(&created, "ended"), id_of(&created, "soon"));
        assert_eq!(listed(&app, &token, &[("promotionIds", &ids), ("expired", "false")], &created).await, keys(&["soon"]));
        assert_eq!(listed(&app, &token, &[("active", "true"), ("expired", "true")], &created).await, Vec::<String>::new());
    }

    async fn the_store_filter_keeps_promotions_valid_at_any_listed_store(app) {
        let token = app.owner_token().await;
        let high_street = app.tenant("demo").stores["high-street"];
        let body: Value = app.api(Method::POST, "/store", &token)
            .json(&json!({"stores": {"k": {"name": "Kiosk", "addressLine1": "1 St", "city": "Bristol",
                                           "postcode": "BS1", "countryId": "GB"}}}))
            .checked().await.unwrap().json().await.unwrap();
        let kiosk = body["stores"]["k"]["id"].as_i64().unwrap();
        let mut everywhere = promo(&day(-1), None);
        everywhere["storeIds"] = json!([]);
        let mut at_high_street = promo(&day(-1), None);
        at_high_street["storeIds"] = json!([high_street]);
        let mut at_both = promo(&day(-1), None);
        at_both["storeIds"] = json!([kiosk, high_street]);
        let mut at_kiosk = promo(&day(-1), None);
        at_kiosk["storeIds"] = json!([kiosk]);
        let created = create(&app, &token, json!({"everywhere": everywhere, "high": at_high_street,
                                                   "both": at_both, "kiosk": at_kiosk})).await;
        let hs = high_street.to_string();
        let k = kiosk.to_string();
        assert_eq!(listed(&app, &token, &[("storeIds", &hs)], &created).await, keys(&["both", "everywhere", "high"]));
        assert_eq!(listed(&app, &token, &[("storeIds", &k)], &created).await, keys(&["both", "everywhere", "kiosk"]));
        assert_eq!(listed(&app, &token, &[("storeIds", &format!("{hs}, {k}"))], &created).await,
            keys(&["both", "everywhere", "high", "kiosk"]));
        assert_eq!(listed(&app, &token, &[("storeIds", "987654321")], &created).await, keys(&["everywhere"]));
        assert_eq!(listed(&app, &token, &[("storeIds", &k), ("active", "true")], &created).await,
            keys(&["both", "everywhere", "kiosk"]));
        let high = id_of(&created, "high");
        let (status, body) = send(&app, Method::PUT, "/promotion", &token, &[],
            Some(json!({"promotions": {"h": {"id": high, "storeIds": [kiosk]}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(listed(&app, &token, &[("storeIds", &hs)], &created).await, keys(&["both", "everywhere"]));
    }

    async fn bad_promotion_filter_headers_are_400_naming_the_header(app) {
        let token = app.owner_token().await;
        for (header, value, detail) in [
            ("active", "yes", "active: \"yes\" is not true or false."),
            ("expired", "1", "expired: \"1\" is not true or false."),
            ("imminent", "TRUE", "imminent: \"TRUE\" is not true or false."),
            ("storeIds", "9,x", "storeIds: item \"x\" is not a non-negative integer."),
            ("promotionIds", "-1", "promotionIds: item \"-1\" is not a non-negative integer."),
            ("promotionIds", "1,,2", "promotionIds: item 2 is empty."),
        ] {
            let (status, body) = send(&app, Method::GET, "/promotion", &token, &[(header, value)], None).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{header}: {value}");
            assert_eq!(body["error"]["details"][0], detail);
        }
    }
}

backend_tests_with! { |s| s.promotion_imminent_days = 1;
    async fn the_imminent_window_follows_the_setting(app) {
        let token = app.owner_token().await;
        let soon = (Utc::now() + Duration::hours(12)).format("%Y-%m-%d %H:%M:%S").to_string();
        let created = create(&app, &token, json!({"tonight": promo(&soon, None), "in3days": promo(&day(3), None)})).await;
        assert_eq!(listed(&app, &token, &[("imminent", "true")], &created).await, keys(&["tonight"]));
        assert_eq!(listed(&app, &token, &[("imminent", "false")], &created).await, keys(&["in3days"]));
    }
}
