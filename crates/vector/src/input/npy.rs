//! NumPy `.npy` files: version 1, 2 and 3 headers, 2-D arrays of `f2 f4 f8 i1 u1 i2 i4 i8` in either
//! byte order, C or Fortran order.
//!
//! C-order data goes through [`FlatReader`] (one sequential read per batch, straight into the typed
//! vector). Fortran-order data is column-major: each batch reads, for every column, the stripe of
//! the batch's rows (seeking between stripes, so it needs a file) and transposes it.

use super::flat::{FlatLayout, FlatReader};
use super::source::Source;
use super::{
    resolve_selection, row_bytes, rows_per_batch, Batch, BatchReader, ElementType, Elements,
    InputError, InputOptions,
};
use std::ops::Range;

/// The magic string that starts every `.npy` file.
pub(crate) const MAGIC: &[u8] = b"\x93NUMPY";

/// Largest header accepted (NumPy's own limit is 10 000 bytes unless told otherwise).
const MAX_HEADER_BYTES: u32 = 1 << 20;

/// The dtypes accepted, for messages.
const SUPPORTED_DTYPES: &str = "<f2 <f4 <f8 |i1 |u1 <i2 <i4 <i8 and the big-endian >f2 >f4 >f8 \
                                >i2 >i4 >i8";

/// The parsed header dictionary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header {
    /// The dtype, e.g. `<f4`.
    pub(crate) descr: String,
    /// Whether the data is column-major.
    pub(crate) fortran_order: bool,
    /// The array's shape.
    pub(crate) shape: Vec<u64>,
}

/// Opens an NPY input.
pub(crate) fn open(
    mut source: Source,
    options: &InputOptions,
) -> Result<Box<dyn super::BatchReader>, InputError> {
    let (header, data_start) = read_header(&mut source)?;
    open_after_header(source, header, data_start, options)
}

/// Opens an NPY input whose header (ending at byte `data_start`) is already read.
pub(crate) fn open_after_header(
    source: Source,
    header: Header,
    data_start: u64,
    options: &InputOptions,
) -> Result<Box<dyn super::BatchReader>, InputError> {
    let (element_type, swap) = parse_descr(&header.descr).ok_or_else(|| {
        InputError::Unsupported(format!(
            "{}: unsupported NPY dtype '{}' (supported: {SUPPORTED_DTYPES})",
            source.name(),
            header.descr
        ))
    })?;
    let [rows, columns] = header.shape[..] else {
        return Err(InputError::Unsupported(format!(
            "{}: NPY array of shape {} is not 2-D (rows, dimension)",
            source.name(),
            shape_text(&header.shape)
        )));
    };
    let dimension = usize::try_from(columns).map_err(|_| {
        InputError::Unsupported(format!(
            "{}: NPY dimension {columns} is too large",
            source.name()
        ))
    })?;
    let layout = FlatLayout {
        format: "NPY",
        element_type,
        swap,
        rows,
        dimension,
        data_start,
        nothing_after: false,
    };
    if header.fortran_order && rows > 1 && dimension > 1 {
        Ok(Box::new(FortranReader::new(source, layout, options)?))
    } else {
        // One row or one column: Fortran order is the same bytes as C order.
        Ok(Box::new(FlatReader::new(source, layout, options)?))
    }
}

