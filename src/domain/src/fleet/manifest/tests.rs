use super::*;

const GOOD: &str = r#"
[merchant]
key = "demo"
name = "Demo Coffee Ltd"

[[stores]]
key = "high-street"
name = "High Street"

[[users]]
email = "Owner@Demo.test"
password = "demo-owner-password"
role = "owner"

[[applications]]
name = "Demo POS"
client_id = "demo-pos"
client_secret = "demo-pos-secret-value"
redirect_uris = ["http://127.0.0.1:8976/callback"]
"#;

fn err(text: &str) -> String {
    Manifest::parse("t.toml", text).unwrap_err().to_string()
}

/// Fails unless this manifest is refused with an error naming `said`.
fn assert_refused_naming(text: &str, said: &str) {
    let e = err(text);
    assert!(e.contains(said), "{e}");
}

#[test]
fn a_good_manifest_parses_and_drops_clear_secrets() {
    let m = Manifest::parse("t.toml", GOOD).unwrap();
    assert_eq!(m.merchant_key, "demo");
    assert_eq!(m.users[0].email, "owner@demo.test");
    assert_eq!(m.users[0].role, Role::Owner);
    assert_eq!(m.applications[0].secret_hash.len(), 64);
    let debug = format!("{m:?}");
    assert!(!debug.contains("demo-owner-password"));
    assert!(!debug.contains("demo-pos-secret-value"));
}

#[test]
fn unknown_role_names_file_entry_and_field() {
    let e = err(&GOOD.replace("role = \"owner\"", "role = \"boss\""));
    assert!(
        e.starts_with("t.toml: users[0] (owner@demo.test): role: unknown role \"boss\""),
        "{e}"
    );
}

#[test]
fn bad_redirect_uri_is_named() {
    assert_refused_naming(
        &GOOD.replace("http://127.0.0.1:8976/callback", "http://evil.example/cb"),
        "applications[0] (demo-pos): redirect_uris[0]:",
    );
}

#[test]
fn duplicate_email_is_named() {
    let twice = format!(
        "{GOOD}\n[[users]]\nemail = \"owner@demo.test\"\npassword = \"another-password\"\nrole = \"guest\"\n"
    );
    assert_refused_naming(
        &twice,
        "users[1]: email: duplicate email \"owner@demo.test\"",
    );
}

#[test]
fn syntax_errors_give_a_position_but_never_the_source_line() {
    let broken = GOOD.replace(
        "password = \"demo-owner-password\"",
        "password = \"demo-owner-password",
    );
    let e = err(&broken);
    assert!(e.starts_with("t.toml: TOML syntax error at line "), "{e}");
    assert!(!e.contains("demo-owner-password"), "{e}");
}

#[test]
fn a_non_string_secret_is_not_echoed() {
    let e = err(&GOOD.replace("\"demo-owner-password\"", "123456789"));
    assert!(e.contains("password: must be a string"), "{e}");
    assert!(!e.contains("123456789"), "{e}");
}

#[test]
fn unknown_fields_and_sections_are_rejected() {
    assert!(
        err(&GOOD.replace("role = \"owner\"", "role = \"owner\"\nrol = 1"))
            .contains("unknown field")
    );
    assert!(err(&format!("{GOOD}\n[extra]\nx = 1\n")).contains("extra: unknown section"));
}
