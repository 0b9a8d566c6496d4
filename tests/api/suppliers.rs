//! `/supplier` and `/supplier/store` (api-reference.md Supplier; examples §2.4, §2.5, §3.1-3.3).

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::{send, TestApp};

const SUPPLIERS: &str = "/supplier";
const STORES: &str = "/supplier/store";

/// Creates records under client keys and returns their ids in the order of `keys`.
async fn create(app: &TestApp, token: &str, path: &str, plural: &str, objects: Value) -> Vec<i64> {
    let (status, body) = send(
        app,
        Method::POST,
        path,
        token,
        &[],
        Some(json!({plural: objects})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    objects
        .as_object()
        .unwrap()
        .keys()
        .map(|k| body[plural][k]["id"].as_i64().unwrap())
        .collect()
}

/// The ids of a list answer, sorted.
pub fn ids_of(body: &Value, plural: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = body[plural]
        .as_object()
        .unwrap_or_else(|| panic!("no {plural} in {body}"))
        .keys()
        .map(|k| k.parse().unwrap())
        .collect();
    ids.sort();
    ids
}

fn list(ids: &[i64]) -> String {
    ids.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

backend_tests! {
    async fn suppliers_created_in_a_batch_are_read_back_by_their_id_header(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, SUPPLIERS, &token, &[], Some(json!({"suppliers": {
            "beans": {"name": "Bean Brothers Ltd"},
            "milk": {"name": "Dairy Co", "description": "Milk", "companyNumber": "01234567",
                     "vatNumber": "GB123456789", "note": "Deliveries before 7"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let beans = body["suppliers"]["beans"]["id"].as_i64().unwrap();
        let milk = body["suppliers"]["milk"]["id"].as_i64().unwrap();
        let record = body["suppliers"]["beans"].as_object().unwrap();
        let keys: Vec<&str> = record.keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "name", "description", "companyNumber", "vatNumber", "note", "activeDate", "deleteDate"]);
        assert_eq!(body["suppliers"]["beans"]["description"], Value::Null);
        assert!(body["suppliers"]["beans"]["activeDate"].as_str().unwrap().ends_with('Z'));
        assert_eq!(body["suppliers"]["milk"]["vatNumber"], "GB123456789");
        assert_eq!(body["api"]["message"]["success"]["200:beans"]["details"], format!("Supplier {beans} created."));

        let (status, body) = send(&app, Method::GET, SUPPLIERS, &token, &[("supplierIds", &list(&[beans, milk]))], None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(ids_of(&body, "suppliers"), vec![beans, milk]);
        assert_eq!(body["suppliers"][milk.to_string()]["note"], "Deliveries before 7");
        let (_, body) = send(&app, Method::GET, SUPPLIERS, &token, &[("supplierId", &beans.to_string())], None).await;
        assert_eq!(ids_of(&body, "suppliers"), vec![beans]);
        let (_, body) = send(&app, Method::GET, SUPPLIERS, &token, &[], None).await;
        assert_eq!(ids_of(&body, "suppliers"), vec![beans, milk]);
    }

    async fn a_supplier_is_updated_by_post_with_id_and_by_put(app) {
        let token = app.owner_token().await;
        let [id] = create(&app, &token, SUPPLIERS, "suppliers", json!({"s": {"name": "Bean Brothers Ltd", "note": "n"}}))
            .await.try_into().unwrap();
        let (status, body) = send(&app, Method::POST, SUPPLIERS, &token, &[],
            Some(json!({"suppliers": {"u": {"id": id, "vatNumber": "GB1"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["suppliers"]["u"]["vatNumber"], "GB1");
        assert_eq!(body["suppliers"]["u"]["name"], "Bean Brothers Ltd", "updates are partial");
        assert_eq!(body["api"]["message"]["success"]["201:u"]["details"], format!("Supplier {id} updated."));
        let (status, body) = send(&app, Method::PUT, SUPPLIERS, &token, &[],
            Some(json!({"suppliers": {"p": {"id": id, "name": "Bean Bros", "note": null}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["suppliers"]["p"]["note"], Value::Null, "null clears");
        let (_, body) = send(&app, Method::GET, SUPPLIERS, &token, &[("supplierIds", &id.to_string())], None).await;
        let record = &body["suppliers"][id.to_string()];
        assert_eq!((record["name"].as_str(), record["vatNumber"].as_str()), (Some("Bean Bros"), Some("GB1")));
        let (status, _) = send(&app, Method::PUT, SUPPLIERS, &token, &[], Some(json!({"suppliers": {"n": {"name": "New"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "PUT only updates");
    }

    async fn deleting_a_supplier_hides_it_unless_deleted_is_true(app) {
        let token = app.owner_token().await;
        let ids = create(&app, &token, SUPPLIERS, "suppliers", json!({"a": {"name": "A"}, "b": {"name": "B"}})).await;
        let (status, body) = send(&app, Method::DELETE, SUPPLIERS, &token, &[("supplierIds", &ids[0].to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
        assert_eq!(body["api"]["message"]["success"][format!("205:{}", ids[0])]["details"], format!("Supplier {} deleted.", ids[0]));
        let (_, body) = send(&app, Method::GET, SUPPLIERS, &token, &[], None).await;
        assert_eq!(ids_of(&body, "suppliers"), vec![ids[1]]);
        let (_, body) = send(&app, Method::GET, SUPPLIERS, &token, &[("supplierIds", &list(&ids))], None).await;
        assert_eq!(ids_of(&body, "suppliers"), vec![ids[1]]);
        let (_, body) = send(&app, Method::GET, SUPPLIERS, &token, &[("deleted", "true")], None).await;
        assert_eq!(ids_of(&body, "suppliers"), ids);
        assert!(body["suppliers"][ids[0].to_string()]["deleteDate"].is_string());
        let (status, _) = send(&app, Method::DELETE, SUPPLIERS, &token, &[("supplierId", &ids[1].to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "the singular header works too");
        let (status, _) = send(&app, Method::POST, SUPPLIERS, &token, &[], Some(json!({"suppliers": {"x": {"id": ids[0], "name": "Back"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "a deleted supplier cannot be updated");
    }

    async fn one_good_and_one_bad_supplier_is_201_with_only_the_error_record(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, SUPPLIERS, &token, &[],
            Some(json!({"suppliers": {"good": {"name": "Good"}, "bad": {"name": "Bad", "notAField": 1}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["suppliers"].as_object().unwrap().keys().collect::<Vec<_>>(), ["good"]);
        assert_eq!(body["api"]["message"]["error"].as_object().unwrap().len(), 1);
        let record = &body["api"]["message"]["error"]["110:bad"];
        assert_eq!((record["objectRef"].as_str(), record["statusCode"].as_i64()), (Some("bad"), Some(422)));
        assert_eq!(record["details"], "notAField: unknown field.");
        assert!(body.get("error").is_none());
        let (_, body) = send(&app, Method::GET, SUPPLIERS, &token, &[("deleted", "true")], None).await;
        assert_eq!(body["suppliers"].as_object().unwrap().len(), 1, "nothing of bad was stored");
    }

    async fn every_supplier_bad_is_422_naming_each_problem(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, SUPPLIERS, &token, &[],
            Some(json!({"suppliers": {"b1": {}, "b2": {"name": 3}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let details = body["error"]["details"].as_array().unwrap();
        assert!(details.contains(&json!("b1: name: required field is missing.")), "{details:?}");
        assert!(details.contains(&json!("b2: name: must be a string.")), "{details:?}");
        let (_, body) = send(&app, Method::GET, SUPPLIERS, &token, &[("deleted", "true")], None).await;
        assert_eq!(body["suppliers"], json!({}));
    }

    async fn bad_supplier_filter_headers_are_400(app) {
        let token = app.owner_token().await;
        for (path, header) in [(SUPPLIERS, "supplierIds"), (STORES, "supplierIds"), (STORES, "supplierStoreIds")] {
            let (status, body) = send(&app, Method::GET, path, &token, &[(header, "1,abc")], None).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{path} {header}");
            assert_eq!(body["error"]["details"][0], format!("{header}: item \"abc\" is not a non-negative integer."));
        }
        let (status, _) = send(&app, Method::DELETE, STORES, &token, &[("supplierStoreIds", "-1")], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
    }

    async fn another_merchants_suppliers_behave_as_if_they_did_not_exist(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let [theirs] = create(&app, &demo, SUPPLIERS, "suppliers", json!({"s": {"name": "Demo's"}})).await.try_into().unwrap();
        let (_, before) = send(&app, Method::GET, SUPPLIERS, &demo, &[("deleted", "true")], None).await;
        let nowhere = 987_654_321;
        for id in [theirs, nowhere] {
            let (status, body) = send(&app, Method::GET, SUPPLIERS, &other, &[("supplierIds", &id.to_string())], None).await;
            assert_eq!((status, &body["suppliers"]), (StatusCode::OK, &json!({})));
            for method in [Method::POST, Method::PUT] {
                let (status, body) = send(&app, method, SUPPLIERS, &other, &[],
                    Some(json!({"suppliers": {"x": {"id": id, "name": "Mine"}}}))).await;
                assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
                assert_eq!(body["api"]["message"]["error"]["110:x"]["details"], format!("id: supplier {id} does not exist."));
            }
            let (status, body) = send(&app, Method::DELETE, SUPPLIERS, &other, &[("supplierIds", &id.to_string())], None).await;
            assert_eq!(status, StatusCode::NOT_FOUND);
            assert_eq!(body["api"]["message"]["error"][format!("104:{id}")]["details"], format!("Supplier {id} does not exist."));
        }
        let (_, body) = send(&app, Method::GET, SUPPLIERS, &other, &[("deleted", "true")], None).await;
        assert_eq!(body["suppliers"], json!({}));
        let (_, after) = send(&app, Method::GET, SUPPLIERS, &demo, &[("deleted", "true")], None).await;
        assert_eq!(before["suppliers"], after["suppliers"], "nothing of the first merchant changed");
    }

    async fn supplier_stores_are_read_back_by_parent_and_by_their_own_ids(app) {
        let token = app.owner_token().await;
        let s = create(&app, &token, SUPPLIERS, "suppliers", json!({"a": {"name": "A"}, "b": {"name": "B"}})).await;
        let (status, body) = send(&app, Method::POST, STORES, &token, &[], Some(json!({"supplierStores": {
            "depot": {"supplierId": s[0], "name": "Bristol depot"},
            "branch": {"supplierId": s[0], "name": "Bath branch", "addressLine1": "1 Milsom St", "city": "Bath",
                       "postcode": "BA1 1BZ", "countryId": "gb", "phoneNumber": "+44 1225 000000",
                       "email": "bath@a.test", "lat": "51.3837", "lng": -2.3620},
            "other": {"supplierId": s[1]}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let stores = &body["supplierStores"];
        let depot = stores["depot"]["id"].as_i64().unwrap();
        let branch = stores["branch"]["id"].as_i64().unwrap();
        let other = stores["other"]["id"].as_i64().unwrap();
        let keys: Vec<&str> = stores["depot"].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "supplierId", "name", "addressLine1", "addressLine2", "addressLine3", "city",
            "postcode", "countryId", "phoneNumber", "email", "lat", "lng", "activeDate", "deleteDate"]);
        assert_eq!(stores["depot"]["supplierId"], s[0]);
        assert_eq!(stores["branch"]["countryId"], "GB");
        assert_eq!((stores["branch"]["lat"].as_f64(), stores["branch"]["lng"].as_f64()), (Some(51.3837), Some(-2.362)));
        assert_eq!(body["api"]["message"]["success"]["200:depot"]["details"], format!("Supplier store {depot} created."));

        let (_, body) = send(&app, Method::GET, STORES, &token, &[("supplierIds", &s[0].to_string())], None).await;
        assert_eq!(ids_of(&body, "supplierStores"), vec![depot, branch]);
        assert_eq!(body["supplierStores"][branch.to_string()]["lat"], 51.3837, "read back as a number");
        let (_, body) = send(&app, Method::GET, STORES, &token, &[("supplierIds", &list(&s))], None).await;
        assert_eq!(ids_of(&body, "supplierStores"), vec![depot, branch, other]);
        let (_, body) = send(&app, Method::GET, STORES, &token, &[("supplierStoreIds", &list(&[depot, other]))], None).await;
        assert_eq!(ids_of(&body, "supplierStores"), vec![depot, other]);
        let (_, body) = send(&app, Method::GET, STORES, &token, &[("supplierStoreId", &branch.to_string())], None).await;
        assert_eq!(ids_of(&body, "supplierStores"), vec![branch]);
        let (_, body) = send(&app, Method::GET, STORES, &token,
            &[("supplierStoreIds", &list(&[depot, other])), ("supplierIds", &s[1].to_string())], None).await;
        assert_eq!(ids_of(&body, "supplierStores"), vec![other], "headers combine with AND");
        let (_, body) = send(&app, Method::GET, STORES, &token, &[], None).await;
        assert_eq!(ids_of(&body, "supplierStores"), vec![depot, branch, other]);
        let (_, body) = send(&app, Method::GET, SUPPLIERS, &token, &[], None).await;
        assert_eq!(ids_of(&body, "suppliers"), s, "/supplier still lists suppliers only");
    }

    async fn a_supplier_store_is_updated_by_post_with_id_and_by_put(app) {
        let token = app.owner_token().await;
        let s = create(&app, &token, SUPPLIERS, "suppliers", json!({"a": {"name": "A"}, "b": {"name": "B"}})).await;
        let [id] = create(&app, &token, STORES, "supplierStores",
            json!({"d": {"supplierId": s[0], "name": "Depot", "city": "Bristol", "lat": 51.45}})).await.try_into().unwrap();
        let (status, body) = send(&app, Method::POST, STORES, &token, &[],
            Some(json!({"supplierStores": {"u": {"id": id, "postcode": "BS1 6QF", "lng": "-2.58"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let record = &body["supplierStores"]["u"];
        assert_eq!((record["city"].as_str(), record["postcode"].as_str()), (Some("Bristol"), Some("BS1 6QF")));
        assert_eq!((record["lat"].as_f64(), record["lng"].as_f64()), (Some(51.45), Some(-2.58)));
        let (status, body) = send(&app, Method::PUT, STORES, &token, &[],
            Some(json!({"supplierStores": {"p": {"id": id, "supplierId": s[1], "lat": null}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["api"]["message"]["success"]["201:p"]["details"], format!("Supplier store {id} updated."));
        let (_, body) = send(&app, Method::GET, STORES, &token, &[("supplierIds", &s[1].to_string())], None).await;
        let record = &body["supplierStores"][id.to_string()];
        assert_eq!((record["supplierId"].as_i64(), record["lat"].is_null(), record["name"].as_str()), (Some(s[1]), true, Some("Depot")));
        let (status, body) = send(&app, Method::PUT, STORES, &token, &[],
            Some(json!({"supplierStores": {"p": {"id": id, "supplierId": null}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["api"]["message"]["error"]["110:p"]["details"], "supplierId: required field is missing.");
    }

    async fn deleting_a_supplier_store_hides_it_unless_deleted_is_true(app) {
        let token = app.owner_token().await;
        let [supplier] = create(&app, &token, SUPPLIERS, "suppliers", json!({"a": {"name": "A"}})).await.try_into().unwrap();
        let ids = create(&app, &token, STORES, "supplierStores",
            json!({"x": {"supplierId": supplier}, "y": {"supplierId": supplier}, "z": {"supplierId": supplier}})).await;
        let (status, body) = send(&app, Method::DELETE, STORES, &token, &[("supplierStoreIds", &list(&ids[..2]))], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
        assert_eq!(body["api"]["message"]["success"][format!("205:{}", ids[1])]["details"], format!("Supplier store {} deleted.", ids[1]));
        let (_, body) = send(&app, Method::GET, STORES, &token, &[("supplierIds", &supplier.to_string())], None).await;
        assert_eq!(ids_of(&body, "supplierStores"), vec![ids[2]]);
        let (_, body) = send(&app, Method::GET, STORES, &token, &[("supplierIds", &supplier.to_string()), ("deleted", "true")], None).await;
        assert_eq!(ids_of(&body, "supplierStores"), ids);
        assert!(body["supplierStores"][ids[0].to_string()]["deleteDate"].is_string());
        let (status, _) = send(&app, Method::DELETE, STORES, &token, &[("supplierStoreId", &ids[2].to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT);
        let (status, body) = send(&app, Method::DELETE, STORES, &token, &[], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(body["error"]["details"][0].as_str().unwrap().starts_with("supplierStoreIds:"));
        let (_, body) = send(&app, Method::GET, SUPPLIERS, &token, &[], None).await;
        assert_eq!(ids_of(&body, "suppliers"), vec![supplier], "the supplier stays");
    }

    async fn one_good_and_one_bad_supplier_store_is_201_with_only_the_error_record(app) {
        let token = app.owner_token().await;
        let [supplier] = create(&app, &token, SUPPLIERS, "suppliers", json!({"a": {"name": "A"}})).await.try_into().unwrap();
        let (status, body) = send(&app, Method::POST, STORES, &token, &[], Some(json!({"supplierStores": {
            "good": {"supplierId": supplier}, "bad": {"supplierId": supplier, "lat": 91}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["supplierStores"].as_object().unwrap().keys().collect::<Vec<_>>(), ["good"]);
        assert!(body["api"]["message"]["success"].get("200:bad").is_none());
        assert_eq!(body["api"]["message"]["error"]["110:bad"]["details"], "lat: must be between -90 and 90.");
        assert!(body.get("error").is_none());
    }

    async fn every_supplier_store_bad_is_422_naming_each_problem(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, STORES, &token, &[], Some(json!({"supplierStores": {
            "b1": {"name": "No parent"},
            "b2": {"supplierId": 987_654_321, "countryId": "G1", "email": "nobody", "lng": "east", "notAField": 1}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let details = body["error"]["details"].as_array().unwrap();
        for expected in [
            "b1: supplierId: required field is missing.",
            "b2: notAField: unknown field.",
            "b2: supplierId: 987654321 is not a supplier of this merchant.",
            "b2: countryId: \"G1\" is not an ISO 3166-1 alpha-2 code.",
            "b2: email: is not an email address.",
            "b2: lng: must be a number.",
        ] {
            assert!(details.contains(&json!(expected)), "{expected} in {details:?}");
        }
        let (_, body) = send(&app, Method::GET, STORES, &token, &[("deleted", "true")], None).await;
        assert_eq!(body["supplierStores"], json!({}));
    }

    async fn a_supplier_store_cannot_name_another_merchants_or_a_deleted_supplier(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let [theirs] = create(&app, &other, SUPPLIERS, "suppliers", json!({"t": {"name": "Theirs"}})).await.try_into().unwrap();
        let (status, body) = send(&app, Method::POST, STORES, &demo, &[],
            Some(json!({"supplierStores": {"s": {"supplierId": theirs}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["api"]["message"]["error"]["110:s"]["details"], format!("supplierId: {theirs} is not a supplier of this merchant."));

        let [gone, mine] = create(&app, &demo, SUPPLIERS, "suppliers", json!({"g": {"name": "Gone"}, "m": {"name": "Mine"}})).await.try_into().unwrap();
        let [store] = create(&app, &demo, STORES, "supplierStores", json!({"s": {"supplierId": mine}})).await.try_into().unwrap();
        send(&app, Method::DELETE, SUPPLIERS, &demo, &[("supplierIds", &gone.to_string())], None).await;
        for body in [json!({"supplierStores": {"s": {"supplierId": gone}}}),
                     json!({"supplierStores": {"s": {"id": store, "supplierId": theirs}}})] {
            let (status, _) = send(&app, Method::POST, STORES, &demo, &[], Some(body)).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        }
        let (_, body) = send(&app, Method::GET, STORES, &demo, &[("supplierIds", &theirs.to_string())], None).await;
        assert_eq!(body["supplierStores"], json!({}));
    }

    async fn another_merchants_supplier_stores_behave_as_if_they_did_not_exist(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let [supplier] = create(&app, &demo, SUPPLIERS, "suppliers", json!({"s": {"name": "Demo's"}})).await.try_into().unwrap();
        let [theirs] = create(&app, &demo, STORES, "supplierStores", json!({"d": {"supplierId": supplier, "name": "Depot"}}))
            .await.try_into().unwrap();
        let [own_supplier] = create(&app, &other, SUPPLIERS, "suppliers", json!({"s": {"name": "Own"}})).await.try_into().unwrap();
        let (_, before) = send(&app, Method::GET, STORES, &demo, &[("deleted", "true")], None).await;
        let nowhere = 987_654_321;
        for id in [theirs, nowhere] {
            for header in ["supplierStoreIds", "supplierIds"] {
                let value = if header == "supplierIds" && id == theirs { supplier } else { id };
                let (status, body) = send(&app, Method::GET, STORES, &other, &[(header, &value.to_string())], None).await;
                assert_eq!((status, &body["supplierStores"]), (StatusCode::OK, &json!({})));
            }
            for method in [Method::POST, Method::PUT] {
                let (status, body) = send(&app, method, STORES, &other, &[],
                    Some(json!({"supplierStores": {"x": {"id": id, "supplierId": own_supplier}}}))).await;
                assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
                assert_eq!(body["api"]["message"]["error"]["110:x"]["details"], format!("id: supplier store {id} does not exist."));
            }
            let (status, body) = send(&app, Method::DELETE, STORES, &other, &[("supplierStoreIds", &id.to_string())], None).await;
            assert_eq!(status, StatusCode::NOT_FOUND);
            assert_eq!(body["api"]["message"]["error"][format!("104:{id}")]["details"], format!("Supplier store {id} does not exist."));
        }
        let (_, after) = send(&app, Method::GET, STORES, &demo, &[("deleted", "true")], None).await;
        assert_eq!(before["supplierStores"], after["supplierStores"], "nothing of the first merchant changed");
        let (_, body) = send(&app, Method::GET, STORES, &other, &[("deleted", "true")], None).await;
        assert_eq!(body["supplierStores"], json!({}));
    }
}
