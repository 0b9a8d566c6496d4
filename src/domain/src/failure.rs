//! Why an operation below the HTTP layer could not be carried out at all (as opposed to a
//! refusal of the request, which the domain states precisely). The HTTP layer answers 503 for
//! [`Failure::Unavailable`] and 500 for [`Failure::Internal`], never showing the details.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The database could not be reached.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// Anything else that went wrong: a failed statement, a stopped actor, corrupt data.
    #[error("{0}")]
    Internal(String),
}

impl Failure {
    pub fn internal(why: impl std::fmt::Display) -> Self {
        Failure::Internal(why.to_string())
    }
}
