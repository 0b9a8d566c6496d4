//! Money and tax rates from any JSON value: a decimal within bounds, or a reason.
#![no_main]
use libfuzzer_sys::fuzz_target;
use merchantd::domain::money;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Ok(d) = money::money(&value) {
        // What was accepted is written back and read again unchanged.
        let text = money::text(&d);
        assert_eq!(
            money::parse_stored(&text).map(|x| money::text(&x)),
            Ok(text)
        );
    }
    let _ = money::rate(&value);
    let _ = money::decimal(&value);
});
