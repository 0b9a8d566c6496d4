//! `/application` (api-reference.md Application; examples §2.7; DESIGN §4, §5): the client
//! secret is shown once, stored only as a hash, works at the token endpoint, and regenerating or
//! deleting kills what the old one bought.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::{dump_database, send, send_full, TestApp};
use crate::oauth_support::{approved_code, pkce_pair, token_json, user_status, Authorize, OWNER};

const REDIRECT: &str = "https://till.example.com/oauth/callback";

fn till() -> Value {
    json!({"name": "Till Sync", "redirectUris": [REDIRECT]})
}

/// A new application of the demo merchant: (id, client id, secret).
async fn register(app: &TestApp, token: &str) -> (i64, String, String) {
    let (status, body) = send(
        app,
        Method::POST,
        "/application",
        token,
        &[],
        Some(json!({"applications": {"till": till()}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let record = &body["applications"]["till"];
    (
        record["id"].as_i64().unwrap(),
        record["clientId"].as_str().unwrap().to_owned(),
        record["clientSecret"].as_str().unwrap().to_owned(),
    )
}

/// The demo owner authorizes the application and exchanges the code with `secret`.
async fn login(app: &TestApp, client_id: &str, secret: &str) -> (String, String) {
    let (verifier, challenge) = pkce_pair();
    let request = Authorize {
        client_id: client_id.into(),
        redirect_uri: REDIRECT.into(),
        scope: "read write".into(),
        state: Some("s1".into()),
        code_challenge: Some(challenge),
        email: OWNER.0.into(),
        password: OWNER.1.into(),
    };
    let code = approved_code(app, &request).await;
    let (status, body, _) = token_json(
        app,
        json!({"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
               "code_verifier": verifier, "client_id": client_id, "client_secret": secret}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    (
        body["access_token"].as_str().unwrap().to_owned(),
        body["refresh_token"].as_str().unwrap().to_owned(),
    )
}

async fn refresh(app: &TestApp, client_id: &str, secret: &str, token: &str) -> (StatusCode, Value) {
    let (status, body, _) = token_json(
        app,
        json!({"grant_type": "refresh_token", "refresh_token": token,
               "client_id": client_id, "client_secret": secret}),
    )
    .await;
    (status, body)
}

backend_tests! {
    async fn a_new_application_shows_its_secret_once_and_stores_only_its_hash(app) {
        let token = app.owner_token().await;
        let (status, body, headers) = send_full(&app, Method::POST, "/application", &token, &[],
            Some(json!({"applications": {"till": till()}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(headers["cache-control"], "no-store");
        let record = &body["applications"]["till"];
        let id = record["id"].as_i64().unwrap();
        let client_id = record["clientId"].as_str().unwrap();
        assert!(client_id.len() == 20 && client_id.starts_with("app-")
            && client_id[4..].bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()), "{client_id}");
        let secret = record["clientSecret"].as_str().unwrap().to_owned();
        assert_eq!(secret.len(), 43, "256 bits in unpadded base64url");
        assert!(secret.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_eq!(record["redirectUris"], json!([REDIRECT]));
        assert_eq!(record["description"], Value::Null);
        assert_eq!(record["logo"], Value::Null);
        assert_eq!(body["api"]["message"]["success"]["200:till"]["details"],
            format!("Application {id} created. Keep the client secret now: it is never shown again."));

        let (status, body) = send(&app, Method::GET, "/application", &token, &[("applicationIds", &id.to_string())], None).await;
        assert_eq!(status, StatusCode::OK);
        let read = &body["applications"][id.to_string()];
        assert_eq!(read["clientId"], client_id);
        assert!(read.get("clientSecret").is_none(), "{read}");
        assert!(!body.to_string().contains(&secret));
        let (_, body) = send(&app, Method::GET, "/application", &token, &[], None).await;
        assert!(!body.to_string().contains(&secret));
        assert_eq!(body["applications"].as_object().unwrap().len(), 2, "the manifest's and the new one");

        let rows = dump_database(&app.sql).await.join("\n");
        assert!(!rows.contains(&secret), "the secret is stored in clear");
        assert!(rows.contains(&merchantd::crypto::sha256_hex(&secret)));
    }

    async fn applications_are_updated_by_post_with_id_and_by_put(app) {
        let token = app.owner_token().await;
        let (id, client_id, _) = register(&app, &token).await;
        let (status, body, headers) = send_full(&app, Method::POST, "/application", &token, &[],
            Some(json!({"applications": {"e": {"id": id, "description": "Syncs the till", "clientId": "mine"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert!(headers.get("cache-control").is_none(), "no secret, nothing to keep from caches");
        let record = &body["applications"]["e"];
        assert_eq!(record["description"], "Syncs the till");
        assert_eq!(record["clientId"], client_id.as_str());
        assert!(record.get("clientSecret").is_none(), "{record}");
        assert_eq!(body["api"]["message"]["success"]["201:e"]["details"], format!("Application {id} updated."));

        let (status, body) = send(&app, Method::PUT, "/application", &token, &[],
            Some(json!({"applications": {"p": {"id": id, "name": "Till Sync 2",
                "redirectUris": [REDIRECT, "com.example.pos:/oauth", "http://127.0.0.1:9000/cb"], "logo": "abc.png"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (_, body) = send(&app, Method::GET, "/application", &token, &[("applicationId", &id.to_string())], None).await;
        let record = &body["applications"][id.to_string()];
        assert_eq!(record["name"], "Till Sync 2");
        assert_eq!(record["description"], "Syncs the till");
        assert_eq!(record["logo"], "abc.png");
        assert_eq!(record["redirectUris"], json!([REDIRECT, "com.example.pos:/oauth", "http://127.0.0.1:9000/cb"]));

        let (status, _) = send(&app, Method::PUT, "/application", &token, &[],
            Some(json!({"applications": {"new": till()}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    }

    async fn deleting_an_application_hides_it_and_revokes_its_tokens(app) {
        let token = app.owner_token().await;
        let (id, client_id, secret) = register(&app, &token).await;
        let (access, refresh_token) = login(&app, &client_id, &secret).await;
        assert_eq!(user_status(&app, &access).await, StatusCode::OK);
        let (status, body) = send(&app, Method::DELETE, "/application", &token, &[("applicationIds", &id.to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
        assert_eq!(body["api"]["message"]["success"][format!("205:{id}")]["details"], format!("Application {id} deleted."));
        let (_, body) = send(&app, Method::GET, "/application", &token, &[], None).await;
        assert!(body["applications"].get(id.to_string()).is_none());
        let (_, body) = send(&app, Method::GET, "/application", &token, &[("applicationIds", &id.to_string()), ("deleted", "true")], None).await;
        assert!(body["applications"][id.to_string()]["deleteDate"].is_string(), "{body}");
        assert_eq!(user_status(&app, &access).await, StatusCode::UNAUTHORIZED);
        let (status, body) = refresh(&app, &client_id, &secret, &refresh_token).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(body["error"], "invalid_client");
        let (revoked,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM oauth_families WHERE application_id = $1 AND revoked_at IS NULL")
            .bind(id).fetch_one(&app.sql).await.unwrap();
        assert_eq!(revoked, 0);
        // The owner's own token (another application) still works.
        let (status, _) = send(&app, Method::GET, "/application", &token, &[], None).await;
        assert_eq!(status, StatusCode::OK);
    }

    async fn one_bad_application_fails_alone_and_all_bad_is_a_422(app) {
        let token = app.owner_token().await;
        let (status, body, headers) = send_full(&app, Method::POST, "/application", &token, &[],
            Some(json!({"applications": {"good": till(), "bad": {"name": "Evil", "redirectUris": ["http://evil.example/cb"]}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(headers["cache-control"], "no-store");
        assert!(body["applications"]["good"]["clientSecret"].is_string());
        assert!(body["applications"].get("bad").is_none());
        let details = body["api"]["message"]["error"]["110:bad"]["details"].as_str().unwrap();
        assert!(details.starts_with("redirectUris: \"http://evil.example/cb\" uses http on a non-loopback host"), "{details}");

        let (status, body) = send(&app, Method::POST, "/application", &token, &[],
            Some(json!({"applications": {"b1": {"redirectUris": [REDIRECT]}, "b2": {"name": "x", "redirectUris": "nope"},
                "b3": {"name": "x", "redirectUris": [REDIRECT], "secretHash": "0".repeat(64)},
                "b4": {"id": 1, "regenerateSecret": true}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(!body.to_string().contains("clientSecret\":\""), "no secret for failed objects: {body}");
        let details: Vec<&str> = body["error"]["details"].as_array().unwrap().iter().map(|d| d.as_str().unwrap()).collect();
        assert!(details.contains(&"b1: name: required field is missing."), "{details:?}");
        assert!(details.contains(&"b2: redirectUris: must be an array of absolute URLs."), "{details:?}");
        assert!(details.contains(&"b3: secretHash: unknown field."), "{details:?}");
        assert!(details.contains(&"b4: id: application 1 does not exist."), "{details:?}");
    }

    async fn another_merchants_applications_are_invisible_and_untouchable(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let (id, _, _) = register(&app, &demo).await;
        let (status, body) = send(&app, Method::GET, "/application", &other, &[("applicationIds", &id.to_string()), ("deleted", "true")], None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["applications"], json!({}));
        let (_, body) = send(&app, Method::GET, "/application", &other, &[], None).await;
        let names: Vec<&str> = body["applications"].as_object().unwrap().values().map(|a| a["name"].as_str().unwrap()).collect();
        assert_eq!(names, vec!["Second Till"]);
        let (status, body) = send(&app, Method::POST, "/application", &other, &[],
            Some(json!({"applications": {"x": {"id": id, "regenerateSecret": true}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body["applications"].is_null() && !body.to_string().contains("clientSecret\":\""), "{body}");
        let (status, _) = send(&app, Method::PUT, "/application", &other, &[],
            Some(json!({"applications": {"x": {"id": id, "name": "Stolen"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        let (status, _) = send(&app, Method::DELETE, "/application", &other, &[("applicationIds", &id.to_string())], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, body) = send(&app, Method::GET, "/application", &demo, &[("applicationIds", &id.to_string())], None).await;
        assert_eq!(body["applications"][id.to_string()]["name"], "Till Sync");
    }

    async fn the_secret_works_at_the_token_endpoint_and_regenerating_it_kills_the_old_one(app) {
        let token = app.owner_token().await;
        let (id, client_id, secret) = register(&app, &token).await;
        let (access, refresh_token) = login(&app, &client_id, &secret).await;
        assert_eq!(user_status(&app, &access).await, StatusCode::OK);
        let (status, body) = refresh(&app, &client_id, &secret, &refresh_token).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let access = body["access_token"].as_str().unwrap().to_owned();
        let refresh_token = body["refresh_token"].as_str().unwrap().to_owned();

        let (status, body, headers) = send_full(&app, Method::POST, "/application", &token, &[],
            Some(json!({"applications": {"regen": {"id": id, "regenerateSecret": true}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(headers["cache-control"], "no-store");
        let record = &body["applications"]["regen"];
        let new_secret = record["clientSecret"].as_str().unwrap().to_owned();
        assert_ne!(new_secret, secret);
        assert_eq!(record["clientId"], client_id.as_str());
        assert_eq!(record["name"], "Till Sync");
        assert_eq!(body["api"]["message"]["success"]["201:regen"]["details"], format!("Secret of {id} replaced."));
        let (_, body) = send(&app, Method::GET, "/application", &token, &[("applicationIds", &id.to_string())], None).await;
        assert!(body["applications"][id.to_string()].get("clientSecret").is_none());
        assert!(!body.to_string().contains(&new_secret));

        let (status, body) = refresh(&app, &client_id, &secret, &refresh_token).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(body["error"], "invalid_client");
        let (status, body) = refresh(&app, &client_id, &new_secret, &refresh_token).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"], "invalid_grant");
        assert_eq!(user_status(&app, &access).await, StatusCode::UNAUTHORIZED);

        let (access, _) = login(&app, &client_id, &new_secret).await;
        assert_eq!(user_status(&app, &access).await, StatusCode::OK);
        let rows = dump_database(&app.sql).await.join("\n");
        assert!(!rows.contains(&secret) && !rows.contains(&new_secret));
    }

    async fn only_admin_tokens_may_write_applications(app) {
        let write = app.token_for("demo", "owner@demo.test", "read write", 3600).await;
        let (status, body, headers) = send_full(&app, Method::POST, "/application", &write, &[],
            Some(json!({"applications": {"till": till()}}))).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert!(headers["www-authenticate"].to_str().unwrap().contains("insufficient_scope"));
        assert_eq!(body["api"]["message"]["error"]["103"]["code"], "insufficientScope", "{body}");
        let (status, _) = send(&app, Method::PUT, "/application", &write, &[],
            Some(json!({"applications": {"x": {"id": 1, "name": "x"}}}))).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, body) = send(&app, Method::GET, "/application", &write, &[], None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["applications"].as_object().unwrap().len(), 1);
    }
}
