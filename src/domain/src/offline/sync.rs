//! Sales a till made while offline (`POST /basket/sync`, docs/offline.md): the till's own
//! identity (`clientId`) and time (`occurredAt`) for each sale, parsed at the edge into
//! [`OfflineSale`], and the warnings a sale is recorded with when the merchant's records
//! changed while the till could not know.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::fingerprint::Fingerprint;
use crate::{dates, money};

/// The longest an offline sale may claim to lie ahead of the server's clock: a till's clock
/// drifts, but a sale cannot happen in the future.
pub const CLOCK_SKEW_MILLIS: i64 = 5 * 60 * 1000;

/// One completed sale as the till recorded it.
#[derive(Clone, Debug, PartialEq)]
pub struct OfflineSale {
    /// The till's UUID for the sale, unique per merchant: sending it again is a repeat.
    pub client_id: String,
    /// When the sale happened at the till (epoch ms).
    pub occurred_at: i64,
    pub store_id: i64,
    pub register_id: Option<i64>,
    /// The till session it was sold in (open or closed since).
    pub session_id: Option<i64>,
    pub employee_id: Option<i64>,
    pub customer_id: Option<i64>,
    pub note: Option<String>,
    /// Promotions the till applied by hand.
    pub promotion_ids: Vec<i64>,
    /// (client key, line) in the body's order.
    pub lines: Vec<(String, OfflineLine)>,
    /// (client key, payment) in the body's order.
    pub payments: Vec<(String, OfflinePayment)>,
    /// The body's digests (see [`Fingerprint`]): the same `clientId` with another body is
    /// refused.
    pub fingerprint: Fingerprint,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OfflineLine {
    pub product_id: i64,
    pub product_instance_id: Option<i64>,
    pub quantity: i64,
    /// The unit price the till sold at (the instance's price when left out).
    pub price: Option<Decimal>,
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OfflinePayment {
    pub payment_type: String,
    /// Minor units.
    pub amount: i64,
    pub tip: i64,
}

/// Something that changed since the till sold (or that the till could not check), recorded
/// with the sale instead of refusing it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncWarning {
    /// `priceChanged`, `productDeleted`, `promotionNotApplied`, `stockShortfall`,
    /// `sessionClosed`, `underpaid`.
    pub code: String,
    /// The client key of the line or payment it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub detail: String,
}

/// The warnings a synced basket was recorded with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SyncWarnings(pub Vec<SyncWarning>);

crate::json_cell!(SyncWarnings, SyncWarnings, "SyncWarnings");

impl SyncWarnings {
    pub fn push(&mut self, code: &str, key: Option<&str>, detail: String) {
        self.0.push(SyncWarning {
            code: code.to_owned(),
            key: key.map(str::to_owned),
            detail,
        });
    }
}

/// A product a synced sale took more of than its store had left: the data of a
/// `stock.shortfall` event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shortfall {
    pub store_id: i64,
    pub product_id: i64,
    /// The basket that sold it.
    pub basket_id: i64,
    /// Units sold beyond what was left.
    pub short: i64,
    /// The stock left after the sale (negative).
    pub level: i64,
}

/// Whether `text` is a UUID in its usual form (8-4-4-4-12 hexadecimal digits).
pub fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A `clientId` as written, in the form it is kept and looked up in: trimmed, lower case.
pub fn client_key(value: &Value) -> Option<String> {
    value.as_str().map(|s| s.trim().to_ascii_lowercase())
}

/// The length of a `clientId`: a UUID in its 8-4-4-4-12 form.
pub const CLIENT_ID_LEN: usize = 36;