/// Reads and parses the header; returns it and the byte offset where the data starts.
pub(crate) fn read_header(source: &mut Source) -> Result<(Header, u64), InputError> {
    let invalid = |source: &Source, offset: u64, what: &str| {
        InputError::Data(format!(
            "{}: invalid NPY header at byte {offset}: {what}",
            source.name()
        ))
    };
    let mut preamble = [0u8; 8];
    let got = source.read_full(&mut preamble)?;
    if got < preamble.len() || !preamble.starts_with(MAGIC) {
        return Err(invalid(source, 0, "missing the \\x93NUMPY magic"));
    }
    let [.., major, minor] = preamble;
    let length_bytes = match major {
        1 => 2,
        2 | 3 => 4,
        _ => {
            return Err(InputError::Unsupported(format!(
                "{}: unsupported NPY format version {major}.{minor} (supported: 1, 2, 3)",
                source.name()
            )))
        }
    };
    let mut length = [0u8; 4];
    let length_field = length.get_mut(..length_bytes).unwrap_or_default();
    if source.read_full(length_field)? < length_bytes {
        return Err(invalid(source, 8, "the header length is cut short"));
    }
    let header_len = u32::from_le_bytes(length);
    if header_len > MAX_HEADER_BYTES {
        return Err(invalid(
            source,
            8,
            &format!("header of {header_len} bytes exceeds the {MAX_HEADER_BYTES}-byte limit"),
        ));
    }
    let text_start = 8 + length_bytes as u64;
    let mut text = vec![0u8; header_len as usize];
    let got = source.read_full(&mut text)?;
    if got < text.len() {
        return Err(invalid(
            source,
            text_start + got as u64,
            &format!("the header of {header_len} bytes is cut short"),
        ));
    }
    let header = parse_header(&text, major >= 3)
        .map_err(|(at, what)| invalid(source, text_start + at as u64, &what))?;
    Ok((header, text_start + u64::from(header_len)))
}

/// Parses the header text: a Python dict literal with exactly the keys `descr` (a string),
/// `fortran_order` (True/False) and `shape` (a tuple of integers), then spaces and a newline.
/// Errors carry the offset in the text.
fn parse_header(text: &[u8], utf8: bool) -> Result<Header, (usize, String)> {
    if !utf8 {
        if let Some(at) = text.iter().position(|b| !b.is_ascii()) {
            return Err((at, "non-ASCII byte in a version 1/2 header".to_string()));
        }
    }
    let text = std::str::from_utf8(text).map_err(|e| (e.valid_up_to(), "invalid UTF-8".into()))?;
    let mut parser = Parser { text, at: 0 };
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    parser.expect('{')?;
    loop {
        parser.skip_space();
        if parser.eat('}') {
            break;
        }
        let key_at = parser.at;
        let key = parser.string()?;
        parser.expect(':')?;
        let duplicate = match key.as_str() {
            "descr" => descr.replace(parser.string()?).is_some(),
            "fortran_order" => fortran_order.replace(parser.boolean()?).is_some(),
            "shape" => shape.replace(parser.tuple()?).is_some(),
            _ => return Err((key_at, format!("unexpected key '{key}'"))),
        };
        if duplicate {
            return Err((key_at, format!("duplicate key '{key}'")));
        }
        parser.skip_space();
        if !parser.eat(',') {
            parser.expect('}')?;
            break;
        }
    }
    if let Some(at) = parser.rest().find(|c: char| !c.is_ascii_whitespace()) {
        return Err((
            parser.at + at,
            "unexpected text after the dictionary".into(),
        ));
    }
    match (descr, fortran_order, shape) {
        (Some(descr), Some(fortran_order), Some(shape)) => Ok(Header {
            descr,
            fortran_order,
            shape,
        }),
        _ => Err((
            0,
            "the dictionary needs the keys 'descr', 'fortran_order' and 'shape'".into(),
        )),
    }
}

/// A cursor over the header text.
struct Parser<'a> {
    text: &'a str,
    at: usize,
}

type ParseResult<T> = Result<T, (usize, String)>;

