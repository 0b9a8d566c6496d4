use serde_json::{Map, Value};
use sqlx::AnyConnection;

use crate::actors::merchant::MerchantState;
use crate::actors::resource::{Ids, Resource};
use crate::db::{products, DbError};
use crate::domain::category::CategoryRecord;
use crate::domain::product::{ProductContext, ProductRecord};

fn context(state: &MerchantState) -> impl Fn(i64) -> bool + '_ {
    |id| state.find::<CategoryRecord>(id).is_some()
}

impl Resource for ProductRecord {
    const NOUN: &'static str = "Product";
    const PLURAL: &'static str = "products";

    crate::resource_basics!(products);

    fn ids_needed(fields: &Map<String, Value>) -> usize {
        1 + ProductRecord::new_instances(fields)
    }

    fn create(
        ids: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        let id = ids
            .next()
            .ok_or_else(|| vec!["no identifier was available.".to_owned()])?;
        let exists = context(state);
        ProductRecord::new(id, now).apply(
            fields,
            ids,
            &ProductContext {
                category_exists: &exists,
            },
            now,
        )
    }

    fn update(
        &self,
        ids: Ids<'_>,
        fields: Map<String, Value>,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        let exists = context(state);
        self.clone().apply(
            fields,
            ids,
            &ProductContext {
                category_exists: &exists,
            },
            now,
        )
    }

    fn conflicts(&self, state: &MerchantState) -> Vec<String> {
        match &self.barcode {
            Some(code) => state
                .live::<ProductRecord>()
                .find(|p| p.id != self.id && p.barcode.as_ref() == Some(code))
                .map(|p| {
                    vec![format!(
                        "barcode: \"{code}\" is already used by product {}.",
                        p.id
                    )]
                })
                .unwrap_or_default(),
            None => Vec::new(),
        }
    }

    fn to_json(&self, state: &MerchantState) -> Value {
        ProductRecord::to_json(
            self,
            |id| state.find::<CategoryRecord>(id).map(|c| c.title.clone()),
            |file| format!("{}/files/{file}", state.files_base),
        )
    }

    async fn load(conn: &mut AnyConnection, merchant_id: i64) -> Result<Vec<Self>, DbError> {
        products::load_products(conn, merchant_id).await
    }

    async fn persist(
        conn: &mut AnyConnection,
        merchant_id: i64,
        record: &Self,
        is_new: bool,
    ) -> Result<(), DbError> {
        products::persist_product(conn, merchant_id, record, is_new).await
    }
}
