//! Payments against baskets, and refunds of them (api-reference.md).

use serde_json::{Map, Value};

use crate::fields::{Fields, Patch, Shape};
use crate::money;
use merchantd_macros::Record;

pub const PAYMENT_TYPES: [&str; 5] = ["CASH", "CARD", "CHEQUE", "VOUCHER", "APP"];

/// A payment against a basket.
#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(history, table = "transactions", event = "transaction")]
pub struct TransactionRecord {
    pub id: i64,
    #[field(required, filter = "basketIds")]
    pub basket_id: i64,
    #[field(max_len = 20, name = "type", kind = "choice", choices = &PAYMENT_TYPES, required)]
    pub payment_type: String,
    /// Minor units.
    #[field(required)]
    pub amount: i64,
    pub tip: i64,
    #[field(max_len = 2000)]
    pub note: Option<String>,
    /// The payment this transaction refunds (a linked refund): its amount goes back.
    pub refund_of: Option<i64>,
    /// The basket's register, and the session open there when the payment was made.
    #[field(read_only)]
    pub register_id: Option<i64>,
    #[field(read_only, filter = "sessionIds")]
    pub session_id: Option<i64>,
    /// Who took it: the token's employee.
    #[field(read_only)]
    pub employee_id: Option<i64>,
    pub completed: bool,
    pub complete_date: Option<i64>,
    #[field(read_only)]
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
    /// The till's UUID for the payment, unique per merchant: creating it again answers the
    /// payment it made.
    #[field(max_len = crate::offline::sync::CLIENT_ID_LEN, create_only)]
    pub client_id: Option<String>,
    /// When the payment was taken at the till: its `completeDate` once completed.
    #[field(kind = "date")]
    pub occurred_at: Option<i64>,
    /// A digest of the body it was made from: the same `clientId` with another is refused.
    #[field(hidden)]
    pub client_digest: Option<String>,
}

pub(crate) fn minor_units(f: &mut Fields, key: &str, value: Option<&Value>) -> Option<i64> {
    match value {
        None | Some(Value::Null) => None,
        Some(Value::Number(n))
            if n.as_i64()
                .is_some_and(|v| (0..=money::MAX_MONEY).contains(&v)) =>
        {
            n.as_i64()
        }
        Some(_) => {
            f.reject(
                key,
                "must be a whole, non-negative number of minor units (600 is £6.00).",
            );
            None
        }
    }
}

/// What payment rules need from the rest of the merchant.
pub struct PaymentContext<'a> {
    /// Whether an id is a basket of this merchant (open or not: whether it is still open is a
    /// rule with its own message, checked by the caller).
    pub basket_exists: &'a dyn Fn(i64) -> bool,
    /// The payment a refund (`.0`) names: its type and what is left to refund of it.
    pub refundable: &'a dyn Fn(i64, i64) -> Result<Refundable, String>,
    /// Whether a refund may go back to another payment type than the payment's.
    pub any_type: bool,
    /// A basket's register and the session open there.
    pub till: &'a dyn Fn(i64) -> (Option<i64>, Option<i64>),
    /// The employee the writing token acts as (0: none).
    pub caller: i64,
}

/// What a refund needs of the payment it names.
pub struct Refundable {
    pub payment_type: String,
    /// Its amount less what other refunds give back.
    pub left: i64,
}

impl TransactionRecord {
    crate::blank!(|id, now|);

    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        ctx: &PaymentContext<'_>,
        now: i64,
        creating: bool,
    ) -> Result<Self, Vec<String>> {
        let amount = fields.get("amount").cloned();
        let tip = fields.get("tip").cloned();
        let mut f = Fields::declared::<Self>(fields);
        let moved = "a transaction cannot move to another basket.";
        let basket = f.fixed_reference(
            "basketId",
            self.basket_id,
            creating,
            ctx.basket_exists,
            "a basket",
            moved,
        );
        match basket {
            Some(Patch::Set(b)) => self.basket_id = b,
            Some(_) if creating => f.reject("basketId", "required field is missing."),
            _ => {}
        }
        let refunded = self.refund(&mut f, ctx, creating);
        match f.text("type") {
            Patch::Set(t) if PAYMENT_TYPES.contains(&t.as_str()) => self.payment_type = t,
            Patch::Set(t) => f.reject(
                "type",
                format!("\"{t}\" is not one of {}.", PAYMENT_TYPES.join(", ")),
            ),
            _ if creating && refunded.is_some() => {}
            _ if creating => f.reject("type", "required field is missing."),
            _ => {}
        }
        match minor_units(&mut f, "amount", amount.as_ref()) {
            Some(a) => self.amount = a,
            None if creating && amount.is_none() => {
                f.reject("amount", "required field is missing.")
            }
            None => {}
        }
        if let Some(payment) = refunded {
            self.check_refund(&mut f, payment, ctx.any_type);
        }
        if let Some(t) = minor_units(&mut f, "tip", tip.as_ref()) {
            self.tip = t;
        }
        self.note = f.text("note").apply(self.note);
        crate::offline::sync::client_fields(
            &mut f,
            "transaction",
            creating,
            now,
            (&mut self.client_id, &mut self.occurred_at),
        );
        if f.boolean("completed") == Some(true) {
            self.completed = true;
            self.complete_date = Some(self.occurred_at.unwrap_or(now));
        }
        f.finish()?;
        if creating {
            (self.register_id, self.session_id) = (ctx.till)(self.basket_id);
            self.employee_id = (ctx.caller != 0).then_some(ctx.caller);
        }
        Ok(self)
    }
}

impl TransactionRecord {
    /// The payment a refund names, read from `refundOf` (it never changes once written); its
    /// type becomes the refund's unless the write names one.
    fn refund(
        &mut self,
        f: &mut Fields,
        ctx: &PaymentContext<'_>,
        creating: bool,
    ) -> Option<Refundable> {
        match f.integer("refundOf") {
            Patch::Set(p) if !creating && self.refund_of != Some(p) => {
                f.reject("refundOf", "a refund cannot change the payment it refunds.");
                None
            }
            Patch::Clear if self.refund_of.is_some() => {
                f.reject("refundOf", "a refund cannot change the payment it refunds.");
                None
            }
            Patch::Set(p) => match (ctx.refundable)(self.id, p) {
                Ok(payment) => {
                    self.refund_of = Some(p);
                    if creating {
                        self.payment_type = payment.payment_type.clone();
                    }
                    Some(payment)
                }
                Err(why) => {
                    f.reject("refundOf", why);
                    None
                }
            },
            _ => self
                .refund_of
                .and_then(|p| (ctx.refundable)(self.id, p).ok()),
        }
    }

    fn check_refund(&self, f: &mut Fields, payment: Refundable, any_type: bool) {
        if !any_type && self.payment_type != payment.payment_type {
            f.reject(
                "type",
                format!(
                    "a refund goes back to the payment's type ({}); this merchant does not refund to another type.",
                    payment.payment_type
                ),
            );
        }
        if self.amount > payment.left {
            f.reject(
                "amount",
                format!(
                    "{} is more than is left to refund of payment {} ({}).",
                    self.amount,
                    self.refund_of.unwrap_or_default(),
                    payment.left
                ),
            );
        }
    }
}

/// The fields transaction writes accept (see [`Shape`]).
pub const TRANSACTION_SHAPE: Shape = Shape::of::<TransactionRecord>();