impl Parser<'_> {
    fn rest(&self) -> &str {
        self.text.get(self.at..).unwrap_or_default()
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start_matches([' ', '\t']).len();
    }

    fn eat(&mut self, c: char) -> bool {
        if self.rest().starts_with(c) {
            self.at += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> ParseResult<()> {
        self.skip_space();
        if self.eat(c) {
            Ok(())
        } else {
            Err((self.at, format!("expected '{c}'")))
        }
    }

    /// A quoted string without escapes.
    fn string(&mut self) -> ParseResult<String> {
        self.skip_space();
        let start = self.at;
        let quote = match self.rest().chars().next() {
            Some(q @ ('\'' | '"')) => q,
            _ => return Err((start, "expected a quoted string".into())),
        };
        self.at += 1;
        let rest = self.rest();
        match rest.find(quote) {
            Some(end) if !rest.get(..end).unwrap_or_default().contains('\\') => {
                let value = rest.get(..end).unwrap_or_default().to_string();
                self.at += end + 1;
                Ok(value)
            }
            _ => Err((start, "unterminated or escaped string".into())),
        }
    }

    fn boolean(&mut self) -> ParseResult<bool> {
        self.skip_space();
        for (word, value) in [("True", true), ("False", false)] {
            if self.rest().starts_with(word) {
                self.at += word.len();
                return Ok(value);
            }
        }
        Err((self.at, "expected True or False".into()))
    }

    /// A tuple of non-negative integers: `()`, `(3,)`, `(3, 4)`, with an optional trailing comma
    /// (and Python 2's `L` suffix).
    fn tuple(&mut self) -> ParseResult<Vec<u64>> {
        self.expect('(')?;
        let mut items = Vec::new();
        loop {
            self.skip_space();
            if self.eat(')') {
                return Ok(items);
            }
            let start = self.at;
            let digits = self.rest().bytes().take_while(u8::is_ascii_digit).count();
            let value = self
                .rest()
                .get(..digits)
                .and_then(|d| d.parse::<u64>().ok())
                .ok_or((start, "expected a non-negative integer".to_string()))?;
            self.at += digits;
            self.eat('L');
            items.push(value);
            self.skip_space();
            if !self.eat(',') {
                self.expect(')')?;
                return Ok(items);
            }
        }
    }
}

/// The element type and whether its bytes need swapping on this machine, for a NumPy dtype string.
fn parse_descr(descr: &str) -> Option<(ElementType, bool)> {
    let (order, code) = descr.split_at_checked(1)?;
    let element_type = match code {
        "f2" => ElementType::F16,
        "f4" => ElementType::F32,
        "f8" => ElementType::F64,
        "i1" => ElementType::I8,
        "u1" => ElementType::U8,
        "i2" => ElementType::I16,
        "i4" => ElementType::I32,
        "i8" => ElementType::I64,
        _ => return None,
    };
    let big_endian = match order {
        "<" => false,
        ">" => true,
        "|" if element_type.size() == 1 => false,
        _ => return None,
    };
    let swap = element_type.size() > 1 && big_endian != cfg!(target_endian = "big");
    Some((element_type, swap))
}

/// A shape as Python writes it: `(3,)`, `(3, 4)`.
pub(crate) fn shape_text(shape: &[u64]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => {
            let items: Vec<String> = shape.iter().map(u64::to_string).collect();
            format!("({})", items.join(", "))
        }
    }
}

/// Batches of a Fortran-order (column-major) array: per batch, one stripe per column, transposed.
struct FortranReader {
    source: Source,
    layout: FlatLayout,
    range: Range<u64>,
    next_row: u64,
    batch_rows: usize,
}

impl FortranReader {
    fn new(
        source: Source,
        layout: FlatLayout,
        options: &InputOptions,
    ) -> Result<FortranReader, InputError> {
        let Some(len) = source.len() else {
            return Err(InputError::Unsupported(format!(
                "{}: a Fortran-order NPY array needs a seekable file, not a stream",
                source.name()
            )));
        };
        let row_bytes = row_bytes(source.name(), layout.dimension, layout.element_type)?;
        let size = layout.element_type.size() as u64;
        let data_bytes = (row_bytes as u64).checked_mul(layout.rows);
        if data_bytes
            .and_then(|d| d.checked_add(layout.data_start))
            .is_none_or(|end| len < end)
        {
            let present = len.saturating_sub(layout.data_start) / size;
            let (column, row) = (present / layout.rows, present % layout.rows);
            return Err(InputError::Data(format!(
                "{}: truncated NPY data: row {row}, element {column} at byte {} is missing \
                 (Fortran order; the header declares {} rows × {} elements of {size} bytes; \
                 the file has {len} bytes)",
                source.name(),
                layout.data_start + present * size,
                layout.rows,
                layout.dimension
            )));
        }
        let range = resolve_selection(&options.selection, layout.rows, source.name())?;
        Ok(FortranReader {
            batch_rows: rows_per_batch(options, row_bytes),
            next_row: range.start,
            source,
            layout,
            range,
        })
    }
}

impl BatchReader for FortranReader {
    fn element_type(&self) -> ElementType {
        self.layout.element_type
    }

    fn dimension(&self) -> usize {
        self.layout.dimension
    }

