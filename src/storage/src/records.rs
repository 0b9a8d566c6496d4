//! How the merchant supervisor's records are loaded, found and written: one [`Record`]
//! implementation per record type, over the row codec of `rows`. Sales records also answer
//! filtered queries ([`SalesRecord`]), because the cache holds only their open and recent part.

use crate::rows::{self, in_list, TableRow};
use crate::stock::counts as reconcile;
use crate::{Backend, Db, DbError, Tx};
use domain::batch::Change;
use domain::catalogue::category::CategoryRecord;
use domain::catalogue::product::ProductRecord;
use domain::catalogue::promotion::PromotionRecord;
use domain::catalogue::store::StoreRecord;
use domain::catalogue::supplier::{SupplierRecord, SupplierStoreRecord};
use domain::customers::customer::CustomerRecord;
use domain::people::application::ApplicationRecord;
use domain::people::employee::EmployeeRecord;
use domain::record::{Declared, Visit};
use domain::sales::basket::BasketRecord;
use domain::sales::order::OrderRecord;
use domain::sales::payment::TransactionRecord;
use domain::stock::count::StockReconciliation;
use domain::stock::invoice::InvoiceRecord;
use domain::till::register::RegisterRecord;
use domain::till::session::{CashMovementRecord, SessionRecord};
use domain::webhooks::webhook::WebhookRecord;
use ports::SalesFilter;

/// Most values bound in one statement's `IN (...)` list; longer lists are split.
const CHUNK: usize = 500;

/// A merchant-owned record that the merchant supervisor caches and writes through. What every
/// record does alike is the default: catalogue records are loaded whole, found by id in
/// chunks, and written as their row (with their children, for parents), new rows of one write
/// together. A record says only what it does differently.
#[allow(async_fn_in_trait)]
pub trait Record: MaybeChildren {
    /// What the cache holds of a merchant's records: all of them, or for sales records the
    /// open ones.
    async fn load(db: &Db, merchant_id: i64) -> Result<Vec<Self>, DbError> {
        let mut conn = db.pool().acquire().await?;
        Self::select_rows(&mut conn, db.backend(), merchant_id, "", &[]).await
    }

    /// Records by id, whatever their state; unknown ids are simply absent.
    async fn find(db: &Db, merchant_id: i64, ids: &[i64]) -> Result<Vec<Self>, DbError> {
        let mut conn = db.pool().acquire().await?;
        let mut found = Vec::new();
        for chunk in ids.chunks(CHUNK) {
            let clause = in_list("id", 2, chunk.len());
            found.extend(
                Self::select_rows(&mut conn, db.backend(), merchant_id, &clause, chunk).await?,
            );
        }
        Ok(found)
    }

    /// The records matching `filter`; only sales records (history kinds) are read by filter.
    async fn history(
        db: &Db,
        merchant_id: i64,
        filter: &SalesFilter,
    ) -> Result<Vec<Self>, DbError> {
        let _ = (db, merchant_id, filter);
        Err(DbError::Corrupt(format!(
            "{} rows are not read by filter",
            Self::TABLE
        )))
    }

    /// Inserts the record (`is_new`) or rewrites it, with whatever it brings along.
    async fn persist(&self, tx: &mut Tx, merchant_id: i64, is_new: bool) -> Result<(), DbError> {
        Self::write_one(tx, merchant_id, self, is_new).await
    }

    /// Writes the records of one write, in order: new ones together (see [`persist_rows`] and
    /// [`insert_parents`]), then the changed ones.
    async fn persist_all(
        tx: &mut Tx,
        merchant_id: i64,
        records: &[(Change, Self)],
    ) -> Result<(), DbError> {
        Self::write_many(tx, merchant_id, records).await
    }
}

/// Writes the records of one write one by one, through the record's own `persist` (for
/// records whose writes do more than store a row).
async fn persist_each<R: Record>(
    tx: &mut Tx,
    merchant_id: i64,
    records: &[(Change, R)],
) -> Result<(), DbError> {
    for (change, record) in records {
        record.persist(tx, merchant_id, change.is_new()).await?;
    }
    Ok(())
}

/// The records of one write that are new.
fn new_ones<R>(records: &[(Change, R)]) -> Vec<&R> {
    records
        .iter()
        .filter(|(c, _)| c.is_new())
        .map(|(_, r)| r)
        .collect()
}

/// New plain rows in one statement, then the updates one by one.
async fn persist_rows<R: TableRow>(
    tx: &mut Tx,
    merchant_id: i64,
    records: &[(Change, R)],
) -> Result<(), DbError> {
    tx.insert_rows(merchant_id, &new_ones(records)).await?;
    for (_, record) in records.iter().filter(|(c, _)| !c.is_new()) {
        tx.write_row(merchant_id, record, false).await?;
    }
    Ok(())
}

/// New parents in one statement and all their children in another.
async fn insert_parents<P: rows::WithChildren>(
    tx: &mut Tx,
    merchant_id: i64,
    records: &[(Change, P)],
) -> Result<(), DbError> {
    let new = new_ones(records);
    tx.insert_rows(merchant_id, &new).await?;
    let children: Vec<&P::Child> = new.iter().flat_map(|p| p.children()).collect();
    tx.insert_rows(merchant_id, &children).await
}

