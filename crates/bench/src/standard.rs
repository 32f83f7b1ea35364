//! VectorDBBench's standard datasets (`DatasetWithSizeType` in its `backend/dataset.py`): a folder
//! that is one of them — its name on disk, its rows and its dimension — is written in a result
//! file as that dataset, so that VectorDBBench's filter pages (which know filtered cases of these
//! datasets only) show its filtered runs.

/// One standard dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StandardDataset {
    /// VectorDBBench's `DatasetWithSizeType` value, e.g. `Medium Cohere (768dim, 1M)`.
    pub size_type: &'static str,
    /// The folder's name on disk, e.g. `cohere_medium_1m`.
    pub dir_name: &'static str,
    /// Training rows.
    pub size: u64,
    /// Dimension.
    pub dim: usize,
    /// VectorDBBench's metric type (`COSINE`, `L2`).
    pub metric_type: &'static str,
    /// Training files.
    pub file_count: u32,
    /// Whether VectorDBBench reads its shuffled training files.
    pub use_shuffled: bool,
    /// The id of its unfiltered performance case, where it has one.
    pub performance_case: Option<u32>,
}

/// Every standard dataset of VectorDBBench 2.0.0 (checked against its own code by the fixture
/// `fixtures/bench/standard_datasets.json`).
pub const STANDARD_DATASETS: [StandardDataset; 9] = [
    StandardDataset {
        size_type: "Small Cohere (768dim, 100K)",
        dir_name: "cohere_small_100k",
        size: 100_000,
        dim: 768,
        metric_type: "COSINE",
        file_count: 1,
        use_shuffled: true,
        performance_case: None,
    },
    StandardDataset {
        size_type: "Medium Cohere (768dim, 1M)",
        dir_name: "cohere_medium_1m",
        size: 1_000_000,
        dim: 768,
        metric_type: "COSINE",
        file_count: 1,
        use_shuffled: true,
        performance_case: Some(5),
    },
    StandardDataset {
        size_type: "Large Cohere (768dim, 10M)",
        dir_name: "cohere_large_10m",
        size: 10_000_000,
        dim: 768,
        metric_type: "COSINE",
        file_count: 10,
        use_shuffled: true,
        performance_case: Some(4),
    },
    StandardDataset {
        size_type: "Large LAION (768dim, 100M)",
        dir_name: "laion_large_100m",
        size: 100_000_000,
        dim: 768,
        metric_type: "L2",
        file_count: 100,
        use_shuffled: false,
        performance_case: Some(3),
    },
    StandardDataset {
        size_type: "Medium Bioasq (1024dim, 1M)",
        dir_name: "bioasq_medium_1m",
        size: 1_000_000,
        dim: 1024,
        metric_type: "COSINE",
        file_count: 1,
        use_shuffled: true,
        performance_case: Some(17),
    },
    StandardDataset {
        size_type: "Large Bioasq (1024dim, 10M)",
        dir_name: "bioasq_large_10m",
        size: 10_000_000,
        dim: 1024,
        metric_type: "COSINE",
        file_count: 10,
        use_shuffled: true,
        performance_case: Some(20),
    },
    StandardDataset {
        size_type: "Small OpenAI (1536dim, 50K)",
        dir_name: "openai_small_50k",
        size: 50_000,
        dim: 1536,
        metric_type: "COSINE",
        file_count: 1,
        use_shuffled: true,
        performance_case: Some(50),
    },
    StandardDataset {
        size_type: "Medium OpenAI (1536dim, 500K)",
        dir_name: "openai_medium_500k",
        size: 500_000,
        dim: 1536,
        metric_type: "COSINE",
        file_count: 1,
        use_shuffled: true,
        performance_case: Some(10),
    },
    StandardDataset {
        size_type: "Large OpenAI (1536dim, 5M)",
        dir_name: "openai_large_5m",
        size: 5_000_000,
        dim: 1536,
        metric_type: "COSINE",
        file_count: 10,
        use_shuffled: true,
        performance_case: Some(11),
    },
];

/// The standard dataset a folder named `dir_name` of `size` rows of dimension `dim` is, if any.
pub fn recognise(dir_name: &str, size: u64, dim: usize) -> Option<&'static StandardDataset> {
    STANDARD_DATASETS
        .iter()
        .find(|d| d.dir_name == dir_name && d.size == size && d.dim == dim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_vectordbbenchs_own() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/bench/standard_datasets.json"
        );
        let expected: Vec<serde_json::Value> =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(expected.len(), STANDARD_DATASETS.len());
        for (want, got) in expected.iter().zip(&STANDARD_DATASETS) {
            assert_eq!(want["dataset_with_size_type"], got.size_type);
            assert_eq!(want["dir_name"], got.dir_name);
            assert_eq!(want["size"], got.size);
            assert_eq!(want["dim"], got.dim);
            assert_eq!(want["metric_type"], got.metric_type);
            assert_eq!(want["file_count"], got.file_count);
            assert_eq!(want["use_shuffled"], got.use_shuffled);
            assert_eq!(
                want["performance_case"].as_u64(),
                got.performance_case.map(u64::from)
            );
        }
        assert_eq!(
            recognise("cohere_medium_1m", 1_000_000, 768).map(|d| d.performance_case),
            Some(Some(5))
        );
        assert_eq!(
            recognise("cohere_medium_1m", 999_999, 768),
            None,
            "a folder of another size"
        );
        assert_eq!(recognise("my_cohere", 1_000_000, 768), None);
    }
}
