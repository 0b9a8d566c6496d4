//! A change event as streams and webhooks send it (docs/events.md).

use crate::views::json::push_str;
use domain::dates::to_iso;
use domain::event::Event;

/// `{"sequence", "type", "occurredAt", "objectId", "object"}`; the object is the record as the
/// write rendered it for its events.
pub fn payload(event: &Event) -> String {
    let mut n = itoa::Buffer::new();
    let mut out = String::with_capacity(event.data.len() + 128);
    out.push_str("{\"sequence\":");
    out.push_str(n.format(event.seq));
    out.push_str(",\"type\":");
    push_str(&mut out, &event.kind);
    out.push_str(",\"occurredAt\":");
    push_str(&mut out, &to_iso(event.occurred_at).unwrap_or_default());
    out.push_str(",\"objectId\":");
    out.push_str(n.format(event.object_id));
    out.push_str(",\"object\":");
    out.push_str(&event.data);
    out.push('}');
    out
}
