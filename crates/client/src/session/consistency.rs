//! The consistency levels a job's requests can ask for, by their CQL names.

use std::fmt;
use std::str::FromStr;

use scylla::statement::Consistency as DriverConsistency;

use crate::error::{LoadError, LoadErrorKind};

/// The consistency level of a job's requests: the levels a write or a read can take
/// (`SERIAL` and `LOCAL_SERIAL`, the levels of a lightweight transaction's Paxos phase, are none
/// of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Consistency {
    /// `ANY`: a write is acknowledged once stored anywhere, a hint included.
    Any,
    /// `ONE`: one replica.
    One,
    /// `TWO`: two replicas.
    Two,
    /// `THREE`: three replicas.
    Three,
    /// `QUORUM`: a majority of the replicas of all data centres.
    Quorum,
    /// `ALL`: every replica.
    All,
    /// `LOCAL_QUORUM`: a majority of the replicas of the local data centre.
    LocalQuorum,
    /// `EACH_QUORUM`: a majority of the replicas of each data centre.
    EachQuorum,
    /// `LOCAL_ONE`: one replica of the local data centre.
    LocalOne,
}

impl Consistency {
    /// Every level, in the order of the error message that lists them.
    pub const LEVELS: [Consistency; 9] = [
        Consistency::Any,
        Consistency::One,
        Consistency::Two,
        Consistency::Three,
        Consistency::Quorum,
        Consistency::All,
        Consistency::LocalQuorum,
        Consistency::EachQuorum,
        Consistency::LocalOne,
    ];

    /// The CQL name, e.g. `LOCAL_QUORUM`.
    pub fn name(self) -> &'static str {
        match self {
            Consistency::Any => "ANY",
            Consistency::One => "ONE",
            Consistency::Two => "TWO",
            Consistency::Three => "THREE",
            Consistency::Quorum => "QUORUM",
            Consistency::All => "ALL",
            Consistency::LocalQuorum => "LOCAL_QUORUM",
            Consistency::EachQuorum => "EACH_QUORUM",
            Consistency::LocalOne => "LOCAL_ONE",
        }
    }

    /// The driver's level.
    pub(crate) fn driver(self) -> DriverConsistency {
        match self {
            Consistency::Any => DriverConsistency::Any,
            Consistency::One => DriverConsistency::One,
            Consistency::Two => DriverConsistency::Two,
            Consistency::Three => DriverConsistency::Three,
            Consistency::Quorum => DriverConsistency::Quorum,
            Consistency::All => DriverConsistency::All,
            Consistency::LocalQuorum => DriverConsistency::LocalQuorum,
            Consistency::EachQuorum => DriverConsistency::EachQuorum,
            Consistency::LocalOne => DriverConsistency::LocalOne,
        }
    }
}

impl fmt::Display for Consistency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Consistency {
    type Err = LoadError;

    /// Parses a level's name, case-insensitive, `-` for `_` (`LOCAL_QUORUM`, `one`,
    /// `each-quorum`); an unknown name is an [`InvalidOption`](LoadErrorKind::InvalidOption).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let wanted = name.trim().to_ascii_uppercase().replace('-', "_");
        Consistency::LEVELS
            .into_iter()
            .find(|level| level.name() == wanted)
            .ok_or_else(|| {
                LoadError::new(
                    LoadErrorKind::InvalidOption,
                    format!(
                        "unknown consistency {name:?}: expected ANY, ONE, TWO, THREE, QUORUM, \
                         ALL, LOCAL_QUORUM, EACH_QUORUM or LOCAL_ONE"
                    ),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_case_insensitively() {
        assert_eq!(
            "local_quorum".parse::<Consistency>().unwrap(),
            Consistency::LocalQuorum
        );
        assert_eq!(
            "LOCAL-ONE".parse::<Consistency>().unwrap(),
            Consistency::LocalOne
        );
        assert_eq!(
            "Each_Quorum".parse::<Consistency>().unwrap(),
            Consistency::EachQuorum
        );
        assert!("SERIAL".parse::<Consistency>().is_err());
        assert!("most".parse::<Consistency>().is_err());
    }

    #[test]
    fn every_level_parses_from_its_name() {
        for level in Consistency::LEVELS {
            assert_eq!(level.name().parse::<Consistency>().unwrap(), level);
            assert_eq!(level.to_string(), level.name());
        }
    }
}
