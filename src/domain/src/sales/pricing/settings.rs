//! How a merchant's sales are priced: whether prices include tax, how tax and cash are rounded,
//! and the named tax rates products may carry (a manifest's `[sales]` table, docs/money-and-tax.md).

use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};

/// How a half minor unit is rounded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rounding {
    /// 0.5 goes away from zero (most tax authorities, and the default).
    #[default]
    HalfUp,
    /// 0.5 goes to the even neighbour (banker's rounding).
    HalfEven,
}

/// A line may reach MAX_MONEY × MAX_QUANTITY (10^18): amounts are held to ±10^15 so that sums
/// over thousands of lines stay inside i64 and can never overflow.
const BOUND: i64 = 1_000_000_000_000_000;

impl Rounding {
    /// `price × quantity`, rounded; whole prices (most of them) skip decimal arithmetic.
    pub fn times(self, price: Decimal, quantity: i64) -> i64 {
        if price.scale() == 0 {
            let whole = i64::try_from(price)
                .ok()
                .and_then(|p| p.checked_mul(quantity));
            if let Some(amount) = whole.filter(|a| a.unsigned_abs() <= BOUND as u64) {
                return amount;
            }
        }
        self.round(price * Decimal::from(quantity))
    }

    /// `num / den` (den > 0) rounded to whole minor units, exactly.
    pub fn ratio(self, num: i128, den: i128) -> i64 {
        let (whole, rest) = (num.div_euclid(den), num.rem_euclid(den));
        let up = match rest.cmp(&(den - rest)) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => match self {
                Rounding::HalfUp => num >= 0,
                Rounding::HalfEven => whole % 2 != 0,
            },
        };
        let rounded = whole + i128::from(up);
        i64::try_from(rounded)
            .unwrap_or(if rounded < 0 { -BOUND } else { BOUND })
            .clamp(-BOUND, BOUND)
    }

    /// `value` rounded to whole minor units.
    pub fn round(self, value: Decimal) -> i64 {
        let strategy = match self {
            Rounding::HalfUp => RoundingStrategy::MidpointAwayFromZero,
            Rounding::HalfEven => RoundingStrategy::MidpointNearestEven,
        };
        i64::try_from(value.round_dp_with_strategy(0, strategy))
            .unwrap_or(if value.is_sign_negative() {
                -BOUND
            } else {
                BOUND
            })
            .clamp(-BOUND, BOUND)
    }
}

/// Where tax is rounded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaxRounding {
    /// Once per rate, on the sum of the basket's exact amounts at that rate (EU VAT, Japan's
    /// qualified invoice rule).
    #[default]
    PerRate,
    /// On each line, then summed.
    PerLine,
}

/// A named rate a price instance may carry (`taxCodes`): Canadian GST and PST, a US state
/// and a city rate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaxRate {
    pub code: String,
    /// A fraction: 0.05 is 5 %.
    pub rate: Decimal,
    /// Included in the price, or added on; the merchant's `prices_include_tax` when not said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub included: Option<bool>,
}

/// A merchant's pricing settings; every field has the default of a merchant that says nothing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SaleSettings {
    /// Prices include tax (UK, EU, Japan, Australia) or tax is added on (US, Canada).
    pub prices_include_tax: bool,
    pub tax_rounding: TaxRounding,
    pub rounding: Rounding,
    /// Cash payments settle at a multiple of this many minor units (5 in Canada); 1 = none.
    pub cash_increment: i64,
    pub taxes: Vec<TaxRate>,
    /// A refund may go back to another payment type than the payment it refunds.
    pub refund_to_other_types: bool,
    /// Completing a basket at a register needs a session open there (docs/tills.md). When
    /// false, a register without one still numbers the sale, which then names no session.
    pub sessions_required: bool,
}

impl Default for SaleSettings {
    fn default() -> Self {
        Self {
            prices_include_tax: true,
            tax_rounding: TaxRounding::PerRate,
            rounding: Rounding::HalfUp,
            cash_increment: 1,
            taxes: Vec::new(),
            refund_to_other_types: false,
            sessions_required: true,
        }
    }
}

impl SaleSettings {
    /// The rate named `code`.
    pub fn tax(&self, code: &str) -> Option<&TaxRate> {
        self.taxes.iter().find(|t| t.code == code)
    }

    /// What is wrong with these settings, if anything (manifests are checked on load).
    pub fn check(&self) -> Result<(), String> {
        if !(1..=10_000).contains(&self.cash_increment) {
            return Err("cash_increment must be between 1 and 10000 minor units".into());
        }
        for (i, t) in self.taxes.iter().enumerate() {
            if t.code.trim().is_empty() || t.code.len() > 40 {
                return Err(format!("taxes[{i}].code must be 1 to 40 characters"));
            }
            if t.rate < Decimal::ZERO || t.rate > Decimal::ONE || t.rate.scale() > 6 {
                return Err(format!(
                    "taxes[{i}].rate must be a fraction from 0 to 1 (5 % is \"0.05\")"
                ));
            }
            if self.taxes[..i].iter().any(|o| o.code == t.code) {
                return Err(format!("taxes[{i}].code \"{}\" is declared twice", t.code));
            }
        }
        Ok(())
    }
}
