use crate::actors::resource::{Resource, Writing};
use crate::domain::customer::CustomerRecord;

impl Resource for CustomerRecord {
    crate::resource_basics!(customers);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        self.apply(w.input.fields)
    }
}
