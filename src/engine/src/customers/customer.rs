use std::collections::BTreeSet;

use crate::merchant::resource::{Resource, Writing};
use crate::merchant::state::MerchantState;
use domain::customers::customer::{search_prefixes, CustomerRecord};

impl Resource for CustomerRecord {
    crate::resource_basics!(customers);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        self.apply(w.input.fields)
    }

    fn reindex(state: &mut MerchantState, before: Option<&Self>, after: Option<&Self>) {
        let index = &mut state.index.customers_by_key;
        if let Some(b) = before {
            for key in b.search_keys() {
                index.remove(&(key, b.id));
            }
        }
        if let Some(a) = after {
            for key in a.search_keys() {
                index.insert((key, a.id));
            }
        }
    }
}

/// The customers a search text may find: those with a search key it starts, looked up in the
/// prefix index rather than by a scan (the caller still checks each with `matches`).
pub fn search_candidates(state: &MerchantState, text: &str) -> BTreeSet<i64> {
    let index = &state.index.customers_by_key;
    let mut found = BTreeSet::new();
    for prefix in search_prefixes(text) {
        found.extend(
            index
                .range((prefix.clone(), i64::MIN)..)
                .take_while(|(key, _)| key.starts_with(&prefix))
                .map(|(_, id)| *id),
        );
    }
    found
}
