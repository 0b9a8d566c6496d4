//! An employee of a merchant: a person who signs in on the authorization page
//! (api-reference.md, Employee; DESIGN §5).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::fields::{Fields, Patch, Shape};
use crate::Role;
use merchantd_macros::Record;

/// The longest first or last name.
pub const NAME_MAX: usize = 100;

#[derive(Clone, Debug, Default, PartialEq, Record)]
#[record(table = "employees", event = "employee")]
pub struct EmployeeRecord {
    pub id: i64,
    /// Manifest users have no names until they are set through the API.
    #[field(max_len = NAME_MAX, required)]
    pub first_name: Option<String>,
    #[field(max_len = NAME_MAX, required)]
    pub last_name: Option<String>,
    /// Lower-case: sign-in looks employees up by the lower-cased email.
    #[field(max_len = 254, required)]
    pub email: String,
    /// The role's id (1 owner, 2 manager, 5 assistant manager, 3 assistant, 4 guest).
    #[field(name = "roleId", column = "role_id", kind = "integer", required)]
    pub role: Role,
    /// Per-store roles: store id → role at that store.
    #[field(kind = "store_roles")]
    pub stores: BTreeMap<i64, Role>,
    pub joined_date: Option<i64>,
    pub exit_date: Option<i64>,
    pub active_date: Option<i64>,
    pub delete_date: Option<i64>,
}

/// The fields writes accept (see [`Shape`]).
pub const SHAPE: Shape = Shape::of::<EmployeeRecord>();

/// What validating an employee needs to know about the merchant.
pub trait Directory {
    fn is_live_store(&self, id: i64) -> bool;
}

/// How far a role reaches, to tell a raise from a lowering (role ids are not ordered).
pub fn rank(role: Role) -> u8 {
    match role {
        Role::Owner => 5,
        Role::Manager => 4,
        Role::AssistantManager => 3,
        Role::Assistant => 2,
        Role::Guest => 1,
    }
}

const NOT_A_ROLE: &str =
    "must be a role id (1 owner, 2 manager, 3 assistant, 4 guest, 5 assistantManager).";

fn role_from(value: Option<&Value>) -> Result<Role, String> {
    value
        .and_then(Value::as_i64)
        .and_then(Role::from_id)
        .ok_or_else(|| NOT_A_ROLE.to_owned())
}

/// A written email, trimmed and lower-cased, or why it is not one.
pub fn normalize_email(text: &str) -> Result<String, String> {
    let email = text.trim().to_lowercase();
    let valid = email.len() <= 254
        && !email.chars().any(char::is_whitespace)
        && email
            .split_once('@')
            .is_some_and(|(local, domain)| !local.is_empty() && !domain.is_empty())
        && email.matches('@').count() == 1;
    if valid {
        Ok(email)
    } else {
        Err(format!("\"{}\" is not an email address.", text.trim()))
    }
}

impl EmployeeRecord {
    crate::blank!(|id, now|);

    /// Soft delete: the employee also leaves (an exit date already passed is kept).
    /// A deleted employee has left by the time of the delete (an earlier exit date stays).
    pub fn end_employment(&mut self, at: i64) {
        self.exit_date = Some(self.exit_date.map_or(at, |exit| exit.min(at)));
    }

