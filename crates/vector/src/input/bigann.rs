//! big-ann-benchmarks files (`.fbin`, `.ibin`, `.u8bin`, `.i8bin`): a header of two little-endian
//! u32 (rows, dimension), then the row-major little-endian elements.

use super::flat::{FlatLayout, FlatReader};
use super::source::Source;
use super::{BatchReader, ElementType, InputError, InputFormat, InputOptions};

/// Bytes of the header.
const HEADER_BYTES: u64 = 8;

/// Opens a big-ann-benchmarks input; a file's size must match its header.
pub(crate) fn open(
    mut source: Source,
    format: InputFormat,
    options: &InputOptions,
) -> Result<Box<dyn BatchReader>, InputError> {
    let element_type = format.fixed_element_type().unwrap_or(ElementType::F32);
    let name = format.name();
    let mut header = [0u8; HEADER_BYTES as usize];
    let got = source.read_full(&mut header)?;
    if got < header.len() {
        return Err(InputError::Data(format!(
            "{}: truncated {name} header: {got} of {HEADER_BYTES} bytes at byte 0",
            source.name()
        )));
    }
    let [r0, r1, r2, r3, d0, d1, d2, d3] = header;
    let rows = u64::from(u32::from_le_bytes([r0, r1, r2, r3]));
    let dimension = u32::from_le_bytes([d0, d1, d2, d3]) as usize;
    if let Some(len) = source.len() {
        let expected = rows
            .checked_mul(dimension as u64)
            .and_then(|n| n.checked_mul(element_type.size() as u64))
            .and_then(|n| n.checked_add(HEADER_BYTES));
        if let Some(extra) = expected.and_then(|e| len.checked_sub(e)).filter(|&x| x > 0) {
            return Err(InputError::Data(format!(
                "{}: {name} file has {extra} bytes after the {rows} rows × {dimension} elements \
                 its header declares (the data ends at byte {})",
                source.name(),
                len - extra
            )));
        }
    }
    let layout = FlatLayout {
        format: name,
        element_type,
        swap: cfg!(target_endian = "big") && element_type.size() > 1,
        rows,
        dimension,
        data_start: HEADER_BYTES,
        nothing_after: true,
    };
    Ok(Box::new(FlatReader::new(source, layout, options)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::RowSelection;

    fn open_bytes(bytes: Vec<u8>) -> Result<Box<dyn BatchReader>, InputError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.i8bin");
        std::fs::write(&path, bytes).unwrap();
        let options = InputOptions {
            format: None,
            column: None,
            dataset: "train".to_string(),
            selection: RowSelection::All,
            batch_rows: 10,
            vectors_optional: false,
        };
        open(
            Source::open(Some(&path)).unwrap(),
            InputFormat::I8bin,
            &options,
        )
    }

    #[test]
    fn header_declares_the_shape_and_the_size_must_match() {
        let mut bytes = vec![2, 0, 0, 0, 3, 0, 0, 0];
        bytes.extend_from_slice(&[1, 2, 3, 0xff, 0xfe, 0xfd]);
        let mut reader = open_bytes(bytes.clone()).unwrap();
        assert_eq!((reader.rows(), reader.dimension()), (Some(2), 3));
        let batch = reader.next_batch().unwrap().unwrap();
        assert_eq!(batch.elements.to_f64(), [1.0, 2.0, 3.0, -1.0, -2.0, -3.0]);
        bytes.push(0);
        let error = open_bytes(bytes.clone()).err().unwrap().to_string();
        assert!(error.contains("1 bytes after"), "{error}");
        bytes.truncate(12);
        let error = open_bytes(bytes).err().unwrap().to_string();
        assert!(error.contains("row 1 at byte 11"), "{error}");
        let error = open_bytes(vec![1, 0, 0]).err().unwrap().to_string();
        assert!(error.contains("header"), "{error}");
    }
}
