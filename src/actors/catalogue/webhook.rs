use crate::actors::resource::{Resource, Writing};
use crate::domain::webhook::{ServerFacts, WebhookRecord};

impl Resource for WebhookRecord {
    fn id(&self) -> i64 {
        self.id
    }

    fn delete_date(&self) -> Option<i64> {
        self.delete_date
    }

    fn mark_deleted(&mut self, at: i64) {
        self.delete_date = Some(at);
        self.new_secret = None;
    }

    crate::resource_collection!(webhooks);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        let Writing {
            input, creating, ..
        } = w;
        let facts = ServerFacts {
            secret: input.secret.as_deref(),
            disabled_because: input.disabled_because.as_deref(),
        };
        self.apply(input.fields, creating, facts)
    }

    /// The dispatcher turning an endpoint off says so in its own event, with the reason.
    fn also_event(&self, before: Option<&Self>) -> Option<&'static str> {
        let was_on = before.is_some_and(|b| b.active);
        (was_on && !self.active && self.disabled_reason.is_some()).then_some("disabled")
    }
}
