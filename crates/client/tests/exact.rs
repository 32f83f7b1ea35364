//! Brute-force neighbours and the ground-truth readers against NumPy's exact search on the
//! dataset of `fixtures/search/generate.py`.

use std::path::PathBuf;

use cqlwire_client::exact::{exact_neighbors, Similarity};
use cqlwire_vector::input::{self, Elements, InputOptions, Neighbors, RowSelection};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/search")
        .join(name)
}

fn options(batch_rows: usize) -> InputOptions {
    InputOptions {
        format: None,
        column: None,
        selection: RowSelection::All,
        batch_rows,
        dataset: "train".to_string(),
        vectors_optional: false,
    }
}

fn queries() -> Vec<f32> {
    let mut reader = input::open(Some(&fixture("test.npy")), &options(1000)).unwrap();
    let mut floats = Vec::new();
    while let Some(batch) = reader.next_batch().unwrap() {
        let Elements::F32(v) = batch.elements else {
            panic!("test.npy holds float32")
        };
        floats.extend(v);
    }
    floats
}

fn exact(similarity: Similarity, k: usize) -> Neighbors {
    // Batches of 77 rows: lists must carry over batch boundaries.
    let mut train = input::open(Some(&fixture("train.npy")), &options(77)).unwrap();
    exact_neighbors(train.as_mut(), &queries(), 16, k, similarity).unwrap()
}

#[test]
fn brute_force_equals_numpy_for_every_similarity_function() {
    for (similarity, truth) in [
        (Similarity::Cosine, "neighbors_cosine.ivecs"),
        (Similarity::Euclidean, "neighbors_euclidean.npy"),
        (Similarity::DotProduct, "neighbors_dot_product.npy"),
    ] {
        let numpy = input::read_neighbors(&fixture(truth), None).unwrap();
        assert_eq!((numpy.rows(), numpy.k()), (40, 100), "{truth}");
        let ours = exact(similarity, 100);
        for query in 0..40 {
            assert_eq!(
                ours.row(query),
                numpy.row(query),
                "{similarity} query {query}"
            );
        }
    }
}

#[test]
fn the_ground_truth_formats_read_the_same_lists() {
    let npy = input::read_neighbors(&fixture("neighbors_euclidean.npy"), None).unwrap();
    let bin = input::read_neighbors(&fixture("neighbors_euclidean.bin"), None).unwrap();
    assert_eq!(npy, bin);
}
