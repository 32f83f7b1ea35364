//! A parameter sweep: `KEY=V1,V2,…` lists over the vector index's options and k, whose product
//! is the value sets a bench job runs, one case each.
//!
//! The keys are the index's `similarity_function`, `maximum_node_connections`,
//! `construction_beam_width` and `optimize_for` (the graph's two need a server started with
//! `-Dcassandra.sai.vector.allow_custom_parameters=true` on Apache Cassandra 5.0), and `k`. The
//! value sets run in the order of [`Sweep::points`]: the index's keys in the order given, k last,
//! so that value sets differing only in k search one index.

use crate::case::{CaseError, CaseOptions, Stage};

/// The most value sets a sweep may have.
pub const MAX_POINTS: usize = 100;

/// A key a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SweepKey {
    /// The index's similarity function.
    Similarity,
    /// Another option of the index (its name).
    IndexOption(&'static str),
    /// Neighbours asked of each query.
    K,
}

/// The keys a sweep takes, by name.
const KEYS: [(&str, SweepKey); 5] = [
    ("similarity_function", SweepKey::Similarity),
    (
        "maximum_node_connections",
        SweepKey::IndexOption("maximum_node_connections"),
    ),
    (
        "construction_beam_width",
        SweepKey::IndexOption("construction_beam_width"),
    ),
    ("optimize_for", SweepKey::IndexOption("optimize_for")),
    ("k", SweepKey::K),
];

impl SweepKey {
    /// The key's name, as `--sweep` takes it.
    pub fn name(self) -> &'static str {
        match self {
            SweepKey::Similarity => "similarity_function",
            SweepKey::IndexOption(name) => name,
            SweepKey::K => "k",
        }
    }

    /// Whether the key changes the index (every key but k).
    pub fn changes_index(self) -> bool {
        self != SweepKey::K
    }
}

/// One key and its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    /// The key.
    pub key: SweepKey,
    /// Its values, in the order given.
    pub values: Vec<String>,
}

/// One value set of a sweep: a value for each key.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Point(pub Vec<(SweepKey, String)>);

impl Point {
    /// The value set as JSON, `{"key": value, …}`, numbers as numbers.
    pub fn to_json(&self) -> serde_json::Value {
        let map = self
            .0
            .iter()
            .map(|(key, value)| {
                let value = value
                    .parse::<u64>()
                    .map_or_else(|_| value.clone().into(), serde_json::Value::from);
                (key.name().to_owned(), value)
            })
            .collect();
        serde_json::Value::Object(map)
    }

    /// The values that make the index (all but k).
    fn index_part(&self) -> Vec<&(SweepKey, String)> {
        self.0
            .iter()
            .filter(|(key, _)| key.changes_index())
            .collect()
    }

    /// Whether `other` makes the same index as this value set.
    pub fn same_index(&self, other: &Point) -> bool {
        self.index_part() == other.index_part()
    }
}

impl std::fmt::Display for Point {
    /// `key=value, key=value`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(key, value)| format!("{}={value}", key.name()))
            .collect();
        f.write_str(&parts.join(", "))
    }
}

/// The keys of a sweep and their values (none: a single case, the options as they are).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sweep {
    /// The keys, the index's first (in the order given), k last.
    pub axes: Vec<Axis>,
}

fn refuse<T>(message: String) -> Result<T, CaseError> {
    Err(CaseError::Options(message))
}

impl Sweep {
    /// Parses `KEY=V1,V2,…` specifications (one per key), as [`Sweep::from_lists`] takes them.
    pub fn parse<S: AsRef<str>>(specs: &[S]) -> Result<Sweep, CaseError> {
        let mut lists = Vec::with_capacity(specs.len());
        for spec in specs {
            let spec = spec.as_ref();
            let Some((name, list)) = spec.split_once('=') else {
                return refuse(format!("a sweep is KEY=V1,V2,..., not '{spec}'"));
            };
            lists.push((name, list.split(',').collect::<Vec<_>>()));
        }
        Sweep::from_lists(&lists)
    }

