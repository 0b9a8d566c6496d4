//! Stock levels of one product at one store, and the moves that change them.

/// Units received (`total`) and units that left in completed baskets (`sold`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StockLevel {
    pub total: i64,
    pub sold: i64,
}

impl StockLevel {
    pub fn left(&self) -> i64 {
        self.total - self.sold
    }
}

/// A change of one product's stock at one store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StockMove {
    pub store_id: i64,
    pub product_id: i64,
    /// Units received (+) or, for corrections, removed.
    pub total: i64,
    /// Units that left in completed baskets.
    pub sold: i64,
}
