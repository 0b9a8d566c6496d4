use serde::Serialize;

use super::Scope;

/// An employee's role (DESIGN §5). The numeric ids are the real service's `roleId`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Default)]
pub enum Role {
    Owner,
    Manager,
    AssistantManager,
    Assistant,
    #[default]
    Guest,
}

impl Role {
    pub const MANIFEST_NAMES: &'static str = "owner, manager, assistantManager, assistant, guest";

    pub fn from_manifest_name(name: &str) -> Option<Self> {
        match name {
            "owner" => Some(Role::Owner),
            "manager" => Some(Role::Manager),
            "assistantManager" => Some(Role::AssistantManager),
            "assistant" => Some(Role::Assistant),
            "guest" => Some(Role::Guest),
            _ => None,
        }
    }

    pub fn from_id(id: i64) -> Option<Self> {
        match id {
            1 => Some(Role::Owner),
            2 => Some(Role::Manager),
            3 => Some(Role::Assistant),
            4 => Some(Role::Guest),
            5 => Some(Role::AssistantManager),
            _ => None,
        }
    }

    pub fn id(self) -> i64 {
        match self {
            Role::Owner => 1,
            Role::Manager => 2,
            Role::Assistant => 3,
            Role::Guest => 4,
            Role::AssistantManager => 5,
        }
    }

    /// The widest scope a token of this role may hold.
    pub fn highest_scope(self) -> Scope {
        match self {
            Role::Owner | Role::Manager => Scope::Admin,
            Role::AssistantManager | Role::Assistant => Scope::Write,
            Role::Guest => Scope::Read,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_caps_follow_design() {
        for role in [
            Role::Owner,
            Role::Manager,
            Role::AssistantManager,
            Role::Assistant,
            Role::Guest,
        ] {
            assert_eq!(Role::from_id(role.id()), Some(role));
        }
        assert_eq!(Role::Guest.highest_scope(), Scope::Read);
        assert_eq!(Role::AssistantManager.highest_scope(), Scope::Write);
        assert_eq!(Role::Manager.highest_scope(), Scope::Admin);
        assert_eq!(Role::from_manifest_name("boss"), None);
    }
}
