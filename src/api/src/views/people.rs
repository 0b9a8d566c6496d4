//! Who a token acts as (`GET /user`), from the merchant's snapshot.

use crate::views::json::{push_str, write_store_roles};
use crate::views::Snapshot;
use domain::people::employee::EmployeeRecord;

/// `{"id", "firstName", "lastName", "email", "employee": {"merchantId", "roleId", "stores"}}`
/// of a live employee; `None` when the snapshot has none with this id.
pub fn user(snapshot: &Snapshot, employee_id: i64) -> Option<String> {
    let state = snapshot.state();
    let employee = state.find::<EmployeeRecord>(employee_id)?;
    let mut n = itoa::Buffer::new();
    let mut out = String::with_capacity(256);
    out.push_str("{\"id\":");
    out.push_str(n.format(employee.id));
    out.push_str(",\"firstName\":");
    optional(&mut out, employee.first_name.as_deref());
    out.push_str(",\"lastName\":");
    optional(&mut out, employee.last_name.as_deref());
    out.push_str(",\"email\":");
    push_str(&mut out, &employee.email);
    out.push_str(",\"employee\":{\"merchantId\":");
    out.push_str(n.format(state.merchant_id));
    out.push_str(",\"roleId\":");
    out.push_str(n.format(employee.role.id()));
    out.push_str(",\"stores\":");
    write_store_roles(&mut out, &employee.stores);
    out.push_str("}}");
    Some(out)
}

fn optional(out: &mut String, text: Option<&str>) {
    match text {
        Some(text) => push_str(out, text),
        None => out.push_str("null"),
    }
}
