use super::*;
use serde_json::json;

fn ctx_with<'a>(
    stock: &'a dyn Fn(i64, i64) -> i64,
    price: &'a dyn Fn(i64) -> InstancePrice,
) -> CountContext<'a> {
    CountContext {
        store_exists: &|s| s == 9,
        product_exists: &|p| p == 1 || p == 2,
        stock_left: stock,
        wastage_price: price,
        completed_in_request: &|_, _| None,
        price: &|b| Receipt {
            subtotal: b.lines.len() as i64,
            ..Receipt::default()
        },
    }
}

fn price(p: i64) -> InstancePrice {
    InstancePrice {
        product_id: p,
        instance_id: p * 10,
        price: Decimal::from(300),
        tax_percentage: Decimal::new(200, 3),
    }
}

use crate::testing::obj as fields;

/// Why a new count with this body, at a store holding nothing, is refused.
fn refused_create(body: Value) -> Vec<String> {
    let stock = |_, _| 0;
    let ctx = ctx_with(&stock, &price);
    StockReconciliation::new(100, 7)
        .apply(fields(body), &mut (1..), &ctx, 7, true)
        .unwrap_err()
}

#[test]
fn completing_books_the_shortfall_as_wastage_and_the_surplus_as_entries() {
    let stock = |_, p| if p == 1 { 98 } else { 5 };
    let ctx = ctx_with(&stock, &price);
    let mut ids = 101..;
    let count = StockReconciliation::new(100, 7)
        .apply(
            fields(json!({"storeId": 9, "completed": true, "products": {
                "1": {"productId": 1, "quantity": 96},
                "2": {"productId": 2, "quantity": 8, "costPrice": "41.7"}}})),
            &mut ids,
            &ctx,
            7,
            true,
        )
        .unwrap();
    assert_eq!(count.wastage_basket_id, Some(101));
    let basket = count.booked_basket.as_ref().unwrap();
    assert_eq!(basket.basket_type, BasketType::Wastage);
    assert!(basket.completed);
    assert_eq!((basket.lines[0].id, basket.lines[0].quantity), (102, 2));
    // Priced once its lines are in (the fixture's engine counts them).
    assert_eq!(basket.receipt.as_ref().map(|r| r.subtotal), Some(1));
    assert_eq!(count.surplus_entries[0].id, 103);
    assert_eq!(count.surplus_entries[0].quantity, 3);
    let line = |p: i64| count.lines.iter().find(|l| l.product_id == p).unwrap();
    assert_eq!(line(1).discrepancy(), Some(-2));
    assert_eq!(
        line(2).cost_price.map(|c| c.to_string()).as_deref(),
        Some("41.7")
    );
    assert_eq!(count.surplus_entry_ids(), [103]);
    assert_eq!(
        count.outcome(),
        "Count 100: 2 units short, booked as wastage basket 101; 3 units over, booked as received stock."
    );
}

#[test]
fn products_merge_by_product_id_and_null_removes_one() {
    let stock = |_, _| 0;
    let ctx = ctx_with(&stock, &price);
    let mut ids = 1..;
    let open = StockReconciliation::new(100, 7)
        .apply(
            fields(json!({"storeId": 9, "products": {"1": {"productId": 1, "quantity": 4}}})),
            &mut ids,
            &ctx,
            7,
            true,
        )
        .unwrap();
    let next = open
        .clone()
        .apply(
            fields(
                json!({"products": {"2": {"productId": 2, "quantity": 1}, "1": {"note": "shelf"}}}),
            ),
            &mut ids,
            &ctx,
            8,
            false,
        )
        .unwrap();
    assert_eq!(next.lines.len(), 2);
    assert_eq!(
        (next.lines[0].counted, next.lines[0].note.as_deref()),
        (4, Some("shelf"))
    );
    let fewer = next
        .apply(
            fields(json!({"products": {"1": null}})),
            &mut ids,
            &ctx,
            9,
            false,
        )
        .unwrap();
    assert_eq!(
        fewer.lines.iter().map(|l| l.product_id).collect::<Vec<_>>(),
        vec![2]
    );
}

#[test]
fn bad_counts_are_named() {
    let problems = refused_create(json!({"storeId": 8, "colour": 1, "products": {
                "1": {"productId": 2, "quantity": 1},
                "x": {"productId": 1, "quantity": 1},
                "2": {"productId": 2, "quantity": -1, "vatPercentage": "2"},
                "3": {"productId": 3, "quantity": 1}}}));
    crate::testing::assert_named(
        &problems,
        &[
            "colour: unknown field",
            "storeId: 8 is not a store",
            "1: productId: 2 differs from the key 1",
            "x: the key must be the product id",
            "2: quantity: must be a non-negative integer",
            "2: vatPercentage:",
            "3: productId: 3 is not a product",
        ],
    );
}

#[test]
fn an_empty_count_cannot_be_completed() {
    let problems = refused_create(json!({"storeId": 9, "completed": true}));
    assert!(problems[0].contains("without products"), "{problems:?}");
}