    /// The sweep of `lists`, a key and its values each: an unknown key, a key given twice, no
    /// value, an empty or repeated value, or more than [`MAX_POINTS`] value sets are refused (the
    /// values themselves are checked against the case's options by [`Sweep::check`]).
    pub fn from_lists<K: AsRef<str>, V: AsRef<str>>(
        lists: &[(K, Vec<V>)],
    ) -> Result<Sweep, CaseError> {
        let mut axes: Vec<Axis> = Vec::new();
        for (name, list) in lists {
            let name = name.as_ref().trim().to_ascii_lowercase();
            let Some(&(_, key)) = KEYS.iter().find(|(known, _)| *known == name) else {
                let known: Vec<&str> = KEYS.iter().map(|(known, _)| *known).collect();
                return refuse(format!(
                    "no sweep key '{}' (keys: {})",
                    name,
                    known.join(", ")
                ));
            };
            if axes.iter().any(|axis| axis.key == key) {
                return refuse(format!("the sweep key {name} is given twice"));
            }
            if list.is_empty() {
                return refuse(format!("the sweep of {name} has no value"));
            }
            let mut values: Vec<String> = Vec::new();
            for value in list.iter().map(|v| v.as_ref().trim()) {
                if value.is_empty() {
                    return refuse(format!("the sweep of {name} has an empty value"));
                }
                if values.iter().any(|v| v == value) {
                    return refuse(format!("the sweep of {name} repeats the value {value}"));
                }
                values.push(value.to_owned());
            }
            axes.push(Axis { key, values });
        }
        // k last: the value sets that differ only in k follow each other and search one index.
        axes.sort_by_key(|axis| axis.key == SweepKey::K);
        let sweep = Sweep { axes };
        let points = sweep
            .axes
            .iter()
            .try_fold(1usize, |n, axis| n.checked_mul(axis.values.len()));
        match points {
            Some(n) if n <= MAX_POINTS => Ok(sweep),
            _ => refuse(format!(
                "the sweep makes more than {MAX_POINTS} value sets: sweep fewer values"
            )),
        }
    }

    /// Whether the sweep has no key (a single case).
    pub fn is_empty(&self) -> bool {
        self.axes.is_empty()
    }

    /// Whether a key changes the index.
    pub fn changes_index(&self) -> bool {
        self.axes.iter().any(|axis| axis.key.changes_index())
    }

    /// Every value set, the product of the values: the last key's values vary fastest (one empty
    /// value set for an empty sweep).
    pub fn points(&self) -> Vec<Point> {
        let mut points = vec![Point::default()];
        for axis in &self.axes {
            points = points
                .into_iter()
                .flat_map(|point| {
                    axis.values.iter().map(move |value| {
                        let mut next = point.clone();
                        next.0.push((axis.key, value.clone()));
                        next
                    })
                })
                .collect();
        }
        points
    }

    /// The options of the value set `point`: `base` with its values.
    pub fn options_at(base: &CaseOptions, point: &Point) -> CaseOptions {
        let mut options = base.clone();
        for (key, value) in &point.0 {
            match key {
                SweepKey::Similarity => options.similarity = Some(value.clone()),
                SweepKey::K => options.k = value.parse().unwrap_or(0),
                SweepKey::IndexOption(name) => options
                    .index_options
                    .push(((*name).to_owned(), value.clone())),
            }
        }
        options
    }

    /// Checks the sweep against the case's options before anything is read or sent: a key also
    /// set otherwise (the similarity function, an index option), an index key without the index
    /// stage (nothing would change), k without a search stage, and each value set's options
    /// ([`CaseOptions::check`], naming the value set).
    pub fn check(&self, base: &CaseOptions) -> Result<(), CaseError> {
        if self.is_empty() {
            return Ok(());
        }
        for axis in &self.axes {
            let name = axis.key.name();
            let set_otherwise = match axis.key {
                SweepKey::Similarity => base.similarity.is_some(),
                SweepKey::IndexOption(option) => base
                    .index_options
                    .iter()
                    .any(|(key, _)| key.eq_ignore_ascii_case(option)),
                SweepKey::K => false,
            };
            if set_otherwise {
                return refuse(format!(
                    "{name} is both swept and set: give it once, in the sweep"
                ));
            }
            let stage_needed = match axis.key {
                SweepKey::K => [Stage::Serial, Stage::Concurrent]
                    .iter()
                    .any(|stage| base.stages.contains(stage)),
                _ => base.stages.contains(&Stage::Index),
            };
            if !stage_needed {
                let needs = if axis.key == SweepKey::K {
                    "a search stage (serial or concurrent)"
                } else {
                    "the index stage (one index per value set)"
                };
                return refuse(format!("a sweep of {name} needs {needs}"));
            }
        }
        for point in self.points() {
            if let Some((key, value)) = point
                .0
                .iter()
                .find(|(key, value)| *key == SweepKey::K && value.parse::<usize>().is_err())
            {
                return refuse(format!(
                    "the sweep's value {}={value} is not a whole number",
                    key.name()
                ));
            }
            Sweep::options_at(base, &point)
                .check()
                .map_err(|e| CaseError::Options(format!("the sweep's value set {point}: {e}")))?;
        }
        Ok(())
    }

    /// The stages of the value set after `previous`: the table is loaded once, so no table or
    /// load stage; with the same index (only k changed), no index or optimize stage either.
    pub fn stages_after(base: &[Stage], previous: &Point, point: &Point) -> Vec<Stage> {
        let same_index = previous.same_index(point);
        base.iter()
            .copied()
            .filter(|stage| match stage {
                Stage::Table | Stage::Load => false,
                Stage::Index | Stage::Optimize => !same_index,
                _ => true,
            })
            .collect()
    }
}