/// A record's own identity from the till (`clientId`, set when it is created) and its time
/// at the till (`occurredAt`, up to now), as a basket or a transaction write gives them.
pub fn client_fields(
    f: &mut crate::fields::Fields,
    noun: &str,
    creating: bool,
    now: i64,
    (client_id, occurred_at): (&mut Option<String>, &mut Option<i64>),
) {
    use crate::fields::Patch;
    // A record sent back as it was read (`"clientId": null`, or its own id) changes nothing.
    match f.text("clientId") {
        Patch::Set(id) if !is_uuid(&id) => f.reject(
            "clientId",
            format!(
                "\"{id}\" is not a UUID (the till makes one per record: 8-4-4-4-12 hex digits)."
            ),
        ),
        Patch::Set(id) if creating => *client_id = Some(id.to_ascii_lowercase()),
        Patch::Set(id) if client_id.as_deref() == Some(&id.to_ascii_lowercase()) => {}
        Patch::Clear if client_id.is_none() => {}
        Patch::Set(_) | Patch::Clear if !creating => f.reject(
            "clientId",
            format!("a {noun}'s clientId is set when it is created."),
        ),
        Patch::Set(_) | Patch::Clear | Patch::Keep => {}
    }
    match f.date("occurredAt") {
        Patch::Set(at) if at > now.saturating_add(CLOCK_SKEW_MILLIS) => f.reject(
            "occurredAt",
            "lies in the future: what happened at the till happened up to now.",
        ),
        Patch::Set(at) => *occurred_at = Some(at),
        Patch::Clear => *occurred_at = None,
        Patch::Keep => {}
    }
}

const SALE_FIELDS: &[&str] = &[
    "clientId",
    "occurredAt",
    "storeId",
    "registerId",
    "sessionId",
    "employeeId",
    "customerId",
    "note",
    "promotionIds",
    "basketProducts",
    "payments",
];
const LINE_FIELDS: &[&str] = &[
    "productId",
    "productInstanceId",
    "quantity",
    "price",
    "note",
];
const PAYMENT_FIELDS: &[&str] = &["type", "amount", "tip"];

/// Reads fields of one object, collecting every problem as `field: reason`.
struct Reader<'a> {
    fields: &'a Map<String, Value>,
    prefix: String,
    problems: Vec<String>,
}

impl<'a> Reader<'a> {
    fn new(fields: &'a Map<String, Value>, prefix: String, known: &[&str]) -> Self {
        let mut reader = Self {
            fields,
            prefix,
            problems: Vec::new(),
        };
        for name in fields.keys() {
            if !known.contains(&name.as_str()) {
                reader.reject(
                    name,
                    format!("is not a field (fields: {}).", known.join(", ")),
                );
            }
        }
        reader
    }

    fn reject(&mut self, field: &str, why: impl std::fmt::Display) {
        self.problems.push(format!("{}{field}: {why}", self.prefix));
    }

    fn present(&self, field: &str) -> Option<&'a Value> {
        self.fields.get(field).filter(|v| !v.is_null())
    }

    fn id(&mut self, field: &str, required: bool) -> Option<i64> {
        match self.present(field) {
            None if required => {
                self.reject(field, "required field is missing.");
                None
            }
            None => None,
            Some(v) => match v.as_i64().filter(|id| *id > 0) {
                Some(id) => Some(id),
                None => {
                    self.reject(field, format!("{v} is not an id (a positive integer)."));
                    None
                }
            },
        }
    }

    fn text(&mut self, field: &str, max: usize) -> Option<String> {
        match self.present(field) {
            None => None,
            Some(Value::String(s)) if s.chars().count() <= max => Some(s.clone()),
            Some(Value::String(_)) => {
                self.reject(field, format!("at most {max} characters."));
                None
            }
            Some(_) => {
                self.reject(field, "must be text.");
                None
            }
        }
    }

    fn integer(&mut self, field: &str, range: std::ops::RangeInclusive<i64>) -> Option<i64> {
        let value = self.present(field)?;
        match value.as_i64().filter(|n| range.contains(n)) {
            Some(n) => Some(n),
            None => {
                self.reject(
                    field,
                    format!(
                        "{value} is not a whole number from {} to {}.",
                        range.start(),
                        range.end()
                    ),
                );
                None
            }
        }
    }

    /// Keyed objects (`{"a": {...}}`), each read by `read`.
    fn keyed<T>(
        &mut self,
        field: &str,
        mut read: impl FnMut(&Map<String, Value>, String) -> Result<T, Vec<String>>,
    ) -> Vec<(String, T)> {
        let mut out = Vec::new();
        match self.present(field) {
            None => {}
            Some(Value::Object(entries)) => {
                for (key, entry) in entries {
                    let prefix = format!("{}{field}.{key}.", self.prefix);
                    match entry {
                        Value::Object(entry) => match read(entry, prefix) {
                            Ok(item) => out.push((key.clone(), item)),
                            Err(problems) => self.problems.extend(problems),
                        },
                        _ => self.problems.push(format!("{prefix}: must be an object.")),
                    }
                }
            }
            Some(_) => self.reject(field, "must be an object keyed by client keys."),
        }
        out
    }

    fn finish<T>(self, value: T) -> Result<T, Vec<String>> {
        if self.problems.is_empty() {
            Ok(value)
        } else {
            Err(self.problems)
        }
    }
}

