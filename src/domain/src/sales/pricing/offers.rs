//! Promotions applied to a basket. Which promotion wins where several match is decided the same
//! way every time: the one giving the largest discount on the lines still free takes them (a tie
//! goes to the lower id), then the next, until none gives anything; a promotion that says
//! `stackable` then applies on top, in id order, to what is left of its lines' prices.

use rust_decimal::Decimal;

use super::{apportion, Discount, Rounding, SaleLine};
use crate::catalogue::promotion::PromotionType;

/// A promotion as the engine applies it.
#[derive(Clone, Debug, PartialEq)]
pub struct Offer {
    pub id: i64,
    pub kind: PromotionType,
    pub x: Decimal,
    pub y: Option<Decimal>,
    /// Both empty: every line.
    pub product_ids: Vec<i64>,
    pub category_ids: Vec<i64>,
    pub stackable: bool,
}

impl Offer {
    /// Whether the line can take this promotion (refund lines never do).
    fn takes(&self, line: &SaleLine) -> bool {
        line.quantity > 0
            && ((self.product_ids.is_empty() && self.category_ids.is_empty())
                || self.product_ids.contains(&line.product_id)
                || line
                    .category_ids
                    .iter()
                    .any(|c| self.category_ids.contains(c)))
    }

    /// The exact discount on each candidate line, given the lines' current amounts.
    fn exact(&self, lines: &[SaleLine], net: &[i64], candidates: &[usize]) -> Vec<Decimal> {
        let unit = |i: usize| Decimal::from(net[i]) / Decimal::from(lines[i].quantity.max(1));
        match self.kind {
            PromotionType::Percentage => candidates
                .iter()
                .map(|i| Decimal::from(net[*i]) * self.x / Decimal::ONE_HUNDRED)
                .collect(),
            PromotionType::XForY => x_for_y(self, lines, candidates, &unit),
            PromotionType::MealDeal => meal_deal(self, lines, candidates, &unit),
        }
    }

    fn discount(
        &self,
        lines: &[SaleLine],
        net: &[i64],
        free: &dyn Fn(usize) -> bool,
        mode: Rounding,
    ) -> Discount {
        let candidates: Vec<usize> = (0..lines.len())
            .filter(|i| free(*i) && net[*i] > 0 && self.takes(&lines[*i]))
            .collect();
        let exact = self.exact(lines, net, &candidates);
        let (lines_hit, exact): (Vec<usize>, Vec<Decimal>) = candidates
            .into_iter()
            .zip(exact)
            .filter(|(_, e)| *e > Decimal::ZERO)
            .unzip();
        let amount = mode.round(exact.iter().sum());
        Discount {
            promotion_id: self.id,
            amount,
            line_ids: lines_hit.iter().map(|i| lines[*i].id).collect(),
            shares: apportion(&exact, amount),
        }
    }
}

/// The discounts `offers` give on `lines` whose amounts are `gross`.
pub(super) fn apply(
    lines: &[SaleLine],
    gross: &[i64],
    offers: &[Offer],
    mode: Rounding,
) -> Vec<Discount> {
    let mut net = gross.to_vec();
    let mut taken = vec![false; lines.len()];
    let mut sorted: Vec<&Offer> = offers.iter().collect();
    sorted.sort_by_key(|o| o.id);
    sorted.dedup_by_key(|o| o.id);
    let (stackable, mut exclusive): (Vec<&Offer>, Vec<&Offer>) =
        sorted.into_iter().partition(|o| o.stackable);
    let mut out = Vec::new();
    loop {
        let mut best: Option<(usize, Discount)> = None;
        for (k, offer) in exclusive.iter().enumerate() {
            let d = offer.discount(lines, &net, &|i| !taken[i], mode);
            if d.amount > 0 && best.as_ref().is_none_or(|(_, b)| d.amount > b.amount) {
                best = Some((k, d));
            }
        }
        let Some((k, d)) = best else { break };
        exclusive.remove(k);
        take(lines, &mut net, &d, &mut taken);
        out.push(d);
    }
    for offer in stackable {
        let d = offer.discount(lines, &net, &|_| true, mode);
        if d.amount > 0 {
            take(lines, &mut net, &d, &mut taken);
            out.push(d);
        }
    }
    out
}

