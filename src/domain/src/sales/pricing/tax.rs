//! Tax per rate: exact amounts per line and rate, rounded once per rate (or per line), then
//! shared back over the lines so every line can print its tax and the lines add up.

use rust_decimal::Decimal;

use super::exact::{over_one_denominator, ratio, sum};
use super::{apportion, share_out, SaleLine, SaleSettings, TaxAmount, TaxRounding};

pub(super) struct Taxed {
    pub rates: Vec<TaxAmount>,
    /// Each line's share of every rate's tax.
    pub line_tax: Vec<i64>,
    /// Each line's share of the rates added on.
    pub line_added: Vec<i64>,
}

/// A line charged a rate: its amount after discounts (included rates inside it) and the sum of
/// the rates its price includes.
struct Charged {
    line: usize,
    net: i64,
    included: Decimal,
}

/// A rate's tax on its lines (each line's share) and its taxable amount.
struct RateTax {
    shares: Vec<i64>,
    taxable: i64,
}

/// `net` holds each line's amount after discounts; included rates are inside it.
pub(super) fn compute(lines: &[SaleLine], net: &[i64], settings: &SaleSettings) -> Taxed {
    let mut taxed = Taxed {
        rates: Vec::new(),
        line_tax: vec![0; lines.len()],
        line_added: vec![0; lines.len()],
    };
    for ((code, rate, included), charged) in groups(lines, net) {
        let RateTax { shares, taxable } = exact_rate(&charged, rate, included, settings)
            .unwrap_or_else(|| decimal_rate(&charged, rate, included, settings));
        for (c, share) in charged.iter().zip(&shares) {
            taxed.line_tax[c.line] += share;
            if !included {
                taxed.line_added[c.line] += share;
            }
        }
        taxed.rates.push(TaxAmount {
            code,
            rate: rate.normalize(),
            included,
            taxable,
            tax: shares.iter().sum(),
        });
    }
    taxed
}

/// The lines charged each rate, by (code, rate, included), in that order.
fn groups(lines: &[SaleLine], net: &[i64]) -> Vec<((String, Decimal, bool), Vec<Charged>)> {
    // Few rates per basket: a list searched in place, sorted once at the end. Lines mostly
    // carry the rates of the line before, so the search starts where the last one ended.
    let mut groups: Vec<((String, Decimal, bool), Vec<Charged>)> = Vec::new();
    let mut last = 0;
    for (i, line) in lines.iter().enumerate() {
        let included = line
            .taxes
            .iter()
            .filter(|t| t.included)
            .map(|t| t.rate)
            .reduce(|a, b| a + b)
            .unwrap_or(Decimal::ZERO);
        for t in &line.taxes {
            let same = |((code, rate, included), _): &((String, Decimal, bool), Vec<Charged>)| {
                *included == t.included && same_code(code, &t.code) && *rate == t.rate
            };
            let at = match groups.get(last).filter(|g| same(g)) {
                Some(_) => last,
                None => groups.iter().position(same).unwrap_or_else(|| {
                    // Kept as written: lines of one instance then compare at one scale; the
                    // receipt shows it normalized.
                    groups.push(((t.code.clone(), t.rate, t.included), Vec::new()));
                    groups.len() - 1
                }),
            };
            last = at;
            groups[at].1.push(Charged {
                line: i,
                net: net[i],
                included,
            });
        }
    }
    groups.sort_by(|(a, _), (b, _)| a.cmp(b));
    groups
}

