//! Worked receipts, each with its figures written out and the public rule it follows.

use rust_decimal::Decimal;

use super::*;
use crate::catalogue::promotion::PromotionType;

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

fn rate(code: &str, r: &str, included: bool) -> LineTax {
    LineTax {
        code: code.into(),
        rate: d(r),
        included,
    }
}

fn line(id: i64, price: i64, quantity: i64, taxes: Vec<LineTax>) -> SaleLine {
    SaleLine {
        id,
        product_id: id,
        category_ids: Vec::new(),
        quantity,
        unit_price: Decimal::from(price),
        taxes,
        fixed_net: None,
    }
}

fn rates(r: &Receipt) -> Vec<(&str, i64, i64)> {
    r.taxes
        .iter()
        .map(|t| (t.code.as_str(), t.taxable, t.tax))
        .collect()
}

/// UK VAT, prices including VAT. The VAT in a VAT-inclusive price is the VAT fraction of it,
/// 1/6 at 20 % (HMRC VAT Notice 700, "VAT fraction"); a retailer may work VAT out on the total
/// of each rate rather than line by line (VAT Notice 700, "Rounding of amounts of VAT").
/// Coffee £2.99, two sandwiches at £3.50 (standard rated), milk £1.25 (zero rated).
#[test]
fn uk_vat_20_percent_included() {
    let vat = || vec![rate("VAT", "0.20", true)];
    let zero = vec![rate("ZERO", "0", true)];
    let lines = [
        line(1, 299, 1, vat()),
        line(2, 350, 2, vat()),
        line(3, 125, 1, zero),
    ];
    let r = calculate(&lines, &[], &SaleSettings::default());
    // Standard rate: 2.99 + 7.00 = 9.99; 9.99 / 6 = 1.665 → £1.67; net 8.32.
    assert_eq!(rates(&r), [("VAT", 832, 167), ("ZERO", 125, 0)]);
    assert_eq!(
        (r.subtotal, r.tax, r.tax_added, r.total),
        (1124, 167, 0, 1124)
    );
    // The lines print their share: 2.99 carries 0.50 (0.4983), 7.00 carries 1.17 (1.1667).
    let line_tax: Vec<i64> = r.lines.iter().map(|l| l.tax).collect();
    assert_eq!(line_tax, [50, 117, 0]);
}

/// Canada, British Columbia: GST 5 % and PST 7 %, both added to the price; paid in cash, the
/// total is rounded to the nearest 5 ¢ after tax — 1 and 2 ¢ down, 3 and 4 ¢ up (Department of
/// Finance Canada, "Phasing out the penny"; Office de la protection du consommateur du Québec:
/// $5.97 is paid $5.95 and $5.98 is paid $6.00). Card payments settle to the cent.
#[test]
fn canada_gst_and_pst_added_paid_in_cash() {
    let settings = SaleSettings {
        prices_include_tax: false,
        cash_increment: 5,
        ..SaleSettings::default()
    };
    let taxes = || vec![rate("GST", "0.05", false), rate("PST", "0.07", false)];
    let lines = [line(1, 499, 1, taxes()), line(2, 200, 2, taxes())];
    let r = calculate(&lines, &[], &settings);
    // Subtotal $8.99; GST 0.4495 → $0.45; PST 0.6293 → $0.63; total $10.07.
    assert_eq!(rates(&r), [("GST", 899, 45), ("PST", 899, 63)]);
    assert_eq!((r.subtotal, r.tax_added, r.total), (899, 108, 1007));
    // In cash: $10.05, a rounding of −2 ¢ the books record.
    assert_eq!((r.cash.total, r.cash.rounding), (1005, -2));
    assert_eq!(r.due(1005, 0, Rounding::HalfUp), (1005, -2));
    // By card: to the cent.
    assert_eq!(r.due(0, 1007, Rounding::HalfUp), (1007, 0));
    // The Québec examples.
    assert_eq!(cash_round(597, 5, Rounding::HalfUp), 595);
    assert_eq!(cash_round(598, 5, Rounding::HalfUp), 600);
    assert_eq!(cash_round(1003, 5, Rounding::HalfUp), 1005);
}