    fn rows(&self) -> Option<u64> {
        Some(self.range.end - self.range.start)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, InputError> {
        let left = self.range.end - self.next_row;
        if left == 0 {
            return Ok(None);
        }
        let rows = usize::try_from(left).map_or(self.batch_rows, |l| l.min(self.batch_rows));
        let first_row = self.next_row;
        let size = self.layout.element_type.size();
        let stripe_bytes = rows * size;
        let mut stripes = Elements::zeroed(self.layout.element_type, rows * self.layout.dimension);
        for (column, stripe) in stripes
            .bytes_mut()
            .chunks_exact_mut(stripe_bytes)
            .enumerate()
        {
            let element = column as u64 * self.layout.rows + first_row;
            let offset = self.layout.data_start + element * size as u64;
            self.source.move_to(offset)?;
            if self.source.read_full(stripe)? < stripe_bytes {
                return Err(InputError::Data(format!(
                    "{}: NPY data ends inside column {column} (element {column} of rows \
                     {first_row}..{}) at byte {}",
                    self.source.name(),
                    first_row + rows as u64,
                    self.source.position()
                )));
            }
        }
        let mut elements = stripes.transposed(self.layout.dimension, rows);
        if self.layout.swap {
            elements.swap_bytes();
        }
        self.next_row += rows as u64;
        Ok(Some(Batch {
            first_row,
            rows,
            elements,
            validity: None,
            columns: None,
            damaged: Vec::new(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> Result<Header, (usize, String)> {
        parse_header(text.as_bytes(), false)
    }

    #[test]
    fn parses_numpy_headers() {
        let h = header("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }          \n")
            .unwrap();
        assert_eq!(h.descr, "<f4");
        assert!(!h.fortran_order);
        assert_eq!(h.shape, [3, 4]);
        let h = header("{\"shape\":(3L,),\"descr\":\">i8\",\"fortran_order\":True}").unwrap();
        assert_eq!(h.shape, [3]);
        assert!(h.fortran_order);
    }

    #[test]
    fn rejects_malformed_headers() {
        for bad in [
            "",
            "{'descr': '<f4', 'fortran_order': False}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), 'x': 1}",
            "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)}",
            "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3, 4)}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, -4)}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 99999999999999999999)}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)} trailing",
            "{'descr': '<f4, 'fortran_order': False, 'shape': (3, 4)}",
        ] {
            assert!(header(bad).is_err(), "{bad}");
        }
        assert!(parse_header("{'descr': 'é'}".as_bytes(), false).is_err());
    }

    #[test]
    fn maps_dtypes() {
        let little = cfg!(target_endian = "little");
        assert_eq!(parse_descr("<f4"), Some((ElementType::F32, !little)));
        assert_eq!(parse_descr(">f8"), Some((ElementType::F64, little)));
        assert_eq!(parse_descr("|u1"), Some((ElementType::U8, false)));
        assert_eq!(parse_descr(">i1"), Some((ElementType::I8, false)));
        for bad in ["<c8", "<u4", "|f4", "f4", "", "<U10", "=f4"] {
            assert_eq!(parse_descr(bad), None, "{bad}");
        }
    }

    #[test]
    fn fortran_order_is_transposed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.npy");
        // 3 rows × 2 columns, column-major: column 0 = 1 2 3, column 1 = 4 5 6 (big-endian i2).
        let text = "{'descr': '>i2', 'fortran_order': True, 'shape': (3, 2), }";
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(text.len() as u16).to_le_bytes());
        bytes.extend_from_slice(text.as_bytes());
        for v in [1i16, 2, 3, 4, 5, 6] {
            bytes.extend_from_slice(&v.to_be_bytes());
        }
        std::fs::write(&path, &bytes).unwrap();
        let options = InputOptions {
            format: None,
            column: None,
            dataset: "train".to_string(),
            selection: super::super::RowSelection::Range(1..3),
            batch_rows: 1,
            vectors_optional: false,
        };
        let mut reader = open(Source::open(Some(&path)).unwrap(), &options).unwrap();
        let mut seen = Vec::new();
        while let Some(batch) = reader.next_batch().unwrap() {
            seen.push((batch.first_row, batch.elements.to_f64()));
        }
        assert_eq!(seen, [(1, vec![2.0, 5.0]), (2, vec![3.0, 6.0])]);
    }
}
