use std::collections::BTreeSet;

use crate::actors::merchant::state::MerchantState;
use crate::actors::resource::{Resource, Writing};
use crate::domain::customer::{search_prefixes, CustomerRecord};

impl Resource for CustomerRecord {
    crate::resource_basics!(customers);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        self.apply(w.input.fields)
    }

    fn reindex(state: &mut MerchantState, before: Option<&Self>, after: Option<&Self>) {
        let index = &mut state.index.customers_by_key;
        for key in before.map(Self::search_keys).unwrap_or_default() {
            index.remove(&(key, before.map_or(0, |b| b.id)));
        }
        for key in after.map(Self::search_keys).unwrap_or_default() {
            index.insert((key, after.map_or(0, |a| a.id)));
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
