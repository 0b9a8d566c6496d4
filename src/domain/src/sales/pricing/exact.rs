//! Exact amounts as ratios of 128-bit integers. A line's tax at a rate is
//! `net × rate / (1 + its included rates)`: with VAT at 20 % included that is a sixth of the
//! line, which no decimal holds exactly. Summed as 28-digit decimals, three sixths came to a hair
//! above one half and half-even rounded them up; summed as ratios over one denominator they are
//! one half (docs/money-and-tax.md).

use rust_decimal::Decimal;

/// `d` as (mantissa, 10^scale).
pub(super) fn ratio(d: Decimal) -> Option<(i128, i128)> {
    Some((d.mantissa(), 10i128.checked_pow(d.scale())?))
}

/// Exact terms (numerator, denominator > 0) brought over one denominator: the numerators and
/// that denominator. `None` past 128 bits (rates of dozens of decimals).
pub(super) fn over_one_denominator(terms: &[(i128, i128)]) -> Option<(Vec<i128>, i128)> {
    let first = terms.first().map_or(1, |t| t.1);
    // Lines at one rate mostly carry the same included rates, so one denominator already.
    let den = terms.iter().try_fold(first, |den, t| {
        if t.1 == den {
            Some(den)
        } else {
            (den / gcd(den, t.1)).checked_mul(t.1)
        }
    })?;
    let nums = terms
        .iter()
        .map(|(num, d)| {
            if *d == den {
                Some(*num)
            } else {
                num.checked_mul(den / d)
            }
        })
        .collect::<Option<Vec<i128>>>()?;
    Some((nums, den))
}

/// Σ of numerators, `None` past 128 bits.
pub(super) fn sum(nums: &[i128]) -> Option<i128> {
    nums.iter().try_fold(0i128, |a, n| a.checked_add(*n))
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_meet_over_their_least_common_denominator() {
        let (nums, den) = over_one_denominator(&[(1, 6), (1, 4), (5, 6)]).unwrap();
        assert_eq!((nums, den), (vec![2, 3, 10], 12));
        assert_eq!(ratio(Decimal::new(200, 3)), Some((200, 1000)));
        assert_eq!(
            over_one_denominator(&[(1, i128::MAX), (1, i128::MAX - 1)]),
            None
        );
    }
}
