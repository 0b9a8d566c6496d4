use std::fmt;

/// OAuth scopes; each includes the ones before it (`read` ⊂ `write` ⊂ `admin`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    Read,
    Write,
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Write, Scope::Admin];

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "read" => Some(Scope::Read),
            "write" => Some(Scope::Write),
            "admin" => Some(Scope::Admin),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a token holds, reduced to its widest scope: holding `admin` implies `write` and `read`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScopeSet {
    highest: Scope,
}

impl ScopeSet {
    pub fn new(highest: Scope) -> Self {
        Self { highest }
    }

    /// Parses a space-separated scope string. `Err` names the first unknown scope; an empty
    /// string is `Ok(None)`.
    pub fn parse(s: &str) -> Result<Option<Self>, String> {
        let mut highest: Option<Scope> = None;
        for word in s.split([' ', '+']).filter(|w| !w.is_empty()) {
            let scope = Scope::parse(word).ok_or_else(|| word.to_owned())?;
            highest = Some(highest.map_or(scope, |h| h.max(scope)));
        }
        Ok(highest.map(Self::new))
    }

    /// Parses the scope of an old Shopwave client library (`legacy_clients`): names split by
    /// commas as well as spaces, and the old per-object names mapped to what they let an
    /// application do here: `user` and `merchant` read, every other old name writes. The new
    /// names keep their meaning; the caller caps the result by the employee's role as usual.
    pub fn parse_legacy(s: &str) -> Result<Option<Self>, String> {
        let mut highest: Option<Scope> = None;
        for word in s.split([' ', '+', ',']).filter(|w| !w.is_empty()) {
            let scope = Scope::parse(word)
                .or_else(|| legacy_scope(word))
                .ok_or_else(|| word.to_owned())?;
            highest = Some(highest.map_or(scope, |h| h.max(scope)));
        }
        Ok(highest.map(Self::new))
    }

    pub fn highest(self) -> Scope {
        self.highest
    }

    pub fn allows(self, needed: Scope) -> bool {
        self.highest >= needed
    }

    /// Narrows to at most `cap`.
    pub fn capped(self, cap: Scope) -> Self {
        Self::new(self.highest.min(cap))
    }

    /// The space-separated list of every scope held, as token responses show it.
    pub fn to_scope_string(self) -> String {
        Scope::ALL
            .iter()
            .filter(|s| **s <= self.highest)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The scope names of the old Shopwave API (its client libraries ask for all of them).
pub const LEGACY_SCOPES: [&str; 13] = [
    "user",
    "application",
    "merchant",
    "store",
    "product",
    "category",
    "basket",
    "promotion",
    "log",
    "supplierStore",
    "supplier",
    "invoice",
    "stock",
];

/// What an old scope name lets an application do: identity names read, object names write.
/// None grants `admin`: deleting and managing applications is asked for by the new name.
fn legacy_scope(word: &str) -> Option<Scope> {
    match word {
        "user" | "merchant" => Some(Scope::Read),
        w if LEGACY_SCOPES.contains(&w) => Some(Scope::Write),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_client_scopes_split_on_commas_and_map_to_read_or_write() {
        let all = LEGACY_SCOPES.join(",");
        assert_eq!(
            ScopeSet::parse_legacy(&all).unwrap().unwrap().highest(),
            Scope::Write
        );
        assert_eq!(
            ScopeSet::parse_legacy("user,merchant")
                .unwrap()
                .unwrap()
                .highest(),
            Scope::Read
        );
        assert_eq!(
            ScopeSet::parse_legacy("application")
                .unwrap()
                .unwrap()
                .highest(),
            Scope::Write
        );
        assert_eq!(
            ScopeSet::parse_legacy("read,admin")
                .unwrap()
                .unwrap()
                .highest(),
            Scope::Admin
        );
        assert_eq!(ScopeSet::parse_legacy("user,nope"), Err("nope".into()));
        assert_eq!(ScopeSet::parse_legacy(" , "), Ok(None));
        // Without the setting the old names stay unknown.
        assert_eq!(ScopeSet::parse("user"), Err("user".into()));
    }

    #[test]
    fn parse_takes_the_widest_and_names_unknown_scopes() {
        let set = ScopeSet::parse("read admin").unwrap().unwrap();
        assert_eq!(set.highest(), Scope::Admin);
        assert_eq!(set.to_scope_string(), "read write admin");
        assert_eq!(
            ScopeSet::parse("read superpowers"),
            Err("superpowers".into())
        );
        assert_eq!(ScopeSet::parse("  "), Ok(None));
    }

    #[test]
    fn capping_narrows() {
        let set = ScopeSet::new(Scope::Admin).capped(Scope::Read);
        assert!(set.allows(Scope::Read));
        assert!(!set.allows(Scope::Write));
        assert_eq!(set.to_scope_string(), "read");
    }
}
