use crate::merchant::resource::{Resource, Writing};
use domain::webhooks::webhook::{ServerFacts, WebhookRecord};

impl Resource for WebhookRecord {
    crate::resource_basics!(webhooks);

    fn on_deleted(&mut self, _at: i64) {
        self.new_secret = None;
    }

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        let facts = ServerFacts {
            secret: w.input.secret.as_deref(),
            disabled_because: w.input.disabled_because.as_deref(),
        };
        self.apply(w.input.fields, w.creating, facts)
    }

    /// The dispatcher turning an endpoint off says so in its own event, with the reason.
    fn also_event(&self, before: Option<&Self>) -> Option<&'static str> {
        let was_on = before.is_some_and(|b| b.active);
        (was_on && !self.active && self.disabled_reason.is_some()).then_some("disabled")
    }
}
