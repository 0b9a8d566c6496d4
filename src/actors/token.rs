//! TokenActors: every take of an authorization code or refresh token is a message to the shard
//! that owns its hash, so concurrent uses of one credential are serialized in this process. The
//! store's conditional UPDATE makes the same guarantee across processes; the actor spares the
//! database a pile-up of transactions racing for one row and answers the losers in order.

use actix::prelude::*;

use crate::db::oauth::{CodeExchange, NewPair, RefreshExchange, RotateRefresh};
use crate::db::{Db, DbError};
use crate::oauth::pkce;

/// Takes a code and stores the pair it buys.
#[derive(Message)]
#[rtype(result = "Result<CodeExchange, DbError>")]
pub struct ExchangeCode {
    pub code_hash: String,
    pub application_id: i64,
    pub redirect_uri: Option<String>,
    pub code_verifier: Option<String>,
    pub pair: NewPair,
}

/// Picks the new access scope from the family's scope and the user's current role id.
pub type DecideScope = Box<dyn FnOnce(&str, i64) -> Result<String, String> + Send>;
/// Seals the successor pair given its final scope.
pub type SealSuccessor = Box<dyn FnOnce(&str) -> String + Send>;
/// Opens a sealed successor and returns its refresh token's hash.
pub type OpenSuccessor = Box<dyn FnOnce(&str) -> Option<String> + Send>;

/// Rotates a refresh token. Carries the clear successor pair only to seal it for retries.
#[derive(Message)]
#[rtype(result = "Result<RefreshExchange, DbError>")]
pub struct Rotate {
    pub refresh_hash: String,
    pub application_id: i64,
    pub grace_millis: i64,
    pub pair: NewPair,
    pub decide: DecideScope,
    pub seal: SealSuccessor,
    pub successor_of: OpenSuccessor,
}

struct TokenShard {
    db: Db,
}

impl Actor for TokenShard {
    type Context = Context<Self>;
}

impl Handler<ExchangeCode> for TokenShard {
    type Result = AtomicResponse<Self, Result<CodeExchange, DbError>>;

    fn handle(&mut self, msg: ExchangeCode, _: &mut Self::Context) -> Self::Result {
        let store = self.db.clone();
        AtomicResponse::new(Box::pin(
            async move {
                let ExchangeCode {
                    code_hash,
                    application_id,
                    redirect_uri,
                    code_verifier,
                    pair,
                } = msg;
                store
                    .exchange_code(&code_hash, application_id, &pair, |facts| {
                        if redirect_uri.as_deref() != Some(facts.redirect_uri.as_str()) {
                            return Err(
                                "redirect_uri differs from the authorization request".into()
                            );
                        }
                        pkce::check(facts.code_challenge.as_deref(), code_verifier.as_deref())
                    })
                    .await
            }
            .into_actor(self),
        ))
    }
}

impl Handler<Rotate> for TokenShard {
    type Result = AtomicResponse<Self, Result<RefreshExchange, DbError>>;

    fn handle(&mut self, msg: Rotate, _: &mut Self::Context) -> Self::Result {
        let store = self.db.clone();
        AtomicResponse::new(Box::pin(
            async move {
                let Rotate {
                    refresh_hash,
                    application_id,
                    grace_millis,
                    pair,
                    decide,
                    seal,
                    successor_of,
                } = msg;
                store
                    .rotate_refresh(
                        RotateRefresh {
                            hash: &refresh_hash,
                            application_id,
                            grace_millis,
                            pair: &pair,
                        },
                        |family, role| decide(&family.scope, role),
                        seal,
                        successor_of,
                    )
                    .await
            }
            .into_actor(self),
        ))
    }
}

/// The shards, addressed by credential hash.
#[derive(Clone)]
pub struct TokenActors {
    shards: Vec<Addr<TokenShard>>,
}

impl TokenActors {
    /// Starts `n` shards on the current arbiter.
    pub fn start(db: Db, n: usize) -> Self {
        let shards = (0..n.max(1))
            .map(|_| TokenShard { db: db.clone() }.start())
            .collect();
        Self { shards }
    }

    fn shard(&self, hash: &str) -> &Addr<TokenShard> {
        let bucket = u64::from_str_radix(hash.get(..8).unwrap_or("0"), 16).unwrap_or(0);
        &self.shards[(bucket % self.shards.len() as u64) as usize]
    }

    pub async fn exchange_code(&self, msg: ExchangeCode) -> Result<CodeExchange, DbError> {
        self.shard(&msg.code_hash)
            .send(msg)
            .await
            .map_err(|e| DbError::Corrupt(format!("token actor unavailable: {e}")))?
    }

    pub async fn rotate(&self, msg: Rotate) -> Result<RefreshExchange, DbError> {
        self.shard(&msg.refresh_hash)
            .send(msg)
            .await
            .map_err(|e| DbError::Corrupt(format!("token actor unavailable: {e}")))?
    }
}
