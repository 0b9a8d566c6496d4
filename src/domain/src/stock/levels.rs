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

/// One store's stock: product → level.
pub type StockMap = std::collections::BTreeMap<i64, StockLevel>;

/// A change of one product's stock at one store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StockMove {
    pub store_id: i64,
    pub product_id: i64,
    /// Units received (+) or, for corrections, removed.
    pub total: i64,
    /// Units that left in completed baskets.
    pub sold: i64,
    /// When it happened (epoch ms): a sale's time of sale, a delivery's or a count's
    /// completion. The stock ledger orders movements by it.
    pub at: i64,
    pub reason: MoveReason,
    /// The basket, invoice or stock count that moved it.
    pub source_id: i64,
}

impl StockMove {
    /// What it changes the units left by.
    pub fn quantity(&self) -> i64 {
        self.total - self.sold
    }
}

/// Why stock moved, as the ledger (`GET /stock/movement`) names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MoveReason {
    #[default]
    Sale,
    /// Units a return line puts back.
    Return,
    /// Goods received on an invoice.
    Receipt,
    /// A stock count's shortfall or surplus.
    Count,
}

impl MoveReason {
    pub fn as_str(self) -> &'static str {
        match self {
            MoveReason::Sale => "sale",
            MoveReason::Return => "return",
            MoveReason::Receipt => "receipt",
            MoveReason::Count => "count",
        }
    }
}

/// The most movements one ledger read answers.
pub const MAX_MOVEMENTS: usize = 10_000;

/// One movement of the stock ledger, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Movement {
    pub store_id: i64,
    pub product_id: i64,
    pub occurred_at: i64,
    pub arrived_at: i64,
    /// `sale`, `return`, `receipt`, `count`, or `opening` (the level when the ledger began).
    pub reason: String,
    pub source_id: i64,
    pub quantity: i64,
}

/// The ledger of some products over `[from, to)`: each (store, product)'s level at `from`
/// (Σ of the movements before it) and the movements between.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    pub opening: Vec<(i64, i64, i64)>,
    pub movements: Vec<Movement>,
}
