//! Money and rates as decimals, never binary floats (api-reference.md conventions). Money is a
//! decimal string of minor units (`"1600"` = £16.00, `"41.7"` allowed, at most 4 decimals); a
//! tax rate is a fraction (`"0.200"` = 20 %). Both read back as strings, with the scale given.

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::Value;

pub const MAX_SCALE: u32 = 4;

/// The largest amount of money accepted: 10^12 minor units (ten billion pounds). Bounding
/// inputs keeps every total of a batch far inside what a decimal can hold, so arithmetic on
/// them can never overflow (rust_decimal panics on overflow).
pub const MAX_MONEY: i64 = 1_000_000_000_000;

/// The largest quantity of one line (units), for the same reason.
pub const MAX_QUANTITY: i64 = 1_000_000;

/// A decimal from a JSON string or number, exactly as written (a number's text is kept, so
/// `0.1` stays 0.1 and never passes through `f64`).
pub fn decimal(value: &Value) -> Result<Decimal, String> {
    let text = match value {
        Value::String(s) => s.trim().to_owned(),
        Value::Number(n) => n.to_string(),
        _ => return Err("must be a decimal string or number.".into()),
    };
    let d = Decimal::from_str(&text)
        .or_else(|_| Decimal::from_scientific(&text))
        .map_err(|_| format!("\"{text}\" is not a decimal number."))?;
    if d.scale() > MAX_SCALE {
        return Err(format!("\"{text}\" has more than {MAX_SCALE} decimals."));
    }
    Ok(d)
}

/// Money: a non-negative amount of minor units.
pub fn money(value: &Value) -> Result<Decimal, String> {
    let d = decimal(value)?;
    if d.is_sign_negative() && !d.is_zero() {
        return Err("must not be negative.".into());
    }
    if d > Decimal::from(MAX_MONEY) {
        return Err(format!("must be at most {MAX_MONEY} minor units."));
    }
    Ok(d)
}

/// A tax rate: a fraction from 0 to 1.
pub fn rate(value: &Value) -> Result<Decimal, String> {
    let d = decimal(value)?;
    if d < Decimal::ZERO || d > Decimal::ONE {
        return Err(format!(
            "{d} is not a fraction between 0 and 1 (20 % is \"0.200\")."
        ));
    }
    Ok(d)
}

/// The stored and written form: the decimal's own text.
pub fn text(d: &Decimal) -> String {
    d.to_string()
}

/// A stored decimal; the database holds only what [`text`] wrote.
pub fn parse_stored(s: &str) -> Result<Decimal, String> {
    Decimal::from_str(s).map_err(|e| format!("stored decimal \"{s}\": {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn money_keeps_its_text_and_scale() {
        assert_eq!(text(&money(&json!("41.7")).unwrap()), "41.7");
        assert_eq!(text(&money(&json!(300)).unwrap()), "300");
        assert_eq!(text(&rate(&json!("0.200")).unwrap()), "0.200");
        assert_eq!(text(&rate(&json!(0.1)).unwrap()), "0.1");
    }

    #[test]
    fn absurd_amounts_are_refused_before_they_can_overflow() {
        assert!(money(&json!("1000000000001")).is_err());
        assert!(money(&json!("99999999999999999999999999")).is_err());
        assert!(money(&json!(MAX_MONEY)).is_ok());
    }

    #[test]
    fn bad_money_and_rates_are_refused() {
        assert!(money(&json!("-1")).is_err());
        assert!(money(&json!("1.23456")).is_err());
        assert!(money(&json!("abc")).is_err());
        assert!(money(&json!(true)).is_err());
        assert!(rate(&json!("1.5")).is_err());
        assert!(rate(&json!("20")).is_err());
    }
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::*;

    proptest! {
        #[test]
        fn any_json_value_is_money_or_a_reason(text in "[-+0-9.eE ]{0,40}", n in any::<f64>(), i in any::<i64>()) {
            for value in [Value::String(text.clone()), serde_json::json!(n), serde_json::json!(i)] {
                let _ = decimal(&value);
                let _ = money(&value);
                let _ = rate(&value);
            }
        }

        #[test]
        fn stored_money_reads_back_as_written(units in 0i64..1_000_000_000_000, scale in 0u32..4) {
            let written = text(&Decimal::new(units, scale));
            prop_assert_eq!(text(&parse_stored(&written).unwrap()), written);
        }
    }
}
