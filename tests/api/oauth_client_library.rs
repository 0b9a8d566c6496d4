//! The whole authorization-code flow driven by the `oauth2` crate, a real client library that
//! nobody here wrote, used as its documentation shows: it builds the authorize URL (PKCE S256,
//! CSRF state), sends form-encoded token requests with HTTP Basic client authentication (its
//! default), and parses our token responses (the `api` envelope is an extra field to it).

use std::collections::HashMap;

use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge, RedirectUrl,
    Scope, TokenResponse, TokenUrl,
};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::backend_tests;
use crate::contract::Checked;
use crate::helpers::TestApp;
use crate::oauth_support::{Authorize, Browser, DEMO_CLIENT, DEMO_REDIRECT, DEMO_SECRET, OWNER};

/// `GET /user` with a token the library obtained: the owner's profile.
async fn assert_signed_in_as_owner(app: &TestApp, access: &str) {
    let res = app
        .api(Method::GET, "/user", access)
        .checked()
        .await
        .unwrap();
    let status = res.status();
    let body: Value = res.json().await.expect("a JSON /user body");
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["user"]["email"], OWNER.0, "{body}");
}

fn scopes(token: &impl TokenResponse) -> Vec<String> {
    token
        .scopes()
        .expect("the granted scope is returned")
        .iter()
        .map(|s| s.to_string())
        .collect()
}

backend_tests! {
    async fn the_oauth2_crate_completes_the_code_flow_and_refreshes(app) {
        let client = BasicClient::new(ClientId::new(DEMO_CLIENT.into()))
            .set_client_secret(ClientSecret::new(DEMO_SECRET.into()))
            .set_auth_uri(AuthUrl::new(app.url("/oauth/authorize")).unwrap())
            .set_token_uri(TokenUrl::new(app.url("/oauth/token")).unwrap())
            .set_redirect_uri(RedirectUrl::new(DEMO_REDIRECT.into()).unwrap());
        // As the library's documentation insists: no redirects (SSRF).
        let http_client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");

        let (pkce_challenge, pkce_verifier) = PkceCodeChallenge::new_random_sha256();
        let (auth_url, csrf_token) = client
            .authorize_url(CsrfToken::new_random)
            .add_scope(Scope::new("read".into()))
            .add_scope(Scope::new("write".into()))
            .add_scope(Scope::new("admin".into()))
            .set_pkce_challenge(pkce_challenge)
            .url();
        assert!(auth_url.as_str().starts_with(&app.url("/oauth/authorize?")), "{auth_url}");

        // The browser opens exactly the library's URL. The sign-in and consent forms repeat the
        // request in hidden inputs, which `Browser` posts back from an `Authorize`: take those
        // values from the library's URL too.
        let sent: HashMap<String, String> = auth_url.query_pairs().into_owned().collect();
        assert_eq!(sent["response_type"], "code");
        assert_eq!(sent["code_challenge_method"], "S256");
        let request = Authorize {
            client_id: sent["client_id"].clone(),
            redirect_uri: sent["redirect_uri"].clone(),
            scope: sent["scope"].clone(),
            state: Some(sent["state"].clone()),
            code_challenge: Some(sent["code_challenge"].clone()),
            email: OWNER.0.into(),
            password: OWNER.1.into(),
        };
        let mut browser = Browser::new(&app);
        let page = browser.open(auth_url.query().expect("a query")).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        let consent = browser.sign_in(&request).await;
        assert_eq!(consent.status, StatusCode::OK, "{}", consent.body);
        assert!(consent.body.contains("Demo POS"), "{}", consent.body);
        let back = browser.post(&request, &[("decision", "approve")]).await;
        assert_eq!(back.status, StatusCode::FOUND, "{}", back.body);
        let location = back.location.as_deref().unwrap();
        assert!(location.starts_with(&format!("{DEMO_REDIRECT}?")), "{location}");
        let params = back.redirect_params();
        // The client's CSRF check: the state that comes back is the one it sent.
        assert_eq!(params["state"], *csrf_token.secret());

        let token = client
            .exchange_code(AuthorizationCode::new(params["code"].clone()))
            .set_pkce_verifier(pkce_verifier)
            .request_async(&http_client)
            .await
            .unwrap_or_else(|e| panic!("code exchange: {e:?}"));
        let access = token.access_token().secret();
        assert!(access.starts_with("mcd_at_"), "{access}");
        assert_eq!(*token.token_type(), oauth2::basic::BasicTokenType::Bearer);
        assert!(token.expires_in().is_some_and(|d| d.as_secs() > 3000));
        assert_eq!(scopes(&token), ["read", "write", "admin"]);
        let refresh_token = token.refresh_token().expect("a refresh token");
        assert!(refresh_token.secret().starts_with("mcd_rt_"));
        assert_signed_in_as_owner(&app, access).await;

        let refreshed = client
            .exchange_refresh_token(refresh_token)
            .request_async(&http_client)
            .await
            .unwrap_or_else(|e| panic!("refresh: {e:?}"));
        let new_access = refreshed.access_token().secret();
        assert_ne!(new_access, access);
        let new_refresh = refreshed.refresh_token().expect("a rotated refresh token");
        assert_ne!(new_refresh.secret(), refresh_token.secret());
        assert_eq!(scopes(&refreshed), ["read", "write", "admin"]);
        assert_signed_in_as_owner(&app, new_access).await;
    }
}
