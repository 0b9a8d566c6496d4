//! The public Shopwave client libraries (issue 13; docs/decisions/0035-legacy-shopwave-clients.md).
//! Requests are built exactly as they build them: the Node client
//! (`shopwave-oauth-client`, lib/HttpRequest.js) sends `Authorization: OAuth <token>`,
//! `accept: application/json`, `x-accept-version` from its config (0.6 by default, 0.5 for
//! logs), filters as headers, and every other method's body as a form field `postBody` holding
//! JSON (a DELETE sends `postBody={}`); uploads are a PUT of a multipart form with the fields
//! `postBody` and `file`. Its sign-in goes to `/login?access_type=online&redirect_uri=…&
//! response_type=code&client_id=…&scope=…`, and its token requests are forms that repeat
//! `scope` and `redirect_uri`. The PHP and Python clients ask for the thirteen old scope names,
//! comma-separated, and send them again when they refresh; Python names the report's range
//! `from` and `to`.
//!
//! The demo merchant turns `legacy_clients` on (tenants/demo.toml; the other test files turn it
//! off, see `helpers::tenants_dir`); the second merchant does not, and keeps the strict rules.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests_with;
use crate::contract::Checked;
use crate::helpers::TestApp;
use crate::oauth_support::{
    approved_code, user_status, Authorize, DEMO_CLIENT, DEMO_REDIRECT, DEMO_SECRET, GUEST,
};
use crate::uploads::PNG;

const BOUNDARY: &str = "----NodeFormBoundary7MA4YWxkTrZu0gW";
const OLD_SCOPES: &str =
    "user,application,merchant,store,product,category,basket,promotion,log,supplierStore,supplier,invoice,stock";

/// One request as the Node client's `makeCustomApiRequest` sends it.
struct Node<'a> {
    app: &'a TestApp,
    token: String,
    version: Option<&'a str>,
}

