//! Driving `/oauth/authorize` the way a browser does (forms and cookies), for the OAuth tests.

use std::collections::HashMap;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use reqwest::StatusCode;
use serde_json::Value;

use crate::contract::Checked;
use crate::helpers::TestApp;

pub const DEMO_CLIENT: &str = "demo-pos";
pub const DEMO_SECRET: &str = "demo-pos-secret";
pub const DEMO_REDIRECT: &str = "http://127.0.0.1:8976/callback";
pub const OWNER: (&str, &str) = ("owner@demo.test", "demo-owner-password");
pub const GUEST: (&str, &str) = ("guest@second.test", "second-guest-password");

/// A PKCE verifier and its S256 challenge.
pub fn pkce_pair() -> (String, String) {
    let verifier = URL_SAFE_NO_PAD.encode(merchantd::crypto::random_bytes::<32>());
    let challenge = merchantd::oauth::pkce::s256(&verifier);
    (verifier, challenge)
}

/// One authorization request.
#[derive(Clone, Debug)]
pub struct Authorize {
    pub client_id: String,
    pub redirect_uri: String,
    pub scope: String,
    pub state: Option<String>,
    pub code_challenge: Option<String>,
    pub email: String,
    pub password: String,
}

impl Authorize {
    /// The demo owner asking for everything for the demo POS, with PKCE.
    pub fn demo(challenge: Option<String>) -> Self {
        Self {
            client_id: DEMO_CLIENT.into(),
            redirect_uri: DEMO_REDIRECT.into(),
            scope: "read write admin".into(),
            state: Some("Zq4p/2026-03-28".into()),
            code_challenge: challenge,
            email: OWNER.0.into(),
            password: OWNER.1.into(),
        }
    }

    pub fn request_fields(&self) -> Vec<(String, String)> {
        let mut f = vec![
            ("response_type".to_string(), "code".to_string()),
            ("client_id".into(), self.client_id.clone()),
            ("redirect_uri".into(), self.redirect_uri.clone()),
            ("scope".into(), self.scope.clone()),
        ];
        if let Some(s) = &self.state {
            f.push(("state".into(), s.clone()));
        }
        if let Some(c) = &self.code_challenge {
            f.push(("code_challenge".into(), c.clone()));
            f.push(("code_challenge_method".into(), "S256".into()));
        }
        f
    }

    pub fn query(&self) -> String {
        serde_urlencoded::to_string(self.request_fields()).unwrap()
    }
}

/// A browser's view of the pages: the cookies it holds and the last page.
pub struct Browser {
    client: reqwest::Client,
    base: String,
    cookies: HashMap<String, String>,
    pub csrf: String,
}

/// A page or a redirect.
pub struct Answer {
    pub status: StatusCode,
    pub location: Option<String>,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Answer {
    /// The query parameters of the redirect.
    pub fn redirect_params(&self) -> HashMap<String, String> {
        let location = self.location.as_deref().expect("a redirect");
        let url = url::Url::parse(location).expect("absolute redirect");
        url.query_pairs().into_owned().collect()
    }
}

fn hidden_value(body: &str, name: &str) -> Option<String> {
    let needle = format!("name=\"{name}\" value=\"");
    let start = body.find(&needle)? + needle.len();
    let end = body[start..].find('"')?;
    Some(
        body[start..start + end]
            .replace("&amp;", "&")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">"),
    )
}

impl Browser {
    pub fn new(app: &TestApp) -> Self {
        Self::at(app.client.clone(), &app.address)
    }

    /// A browser for a server at `base` (for example a `merchantd serve` child process).
    pub fn at(client: reqwest::Client, base: &str) -> Self {
        Self {
            client,
            base: base.trim_end_matches('/').to_owned(),
            cookies: HashMap::new(),
            csrf: String::new(),
        }
    }

