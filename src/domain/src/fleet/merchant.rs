//! A merchant as its users see it (`/merchant`).

#[derive(Debug, Clone)]
pub struct MerchantRecord {
    pub id: i64,
    pub name: String,
}