fn take(lines: &[SaleLine], net: &mut [i64], d: &Discount, taken: &mut [bool]) {
    for (id, share) in d.line_ids.iter().zip(&d.shares) {
        if let Some(i) = lines.iter().position(|l| l.id == *id) {
            net[i] -= share;
            taken[i] = true;
        }
    }
}

/// Buy x, pay for y: the candidates' units in order of price, most expensive first, make groups
/// of x; the last x − y units of each whole group are free.
fn x_for_y(
    offer: &Offer,
    lines: &[SaleLine],
    candidates: &[usize],
    unit: &dyn Fn(usize) -> Decimal,
) -> Vec<Decimal> {
    let x = i64::try_from(offer.x.trunc()).unwrap_or(0);
    let y = offer
        .y
        .and_then(|y| i64::try_from(y.trunc()).ok())
        .unwrap_or(0);
    if x <= 0 || y < 0 || y >= x {
        return vec![Decimal::ZERO; candidates.len()];
    }
    let mut order: Vec<(usize, usize)> = candidates.iter().copied().enumerate().collect();
    order.sort_by(|(_, a), (_, b)| {
        unit(*b)
            .cmp(&unit(*a))
            .then(lines[*a].id.cmp(&lines[*b].id))
    });
    let units: i64 = candidates.iter().map(|i| lines[*i].quantity).sum();
    let grouped = units / x * x;
    // Free positions among the first n units.
    let free_before = |n: i64| {
        let n = n.min(grouped);
        n / x * (x - y) + (n % x - y).max(0)
    };
    let mut exact = vec![Decimal::ZERO; candidates.len()];
    let mut position = 0;
    for (slot, i) in order {
        let q = lines[i].quantity;
        let free = free_before(position + q) - free_before(position);
        exact[slot] = Decimal::from(free) * unit(i);
        position += q;
    }
    exact
}

/// A meal deal sells one unit from each of its parts for x: each category it names is a part,
/// and its products together are one more. Deals are made while they save money, each taking
/// the most expensive unit left for every part; the saving is shared by the units' prices.
fn meal_deal(
    offer: &Offer,
    lines: &[SaleLine],
    candidates: &[usize],
    unit: &dyn Fn(usize) -> Decimal,
) -> Vec<Decimal> {
    let mut exact = vec![Decimal::ZERO; candidates.len()];
    // A part is a category (Some) or the deal's products (None).
    let mut parts: Vec<Option<i64>> = offer.category_ids.iter().copied().map(Some).collect();
    if !offer.product_ids.is_empty() {
        parts.push(None);
    }
    let fits = |part: &Option<i64>, l: &SaleLine| match part {
        Some(category) => l.category_ids.contains(category),
        None => offer.product_ids.contains(&l.product_id),
    };
    if parts.is_empty() {
        return exact;
    }
    let mut left: Vec<i64> = candidates.iter().map(|i| lines[*i].quantity).collect();
    // Each round uses up at least one line for at least one part: it ends.
    loop {
        let mut used = vec![0i64; candidates.len()];
        let mut chosen = Vec::with_capacity(parts.len());
        for part in &parts {
            let best = (0..candidates.len())
                .filter(|s| left[*s] - used[*s] >= 1 && fits(part, &lines[candidates[*s]]))
                .max_by(|a, b| {
                    unit(candidates[*a])
                        .cmp(&unit(candidates[*b]))
                        .then(lines[candidates[*b]].id.cmp(&lines[candidates[*a]].id))
                });
            let Some(s) = best else { return exact };
            used[s] += 1;
            chosen.push(s);
        }
        let deals = (0..candidates.len())
            .filter(|s| used[*s] > 0)
            .map(|s| left[s] / used[s])
            .min()
            .unwrap_or(0);
        let full: Decimal = chosen.iter().map(|s| unit(candidates[*s])).sum();
        let saving = full - offer.x;
        if deals <= 0 || saving <= Decimal::ZERO {
            return exact;
        }
        for s in &chosen {
            exact[*s] += Decimal::from(deals) * saving * unit(candidates[*s]) / full;
        }
        for (s, u) in used.iter().enumerate() {
            left[s] -= deals * u;
        }
    }
}