    async fn answer(&mut self, res: reqwest::Response) -> Answer {
        for value in res.headers().get_all("set-cookie") {
            let text = value.to_str().unwrap();
            if let Some((name, rest)) = text.split_once('=') {
                let value = rest.split(';').next().unwrap_or("").to_owned();
                // An empty value is how a server removes a cookie (with Max-Age=0).
                if value.is_empty() {
                    self.cookies.remove(name);
                } else {
                    self.cookies.insert(name.to_owned(), value);
                }
            }
        }
        let status = res.status();
        let location = res
            .headers()
            .get("location")
            .map(|v| v.to_str().unwrap().to_owned());
        let headers = res.headers().clone();
        let body = res.text().await.unwrap();
        if let Some(csrf) = hidden_value(&body, "csrf_token") {
            self.csrf = csrf;
        }
        Answer {
            status,
            location,
            headers,
            body,
        }
    }

    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The value of a cookie the browser holds.
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.cookies.get(name).cloned()
    }

    /// Sets a cookie as if the server had (to replay or forge one).
    pub fn set_cookie(&mut self, name: &str, value: &str) {
        self.cookies.insert(name.to_owned(), value.to_owned());
    }

    /// GET any page of the server with the cookies held.
    pub async fn get(&mut self, path: &str) -> Answer {
        let res = self
            .client
            .get(format!("{}{path}", self.base))
            .header("cookie", self.cookie_header())
            .checked()
            .await
            .unwrap();
        self.answer(res).await
    }

    /// Posts a form to any page of the server with the cookies held.
    pub async fn post_form(&mut self, path: &str, form: &[(&str, &str)]) -> Answer {
        let res = self
            .client
            .post(format!("{}{path}", self.base))
            .header("cookie", self.cookie_header())
            .form(form)
            .checked()
            .await
            .unwrap();
        self.answer(res).await
    }

    pub async fn open(&mut self, query: &str) -> Answer {
        let res = self
            .client
            .get(format!("{}/oauth/authorize?{query}", self.base))
            .header("cookie", self.cookie_header())
            .checked()
            .await
            .unwrap();
        self.answer(res).await
    }

    /// Posts the authorize form with the request's hidden fields, the CSRF token and `extra`.
    pub async fn post(&mut self, request: &Authorize, extra: &[(&str, &str)]) -> Answer {
        let mut form = request.request_fields();
        form.push(("csrf_token".into(), self.csrf.clone()));
        form.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let res = self
            .client
            .post(format!("{}/oauth/authorize", self.base))
            .header("cookie", self.cookie_header())
            .form(&form)
            .checked()
            .await
            .unwrap();
        self.answer(res).await
    }

    pub async fn sign_in(&mut self, request: &Authorize) -> Answer {
        self.post(
            request,
            &[("email", &request.email), ("password", &request.password)],
        )
        .await
    }

    /// Open, sign in, decide; the final answer (a redirect when all went well).
    pub async fn authorize(&mut self, request: &Authorize, decision: &str) -> Answer {
        let page = self.open(&request.query()).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        let consent = self.sign_in(request).await;
        assert_eq!(consent.status, StatusCode::OK, "{}", consent.body);
        self.post(request, &[("decision", decision)]).await
    }
}

/// The code of an approved authorization.
pub async fn approved_code(app: &TestApp, request: &Authorize) -> String {
    let answer = Browser::new(app).authorize(request, "approve").await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
    answer.redirect_params()["code"].clone()
}

/// POST /oauth/token with a JSON body and the demo client in the body.
pub async fn token_json(
    app: &TestApp,
    body: Value,
) -> (StatusCode, Value, reqwest::header::HeaderMap) {
    let res = app
        .client
        .post(app.url("/oauth/token"))
        .json(&body)
        .checked()
        .await
        .unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    (status, res.json().await.unwrap(), headers)
}

/// Exchanges a demo code (JSON, client in body).
pub async fn exchange(app: &TestApp, code: &str, verifier: Option<&str>) -> (StatusCode, Value) {
    let mut body = serde_json::json!({
        "grant_type": "authorization_code", "code": code, "redirect_uri": DEMO_REDIRECT,
        "client_id": DEMO_CLIENT, "client_secret": DEMO_SECRET,
    });
    if let Some(v) = verifier {
        body["code_verifier"] = v.into();
    }
    let (status, body, _) = token_json(app, body).await;
    (status, body)
}

/// Refreshes with the demo client.
pub async fn refresh(app: &TestApp, refresh_token: &str) -> (StatusCode, Value) {
    let (status, body, _) = token_json(
        app,
        serde_json::json!({"grant_type": "refresh_token", "refresh_token": refresh_token,
                           "client_id": DEMO_CLIENT, "client_secret": DEMO_SECRET}),
    )
    .await;
    (status, body)
}

/// A full flow for the demo owner: (access token, refresh token).
pub async fn login(app: &TestApp) -> (String, String) {
    let (verifier, challenge) = pkce_pair();
    let code = approved_code(app, &Authorize::demo(Some(challenge))).await;
    let (status, body) = exchange(app, &code, Some(&verifier)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    (
        body["access_token"].as_str().unwrap().to_owned(),
        body["refresh_token"].as_str().unwrap().to_owned(),
    )
}

/// The status of `GET /user` with a token: 200 while it works, 401 once it does not.
pub async fn user_status(app: &TestApp, access: &str) -> StatusCode {
    app.api(reqwest::Method::GET, "/user", access)
        .checked()
        .await
        .unwrap()
        .status()
}
