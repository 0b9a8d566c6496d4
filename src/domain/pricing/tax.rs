//! Tax per rate: exact amounts per line and rate, rounded once per rate (or per line), then
//! shared back over the lines so every line can print its tax and the lines add up.

use rust_decimal::Decimal;

use super::{apportion, SaleLine, SaleSettings, TaxAmount, TaxRounding};

pub(super) struct Taxed {
    pub rates: Vec<TaxAmount>,
    /// Each line's share of every rate's tax.
    pub line_tax: Vec<i64>,
    /// Each line's share of the rates added on.
    pub line_added: Vec<i64>,
}

#[derive(Default)]
struct Group {
    /// Σ the lines' amounts net of their included taxes.
    base: Decimal,
    /// (line, exact tax) of each line at this rate.
    exact: Vec<(usize, Decimal)>,
}

/// `net` holds each line's amount after discounts; included rates are inside it.
pub(super) fn compute(lines: &[SaleLine], net: &[i64], settings: &SaleSettings) -> Taxed {
    let mode = settings.rounding;
    // Few rates per basket: a list searched in place, sorted once at the end. Lines mostly
    // carry the rates of the line before, so the search starts where the last one ended.
    let mut groups: Vec<((String, Decimal, bool), Group)> = Vec::new();
    let mut last = 0;
    for (i, line) in lines.iter().enumerate() {
        let included: Decimal = line
            .taxes
            .iter()
            .filter(|t| t.included)
            .map(|t| t.rate)
            .sum();
        let base = Decimal::from(net[i]) / (Decimal::ONE + included);
        for t in &line.taxes {
            let same = |((code, rate, included), _): &((String, Decimal, bool), Group)| {
                *included == t.included && same_code(code, &t.code) && *rate == t.rate
            };
            let at = match groups.get(last).filter(|g| same(g)) {
                Some(_) => last,
                None => match groups.iter().position(same) {
                    Some(at) => at,
                    None => {
                        groups.push((
                            // Kept as written: lines of one instance then compare at one
                            // scale; the receipt shows it normalized.
                            (t.code.clone(), t.rate, t.included),
                            Group::default(),
                        ));
                        groups.len() - 1
                    }
                },
            };
            last = at;
            let g = &mut groups[at].1;
            g.base += base;
            g.exact.push((i, base * t.rate));
        }
    }
    groups.sort_by(|(a, _), (b, _)| a.cmp(b));
    let mut taxed = Taxed {
        rates: Vec::with_capacity(groups.len()),
        line_tax: vec![0; lines.len()],
        line_added: vec![0; lines.len()],
    };
    for ((code, rate, included), g) in groups {
        let exact: Vec<Decimal> = g.exact.iter().map(|(_, e)| *e).collect();
        let shares: Vec<i64> = match settings.tax_rounding {
            TaxRounding::PerLine => exact.iter().map(|e| mode.round(*e)).collect(),
            TaxRounding::PerRate => apportion(&exact, mode.round(exact.iter().sum())),
        };
        let tax: i64 = shares.iter().sum();
        for ((line, _), share) in g.exact.iter().zip(&shares) {
            taxed.line_tax[*line] += share;
            if !included {
                taxed.line_added[*line] += share;
            }
        }
        // An included rate's taxable amount is what its lines charged less the tax, so the
        // two add up on the receipt; an added rate's is the base it was charged on.
        let taxable = if included {
            mode.round(g.base * (Decimal::ONE + rate)) - tax
        } else {
            mode.round(g.base)
        };
        taxed.rates.push(TaxAmount {
            code,
            rate: rate.normalize(),
            included,
            taxable,
            tax,
        });
    }
    taxed
}

/// `a == b`, without a call to `memcmp` for the common case of two uncoded rates (it showed as
/// 9 % of a calculation in the profile).
fn same_code(a: &str, b: &str) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}
