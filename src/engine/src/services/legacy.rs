//! Which applications may use the old Shopwave client libraries' conventions
//! (`legacy_clients` in their merchant's manifest). Asked only when a request needs it (no or
//! a 0.x `x-accept-version`, the report's `from`/`to`), so the API's usual path never pays
//! for it; an answer is kept a minute, so a changed manifest takes effect within one.

use std::time::Duration;

use moka::future::Cache;

use domain::Failure;
use ports::Directory;

#[derive(Clone)]
pub struct LegacyClients {
    known: Cache<i64, bool>,
}

impl LegacyClients {
    pub fn new() -> Self {
        Self {
            known: Cache::builder()
                .max_capacity(10_000)
                .time_to_live(Duration::from_secs(60))
                .build(),
        }
    }

    pub async fn allowed(
        &self,
        directory: &dyn Directory,
        application_id: i64,
    ) -> Result<bool, Failure> {
        if let Some(allowed) = self.known.get(&application_id).await {
            return Ok(allowed);
        }
        let allowed = directory.application_is_legacy(application_id).await?;
        self.known.insert(application_id, allowed).await;
        Ok(allowed)
    }
}

impl Default for LegacyClients {
    fn default() -> Self {
        Self::new()
    }
}