/// The rate's tax worked exactly: each line's `net × rate / (1 + included)` as a ratio of
/// integers, over one denominator; `None` past 128 bits.
fn exact_rate(
    charged: &[Charged],
    rate: Decimal,
    included: bool,
    settings: &SaleSettings,
) -> Option<RateTax> {
    let mode = settings.rounding;
    let (m, q) = ratio(rate)?;
    // Per line: its base net × P / (P + M) (P + M over P is 1 + its included rates), its tax
    // base × m / q, and for an included rate what it charged, base × (q + m) / q.
    let mut bases = Vec::with_capacity(charged.len());
    let mut taxes = Vec::with_capacity(charged.len());
    let mut charges = Vec::with_capacity(if included { charged.len() } else { 0 });
    for c in charged {
        let (big_m, p) = ratio(c.included)?;
        let divisor = p.checked_add(big_m)?;
        let base = i128::from(c.net).checked_mul(p)?;
        bases.push((base, divisor));
        taxes.push((base.checked_mul(m)?, divisor.checked_mul(q)?));
        if included {
            charges.push((
                base.checked_mul(q.checked_add(m)?)?,
                divisor.checked_mul(q)?,
            ));
        }
    }
    let (nums, den) = over_one_denominator(&taxes)?;
    let shares: Vec<i64> = match settings.tax_rounding {
        TaxRounding::PerLine => nums.iter().map(|n| mode.ratio(*n, den)).collect(),
        TaxRounding::PerRate => {
            let total = mode.ratio(sum(&nums)?, den);
            let floors = nums
                .iter()
                .map(|n| i64::try_from(n.div_euclid(den)).ok())
                .collect::<Option<Vec<i64>>>()?;
            let remainders: Vec<i128> = nums.iter().map(|n| n.rem_euclid(den)).collect();
            share_out(floors, &remainders, total)
        }
    };
    // An included rate's taxable amount is what its lines charged less the tax, so the two
    // add up on the receipt; an added rate's is the base it was charged on.
    let (nums, den) = over_one_denominator(if included { &charges } else { &bases })?;
    let amount = mode.ratio(sum(&nums)?, den);
    let tax: i64 = shares.iter().sum();
    Some(RateTax {
        taxable: if included { amount - tax } else { amount },
        shares,
    })
}

/// The same in 28-digit decimals, for rates too long for [`exact_rate`].
fn decimal_rate(
    charged: &[Charged],
    rate: Decimal,
    included: bool,
    settings: &SaleSettings,
) -> RateTax {
    let mode = settings.rounding;
    let bases: Vec<Decimal> = charged
        .iter()
        .map(|c| Decimal::from(c.net) / (Decimal::ONE + c.included))
        .collect();
    let exact: Vec<Decimal> = bases.iter().map(|b| b * rate).collect();
    let shares: Vec<i64> = match settings.tax_rounding {
        TaxRounding::PerLine => exact.iter().map(|e| mode.round(*e)).collect(),
        TaxRounding::PerRate => apportion(&exact, mode.round(exact.iter().sum())),
    };
    let base: Decimal = bases.iter().sum();
    let tax: i64 = shares.iter().sum();
    RateTax {
        taxable: if included {
            mode.round(base * (Decimal::ONE + rate)) - tax
        } else {
            mode.round(base)
        },
        shares,
    }
}

/// `a == b`, without a call to `memcmp` for the common case of two uncoded rates (it showed as
/// 9 % of a calculation in the profile).
fn same_code(a: &str, b: &str) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rates of 28 decimals overflow the ratios; the decimal path answers, and agrees with
    /// the exact one wherever both can work.
    #[test]
    fn long_rates_fall_back_to_decimals() {
        let long = Decimal::from_i128_with_scale(1_234_567_890_123_456_789_012_345_678, 28);
        let charged = |included| {
            [3, 7]
                .iter()
                .enumerate()
                .map(|(line, net)| Charged {
                    line,
                    net: *net * 1_000_000_000,
                    included,
                })
                .collect::<Vec<_>>()
        };
        let settings = SaleSettings::default();
        let both = charged(long + long);
        assert!(exact_rate(&both, long, true, &settings).is_none());
        let fallback = decimal_rate(&both, long, true, &settings);
        assert_eq!(fallback.shares.len(), 2);
        let short = Decimal::new(2, 1);
        for included in [Decimal::ZERO, short] {
            let lines = charged(included);
            let exact = exact_rate(&lines, short, !included.is_zero(), &settings).unwrap();
            let decimal = decimal_rate(&lines, short, !included.is_zero(), &settings);
            assert_eq!(
                (exact.shares, exact.taxable),
                (decimal.shares, decimal.taxable)
            );
        }
    }
}
