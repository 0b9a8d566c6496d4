//! Properties over random baskets, promotions and settings.

use proptest::prelude::*;
use rust_decimal::Decimal;

use super::*;
use crate::catalogue::promotion::PromotionType;

const CODES: [(&str, i64); 4] = [("A", 50), ("B", 70), ("C", 200), ("D", 0)];

fn lines() -> impl Strategy<Value = Vec<SaleLine>> {
    prop::collection::vec(
        (
            1i64..5,
            prop::collection::vec(1i64..4, 0..2),
            prop_oneof![1i64..20, -3i64..0],
            0i64..100_000,
            0u32..3,
            prop::collection::vec((0usize..4, any::<bool>()), 0..3),
        ),
        0..12,
    )
    .prop_map(|raw| {
        raw.into_iter()
            .enumerate()
            .map(
                |(i, (product, categories, quantity, price, scale, taxes))| {
                    let mut seen = Vec::new();
                    let taxes = taxes
                        .into_iter()
                        .filter(|(c, _)| {
                            let fresh = !seen.contains(c);
                            seen.push(*c);
                            fresh
                        })
                        .map(|(c, included)| LineTax {
                            code: CODES[c].0.into(),
                            rate: Decimal::new(CODES[c].1, 3),
                            included,
                        })
                        .collect();
                    SaleLine {
                        id: 100 + i as i64,
                        product_id: product,
                        category_ids: categories,
                        quantity,
                        unit_price: Decimal::new(price, scale),
                        taxes,
                        fixed_net: None,
                    }
                },
            )
            .collect()
    })
}

fn offers() -> impl Strategy<Value = Vec<Offer>> {
    prop::collection::vec(
        (
            1i64..6,
            0usize..3,
            1i64..100,
            prop::collection::vec(1i64..5, 0..2),
            prop::collection::vec(1i64..4, 0..2),
            any::<bool>(),
        ),
        0..4,
    )
    .prop_map(|raw| {
        raw.into_iter()
            .map(|(id, kind, x, products, categories, stackable)| {
                let (kind, x, y) = match kind {
                    0 => (PromotionType::Percentage, Decimal::from(x), None),
                    1 => (
                        PromotionType::XForY,
                        Decimal::from(x % 4 + 2),
                        Some(Decimal::ONE),
                    ),
                    _ => (PromotionType::MealDeal, Decimal::from(x * 50), None),
                };
                Offer {
                    id,
                    kind,
                    x,
                    y,
                    product_ids: products,
                    category_ids: categories,
                    stackable,
                }
            })
            .collect()
    })
}