/// Japan, the qualified invoice system: items are grouped by rate (10 % standard, 8 % reduced
/// for take-away food), the tax of each rate is computed on that rate's total and rounded once
/// (National Tax Agency, 適格請求書等保存方式; Square, "Order Calculation Guide for Japan").
/// Prices before tax: three items at ¥105 (10 %), two at ¥181 (8 %).
#[test]
fn japan_8_and_10_percent_rounded_once_per_rate() {
    let settings = SaleSettings {
        prices_include_tax: false,
        ..SaleSettings::default()
    };
    let ten = || vec![rate("STANDARD", "0.10", false)];
    let eight = || vec![rate("REDUCED", "0.08", false)];
    let lines = [
        line(1, 105, 1, ten()),
        line(2, 105, 1, ten()),
        line(3, 105, 1, ten()),
        line(4, 181, 1, eight()),
        line(5, 181, 1, eight()),
    ];
    let r = calculate(&lines, &[], &settings);
    // 10 %: ¥315 → 31.5 → ¥32 (once), not 3 × 10.5 → 3 × 11 = ¥33 line by line.
    // 8 %: ¥362 → 28.96 → ¥29 (once), not 2 × 14.48 → 2 × 14 = ¥28.
    assert_eq!(rates(&r), [("REDUCED", 362, 29), ("STANDARD", 315, 32)]);
    assert_eq!(r.total, 315 + 362 + 32 + 29);
    let per_line = calculate(
        &lines,
        &[],
        &SaleSettings {
            tax_rounding: TaxRounding::PerLine,
            ..settings
        },
    );
    assert_eq!(
        rates(&per_line),
        [("REDUCED", 362, 28), ("STANDARD", 315, 33)]
    );
}

/// United States: sales tax is added to the price, a state rate and a local rate each on the
/// taxable amount (Illinois Department of Revenue: 6.25 % state rate; the City of Chicago's
/// home-rule rate 1.25 %; other local rates left out of this example).
#[test]
fn us_state_and_city_rates_added() {
    let settings = SaleSettings {
        prices_include_tax: false,
        ..SaleSettings::default()
    };
    let taxes = || {
        vec![
            rate("IL", "0.0625", false),
            rate("CHICAGO", "0.0125", false),
        ]
    };
    let lines = [line(1, 1999, 1, taxes()), line(2, 349, 2, taxes())];
    let r = calculate(&lines, &[], &settings);
    // $26.97: state 1.685625 → $1.69; city 0.337125 → $0.34; total $29.00.
    assert_eq!(rates(&r), [("CHICAGO", 2697, 34), ("IL", 2697, 169)]);
    assert_eq!((r.tax, r.total), (203, 2900));
}

/// Half-even keeps an exact half cent on the even side; half-up rounds it away from zero.
#[test]
fn rounding_modes_differ_on_a_half() {
    let lines = [line(1, 25, 1, vec![rate("T", "0.10", false)])];
    let up = SaleSettings::default();
    let even = SaleSettings {
        rounding: Rounding::HalfEven,
        ..SaleSettings::default()
    };
    assert_eq!(calculate(&lines, &[], &up).tax, 3);
    assert_eq!(calculate(&lines, &[], &even).tax, 2);
}

fn offer(id: i64, kind: PromotionType, x: &str, y: Option<&str>) -> Offer {
    Offer {
        id,
        kind,
        x: d(x),
        y: y.map(d),
        product_ids: Vec::new(),
        category_ids: Vec::new(),
        stackable: false,
    }
}

/// 10 % off shared over the lines before tax: tax is worked on what is left.
#[test]
fn percentage_discount_is_shared_before_tax() {
    let vat = || vec![rate("VAT", "0.20", true)];
    let lines = [line(1, 300, 1, vat()), line(2, 700, 1, vat())];
    let r = calculate(
        &lines,
        &[offer(9, PromotionType::Percentage, "10", None)],
        &SaleSettings::default(),
    );
    assert_eq!(r.discounts.len(), 1);
    assert_eq!(r.discounts[0].shares, [30, 70]);
    assert_eq!((r.subtotal, r.discount, r.total), (1000, 100, 900));
    assert_eq!(r.tax, 150); // 900 / 6
}

/// Three for the price of two: the cheapest unit of each group of three is free.
#[test]
fn x_for_y_frees_the_cheapest_of_each_group() {
    let lines = [line(1, 300, 2, vec![]), line(2, 200, 2, vec![])];
    let r = calculate(
        &lines,
        &[offer(1, PromotionType::XForY, "3", Some("2"))],
        &SaleSettings::default(),
    );
    // Units 300, 300, 200 | 200: one group; its third unit (200) is free.
    assert_eq!(r.discount, 200);
    assert_eq!(r.total, 800);
}