    /// Applies written fields. Names, email and role are required on create; an update may
    /// leave a missing name missing (manifest users have none) but not remove one.
    /// `by_self` says the caller is this employee (a fact of the token, not of the JSON): then
    /// the write may not raise their own role or stores.
    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        creating: bool,
        by_self: bool,
        directory: &dyn Directory,
    ) -> Result<Self, Vec<String>> {
        let before = self.clone();
        let mut fields = fields;
        let stores = fields.remove("stores");
        let mut f = Fields::declared::<Self>(fields);
        let by_self = !creating && by_self;
        for (key, slot) in [
            ("firstName", &mut self.first_name),
            ("lastName", &mut self.last_name),
        ] {
            match f.text(key) {
                Patch::Clear if slot.is_some() => f.reject(key, "cannot be cleared."),
                patch => *slot = patch.apply(slot.take()),
            }
        }
        let email = match f.text("email") {
            Patch::Set(text) => match normalize_email(&text) {
                Ok(email) => Some(email),
                Err(why) => {
                    f.reject("email", why);
                    None
                }
            },
            Patch::Clear if !creating => {
                f.reject("email", "cannot be cleared.");
                None
            }
            Patch::Clear | Patch::Keep => (!creating).then(|| self.email.clone()),
        };
        let role = match f.integer("roleId") {
            Patch::Set(id) => match Role::from_id(id) {
                Some(role) => Some(role),
                None => {
                    f.reject("roleId", NOT_A_ROLE);
                    None
                }
            },
            Patch::Clear if !creating => {
                f.reject("roleId", "cannot be cleared.");
                None
            }
            Patch::Clear | Patch::Keep => (!creating).then_some(self.role),
        };
        if let Some(stores) = stores.and_then(|v| parse_stores(&mut f, v, directory)) {
            self.stores = stores;
        }
        self.joined_date = f.date("joinedDate").apply(self.joined_date);
        self.exit_date = f.date("exitDate").apply(self.exit_date);
        self.active_date = f.date("activeDate").apply(self.active_date);
        if creating {
            f.require("firstName", &self.first_name);
            f.require("lastName", &self.last_name);
        }
        f.require("email", &email);
        f.require("roleId", &role);
        if let (true, Some(role)) = (by_self, role) {
            for problem in raises(&before, role, &self.stores) {
                f.reject(problem.0, problem.1);
            }
        }
        f.finish()?;
        self.email = email.unwrap_or_default();
        self.role = role.unwrap_or(Role::Guest);
        Ok(self)
    }
}

/// `stores` as written: an object keyed by store id, each `{"roleId": n}` (an `id`, when sent,
/// must be that store id). `null` clears every per-store role. `None` when left out or bad.
fn parse_stores(
    f: &mut Fields,
    value: Value,
    directory: &dyn Directory,
) -> Option<BTreeMap<i64, Role>> {
    let entries = match value {
        Value::Null => return Some(BTreeMap::new()),
        Value::Object(entries) => entries,
        _ => {
            f.reject(
                "stores",
                "must be an object keyed by store id, each {\"roleId\": n}.",
            );
            return None;
        }
    };
    let mut stores = BTreeMap::new();
    let mut ok = true;
    for (key, entry) in entries {
        let mut problem = |why: String| {
            f.reject("stores", format!("{key}: {why}"));
            ok = false;
        };
        let Value::Object(entry) = entry else {
            problem("must be an object {\"roleId\": n}.".into());
            continue;
        };
        if let Some(unknown) = entry.keys().find(|k| *k != "id" && *k != "roleId") {
            problem(format!("{unknown}: unknown field."));
            continue;
        }
        let id = match (entry.get("id"), key.trim().parse::<i64>().ok()) {
            (None | Some(Value::Null), Some(id)) => id,
            (Some(Value::Number(n)), from_key) if n.as_i64().is_some() => {
                let id = n.as_i64().unwrap_or_default();
                if from_key.is_some_and(|k| k != id) {
                    problem(format!("id {id} differs from the store id of the key."));
                    continue;
                }
                id
            }
            _ => {
                problem("the key (or id) must be a store id.".into());
                continue;
            }
        };
        let role = match role_from(entry.get("roleId")) {
            Ok(role) => role,
            Err(why) => {
                problem(format!("roleId: {why}"));
                continue;
            }
        };
        if !directory.is_live_store(id) {
            problem(format!("{id} is not a store of this merchant."));
            continue;
        }
        stores.insert(id, role);
    }
    ok.then_some(stores)
}