impl OfflineSale {
    /// Parses one sale of a sync body; `now` bounds `occurredAt`. Every problem is named.
    pub fn parse(
        fields: &Map<String, Value>,
        fingerprint: Fingerprint,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        let mut r = Reader::new(fields, String::new(), SALE_FIELDS);
        let client_id = match r.present("clientId") {
            Some(Value::String(s)) if is_uuid(s) => s.to_ascii_lowercase(),
            Some(v) => {
                r.reject(
                    "clientId",
                    format!("{v} is not a UUID (8-4-4-4-12 hexadecimal digits)."),
                );
                String::new()
            }
            None => {
                r.reject("clientId", "required: the UUID the till gave the sale.");
                String::new()
            }
        };
        let occurred_at = match r.present("occurredAt") {
            Some(Value::String(s)) => {
                match dates::parse(s) {
                    Ok(at) if at <= now + CLOCK_SKEW_MILLIS => at,
                    Ok(_) => {
                        r.reject("occurredAt", "lies in the future: a sale that happened has a time of sale up to now.");
                        0
                    }
                    Err(why) => {
                        r.reject("occurredAt", why);
                        0
                    }
                }
            }
            Some(_) => {
                r.reject("occurredAt", "must be a date (2026-03-28T13:58:00.000Z).");
                0
            }
            None => {
                r.reject(
                    "occurredAt",
                    "required: when the sale happened at the till.",
                );
                0
            }
        };
        let store_id = r.id("storeId", true).unwrap_or(0);
        let register_id = r.id("registerId", false);
        let session_id = r.id("sessionId", false);
        if session_id.is_some() && register_id.is_none() {
            r.reject(
                "sessionId",
                "a session is a register's: send registerId too.",
            );
        }
        let employee_id = r.id("employeeId", false);
        let customer_id = r.id("customerId", false);
        let note = r.text("note", 2000);
        let promotion_ids = match r.present("promotionIds") {
            None => Vec::new(),
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_i64).collect(),
            Some(_) => {
                r.reject("promotionIds", "must be an array of promotion ids.");
                Vec::new()
            }
        };
        let lines = r.keyed("basketProducts", OfflineLine::parse);
        if lines.is_empty() && r.problems.is_empty() {
            r.reject("basketProducts", "required: a sale has at least one line.");
        }
        let payments = r.keyed("payments", OfflinePayment::parse);
        r.finish(Self {
            client_id,
            occurred_at,
            store_id,
            register_id,
            session_id,
            employee_id,
            customer_id,
            note,
            promotion_ids,
            lines,
            payments,
            fingerprint,
        })
    }
}