/// A meal deal: one sandwich (category 1) and one drink (category 2) for 400.
#[test]
fn meal_deal_sells_one_of_each_part_for_its_price() {
    let mut sandwich = line(1, 350, 2, vec![]);
    sandwich.category_ids = vec![1];
    let mut drink = line(2, 150, 1, vec![]);
    drink.category_ids = vec![2];
    let mut deal = offer(5, PromotionType::MealDeal, "400", None);
    deal.category_ids = vec![1, 2];
    let r = calculate(&[sandwich, drink], &[deal], &SaleSettings::default());
    // One deal (one drink): 350 + 150 = 500 for 400 saves 100, shared 70 / 30.
    assert_eq!(r.discounts[0].shares, [70, 30]);
    assert_eq!(r.total, 850 - 100);
}

/// Where two promotions match the same lines, the better one for the customer wins and the
/// other does not stack; a stackable promotion applies on top.
#[test]
fn the_best_promotion_wins_and_only_stackable_ones_stack() {
    let lines = [line(1, 1000, 1, vec![])];
    let small = offer(1, PromotionType::Percentage, "10", None);
    let big = offer(2, PromotionType::Percentage, "20", None);
    let r = calculate(
        &lines,
        &[small.clone(), big.clone()],
        &SaleSettings::default(),
    );
    assert_eq!(r.discounts.len(), 1);
    assert_eq!((r.discounts[0].promotion_id, r.discount), (2, 200));
    let stacking = Offer {
        stackable: true,
        ..small
    };
    let r = calculate(&lines, &[stacking, big], &SaleSettings::default());
    // 20 % first, then 10 % of the 800 left.
    assert_eq!(r.discount, 280);
}

/// A refund line takes no promotion and its tax is negative.
#[test]
fn unlinked_refund_lines_take_no_discount() {
    let vat = || vec![rate("VAT", "0.20", true)];
    let lines = [line(1, 600, 1, vat()), line(2, 600, -1, vat())];
    let r = calculate(
        &lines,
        &[offer(1, PromotionType::Percentage, "50", None)],
        &SaleSettings::default(),
    );
    assert_eq!(r.discount, 300);
    assert_eq!(r.lines[1].tax, -100);
    assert_eq!(r.total, 300 - 600);
}

/// An exact half is a half. At 20 % VAT included a line's VAT is a sixth of it: three lines of
/// 0.01 carry 3/6 = 0.5 of a unit together, and 0.02 + 0.16 + 0.15 carry 33/6 = 5.5. Half-even
/// keeps the first at 0 and takes the second to 6, half-up makes them 1 and 6. (Worked in
/// 28-digit decimals, the sixths summed to a hair above 0.5 and a hair below 5.5: half-even gave
/// 1, and both rules gave 5.)
#[test]
fn exact_halves_of_sixths_round_as_halves() {
    let vat = || vec![rate("VAT", "0.2", true)];
    let lines = |nets: [i64; 3]| -> Vec<SaleLine> {
        (1..)
            .zip(nets)
            .map(|(id, n)| line(id, n, 1, vat()))
            .collect()
    };
    let even = SaleSettings {
        rounding: Rounding::HalfEven,
        ..SaleSettings::default()
    };
    let up = SaleSettings::default();
    assert_eq!(calculate(&lines([1, 1, 1]), &[], &even).tax, 0);
    assert_eq!(calculate(&lines([1, 1, 1]), &[], &up).tax, 1);
    assert_eq!(calculate(&lines([2, 16, 15]), &[], &even).tax, 6);
    assert_eq!(calculate(&lines([2, 16, 15]), &[], &up).tax, 6);
}

/// Shares whose floors sum far from a clamped total are spread in whole rounds at once, as the
/// round-robin would, not one unit per step (10^17 steps would hang a worker).
#[test]
fn a_total_far_from_its_floors_is_shared_at_once() {
    let huge = 100_000_000_000_000_000;
    let shares = share_out(vec![huge; 3], &[2, 1, 3], 0);
    assert_eq!(shares, [0, 0, 0]);
    let shares = share_out(vec![0; 3], &[2, 1, 3], -7);
    // Round-robin from the largest remainder: -3 for the third line, -2 for the others.
    assert_eq!(shares, [-2, -2, -3]);
    assert_eq!(share_out(vec![0; 3], &[2, 1, 3], 8), [3, 2, 3]);
}
