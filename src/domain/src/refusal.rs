//! Why a write of one object was refused. The HTTP layer alone turns a refusal into a message
//! id and a status (110, 111, 112, 113 → 422).

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Refusal {
    /// The object is not valid: each problem names its field.
    Invalid(Vec<String>),
    /// The record is completed and may no longer change.
    Locked(Vec<String>),
    /// The record needs another to be completed first (an order on an open basket).
    NotComplete(Vec<String>),
    /// The object clashes with another record (a barcode in use, an id twice in one request).
    Conflict(Vec<String>),
    /// The object would take the merchant past one of its quotas (live products).
    OverQuota(Vec<String>),
}

impl Refusal {
    pub fn invalid(problem: impl Into<String>) -> Self {
        Refusal::Invalid(vec![problem.into()])
    }

    pub fn details(&self) -> &[String] {
        match self {
            Refusal::Invalid(d)
            | Refusal::Locked(d)
            | Refusal::NotComplete(d)
            | Refusal::Conflict(d)
            | Refusal::OverQuota(d) => d,
        }
    }
}
