use crate::merchant::resource::{Resource, Writing};
use crate::merchant::state::MerchantState;
use domain::catalogue::category::CategoryRecord;

/// A parent must be a live category of this merchant whose ancestors do not include `child`.
fn parent_check(state: &MerchantState, child: i64, parent: i64) -> Result<(), String> {
    let mut cursor = Some(parent);
    let mut steps = 0;
    while let Some(id) = cursor {
        if id == child {
            return Err(format!(
                "{parent} would make the category its own ancestor."
            ));
        }
        let Some(category) = state.find::<CategoryRecord>(id) else {
            return Err(format!("{parent} is not a category of this merchant."));
        };
        cursor = category.parent_id;
        steps += 1;
        if steps > state.categories.len() {
            break;
        }
    }
    Ok(())
}

impl Resource for CategoryRecord {
    crate::resource_basics!(categories);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        let state = w.state;
        self.apply(w.input.fields, |child, parent| {
            parent_check(state, child, parent)
        })
    }
}