/// Options of a case on `bench."Docs"`, every stage, k 10, an `optimize_for` index option.
#[cfg(test)]
pub(crate) fn test_options() -> CaseOptions {
    CaseOptions {
        stages: Stage::ALL.to_vec(),
        similarity: None,
        k: 10,
        ..crate::case::tests::options()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(specs: &[&str]) -> String {
        match Sweep::parse(specs).and_then(|sweep| sweep.check(&test_options())) {
            Err(error) => error.to_string(),
            Ok(()) => panic!("{specs:?} was taken"),
        }
    }

    #[test]
    fn the_value_sets_are_the_product_k_varying_fastest() {
        let sweep = Sweep::parse(&[
            "k=5,10",
            " Maximum_Node_Connections = 8, 16 ,32",
            "similarity_function=cosine,euclidean",
        ])
        .unwrap();
        sweep.check(&test_options()).unwrap();
        let points: Vec<String> = sweep.points().iter().map(Point::to_string).collect();
        assert_eq!(points.len(), 12);
        assert_eq!(
            points[0],
            "maximum_node_connections=8, similarity_function=cosine, k=5"
        );
        assert_eq!(
            points[1],
            "maximum_node_connections=8, similarity_function=cosine, k=10"
        );
        assert_eq!(
            points[2],
            "maximum_node_connections=8, similarity_function=euclidean, k=5"
        );
        assert_eq!(
            points[11],
            "maximum_node_connections=32, similarity_function=euclidean, k=10"
        );
        let mut unique = points.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), points.len(), "each value set once");
        let all = sweep.points();
        let options = Sweep::options_at(&test_options(), &all[3]);
        assert_eq!(options.k, 10);
        assert_eq!(options.similarity.as_deref(), Some("euclidean"));
        assert!(options
            .index_options
            .contains(&("maximum_node_connections".to_owned(), "8".to_owned())));
        assert_eq!(
            all[3].to_json(),
            serde_json::json!({"maximum_node_connections": 8, "similarity_function": "euclidean", "k": 10})
        );
        assert!(Sweep::parse::<&str>(&[]).unwrap().points() == vec![Point::default()]);
        let lists = [
            ("k", vec!["5", "10"]),
            ("maximum_node_connections", vec!["8"]),
        ];
        assert_eq!(
            Sweep::from_lists(&lists).unwrap(),
            Sweep::parse(&["k=5,10", "maximum_node_connections=8"]).unwrap()
        );
        let none: [(&str, Vec<&str>); 1] = [("k", vec![])];
        assert!(Sweep::from_lists(&none)
            .unwrap_err()
            .to_string()
            .contains("no value"));
    }

    #[test]
    fn a_value_set_differing_only_in_k_keeps_the_index_and_the_load_runs_once() {
        let sweep = Sweep::parse(&["k=5,10", "construction_beam_width=50,100"]).unwrap();
        let points = sweep.points();
        assert_eq!(
            Sweep::stages_after(&Stage::ALL, &points[0], &points[1]),
            [Stage::Serial, Stage::Concurrent]
        );
        assert_eq!(
            Sweep::stages_after(&Stage::ALL, &points[1], &points[2]),
            [
                Stage::Index,
                Stage::Optimize,
                Stage::Serial,
                Stage::Concurrent
            ]
        );
    }

    #[test]
    fn bad_keys_and_values_are_refused() {
        assert!(refused(&["k"]).contains("KEY=V1,V2"));
        assert!(refused(&["ef=1,2"]).contains("no sweep key 'ef'"));
        assert!(refused(&["k=1,,2"]).contains("empty value"));
        assert!(refused(&["k=1,2,1"]).contains("repeats the value 1"));
        assert!(refused(&["k=1", "K=2"]).contains("given twice"));
        assert!(refused(&["k=0,5"]).contains("k must be 1 to"));
        assert!(refused(&["k=five"]).contains("not a whole number"));
        assert!(refused(&["k=-1"]).contains("not a whole number"));
        assert!(refused(&["similarity_function=cosine,hamming"]).contains("hamming"));
        assert!(refused(&["maximum_node_connections=16,0"]).contains("a positive integer"));
        assert!(refused(&["optimize_for=recall"]).contains("both swept and set"));
        let values: Vec<String> = (1..=11).map(|k| k.to_string()).collect();
        let wide = format!("k={}", values.join(","));
        assert!(
            refused(&[&wide, "construction_beam_width=1,2,3,4,5,6,7,8,9,10"])
                .contains("more than 100 value sets")
        );
        let mut searching = test_options();
        searching.stages = vec![Stage::Serial, Stage::Concurrent];
        let sweep = Sweep::parse(&["maximum_node_connections=8,16"]).unwrap();
        assert!(sweep
            .check(&searching)
            .unwrap_err()
            .to_string()
            .contains("needs the index stage"));
        let mut metric = test_options();
        metric.similarity = Some("cosine".to_owned());
        let sweep = Sweep::parse(&["similarity_function=cosine,dot_product"]).unwrap();
        assert!(sweep.check(&metric).is_err());
    }
}
