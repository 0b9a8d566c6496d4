//! Identifiers handed out from blocks reserved in the database, so that creating a record
//! normally costs no statement of its own.

use std::sync::Mutex;

/// How many identifiers one reservation takes. Identifiers left in a block when the process
/// stops are never used: ids are unique, not dense.
pub(crate) const BLOCK: usize = 512;

#[derive(Default)]
pub(crate) struct IdBlocks {
    /// The next free id and the end (exclusive) of the reserved range.
    range: Mutex<(i64, i64)>,
}

impl IdBlocks {
    /// `n` ids from the current block, if it holds that many.
    pub(crate) fn take(&self, n: usize) -> Option<Vec<i64>> {
        let mut range = self.range.lock().unwrap_or_else(|p| p.into_inner());
        let (next, end) = *range;
        let n = n as i64;
        if end - next < n {
            return None;
        }
        range.0 = next + n;
        Some((next..next + n).collect())
    }

    /// Installs a freshly reserved block (the old one's remainder is dropped) and takes `n`.
    pub(crate) fn refill(&self, reserved: Vec<i64>, n: usize) -> Vec<i64> {
        let (first, last) = match (reserved.first(), reserved.last()) {
            (Some(f), Some(l)) => (*f, *l),
            _ => return Vec::new(),
        };
        // PostgreSQL's sequence gives consecutive values inside one reservation; should it
        // not, the ids are used one by one from the list instead of as a range.
        if last - first + 1 != reserved.len() as i64 {
            return reserved.into_iter().take(n).collect();
        }
        let mut range = self.range.lock().unwrap_or_else(|p| p.into_inner());
        let n = n as i64;
        *range = (first + n, last + 1);
        (first..first + n).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_used_in_order_then_refilled() {
        let ids = IdBlocks::default();
        assert_eq!(ids.take(1), None);
        assert_eq!(ids.refill((100..110).collect(), 3), vec![100, 101, 102]);
        assert_eq!(ids.take(2), Some(vec![103, 104]));
        assert_eq!(ids.take(6), None);
        assert_eq!(ids.take(5), Some(vec![105, 106, 107, 108, 109]));
        assert_eq!(ids.take(1), None);
    }
}