impl Node<'_> {
    async fn call(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        post_body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self
            .app
            .client
            .request(method.clone(), self.app.url(path))
            .header("accept", "application/json")
            .header("Authorization", format!("OAuth {}", self.token));
        if let Some(version) = self.version {
            req = req.header("x-accept-version", version);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if method != Method::GET {
            let body = post_body.unwrap_or_else(|| json!({}));
            req = req.form(&[("postBody", body.to_string())]);
        }
        let res = req.checked().await.expect("request");
        let status = res.status();
        let text = res.text().await.expect("body");
        let body = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        (status, body)
    }

    async fn ok(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Value {
        let (status, answer) = self.call(method.clone(), path, headers, body).await;
        assert!(
            status.is_success(),
            "{method} {path} ({:?}): {status} {answer}",
            self.version
        );
        assert!(answer["api"].is_object(), "{answer}");
        answer
    }

    /// `multipartFileUpload`: always a PUT, with the fields `postBody` and `file`.
    async fn upload(&self) -> (StatusCode, Value) {
        let mut body = Vec::new();
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"postBody\"\r\n\r\n{{}}\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"image2.png\"\r\n\
                 Content-Type: image/png\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(PNG);
        body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
        let mut req = self
            .app
            .client
            .put(self.app.url("/uploader"))
            .header("accept", "application/json")
            .header("Authorization", format!("OAuth {}", self.token))
            .header(
                "content-type",
                format!("multipart/form-data; boundary={BOUNDARY}"),
            )
            .body(body);
        if let Some(version) = self.version {
            req = req.header("x-accept-version", version);
        }
        let res = req.checked().await.unwrap();
        (res.status(), res.json().await.unwrap())
    }
}

/// Every call the Node client makes for the objects the issue lists, in its shapes.
async fn node_session(node: &Node<'_>, log_version: Option<&str>) {
    node.ok(Method::GET, "/status", &[], None).await;
    let user = node.ok(Method::GET, "/user", &[], None).await;
    assert!(user["user"]["email"].is_string(), "{user}");
    node.ok(Method::GET, "/merchant", &[], None).await;

    let store = node
        .ok(Method::POST, "/store", &[], Some(json!({"stores": {"0": {
            "name": "Pop-up", "addressLine1": "1 Quay", "city": "Hull", "postcode": "HU1 1AA", "countryId": "GB"}}})))
        .await;
    let store_id = store["stores"]["0"]["id"].as_i64().unwrap().to_string();
    node.ok(Method::GET, "/store", &[("storeIds", &store_id)], None)
        .await;

    let category = node
        .ok(
            Method::POST,
            "/category",
            &[],
            Some(json!({"categories": {"0": {"title": "Hot"}}})),
        )
        .await;
    let category_id = category["categories"]["0"]["id"]
        .as_i64()
        .unwrap()
        .to_string();
    node.ok(Method::GET, "/category", &[], None).await;

    let product = node
        .ok(
            Method::POST,
            "/product",
            &[],
            Some(json!({"products": {"0": {"name": "Latte",
            "instances": {"i": {"price": "300", "taxPercentage": "0.200"}}}}})),
        )
        .await;
    let product_id = product["products"]["0"]["id"].as_i64().unwrap().to_string();
    let with_stock = node
        .ok(
            Method::GET,
            "/product",
            &[("productIds", &product_id), ("storeId", &store_id)],
            None,
        )
        .await;
    assert_eq!(
        with_stock["products"][&product_id]["stockLeft"], 0,
        "{with_stock}"
    );

    node.ok(Method::POST, "/employee", &[], Some(json!({"employees": {"0": {
        "firstName": "Sam", "lastName": "Lee", "email": format!("sam{product_id}@shop.test"), "roleId": 3}}})))
        .await;
    node.ok(Method::GET, "/employee", &[], None).await;
    node.ok(Method::GET, "/basket", &[("storeIds", &store_id)], None)
        .await;
    node.ok(Method::POST, "/promotion", &[], Some(json!({"promotions": {"0": {
        "title": "10% off", "type": "percentage", "x": "10", "startDate": "2026-01-01 00:00:00"}}})))
        .await;
    node.ok(Method::GET, "/promotion", &[], None).await;
    node.ok(Method::GET, "/supplier", &[], None).await;
    node.ok(Method::GET, "/invoice", &[], None).await;

    let log_headers = [("object", "till"), ("identifier", "7"), ("tag", "shift")];
    node.ok(
        Method::POST,
        "/log",
        &log_headers,
        Some(json!({"opened": true})),
    )
    .await;
    let reader = Node {
        app: node.app,
        token: node.token.clone(),
        version: log_version,
    };
    let logs = reader.ok(Method::GET, "/log", &log_headers, None).await;
    assert!(
        logs["logs"].as_object().is_some_and(|l| !l.is_empty()),
        "{logs}"
    );

    let (status, uploaded) = node.upload().await;
    assert_eq!(status, StatusCode::CREATED, "{uploaded}");

    // Deletes: the singular id headers, and a postBody of {} in the body.
    node.ok(
        Method::DELETE,
        "/product",
        &[("productId", &product_id)],
        None,
    )
    .await;
    node.ok(
        Method::DELETE,
        "/category",
        &[("categoryId", &category_id)],
        None,
    )
    .await;
    node.ok(Method::DELETE, "/store", &[("storeId", &store_id)], None)
        .await;
}

backend_tests_with! { crate::helpers::legacy_clients;
    async fn the_node_clients_calls_work_with_version_2_0_for_any_merchant(app) {
        let token = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let node = Node { app: &app, token, version: Some("2.0") };
        node_session(&node, Some("2.0")).await;
    }

    async fn with_legacy_clients_their_0_x_versions_and_none_are_served_as_2_0(app) {
        let token = app.owner_token().await;
        let node = Node { app: &app, token: token.clone(), version: Some("0.6") };
        node_session(&node, Some("0.5")).await;
        let unversioned = Node { app: &app, token, version: None };
        let (status, answer) = unversioned.call(Method::GET, "/product", &[], None).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        // A version that no old client sent stays refused.
        let odd = Node { app: &app, token: unversioned.token.clone(), version: Some("9.9") };
        assert_eq!(odd.call(Method::GET, "/product", &[], None).await.0, StatusCode::BAD_REQUEST);

        // Without the setting, the same requests are refused as before.
        let strict = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        for version in [Some("0.6"), None] {
            let node = Node { app: &app, token: strict.clone(), version };
            let (status, answer) = node.call(Method::GET, "/product", &[], None).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
            assert_eq!(answer["api"]["message"]["error"]["101"]["code"], "validationError");
        }
    }

    async fn the_old_sign_in_address_and_scope_names_give_a_token_capped_by_role(app) {
        // The Node client's /login URL, unencoded as it builds it.
        let query = format!(
            "access_type=online&redirect_uri={DEMO_REDIRECT}&response_type=code&client_id={DEMO_CLIENT}&scope={OLD_SCOPES}"
        );
        let res = app.client.get(app.url(&format!("/login?{query}"))).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::FOUND);
        let location = res.headers()["location"].to_str().unwrap().to_owned();
        assert!(location.ends_with(&format!("/oauth/authorize?{query}")), "{location}");

        // Through the consent page as the owner: the old names grant read and write.
        let mut request = Authorize::demo(None);
        request.scope = OLD_SCOPES.into();
        let code = approved_code(&app, &request).await;
        // The Node client's code exchange: a form repeating scope and redirect_uri.
        let (status, token) = node_token(&app, &[
            ("code", code.as_str()), ("redirect_uri", DEMO_REDIRECT), ("client_id", DEMO_CLIENT),
            ("scope", "application"), ("client_secret", DEMO_SECRET), ("grant_type", "authorization_code"),
        ]).await;
        assert_eq!(status, StatusCode::OK, "{token}");
        assert_eq!(token["scope"], "read write");
        assert!(token["expires_in"].is_number());

        // PHP and Python send the old names again on a refresh: ignored, nothing widened.
        let refresh = token["refresh_token"].as_str().unwrap().to_owned();
        let (status, renewed) = node_token(&app, &[
            ("access_type", "online"), ("redirect_uri", DEMO_REDIRECT), ("client_id", DEMO_CLIENT),
            ("scope", OLD_SCOPES), ("client_secret", DEMO_SECRET), ("refresh_token", refresh.as_str()),
            ("grant_type", "refresh_token"),
        ]).await;
        assert_eq!(status, StatusCode::OK, "{renewed}");
        assert_eq!(renewed["scope"], "read write");
        // And the Node client's refresh, with no scope at all.
        let (status, again) = node_token(&app, &[
            ("refresh_token", renewed["refresh_token"].as_str().unwrap()), ("redirect_uri", DEMO_REDIRECT),
            ("client_id", DEMO_CLIENT), ("client_secret", DEMO_SECRET), ("grant_type", "refresh_token"),
        ]).await;
        assert_eq!(status, StatusCode::OK, "{again}");

        // A guest asking for every old name gets what a guest may have.
        let mut guest = Authorize::demo(None);
        guest.scope = OLD_SCOPES.into();
        guest.email = GUEST.0.into();
        guest.password = GUEST.1.into();
        let code = approved_code(&app, &guest).await;
        let (_, token) = node_token(&app, &[
            ("code", code.as_str()), ("redirect_uri", DEMO_REDIRECT), ("client_id", DEMO_CLIENT),
            ("client_secret", DEMO_SECRET), ("grant_type", "authorization_code"),
        ]).await;
        assert_eq!(token["scope"], "read");
    }

    async fn without_legacy_clients_the_old_conventions_stay_refused(app) {
        let query = "access_type=online&redirect_uri=https://till.second.test/callback&response_type=code&client_id=second-till&scope=user,application";
        let res = app.client.get(app.url(&format!("/login?{query}"))).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        let res = app.client.get(app.url("/login")).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        let body: Value = res.json().await.unwrap();
        assert!(body["error"]["details"][0].as_str().unwrap().contains("/oauth/authorize"), "{body}");
        let res = app.client.get(app.url(&format!("/oauth/authorize?{query}"))).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::FOUND);
        let location = res.headers()["location"].to_str().unwrap();
        assert!(location.contains("error=invalid_scope"), "{location}");
    }

    async fn the_report_reads_from_and_to_where_old_clients_are_allowed(app) {
        let range = [("from", "2026-01-01 00:00:00"), ("to", "2026-02-01 00:00:00")];
        let legacy = Node { app: &app, token: app.owner_token().await, version: Some("0.6") };
        let answer = legacy.ok(Method::GET, "/report/basket", &range, None).await;
        assert!(answer["basketReport"].is_object(), "{answer}");
        let (status, answer) = legacy
            .call(Method::GET, "/report/basket", &[("from", "yesterday"), ("to", "2026-02-01 00:00:00")], None)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(answer["error"]["details"][0].as_str().unwrap().starts_with("from:"), "{answer}");

        let strict = Node {
            app: &app,
            token: app.token_for("second", "owner@second.test", "read", 3600).await,
            version: Some("2.0"),
        };
        let (status, answer) = strict.call(Method::GET, "/report/basket", &range, None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(answer["error"]["details"][0].as_str().unwrap().contains("reportFrom"), "{answer}");
    }

    async fn a_confidential_clients_refresh_token_is_kept_so_the_same_one_works_twice(app) {
        let code = approved_code(&app, &Authorize::demo(None)).await;
        let (_, first) = node_token(&app, &[
            ("code", code.as_str()), ("redirect_uri", DEMO_REDIRECT), ("client_id", DEMO_CLIENT),
            ("client_secret", DEMO_SECRET), ("grant_type", "authorization_code"),
        ]).await;
        let r0 = first["refresh_token"].as_str().unwrap().to_owned();
        // Python and PHP present their first refresh token on every refresh.
        let mut accesses = vec![first["access_token"].as_str().unwrap().to_owned()];
        for _ in 0..2 {
            let (status, renewed) = node_token(&app, &[
                ("client_id", DEMO_CLIENT), ("scope", OLD_SCOPES), ("client_secret", DEMO_SECRET),
                ("refresh_token", r0.as_str()), ("grant_type", "refresh_token"),
            ]).await;
            assert_eq!(status, StatusCode::OK, "{renewed}");
            assert_eq!(renewed["refresh_token"], r0.as_str(), "kept, not rotated");
            assert_eq!(renewed["scope"], "read write admin");
            accesses.push(renewed["access_token"].as_str().unwrap().to_owned());
        }
        assert!(accesses[1] != accesses[2], "each refresh gives a fresh access token");
        for access in &accesses {
            assert_eq!(user_status(&app, access).await, StatusCode::OK);
        }
        // Still bound to the client's secret, and revocable.
        let (status, wrong) = node_token(&app, &[
            ("client_id", DEMO_CLIENT), ("client_secret", "not-the-secret"),
            ("refresh_token", r0.as_str()), ("grant_type", "refresh_token"),
        ]).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{wrong}");
        let res = app.client.post(app.url("/oauth/revoke"))
            .basic_auth(DEMO_CLIENT, Some(DEMO_SECRET))
            .form(&[("token", r0.as_str())])
            .checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        let (status, refused) = node_token(&app, &[
            ("client_id", DEMO_CLIENT), ("client_secret", DEMO_SECRET),
            ("refresh_token", r0.as_str()), ("grant_type", "refresh_token"),
        ]).await;
        assert_eq!((status, &refused["error"]), (StatusCode::BAD_REQUEST, &json!("invalid_grant")), "{refused}");
        for access in &accesses {
            assert_eq!(user_status(&app, access).await, StatusCode::UNAUTHORIZED);
        }
    }

    async fn the_old_sign_out_address_ends_the_session_and_returns_to_sign_in(app) {
        let query = format!("client_id={DEMO_CLIENT}&redirect_uri={DEMO_REDIRECT}&scope={OLD_SCOPES}");
        let res = app.client.get(app.url(&format!("/logout?{query}")))
            .header("cookie", "mcd_session=some-session")
            .checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::FOUND);
        let location = res.headers()["location"].to_str().unwrap();
        assert!(location.ends_with(&format!("/oauth/authorize?{query}")), "{location}");
        let cleared = res.headers().get_all("set-cookie").iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .find(|c| c.starts_with("mcd_session="))
            .expect("the session cookie is removed");
        assert!(cleared.contains("Max-Age=0") && cleared.contains("Path=/oauth"), "{cleared}");

        let strict = "client_id=second-till&redirect_uri=https://till.second.test/callback";
        let res = app.client.get(app.url(&format!("/logout?{strict}"))).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        let body: Value = res.json().await.unwrap();
        assert!(body["error"]["details"][0].as_str().unwrap().contains("/oauth/authorize"), "{body}");
    }

    async fn the_node_clients_report_address_is_the_basket_report(app) {
        let range = [("from", "2026-01-01 00:00:00"), ("to", "2026-02-01 00:00:00")];
        let legacy = Node { app: &app, token: app.owner_token().await, version: Some("0.6") };
        let answer = legacy.ok(Method::GET, "/report", &range, None).await;
        let report = legacy.ok(Method::GET, "/report/basket", &range, None).await;
        assert_eq!(answer["basketReport"], report["basketReport"], "{answer}");
        assert!(answer["basketReport"]["summary"].is_object(), "{answer}");

        let strict = Node {
            app: &app,
            token: app.token_for("second", "owner@second.test", "read", 3600).await,
            version: Some("2.0"),
        };
        let strict_range = [("reportFrom", range[0].1), ("reportTo", range[1].1)];
        let (status, answer) = strict.call(Method::GET, "/report", &strict_range, None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
        assert!(answer["error"]["details"][0].as_str().unwrap().contains("/report/basket"), "{answer}");
    }

    async fn the_old_body_keys_supplier_and_one_stock_reconcile_are_read(app) {
        let node = Node { app: &app, token: app.owner_token().await, version: Some("0.6") };
        let keyed = node
            .ok(Method::POST, "/supplier", &[], Some(json!({"supplier": {"0": {"name": "Bean Brothers"}}})))
            .await;
        assert!(keyed["suppliers"]["0"]["id"].is_i64(), "{keyed}");
        let bare = node
            .ok(Method::POST, "/supplier", &[], Some(json!({"supplier": {"name": "Dairy Co"}})))
            .await;
        let dairy = bare["suppliers"]["0"]["id"].as_i64().unwrap().to_string();
        let read = node.ok(Method::GET, "/supplier", &[("supplierIds", &dairy)], None).await;
        assert_eq!(read["suppliers"][&dairy]["name"], "Dairy Co", "{read}");

        let shop = app.tenant("demo").stores["high-street"];
        let product = node
            .ok(Method::POST, "/product", &[], Some(json!({"products": {"0": {"name": "Beans",
                "instances": {"i": {"price": "300", "taxPercentage": "0.200"}}}}})))
            .await;
        let beans = product["products"]["0"]["id"].as_i64().unwrap();
        let counted = node
            .ok(Method::POST, "/stock/reconcile", &[], Some(json!({"stockReconcile": {"storeId": shop,
                "products": {beans.to_string(): {"productId": beans, "quantity": 4}}}})))
            .await;
        let count = &counted["stockReconciliations"]["0"];
        assert_eq!(count["storeId"], shop, "{counted}");
        assert_eq!(count["products"][beans.to_string()]["counted"], 4, "{counted}");

        // Without the setting the old keys stay unknown, and nothing is written.
        let other = Node {
            app: &app,
            token: app.token_for("second", "owner@second.test", "read write admin", 3600).await,
            version: Some("2.0"),
        };
        let (status, answer) = other
            .call(Method::POST, "/supplier", &[], Some(json!({"supplier": {"0": {"name": "Sneaky"}}})))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(answer["error"]["details"][0].as_str().unwrap().starts_with("supplier: unexpected"), "{answer}");
    }
}

/// POST /oauth/token as the Node client's `request.post({form})` does.
async fn node_token(app: &TestApp, form: &[(&str, &str)]) -> (StatusCode, Value) {
    let res = app
        .client
        .post(app.url("/oauth/token"))
        .form(form)
        .checked()
        .await
        .unwrap();
    (res.status(), res.json().await.unwrap())
}