/// The ways an update by the employee themself would raise their own role.
fn raises(
    before: &EmployeeRecord,
    role: Role,
    stores: &BTreeMap<i64, Role>,
) -> Vec<(&'static str, String)> {
    let mut problems = Vec::new();
    if rank(role) > rank(before.role) {
        problems.push(("roleId", "you cannot raise your own role.".to_owned()));
    }
    for (store, store_role) in stores {
        let held = before
            .stores
            .get(store)
            .map_or(rank(before.role), |r| rank(*r).max(rank(before.role)));
        if rank(*store_role) > held {
            problems.push((
                "stores",
                format!("{store}: you cannot raise your own role at this store."),
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Stores(Vec<i64>);
    impl Directory for Stores {
        fn is_live_store(&self, id: i64) -> bool {
            self.0.contains(&id)
        }
    }

    use crate::testing::obj;

    fn sam() -> EmployeeRecord {
        EmployeeRecord::new(1048, 0)
            .apply(
                obj(
                    json!({"firstName": "Sam", "lastName": "Patel", "email": " Sam@Demo.test ",
                           "roleId": 3, "stores": {"9": {"roleId": 5}}}),
                ),
                true,
                false,
                &Stores(vec![9]),
            )
            .unwrap()
    }

    #[test]
    fn create_lower_cases_the_email_and_reads_stores_back_by_id() {
        let e = sam();
        assert_eq!(e.email, "sam@demo.test");
        assert_eq!(e.stores, BTreeMap::from([(9, Role::AssistantManager)]));
    }

    #[test]
    fn create_needs_names_but_an_update_of_a_nameless_user_does_not() {
        let errs = EmployeeRecord::new(1, 0)
            .apply(
                obj(json!({"email": "a@b.c", "roleId": 4})),
                true,
                false,
                &Stores(vec![]),
            )
            .unwrap_err();
        assert!(errs.contains(&"firstName: required field is missing.".to_owned()));
        let mut manifest_user = EmployeeRecord::new(8, 0);
        manifest_user.email = "owner@demo.test".into();
        manifest_user.role = Role::Owner;
        let updated = manifest_user
            .apply(
                obj(json!({"firstName": null, "joinedDate": "2026-01-05 10:00:00"})),
                false,
                false,
                &Stores(vec![]),
            )
            .unwrap();
        assert!(updated.first_name.is_none() && updated.joined_date.is_some());
    }

    #[test]
    fn bad_roles_stores_and_emails_are_named() {
        let errs = EmployeeRecord::new(1, 0)
            .apply(
                obj(
                    json!({"firstName": "A", "lastName": "B", "email": "nope", "roleId": 9,
                           "stores": {"77": {"roleId": 1}}}),
                ),
                true,
                false,
                &Stores(vec![9]),
            )
            .unwrap_err();
        crate::testing::assert_named(
            &errs,
            &[
                "email: \"nope\"",
                "roleId: must be a role id",
                "stores: 77: 77 is not a store",
            ],
        );
    }

    #[test]
    fn an_employee_cannot_raise_their_own_role_but_may_lower_it() {
        let e = sam();
        let errs = e
            .clone()
            .apply(obj(json!({"roleId": 1})), false, true, &Stores(vec![9]))
            .unwrap_err();
        assert_eq!(errs, vec!["roleId: you cannot raise your own role."]);
        let errs = e
            .clone()
            .apply(
                obj(json!({"stores": {"9": {"roleId": 2}}})),
                false,
                true,
                &Stores(vec![9]),
            )
            .unwrap_err();
        assert_eq!(
            errs,
            vec!["stores: 9: you cannot raise your own role at this store."]
        );
        let lowered = e
            .clone()
            .apply(obj(json!({"roleId": 4})), false, true, &Stores(vec![9]))
            .unwrap();
        assert_eq!(lowered.role, Role::Guest);
        let by_owner = e
            .apply(obj(json!({"roleId": 1})), false, false, &Stores(vec![9]))
            .unwrap();
        assert_eq!(by_owner.role, Role::Owner);
    }

    #[test]
    fn ending_employment_sets_the_exit_date_unless_one_has_passed() {
        let mut e = sam();
        e.end_employment(100);
        assert_eq!(e.exit_date, Some(100));
        let mut left = sam();
        left.exit_date = Some(50);
        left.end_employment(100);
        assert_eq!(left.exit_date, Some(50));
    }
}
