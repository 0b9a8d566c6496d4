//! StoreActor: one per store of an active merchant. It owns that store's stock levels (and,
//! with the sales issue, its open baskets), publishes them for reads, and is restarted from the
//! database by its merchant supervisor when it fails.

use std::sync::Arc;

use actix::prelude::*;
use tokio::sync::watch;

use crate::merchant::ports::StockStore;
use crate::merchant::ports::StorageError;
use domain::stock::levels::StockMove;

pub use domain::stock::levels::StockMap;

pub struct StoreActor {
    merchant_id: i64,
    store_id: i64,
    storage: Arc<dyn StockStore>,
    publish: watch::Sender<Arc<StockMap>>,
}

impl StoreActor {
    /// Starts the actor. Its stock starts as `last_known` (what the merchant load read, or what
    /// a failed predecessor last published) so a read never sees an empty store while the actor
    /// reloads from the database.
    pub fn spawn(
        merchant_id: i64,
        store_id: i64,
        storage: Arc<dyn StockStore>,
        last_known: Arc<StockMap>,
    ) -> (Addr<StoreActor>, watch::Receiver<Arc<StockMap>>) {
        let (publish, stock) = watch::channel(last_known);
        let addr = StoreActor {
            merchant_id,
            store_id,
            storage,
            publish,
        }
        .start();
        (addr, stock)
    }
}

impl Actor for StoreActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let storage = self.storage.clone();
        let (merchant_id, store_id) = (self.merchant_id, self.store_id);
        ctx.wait(
            storage
                .store_stock(merchant_id, store_id)
                .into_actor(self)
                .map(|loaded, act, ctx| match loaded {
                    Ok(stock) => {
                        act.publish.send_replace(Arc::new(stock));
                    }
                    Err(e) => {
                        tracing::error!(store_id = act.store_id, error = %e, "stock load failed");
                        ctx.stop();
                    }
                }),
        );
    }
}

/// How many products have stock recorded at the store (test hook and health probe).
#[derive(Message)]
#[rtype(result = "Result<usize, StorageError>")]
pub struct Probe {
    /// Test hook: panic inside the actor instead of answering.
    pub crash: bool,
}

impl Handler<Probe> for StoreActor {
    type Result = Result<usize, StorageError>;

    fn handle(&mut self, msg: Probe, _: &mut Self::Context) -> Self::Result {
        if msg.crash {
            panic!("test hook: store actor {} told to crash", self.store_id);
        }
        Ok(self.publish.borrow().len())
    }
}

/// Committed moves for this store: applied to the published levels.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ApplyStock(pub Vec<StockMove>);

impl Handler<ApplyStock> for StoreActor {
    type Result = ();

    fn handle(&mut self, msg: ApplyStock, _: &mut Self::Context) {
        let mut stock = (**self.publish.borrow()).clone();
        for m in msg.0 {
            let level = stock.entry(m.product_id).or_default();
            level.total += m.total;
            level.sold += m.sold;
        }
        self.publish.send_replace(Arc::new(stock));
    }
}
