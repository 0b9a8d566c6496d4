//! The token actors' port ([`TokenStore`]) on one database: each call one transaction.

use domain::now_millis;
use domain::oauth::grants::authorization_code;
use domain::oauth::grants::refresh_token::{self, RefreshExchange, RefreshGrant};
use domain::oauth::token::{
    AccessTokenRecord, Client, ConnectedGrant, FamilyUse, GrantsOf, NewFamily, NewSession,
    SessionPurpose, SessionRecord, SignInCandidate, TokenInfo,
};
use ports::{Grant, Granted, NewCode, Pending, TokenStore};

use crate::Db;

impl TokenStore for Db {
    fn rotate_batch<'a>(
        &'a self,
        grants: &'a [&'a RefreshGrant],
    ) -> Pending<'a, Vec<Option<RefreshExchange>>> {
        Box::pin(async move {
            let mut tx = self.begin().await?;
            let answers = refresh_token::rotate_batch(&mut tx, grants, now_millis()).await?;
            tx.commit().await?;
            Ok(answers)
        })
    }

    fn grant<'a>(&'a self, grant: &'a Grant) -> Pending<'a, Granted> {
        Box::pin(async move {
            let mut tx = self.begin().await?;
            let now = now_millis();
            let (granted, commits) = match grant {
                Grant::Code(g) => {
                    let outcome = authorization_code::exchange(&mut tx, g, now).await?;
                    let commits = outcome.commits();
                    (Granted::Code(outcome), commits)
                }
                Grant::Refresh(g) => {
                    let outcome = refresh_token::rotate(&mut tx, g, now).await?;
                    let commits = outcome.commits();
                    (Granted::Refresh(outcome), commits)
                }
            };
            if commits {
                tx.commit().await?;
            } else {
                tx.rollback().await?;
            }
            Ok(granted)
        })
    }

    fn hears_revocations(&self) -> bool {
        self.coherence().is_live()
    }

    fn access_token<'a>(&'a self, hash: &'a str) -> Pending<'a, Option<AccessTokenRecord>> {
        Box::pin(async move { Ok(self.find_access_token(hash).await?) })
    }

    fn revoke_token<'a>(&'a self, hash: &'a str, application_id: i64) -> Pending<'a, Vec<String>> {
        Box::pin(async move {
            let mut tx = self.begin().await?;
            let revoked = tx.revoke_token(hash, application_id).await?;
            tx.commit().await?;
            Ok(revoked)
        })
    }

    fn token_info<'a>(
        &'a self,
        hash: &'a str,
        application_id: i64,
    ) -> Pending<'a, Option<TokenInfo>> {
        Box::pin(async move { Ok(Db::token_info(self, hash, application_id).await?) })
    }

    fn client<'a>(&'a self, client_id: &'a str) -> Pending<'a, Option<Client>> {
        Box::pin(async move { Ok(self.find_client(client_id).await?) })
    }

    fn sign_in_candidates<'a>(&'a self, email: &'a str) -> Pending<'a, Vec<SignInCandidate>> {
        Box::pin(async move { Ok(Db::sign_in_candidates(self, email).await?) })
    }

    fn create_session<'a>(&'a self, hash: &'a str, session: &'a NewSession) -> Pending<'a, ()> {
        Box::pin(async move {
            let mut tx = self.begin().await?;
            tx.create_session(hash, session).await?;
            Ok(tx.commit().await?)
        })
    }

    fn session<'a>(
        &'a self,
        hash: &'a str,
        purpose: SessionPurpose,
    ) -> Pending<'a, Option<SessionRecord>> {
        Box::pin(async move { Ok(self.find_session(hash, purpose).await?) })
    }

    fn end_session<'a>(&'a self, hash: &'a str) -> Pending<'a, ()> {
        Box::pin(async move {
            let mut tx = self.begin().await?;
            tx.delete_session(hash).await?;
            Ok(tx.commit().await?)
        })
    }

    fn connected_grants(&self, of: GrantsOf, now: i64) -> Pending<'_, Vec<ConnectedGrant>> {
        Box::pin(async move { Ok(Db::connected_grants(self, of, now).await?) })
    }

    fn revoke_grant<'a>(
        &'a self,
        of: GrantsOf,
        family_id: &'a str,
    ) -> Pending<'a, Option<(i64, i64, Vec<String>)>> {
        Box::pin(async move {
            let mut tx = self.begin().await?;
            let revoked = tx.revoke_grant(of, family_id, now_millis()).await?;
            if revoked.is_some() {
                tx.commit().await?;
            } else {
                tx.rollback().await?;
            }
            Ok(revoked)
        })
    }

    fn issue_code<'a>(&'a self, code: NewCode<'a>) -> Pending<'a, ()> {
        Box::pin(async move {
            let mut tx = self.begin().await?;
            tx.create_code(code.family, code.code_hash, code.facts, code.expires_at)
                .await?;
            Ok(tx.commit().await?)
        })
    }

    fn issue_access_token<'a>(
        &'a self,
        family: &'a NewFamily,
        access_hash: &'a str,
        expires_at: i64,
    ) -> Pending<'a, ()> {
        Box::pin(
            async move { Ok(Db::issue_access_token(self, family, access_hash, expires_at).await?) },
        )
    }

    fn purge_expired(&self, before: i64) -> Pending<'_, u64> {
        Box::pin(async move {
            let mut tx = self.begin().await?;
            let removed = tx.purge_expired_oauth(before).await?;
            tx.commit().await?;
            Ok(removed)
        })
    }

    fn record_uses<'a>(&'a self, uses: &'a [FamilyUse]) -> Pending<'a, ()> {
        Box::pin(async move {
            let mut tx = self.begin().await?;
            tx.record_family_uses(uses).await?;
            Ok(tx.commit().await?)
        })
    }
}
