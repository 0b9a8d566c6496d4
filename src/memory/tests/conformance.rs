//! The storage conformance suite (`merchantd-ports`) on storage in
//! memory: the same stories SQLite and PostgreSQL pass.

use std::sync::Arc;

use domain::sales::pricing::SaleSettings;
use merchantd_memory::MemoryStorage;
use ports::conformance::{run, Fixture};

#[tokio::test]
async fn storage_in_memory_conforms() {
    run(|| async {
        let storage = MemoryStorage::new();
        for merchant in [1, 2] {
            storage.add_merchant(merchant, SaleSettings::default());
        }
        Fixture {
            storage: Arc::new(storage),
            // Memory keeps no table of stores: any store id does.
            merchants: [(1, 11), (2, 12)],
        }
    })
    .await;
}