/// New parents with their children (see [`insert_parents`]), then the updates.
async fn persist_parents<P: rows::WithChildren>(
    tx: &mut Tx,
    merchant_id: i64,
    records: &[(Change, P)],
) -> Result<(), DbError> {
    insert_parents(tx, merchant_id, records).await?;
    for (change, record) in records.iter().filter(|(c, _)| !c.is_new()) {
        if *change == Change::UpdatedKeepingChildren {
            tx.write_row(merchant_id, record, false).await?;
        } else {
            tx.write_with_children(merchant_id, record, false).await?;
        }
    }
    Ok(())
}

/// A sales record that can be read by filter.
#[allow(async_fn_in_trait)]
pub trait SalesRecord: Record {
    /// The SQL condition for `completed: true` (negated for `false`).
    const COMPLETED: &'static str;

    /// Rows matching `clause` (after `WHERE merchant_id = $1`) with their children.
    async fn select(
        db: &Db,
        merchant_id: i64,
        clause: &str,
        binds: &[i64],
    ) -> Result<Vec<Self>, DbError> {
        let mut conn = db.pool().acquire().await?;
        Self::select_rows(&mut conn, db.backend(), merchant_id, clause, binds).await
    }

    async fn query(db: &Db, merchant_id: i64, filter: &SalesFilter) -> Result<Vec<Self>, DbError>
    where
        Self: Visit + Declared,
    {
        let mut clause = String::new();
        let mut binds: Vec<i64> = Vec::new();
        if !filter.include_deleted {
            clause.push_str(" AND delete_date IS NULL");
        }
        if let Some(completed) = filter.completed {
            if completed {
                clause.push_str(&format!(" AND ({})", Self::COMPLETED));
            } else {
                clause.push_str(&format!(" AND NOT ({})", Self::COMPLETED));
            }
        }
        if let Some((from, to)) = filter.completed_between {
            clause.push_str(&format!(
                " AND complete_date >= ${} AND complete_date < ${}",
                binds.len() + 2,
                binds.len() + 3
            ));
            binds.extend([from, to]);
        }
        // Each list on the column of the field that declares its filter; a filter the record
        // does not declare does not narrow it.
        let mut lists: Vec<(&str, &Vec<i64>)> = filter
            .lists
            .iter()
            .filter_map(|(header, ids)| Some((Self::DECL.filtered_by(header)?.column?, ids)))
            .collect();
        if let Some(ids) = &filter.ids {
            lists.push(("id", ids));
        }
        // Every list but the longest is bound whole when short enough (else left to the
        // caller's own filter); the longest is split into chunks, one statement each.
        lists.sort_by_key(|(_, l)| l.len());
        let longest = lists.pop();
        for (column, list) in lists {
            if list.is_empty() {
                return Ok(Vec::new());
            }
            if list.len() <= CHUNK {
                clause.push_str(&in_list(column, binds.len() + 2, list.len()));
                binds.extend(list.iter().copied());
            }
        }
        let Some((column, list)) = longest else {
            return Self::select(db, merchant_id, &clause, &binds).await;
        };
        let mut found = Vec::new();
        for chunk in list.chunks(CHUNK) {
            let chunk_clause = format!("{clause}{}", in_list(column, binds.len() + 2, chunk.len()));
            let mut chunk_binds = binds.clone();
            chunk_binds.extend(chunk.iter().copied());
            found.extend(Self::select(db, merchant_id, &chunk_clause, &chunk_binds).await?);
        }
        found.sort_by_key(Visit::key);
        found.dedup_by_key(|r| r.key());
        Ok(found)
    }
}

/// How a record's rows are read and written: plain rows, parents with their children, or rows
/// whose writes do more (revoke tokens, keep secrets).
#[allow(async_fn_in_trait)]
pub trait MaybeChildren: TableRow {
    async fn select_rows(
        conn: &mut sqlx::AnyConnection,
        backend: Backend,
        merchant_id: i64,
        clause: &str,
        binds: &[i64],
    ) -> Result<Vec<Self>, DbError>;

    async fn write_one(
        tx: &mut Tx,
        merchant_id: i64,
        record: &Self,
        is_new: bool,
    ) -> Result<(), DbError>;

    async fn write_many(
        tx: &mut Tx,
        merchant_id: i64,
        records: &[(Change, Self)],
    ) -> Result<(), DbError>;
}

/// How the rows of these record types are read and written: `$select` reads them, `$one`
/// writes one, `$many` the records of one write.
macro_rules! rows_of {
    ($select:path, $one:ident, $many:path; $($t:ty),*) => {
        $(impl MaybeChildren for $t {
            async fn select_rows(
                conn: &mut sqlx::AnyConnection,
                backend: Backend,
                merchant_id: i64,
                clause: &str,
                binds: &[i64],
            ) -> Result<Vec<Self>, DbError> {
                $select(conn, backend, merchant_id, clause, binds).await
            }

            async fn write_one(
                tx: &mut Tx,
                merchant_id: i64,
                record: &Self,
                is_new: bool,
            ) -> Result<(), DbError> {
                tx.$one(merchant_id, record, is_new).await
            }

            async fn write_many(
                tx: &mut Tx,
                merchant_id: i64,
                records: &[(Change, Self)],
            ) -> Result<(), DbError> {
                $many(tx, merchant_id, records).await
            }
        })*
    };
}