impl OfflineLine {
    fn parse(fields: &Map<String, Value>, prefix: String) -> Result<Self, Vec<String>> {
        let mut r = Reader::new(fields, prefix, LINE_FIELDS);
        let product_id = r.id("productId", true).unwrap_or(0);
        let product_instance_id = r.id("productInstanceId", false);
        let max = money::MAX_QUANTITY;
        let quantity = match r.integer("quantity", -max..=max) {
            Some(0) => {
                r.reject("quantity", "must not be 0.");
                0
            }
            Some(q) => q,
            None if r.present("quantity").is_none() => {
                r.reject("quantity", "required field is missing.");
                0
            }
            None => 0,
        };
        let price = match r.present("price") {
            None => None,
            Some(v) => match money::money(v) {
                Ok(p) => Some(p),
                Err(why) => {
                    r.reject("price", why);
                    None
                }
            },
        };
        let note = r.text("note", 2000);
        r.finish(Self {
            product_id,
            product_instance_id,
            quantity,
            price,
            note,
        })
    }
}

impl OfflinePayment {
    fn parse(fields: &Map<String, Value>, prefix: String) -> Result<Self, Vec<String>> {
        let mut r = Reader::new(fields, prefix, PAYMENT_FIELDS);
        let types = &crate::sales::payment::PAYMENT_TYPES;
        let payment_type = match r.present("type") {
            Some(Value::String(t)) if types.contains(&t.as_str()) => t.clone(),
            Some(v) => {
                r.reject("type", format!("{v} is not one of {}.", types.join(", ")));
                String::new()
            }
            None => {
                r.reject("type", "required field is missing.");
                String::new()
            }
        };
        let amount = match r.integer("amount", 0..=money::MAX_MONEY) {
            Some(a) => a,
            None if r.present("amount").is_none() => {
                r.reject("amount", "required: minor units (600 is £6.00).");
                0
            }
            None => 0,
        };
        let tip = r.integer("tip", 0..=money::MAX_MONEY).unwrap_or(0);
        r.finish(Self {
            payment_type,
            amount,
            tip,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(body: Value) -> Result<OfflineSale, Vec<String>> {
        let Value::Object(fields) = body else {
            unreachable!()
        };
        OfflineSale::parse(&fields, Fingerprint::of(&fields), 1_800_000_000_000)
    }

    #[test]
    fn a_sale_reads_its_identity_time_lines_and_payments() {
        let sale = parse(json!({
            "clientId": "6F9619FF-8B86-D011-B42D-00CF4FC964FF",
            "occurredAt": "2026-11-28T10:00:00.000Z",
            "storeId": 5, "registerId": 7, "sessionId": 8,
            "basketProducts": {"a": {"productId": 9, "quantity": 2, "price": "150"}},
            "payments": {"p": {"type": "CASH", "amount": 300}}
        }))
        .unwrap();
        assert_eq!(sale.client_id, "6f9619ff-8b86-d011-b42d-00cf4fc964ff");
        assert_eq!(sale.lines[0].1.price, Some(Decimal::from(150)));
        assert_eq!(sale.payments[0].1.amount, 300);
    }

    #[test]
    fn every_problem_is_named() {
        let problems = parse(json!({
            "clientId": "nope", "occurredAt": "2099-01-01T00:00:00Z", "storeId": -1,
            "sessionId": 3, "colour": 1,
            "basketProducts": {"a": {"productId": 9, "quantity": 0}, "b": 3},
            "payments": {"p": {"type": "GOLD", "amount": -1}}
        }))
        .unwrap_err();
        crate::testing::assert_named(
            &problems,
            &[
                "colour: is not a field",
                "clientId: \"nope\" is not a UUID",
                "occurredAt: lies in the future",
                "storeId: -1 is not an id",
                "sessionId: a session is a register's",
                "basketProducts.a.quantity: must not be 0",
                "basketProducts.b.: must be an object",
                "payments.p.type: \"GOLD\" is not one of",
                "payments.p.amount: -1 is not a whole number",
            ],
        );
    }
}
