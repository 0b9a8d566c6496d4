//! `/employee` (api-reference.md Employee; examples §2.6, §3.1, §3.2; DESIGN §5).

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::contract::Checked;
use crate::helpers::{send, TestApp};

fn sam() -> Value {
    json!({"firstName": "Sam", "lastName": "Patel", "email": "sam@demo.test", "roleId": 3})
}

async fn create_sam(app: &TestApp, token: &str) -> i64 {
    let (status, body) = send(
        app,
        Method::POST,
        "/employee",
        token,
        &[],
        Some(json!({"employees": {"sam": sam()}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["employees"]["sam"]["id"].as_i64().unwrap()
}

backend_tests! {
    async fn employees_follow_the_worked_example(app) {
        let token = app.owner_token().await;
        let owner = app.tenant("demo").users["owner@demo.test"];
        let (status, body) = send(&app, Method::POST, "/employee", &token, &[],
            Some(json!({"employees": {"sam": sam()}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let record = &body["employees"]["sam"];
        let id = record["id"].as_i64().unwrap();
        assert_eq!(record["email"], "sam@demo.test");
        assert_eq!(record["roleId"], 3);
        assert_eq!(record["stores"], json!({}));
        assert_eq!(record["exitDate"], Value::Null);
        assert!(record["activeDate"].is_string(), "{record}");
        assert_eq!(body["api"]["message"]["success"]["200:sam"]["details"], format!("Employee {id} created."));

        let ids = format!("{owner},{id}");
        let (status, body) = send(&app, Method::GET, "/employee", &token, &[("employeeIds", &ids)], None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["employees"][owner.to_string()]["email"], "owner@demo.test");
        assert_eq!(body["employees"][owner.to_string()]["firstName"], Value::Null);
        assert_eq!(body["employees"][owner.to_string()]["roleId"], 1);
        assert_eq!(body["employees"][id.to_string()]["lastName"], "Patel");
        let (_, body) = send(&app, Method::GET, "/employee", &token, &[("employeeId", &id.to_string())], None).await;
        assert_eq!(body["employees"].as_object().unwrap().len(), 1, "{body}");
    }

    async fn employees_are_updated_by_post_with_id_and_by_put(app) {
        let token = app.owner_token().await;
        let id = create_sam(&app, &token).await;
        let (status, body) = send(&app, Method::POST, "/employee", &token, &[],
            Some(json!({"employees": {"rename": {"id": id, "lastName": "Patel-Jones"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["employees"]["rename"]["firstName"], "Sam");
        assert_eq!(body["employees"]["rename"]["lastName"], "Patel-Jones");
        assert_eq!(body["api"]["message"]["success"]["201:rename"]["details"], format!("Employee {id} updated."));

        let store = app.tenant("demo").stores["high-street"];
        let (status, body) = send(&app, Method::PUT, "/employee", &token, &[],
            Some(json!({"employees": {"promote": {"id": id, "roleId": 2, "email": "Sam.Patel@Demo.TEST",
                "joinedDate": "2026-03-28 09:00:00", "stores": {store.to_string(): {"roleId": 5}}}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (_, body) = send(&app, Method::GET, "/employee", &token, &[("employeeIds", &id.to_string())], None).await;
        let record = &body["employees"][id.to_string()];
        assert_eq!(record["roleId"], 2);
        assert_eq!(record["email"], "sam.patel@demo.test");
        assert_eq!(record["lastName"], "Patel-Jones");
        assert_eq!(record["joinedDate"], "2026-03-28T09:00:00.000Z");
        assert_eq!(record["stores"], json!({store.to_string(): {"id": store, "roleId": 5}}));

        let (status, body) = send(&app, Method::PUT, "/employee", &token, &[],
            Some(json!({"employees": {"new": sam()}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    }

    async fn a_manifest_user_without_names_can_be_updated_without_sending_names(app) {
        let token = app.owner_token().await;
        let owner = app.tenant("demo").users["owner@demo.test"];
        let (status, body) = send(&app, Method::PUT, "/employee", &token, &[],
            Some(json!({"employees": {"me": {"id": owner, "joinedDate": "2026-01-05 10:00:00",
                "firstName": null, "lastName": null}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["employees"]["me"]["firstName"], Value::Null);
        let (status, body) = send(&app, Method::POST, "/employee", &token, &[],
            Some(json!({"employees": {"me": {"id": owner, "firstName": "Olivia"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["employees"]["me"]["firstName"], "Olivia");
        assert_eq!(body["employees"]["me"]["lastName"], Value::Null);
        let (status, body) = send(&app, Method::POST, "/employee", &token, &[],
            Some(json!({"employees": {"me": {"id": owner, "firstName": null}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["api"]["message"]["error"]["110:me"]["details"], "firstName: cannot be cleared.");
    }

    async fn deleting_an_employee_hides_them_and_records_their_exit(app) {
        let token = app.owner_token().await;
        let id = create_sam(&app, &token).await;
        let (status, body) = send(&app, Method::DELETE, "/employee", &token, &[("employeeIds", &id.to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
        assert_eq!(body["api"]["message"]["success"][format!("205:{id}")]["details"], format!("Employee {id} deleted."));
        let (_, body) = send(&app, Method::GET, "/employee", &token, &[], None).await;
        assert!(body["employees"].get(id.to_string()).is_none(), "{body}");
        let (_, body) = send(&app, Method::GET, "/employee", &token, &[("employeeIds", &id.to_string()), ("deleted", "true")], None).await;
        let record = &body["employees"][id.to_string()];
        assert!(record["deleteDate"].is_string(), "{record}");
        assert_eq!(record["exitDate"], record["deleteDate"]);
        let (status, _) = send(&app, Method::DELETE, "/employee", &token, &[("employeeId", &id.to_string())], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = send(&app, Method::POST, "/employee", &token, &[],
            Some(json!({"employees": {"late": {"id": id, "firstName": "Ghost"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    }

    async fn one_bad_employee_fails_alone_and_all_bad_is_a_422(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, "/employee", &token, &[],
            Some(json!({"employees": {"good": sam(), "bad": {"firstName": "No", "roleId": 9}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert!(body["employees"]["good"]["id"].is_i64());
        assert!(body["employees"].get("bad").is_none());
        let error = &body["api"]["message"]["error"]["110:bad"];
        assert_eq!(error["objectRef"], "bad");
        let details = error["details"].as_str().unwrap();
        for needle in ["lastName: required field is missing.", "email: required field is missing.", "roleId: must be a role id"] {
            assert!(details.contains(needle), "{needle} in {details}");
        }
        assert!(body.get("error").is_none());

        let other_store = app.tenant("second").stores["market"];
        let (status, body) = send(&app, Method::POST, "/employee", &token, &[],
            Some(json!({"employees": {"b1": {}, "b2": {"firstName": "A", "lastName": "B", "email": "not-an-email",
                "roleId": 3, "stores": {other_store.to_string(): {"roleId": 3}}, "notAField": 1}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let details: Vec<&str> = body["error"]["details"].as_array().unwrap().iter().map(|d| d.as_str().unwrap()).collect();
        assert!(details.contains(&"b1: firstName: required field is missing."), "{details:?}");
        assert!(details.contains(&"b2: notAField: unknown field."), "{details:?}");
        assert!(details.contains(&format!("b2: stores: {other_store}: {other_store} is not a store of this merchant.").as_str()), "{details:?}");
        assert!(details.iter().any(|d| d.starts_with("b2: email: \"not-an-email\"")), "{details:?}");
    }

    async fn an_email_already_used_in_the_merchant_is_a_conflict(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, "/employee", &token, &[],
            Some(json!({"employees": {"dup": {"firstName": "O", "lastName": "W", "email": "OWNER@demo.test", "roleId": 4}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let error = &body["api"]["message"]["error"]["113:dup"];
        assert_eq!(error["code"], "conflict", "{body}");
        assert!(error["details"].as_str().unwrap().starts_with("email: owner@demo.test is already used by employee"), "{error}");

        let mut twin = sam();
        twin["email"] = json!("Sam@Demo.Test");
        let (status, body) = send(&app, Method::POST, "/employee", &token, &[],
            Some(json!({"employees": {"a": sam(), "b": twin}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert!(body["employees"]["a"]["id"].is_i64());
        assert_eq!(body["api"]["message"]["error"]["113:b"]["statusCode"], 422, "{body}");

        // The same email in another merchant is someone else.
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let (status, body) = send(&app, Method::POST, "/employee", &other, &[], Some(json!({"employees": {"sam": sam()}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }

    async fn another_merchants_employees_are_invisible_and_untouchable(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let id = create_sam(&app, &demo).await;
        let (status, body) = send(&app, Method::GET, "/employee", &other, &[("employeeIds", &id.to_string()), ("deleted", "true")], None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["employees"], json!({}));
        let (_, body) = send(&app, Method::GET, "/employee", &other, &[], None).await;
        let emails: Vec<&str> = body["employees"].as_object().unwrap().values().map(|e| e["email"].as_str().unwrap()).collect();
        assert_eq!(emails, vec!["owner@second.test", "guest@second.test"]);
        let (status, body) = send(&app, Method::POST, "/employee", &other, &[],
            Some(json!({"employees": {"x": {"id": id, "roleId": 4}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["api"]["message"]["error"]["110:x"]["details"], format!("id: employee {id} does not exist."));
        let (status, _) = send(&app, Method::PUT, "/employee", &other, &[],
            Some(json!({"employees": {"x": {"id": id, "lastName": "Stolen"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        let (status, _) = send(&app, Method::DELETE, "/employee", &other, &[("employeeIds", &id.to_string())], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, body) = send(&app, Method::GET, "/employee", &demo, &[("employeeIds", &id.to_string())], None).await;
        assert_eq!(body["employees"][id.to_string()]["lastName"], "Patel");
        assert_eq!(body["employees"][id.to_string()]["roleId"], 3);
    }

    async fn deleting_an_employee_makes_their_token_a_401(app) {
        let owner = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let guest = app.token_for("second", "guest@second.test", "read", 3600).await;
        let guest_id = app.tenant("second").users["guest@second.test"];
        let (status, _) = send(&app, Method::GET, "/employee", &guest, &[], None).await;
        assert_eq!(status, StatusCode::OK);
        let (status, body) = send(&app, Method::DELETE, "/employee", &owner, &[("employeeId", &guest_id.to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
        let res = app.api(Method::GET, "/employee", &guest).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["api"]["message"]["error"]["100"]["code"], "tokenInvalid", "{body}");
        let (revoked,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM oauth_families WHERE employee_id = $1 AND revoked_at IS NOT NULL")
            .bind(guest_id).fetch_one(&app.sql).await.unwrap();
        assert_eq!(revoked, 1);
        let (status, _) = send(&app, Method::GET, "/employee", &owner, &[], None).await;
        assert_eq!(status, StatusCode::OK);
    }

    async fn an_employee_cannot_raise_their_own_role(app) {
        let owner = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let guest_id = app.tenant("second").users["guest@second.test"];
        let store = app.tenant("second").stores["market"];
        let (status, body) = send(&app, Method::POST, "/employee", &owner, &[],
            Some(json!({"employees": {"g": {"id": guest_id, "roleId": 3}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        // Now an assistant, the former guest may write, but not make themself more.
        let me = app.token_for("second", "guest@second.test", "read write", 3600).await;
        let (status, body) = send(&app, Method::POST, "/employee", &me, &[],
            Some(json!({"employees": {"up": {"id": guest_id, "roleId": 1}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["api"]["message"]["error"]["110:up"]["details"], "roleId: you cannot raise your own role.");
        let (status, body) = send(&app, Method::PUT, "/employee", &me, &[],
            Some(json!({"employees": {"up": {"id": guest_id, "stores": {store.to_string(): {"roleId": 2}}}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["api"]["message"]["error"]["110:up"]["details"],
            format!("stores: {store}: you cannot raise your own role at this store."));
        let (status, body) = send(&app, Method::POST, "/employee", &me, &[],
            Some(json!({"employees": {"up": {"id": guest_id, "roleId": 3, "bySelf": false}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["api"]["message"]["error"]["110:up"]["details"], "bySelf: unknown field.");
        let (status, body) = send(&app, Method::POST, "/employee", &me, &[],
            Some(json!({"employees": {"name": {"id": guest_id, "firstName": "Gus", "roleId": 3}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (_, body) = send(&app, Method::GET, "/employee", &owner, &[("employeeIds", &guest_id.to_string())], None).await;
        assert_eq!(body["employees"][guest_id.to_string()]["roleId"], 3);
        // Lowering oneself is allowed, and the token follows the new role at once.
        let (status, body) = send(&app, Method::POST, "/employee", &me, &[],
            Some(json!({"employees": {"down": {"id": guest_id, "roleId": 4}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, _) = send(&app, Method::POST, "/employee", &me, &[],
            Some(json!({"employees": {"up": {"id": guest_id, "firstName": "Gus"}}}))).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
}