fn settings() -> impl Strategy<Value = SaleSettings> {
    (any::<bool>(), any::<bool>(), any::<bool>(), 0usize..4).prop_map(
        |(include, per_line, even, cash)| SaleSettings {
            prices_include_tax: include,
            tax_rounding: if per_line {
                TaxRounding::PerLine
            } else {
                TaxRounding::PerRate
            },
            rounding: if even {
                Rounding::HalfEven
            } else {
                Rounding::HalfUp
            },
            cash_increment: [1, 5, 10, 25][cash],
            taxes: Vec::new(),
            refund_to_other_types: false,
            sessions_required: true,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn receipts_add_up(lines in lines(), offers in offers(), settings in settings()) {
        let r = calculate(&lines, &offers, &settings);
        let sum = |f: fn(&LineAmounts) -> i64| r.lines.iter().map(f).sum::<i64>();
        prop_assert_eq!(sum(|l| l.gross), r.subtotal);
        prop_assert_eq!(sum(|l| l.discount), r.discount);
        prop_assert_eq!(r.discounts.iter().map(|d| d.amount).sum::<i64>(), r.discount);
        prop_assert_eq!(sum(|l| l.net), r.subtotal - r.discount);
        prop_assert_eq!(sum(|l| l.tax), r.tax);
        prop_assert_eq!(sum(|l| l.total), r.total);
        prop_assert_eq!(r.taxes.iter().map(|t| t.tax).sum::<i64>(), r.tax);
        for d in &r.discounts {
            prop_assert_eq!(d.shares.iter().sum::<i64>(), d.amount);
        }
        // A discount never takes a line below zero, nor touches a refund line.
        for (line, amounts) in lines.iter().zip(&r.lines) {
            if line.quantity > 0 {
                prop_assert!(amounts.net >= 0, "{:?}", amounts);
            } else {
                prop_assert_eq!(amounts.discount, 0);
            }
        }
    }

    #[test]
    fn each_rate_is_the_rounding_of_its_exact_sum(lines in lines(), offers in offers(), settings in settings()) {
        let r = calculate(&lines, &offers, &settings);
        for t in &r.taxes {
            // Each line's exact tax net × rate / (1 + its included rates), as a fraction in
            // lowest terms, summed fraction by fraction (the engine brings them over one
            // denominator instead).
            let exact: Vec<Fraction> = lines
                .iter()
                .zip(&r.lines)
                .filter_map(|(line, amounts)| {
                    line.taxes.iter().find(|x| x.code == t.code && x.included == t.included)?;
                    let included = line
                        .taxes
                        .iter()
                        .filter(|x| x.included)
                        .fold(Fraction::whole(1), |sum, x| sum.add(Fraction::of(x.rate)));
                    Some(Fraction::whole(amounts.net).times(Fraction::of(t.rate)).over(included))
                })
                .collect();
            let expected = match settings.tax_rounding {
                TaxRounding::PerRate => exact
                    .iter()
                    .fold(Fraction::whole(0), |sum, e| sum.add(*e))
                    .round(settings.rounding),
                TaxRounding::PerLine => exact.iter().map(|e| e.round(settings.rounding)).sum(),
            };
            prop_assert_eq!(t.tax, expected, "{:?}", t);
        }
    }

    #[test]
    fn whole_prices_multiply_as_decimals_do(price in -2_000_000_000i64..2_000_000_000, scale in 0u32..3,
                                            quantity in -1_000_000i64..1_000_000, even: bool) {
        let mode = if even { Rounding::HalfEven } else { Rounding::HalfUp };
        // Scale 0 takes the integer path; any other scale the decimal one, for comparison.
        let price = Decimal::new(price, scale);
        prop_assert_eq!(mode.times(price, quantity), mode.round(price * Decimal::from(quantity)));
    }

    #[test]
    fn cash_rounding_moves_a_total_by_less_than_the_increment(lines in lines(), settings in settings()) {
        let r = calculate(&lines, &[], &settings);
        let inc = settings.cash_increment;
        prop_assert!(r.cash.rounding.abs() < inc.max(2));
        prop_assert_eq!(r.cash.total % inc, 0);
        prop_assert_eq!(r.cash.total - r.total, r.cash.rounding);
        let (due, rounding) = r.due(r.total.max(0), 0, settings.rounding);
        prop_assert!(rounding.abs() < inc.max(2));
        prop_assert_eq!(due - rounding, r.total);
    }
}

/// A fraction in lowest terms, its denominator positive: the test's own exact arithmetic.
#[derive(Clone, Copy, Debug)]
struct Fraction(i128, i128);

impl Fraction {
    fn whole(n: i64) -> Self {
        Fraction(i128::from(n), 1)
    }

    fn of(d: Decimal) -> Self {
        Fraction(d.mantissa(), 10i128.pow(d.scale())).lowest()
    }

    fn lowest(self) -> Self {
        let (mut a, mut b) = (self.0.abs(), self.1.abs());
        while b != 0 {
            (a, b) = (b, a % b);
        }
        let g = a.max(1) * self.1.signum();
        Fraction(self.0 / g, self.1 / g)
    }

    fn add(self, o: Self) -> Self {
        Fraction(self.0 * o.1 + o.0 * self.1, self.1 * o.1).lowest()
    }

    fn times(self, o: Self) -> Self {
        Fraction(self.0 * o.0, self.1 * o.1).lowest()
    }

    fn over(self, o: Self) -> Self {
        Fraction(self.0 * o.1, self.1 * o.0).lowest()
    }

    /// To the nearest whole; a half away from zero, or to the even neighbour.
    fn round(self, mode: Rounding) -> i64 {
        let (floor, rest) = (self.0.div_euclid(self.1), self.0.rem_euclid(self.1));
        let nearest = match (2 * rest).cmp(&self.1) {
            std::cmp::Ordering::Less => floor,
            std::cmp::Ordering::Greater => floor + 1,
            std::cmp::Ordering::Equal => match mode {
                Rounding::HalfUp if self.0 < 0 => floor,
                Rounding::HalfUp => floor + 1,
                Rounding::HalfEven => floor + floor.rem_euclid(2),
            },
        };
        i64::try_from(nearest).unwrap()
    }
}
