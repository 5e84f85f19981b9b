//! The roles of a storm, named once: model files, `--set` keys, reports and
//! CSV rows all spell a role the way [`Role::name`] does.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Index, IndexMut};
use std::str::FromStr;

/// One kind of worker thread. Declaration order is report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// kswapd's LRU scan: page_referenced, then try_to_unmap.
    Reclaim,
    /// The AIM7 churn: fork a child, exit an old one.
    ForkExit,
    /// A task reading or writing its pages (faults when the PTE says so).
    Touch,
    /// __split_vma and merge back (mprotect of part of a vma).
    Mprotect,
    /// unixbench execl's rmap work: map, fault and unmap a shared file.
    Execl,
    /// A /proc/pid/maps reader.
    Monitor,
    /// A file mapper: map a file, fault a page, unmap it (synchro-test's
    /// downgrader when `downgrade` is set).
    Munmap,
}

/// How many roles there are.
const ROLES: usize = 7;

/// Every role's name, indexed by `Role as usize`: the one place they are spelled.
const NAMES: [&str; ROLES] = [
    "reclaim",
    "fork_exit",
    "touch",
    "mprotect",
    "execl",
    "monitor",
    "munmap",
];

impl Role {
    /// Every role, in report order.
    pub const ALL: [Role; ROLES] = [
        Role::Reclaim,
        Role::ForkExit,
        Role::Touch,
        Role::Mprotect,
        Role::Execl,
        Role::Monitor,
        Role::Munmap,
    ];

    /// The model's, the command line's and the report's name.
    pub const fn name(self) -> &'static str {
        NAMES[self as usize]
    }

    /// Every name, comma-separated, for "(allowed: ...)" messages.
    pub fn names() -> String {
        NAMES.join(", ")
    }

    /// Whether this role's operations are the AIM7 jobs ("useful work"), as
    /// opposed to reclaim or bookkeeping.
    pub fn useful(self) -> bool {
        matches!(self, Role::Touch | Role::ForkExit)
    }
}

impl FromStr for Role {
    type Err = String;

    fn from_str(name: &str) -> Result<Role, String> {
        Role::ALL
            .into_iter()
            .find(|r| r.name() == name)
            .ok_or_else(|| format!("'{name}' is not a role"))
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Role, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// One `T` per role, indexed by [`Role`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PerRole<T>([T; ROLES]);

impl<T> PerRole<T> {
    /// Every role with its value, in report order.
    pub fn iter(&self) -> impl Iterator<Item = (Role, &T)> {
        Role::ALL.into_iter().zip(&self.0)
    }
}

impl<T> Index<Role> for PerRole<T> {
    type Output = T;
    fn index(&self, role: Role) -> &T {
        &self.0[role as usize]
    }
}

impl<T> IndexMut<Role> for PerRole<T> {
    fn index_mut(&mut self, role: Role) -> &mut T {
        &mut self.0[role as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_follow_declaration_order() {
        for (i, role) in Role::ALL.into_iter().enumerate() {
            assert_eq!(role as usize, i, "{role}: ALL is in declaration order");
            assert_eq!(role.name().parse::<Role>(), Ok(role));
        }
        assert_eq!(Role::ForkExit.name(), "fork_exit");
        assert_eq!(
            "fork-exit".parse::<Role>(),
            Err("'fork-exit' is not a role".into())
        );
        let json = serde_json::to_string(&Role::ForkExit).unwrap();
        assert_eq!(json, "\"fork_exit\"");
        assert_eq!(serde_json::from_str::<Role>(&json).unwrap(), Role::ForkExit);
    }

    #[test]
    fn per_role_values_are_indexed_by_role() {
        let mut p = PerRole::<u32>::default();
        p[Role::Execl] = 5;
        assert_eq!(p[Role::Execl], 5);
        assert_eq!(p.iter().filter(|(_, v)| **v == 5).count(), 1);
        assert_eq!(p.iter().map(|(r, _)| r).collect::<Vec<_>>(), Role::ALL);
    }
}
