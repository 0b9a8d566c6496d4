//! Tenant manifests: a manifest, or an error naming the file; never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use merchantd::domain::fleet::tenant::Manifest;

fuzz_target!(|text: &str| {
    if let Err(e) = Manifest::parse("fuzz.toml", text) {
        assert!(e.to_string().starts_with("fuzz.toml"), "{e}");
    }
});