rows_of!(
    rows::select, write_row, persist_rows;
    StoreRecord,
    CategoryRecord,
    SupplierRecord,
    SupplierStoreRecord,
    CustomerRecord,
    RegisterRecord,
    SessionRecord,
    CashMovementRecord,
    PromotionRecord,
    TransactionRecord,
    OrderRecord
);
rows_of!(
    rows::select_with_children, write_with_children, persist_parents;
    BasketRecord, InvoiceRecord
);
// Products keep their instances' ids; employees, applications and webhooks revoke tokens or
// keep secrets as they are written; a count is read with its lines and surplus entries, and
// written with the wastage basket its completion books.
rows_of!(rows::select_with_children, persist_product, persist_products; ProductRecord);
rows_of!(rows::select, persist_employee, persist_each; EmployeeRecord);
rows_of!(rows::select, persist_application, persist_each; ApplicationRecord);
rows_of!(rows::select, persist_webhook, persist_each; WebhookRecord);
rows_of!(reconcile::select_counts, persist_count, persist_each; StockReconciliation);

/// A `plain` record of the registry is a row of its declaration, stored the default way.
macro_rules! plain_records {
    ($($collection:ident: $ty:path = $rules:ident,)*) => {
        $(plain_records!(@ $rules $ty);)*
    };
    (@ own $ty:path) => {};
    (@ plain $ty:path) => {
        rows_of!(rows::select, write_row, persist_rows; $ty);
        impl Record for $ty {}
    };
}

domain::for_each_record!(plain_records);

impl Record for StoreRecord {}
impl Record for CategoryRecord {}
impl Record for SupplierRecord {}
impl Record for SupplierStoreRecord {}
impl Record for CustomerRecord {}
impl Record for RegisterRecord {}
impl Record for SessionRecord {}
impl Record for CashMovementRecord {}
impl Record for PromotionRecord {}
impl Record for ProductRecord {}
impl Record for EmployeeRecord {}
impl Record for ApplicationRecord {}
impl Record for WebhookRecord {}

/// New products and all their instances in two statements, then the updates (which keep the
/// stored instances' rows).
async fn persist_products(
    tx: &mut Tx,
    merchant_id: i64,
    records: &[(Change, ProductRecord)],
) -> Result<(), DbError> {
    insert_parents(tx, merchant_id, records).await?;
    for (_, product) in records.iter().filter(|(c, _)| !c.is_new()) {
        tx.persist_product(merchant_id, product, false).await?;
    }
    Ok(())
}

/// Sales records: the cache holds those `open` selects (a clause after `WHERE merchant_id =
/// $1`), history reads the rest by filter; `completed` is the SQL condition of `completed:
/// true`.
macro_rules! sales_records {
    ($($t:ty: open $open:expr, completed $completed:expr;)*) => {$(
        impl Record for $t {
            async fn load(db: &Db, merchant_id: i64) -> Result<Vec<Self>, DbError> {
                Self::select(db, merchant_id, $open, &[]).await
            }

            async fn history(
                db: &Db,
                merchant_id: i64,
                filter: &SalesFilter,
            ) -> Result<Vec<Self>, DbError> {
                <Self as SalesRecord>::query(db, merchant_id, filter).await
            }
        }

        impl SalesRecord for $t {
            const COMPLETED: &'static str = $completed;
        }
    )*};
}

/// Open: not completed and not deleted.
const OPEN: &str = "AND completed = 0 AND delete_date IS NULL";

/// Pending payments, and every payment of an open basket (what the basket has been paid).
/// Two indexed look-ups joined by UNION: written with OR, the planner read every payment the
/// merchant ever took (50 ms of activation at 200,000 sales).
const PAYMENTS_OF_OPEN: &str = "AND id IN (\
    SELECT id FROM transactions WHERE merchant_id = $1 AND completed = 0 \
    AND delete_date IS NULL \
    UNION SELECT id FROM transactions WHERE merchant_id = $1 AND basket_id IN \
    (SELECT id FROM baskets WHERE merchant_id = $1 AND completed = 0 \
    AND delete_date IS NULL))";

/// An order is finished once completed or cancelled.
const ORDER_FINISHED: &str = "status IN ('completed', 'cancelled')";

sales_records! {
    BasketRecord: open OPEN, completed "completed = 1";
    TransactionRecord: open PAYMENTS_OF_OPEN, completed "completed = 1";
    OrderRecord:
        open &format!("AND NOT ({ORDER_FINISHED}) AND delete_date IS NULL"),
        completed ORDER_FINISHED;
    InvoiceRecord: open OPEN, completed "completed = 1";
    StockReconciliation: open OPEN, completed "completed = 1";
}
