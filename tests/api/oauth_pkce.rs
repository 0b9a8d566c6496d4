//! PKCE (RFC 7636, S256 only; DESIGN §4, examples §1.1 and §1.5).
//!
//! - §4.2–4.3: the challenge is sent at authorize; `plain` and malformed challenges are refused
//!   by redirect.
//! - §4.5–4.6: the verifier at the token endpoint must hash to the challenge; a missing verifier
//!   and a verifier for a code issued without a challenge (a downgrade, RFC 9700 §2.1.1) are
//!   `invalid_grant` too.
//!
//! A failed check leaves the code usable: `Db::exchange_code` rolls its take back when the
//! check refuses, so a client that sent a wrong verifier by mistake can still finish.

use reqwest::StatusCode;
use serde_json::Value;

use crate::backend_tests;
use crate::helpers::TestApp;
use crate::oauth_endpoints::assert_oauth_error;
use crate::oauth_support::*;

/// The worked example of examples §1.1: computed outside the server, so a wrong S256
/// implementation cannot agree with itself.
const VERIFIER: &str = "9fRidZwC5aj2RPI9NW58Xq_ktTn1CSBbiALqpXBdDP4";
const CHALLENGE: &str = "X5OSxWHWILrUNPmT-ld32v80_QFCaNGlG8wS493of0k";

async fn code_for(app: &TestApp, challenge: Option<&str>) -> String {
    approved_code(app, &Authorize::demo(challenge.map(str::to_owned))).await
}

fn assert_issued(status: StatusCode, body: &Value) {
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["access_token"]
        .as_str()
        .unwrap()
        .starts_with("mcd_at_"));
}

/// Opens the authorize URL with the given PKCE parameters in place of the usual ones.
async fn authorize_with(app: &TestApp, pkce: &[(&str, &str)]) -> Answer {
    let mut fields = Authorize::demo(None).request_fields();
    fields.extend(pkce.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let query = serde_urlencoded::to_string(fields).unwrap();
    Browser::new(app).open(&query).await
}

backend_tests! {
    async fn an_s256_verifier_matching_the_challenge_buys_tokens(app) {
        let code = code_for(&app, Some(CHALLENGE)).await;
        let (status, body) = exchange(&app, &code, Some(VERIFIER)).await;
        assert_issued(status, &body);
        assert_eq!(user_status(&app, body["access_token"].as_str().unwrap()).await, StatusCode::OK);
    }

    async fn a_wrong_verifier_is_invalid_grant_and_leaves_the_code_usable(app) {
        let (verifier, challenge) = pkce_pair();
        let code = code_for(&app, Some(&challenge)).await;
        let (other, _) = pkce_pair();
        let (status, body) = exchange(&app, &code, Some(&other)).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
        let (status, body) = exchange(&app, &code, Some(&verifier)).await;
        assert_issued(status, &body);
    }

    async fn a_malformed_verifier_is_invalid_grant(app) {
        let code = code_for(&app, Some(CHALLENGE)).await;
        // Too short (RFC 7636 §4.1 asks for 43 to 128 characters), and a bad character.
        for verifier in ["short", &format!("{}!", &VERIFIER[..42])] {
            let (status, body) = exchange(&app, &code, Some(verifier)).await;
            assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
        }
    }

    async fn a_missing_verifier_for_a_code_with_a_challenge_is_invalid_grant(app) {
        let code = code_for(&app, Some(CHALLENGE)).await;
        let (status, body) = exchange(&app, &code, None).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
        assert!(body["error_description"].as_str().unwrap().contains("code_verifier"), "{body}");
    }

    async fn a_verifier_for_a_code_issued_without_a_challenge_is_invalid_grant(app) {
        // Downgrade: an attacker strips the challenge from the authorize URL and then sends
        // some verifier, hoping the server only checks when both sides are present.
        let code = code_for(&app, None).await;
        let (status, body) = exchange(&app, &code, Some(VERIFIER)).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
        // PKCE stays optional for confidential clients: the same code without a verifier works.
        let (status, body) = exchange(&app, &code, None).await;
        assert_issued(status, &body);
    }

    async fn code_challenge_method_plain_redirects_with_invalid_request(app) {
        let pkce = [("code_challenge", CHALLENGE), ("code_challenge_method", "plain")];
        let answer = authorize_with(&app, &pkce).await;
        assert_eq!(answer.status, StatusCode::FOUND);
        assert!(answer.location.as_deref().unwrap().starts_with(DEMO_REDIRECT));
        let params = answer.redirect_params();
        assert_eq!(params["error"], "invalid_request");
        assert!(params.contains_key("error_description"));
        assert_eq!(params["state"], "Zq4p/2026-03-28");
        assert!(!params.contains_key("code"));
    }

    async fn a_challenge_without_s256_or_of_the_wrong_shape_redirects_with_invalid_request(app) {
        let short = &CHALLENGE[..42];
        for pkce in [
            vec![("code_challenge", CHALLENGE)],
            vec![("code_challenge_method", "S256")],
            vec![("code_challenge", short), ("code_challenge_method", "S256")],
        ] {
            let answer = authorize_with(&app, &pkce).await;
            assert_eq!(answer.status, StatusCode::FOUND, "{pkce:?}");
            assert_eq!(answer.redirect_params()["error"], "invalid_request", "{pkce:?}");
        }
    }
}
