//! VectorDBBench's Parquet ground truth (`neighbors_id`, a list of integers per row) read to k
//! ids per row: the column chunk's pages are taken from the parquet crate's page reader (which
//! decompresses them) and their levels and values decoded here, a chunk of [`CHUNK_LEVELS`] levels
//! at a time, so a list of any length costs its first k ids and a fixed chunk, never the list.
//! The ids past k are counted (their levels read, their values skipped), not read.
//!
//! Encodings decoded: levels RLE/bit-packed (and the old BIT_PACKED), values PLAIN and dictionary
//! (PLAIN_DICTIONARY, RLE_DICTIONARY) — what pyarrow and the parquet crate write for integer
//! lists by default. A column chunk whose footer lists another encoding is read through the
//! Parquet input, whole rows at a time.

use super::super::guard::fenced;
use super::super::InputError;
use super::Lists;
use parquet::basic::{ConvertedType, Encoding, LogicalType, Repetition, Type as PhysicalType};
use parquet::column::page::Page;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::schema::types::Type as SchemaType;
use std::fs::File;

/// Levels decoded at a time.
const CHUNK_LEVELS: usize = 64 << 10;

/// How the ids are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ids {
    /// INT32 read as signed (int8, int16, int32).
    I32,
    /// INT32 read as unsigned (uint8, uint16, uint32).
    U32,
    /// INT64, signed.
    I64,
    /// INT64, unsigned (uint64): refused above 2^63 - 1.
    U64,
}

impl Ids {
    fn width(self) -> usize {
        match self {
            Ids::I32 | Ids::U32 => 4,
            Ids::I64 | Ids::U64 => 8,
        }
    }
}

/// What the definition levels of the list column mean.
#[derive(Debug, Clone, Copy)]
struct Levels {
    /// Below it, the row has no list (null).
    list: i16,
    /// At or above it, a slot of an element (below `value`: a null one).
    element: i16,
    /// A present value.
    value: i16,
}

/// The outcome of opening the file: read here, or through the Parquet input (an encoding not
/// decoded here).
pub(super) enum Read {
    Lists(Lists),
    Elsewhere,
}

/// Reads the lists of column `column` of the Parquet file `file`, to `keep` ids per row.
pub(super) fn read(name: &str, file: File, column: &str, keep: usize) -> Result<Read, InputError> {
    let invalid = |e: &dyn std::fmt::Display| {
        InputError::Data(format!("{name}: not a readable Parquet file: {e}"))
    };
    let reader = fenced(name, "the Parquet footer", || {
        SerializedFileReader::new(file)
    })?
    .map_err(|e| invalid(&e))?;
    let metadata = reader.metadata();
    let schema = metadata.file_metadata().schema_descr();
    let roots = schema.root_schema().get_fields();
    let Some(root) = roots.iter().position(|field| field.name() == column) else {
        let names: Vec<&str> = roots.iter().map(|field| field.name()).collect();
        return Err(InputError::Options(format!(
            "{name}: no column '{column}' (columns: {})",
            names.join(", ")
        )));
    };
    let leaves: Vec<usize> = (0..schema.num_columns())
        .filter(|&leaf| schema.get_column_root_idx(leaf) == root)
        .collect();
    let not_a_list = |what: String| {
        InputError::Unsupported(format!(
            "{name}: ground truth holds a list of integer ids per row in column '{column}', \
             not {what}"
        ))
    };
    let &[leaf] = leaves.as_slice() else {
        return Err(not_a_list(format!("{} nested columns", leaves.len())));
    };
    let descriptor = schema.column(leaf);
    let ids = id_type(
        descriptor.physical_type(),
        descriptor.logical_type_ref(),
        descriptor.converted_type(),
    )
    .ok_or_else(|| {
        let element = match descriptor.physical_type() {
            PhysicalType::FLOAT => "float32".to_string(),
            PhysicalType::DOUBLE => "float64".to_string(),
            other => match descriptor.logical_type_ref() {
                Some(logical) => format!("{logical:?}"),
                None => other.to_string(),
            },
        };
        InputError::Unsupported(format!(
            "{name}: ground truth holds integer ids, not {element} numbers (column '{column}')"
        ))
    })?;
    if descriptor.max_rep_level() != 1 {
        return Err(not_a_list(format!(
            "a column of {} list levels",
            descriptor.max_rep_level()
        )));
    }
    let levels = levels(&roots[root], descriptor.max_def_level())
        .ok_or_else(|| not_a_list("a list of another layout".to_string()))?;
    let decoded = [
        Encoding::PLAIN,
        Encoding::PLAIN_DICTIONARY,
        Encoding::RLE_DICTIONARY,
        Encoding::RLE,
        #[allow(deprecated)]
        Encoding::BIT_PACKED,
    ];
    let others = metadata.row_groups().iter().any(|group| {
        group
            .column(leaf)
            .encodings()
            .any(|e| !decoded.contains(&e))
    });
    if others {
        return Ok(Read::Elsewhere);
    }
    let mut walk = Walk {
        name,
        keep,
        levels,
        ids,
        lists: Lists::new(name, keep),
        row: None,
        taken: 0,
        values: Vec::new(),
    };
    for group in 0..metadata.num_row_groups() {
        let declared = metadata.row_group(group).num_rows();
        let before = walk.lists.rows();
        let what = format!("row group {group}");
        let mut pages = fenced(name, &what, || {
            reader
                .get_row_group(group)
                .and_then(|g| g.get_column_page_reader(leaf))
        })?
        .map_err(|e| walk.error(&e))?;
        let mut dictionary: Option<Vec<u64>> = None;
        loop {
            let page =
                fenced(name, &what, || pages.get_next_page())?.map_err(|e| walk.error(&e))?;
            let Some(page) = page else { break };
            walk.page(&page, &mut dictionary)?;
        }
        walk.finish_row()?;
        let rows = walk.lists.rows() - before;
        if i64::try_from(rows).ok() != Some(declared) {
            return Err(InputError::Data(format!(
                "{name}: row group {group} holds {rows} lists, but its metadata declares \
                 {declared} rows"
            )));
        }
    }
    Ok(Read::Lists(walk.lists))
}

/// The ids' type from a leaf's physical and logical types; None when not integers.
fn id_type(
    physical: PhysicalType,
    logical: Option<&LogicalType>,
    converted: ConvertedType,
) -> Option<Ids> {
    let unsigned = match (logical, converted) {
        (Some(LogicalType::Integer(integer)), _) => !integer.is_signed,
        (Some(_), _) => return None,
        (
            None,
            ConvertedType::UINT_8
            | ConvertedType::UINT_16
            | ConvertedType::UINT_32
            | ConvertedType::UINT_64,
        ) => true,
        (
            None,
            ConvertedType::NONE
            | ConvertedType::INT_8
            | ConvertedType::INT_16
            | ConvertedType::INT_32
            | ConvertedType::INT_64,
        ) => false,
        (None, _) => return None,
    };
    match (physical, unsigned) {
        (PhysicalType::INT32, false) => Some(Ids::I32),
        (PhysicalType::INT32, true) => Some(Ids::U32),
        (PhysicalType::INT64, false) => Some(Ids::I64),
        (PhysicalType::INT64, true) => Some(Ids::U64),
        _ => None,
    }
}

/// The definition levels of a list column whose root field is `root`: one repeated node on the
/// way down to the leaf (3-level lists as pyarrow writes them, or the legacy 2-level ones).
fn levels(root: &SchemaType, max: i16) -> Option<Levels> {
    let mut node = root;
    let mut level = 0i16;
    let mut list = None;
    loop {
        let info = node.get_basic_info();
        let repetition = info.has_repetition().then(|| info.repetition());
        match repetition {
            Some(Repetition::OPTIONAL) => level += 1,
            Some(Repetition::REPEATED) => {
                if list.is_some() {
                    return None;
                }
                list = Some(level);
                level += 1;
            }
            _ => {}
        }
        if !node.is_group() {
            break;
        }
        let [child] = node.get_fields() else {
            return None;
        };
        node = child;
    }
    let list = list?;
    (level == max).then_some(Levels {
        list,
        element: list + 1,
        value: max,
    })
}

/// The state of the walk through a column's levels and values.
struct Walk<'a> {
    name: &'a str,
    keep: usize,
    levels: Levels,
    ids: Ids,
    lists: Lists,
    /// Ids of the row being read, counted whole (None: no row started yet).
    row: Option<u64>,
    /// Ids of the row being read that were kept.
    taken: usize,
    values: Vec<u64>,
}

impl Walk<'_> {
    fn error(&self, e: &dyn std::fmt::Display) -> InputError {
        InputError::Data(format!(
            "{}: cannot read Parquet row {}: {e}",
            self.name,
            self.lists.rows()
        ))
    }

    fn corrupt(&self, what: &str) -> InputError {
        InputError::Data(format!(
            "{}: corrupt Parquet page at row {}: {what}",
            self.name,
            self.lists.rows()
        ))
    }

    /// Ends the row being read, if any.
    fn finish_row(&mut self) -> Result<(), InputError> {
        if self.row.take().is_some() {
            self.lists.end_row()?;
            self.taken = 0;
        }
        Ok(())
    }

    /// Decodes one page.
    fn page(&mut self, page: &Page, dictionary: &mut Option<Vec<u64>>) -> Result<(), InputError> {
        let (buf, levels_count, encoding, rep, def, rep_encoding, def_encoding) = match page {
            Page::DictionaryPage {
                buf, num_values, ..
            } => {
                let width = self.ids.width();
                let count = *num_values as usize;
                if count
                    .checked_mul(width)
                    .is_none_or(|bytes| bytes > buf.len())
                {
                    return Err(self.corrupt("a dictionary larger than its page"));
                }
                let values = buf
                    .chunks_exact(width)
                    .take(count)
                    .map(|b| raw(b, width))
                    .collect();
                *dictionary = Some(values);
                return Ok(());
            }
            Page::DataPage {
                buf,
                num_values,
                encoding,
                def_level_encoding,
                rep_level_encoding,
                ..
            } => {
                let count = *num_values as usize;
                let (rep, used) = v1_levels(buf, 0, *rep_level_encoding, 1, count)
                    .ok_or_else(|| self.corrupt("repetition levels past its end"))?;
                let (def, used) =
                    v1_levels(buf, used, *def_level_encoding, self.levels.value, count)
                        .ok_or_else(|| self.corrupt("definition levels past its end"))?;
                (
                    &buf[used..],
                    count,
                    *encoding,
                    rep,
                    def,
                    *rep_level_encoding,
                    *def_level_encoding,
                )
            }
            Page::DataPageV2 {
                buf,
                num_values,
                num_nulls,
                encoding,
                def_levels_byte_len,
                rep_levels_byte_len,
                ..
            } => {
                let rep_end = *rep_levels_byte_len as usize;
                let def_end = rep_end.checked_add(*def_levels_byte_len as usize);
                let Some(def_end) = def_end.filter(|&end| end <= buf.len()) else {
                    return Err(self.corrupt("levels longer than the page"));
                };
                if num_nulls > num_values {
                    return Err(self.corrupt("more nulls than values"));
                }
                (
                    &buf[def_end..],
                    *num_values as usize,
                    *encoding,
                    &buf[..rep_end],
                    &buf[rep_end..def_end],
                    Encoding::RLE,
                    Encoding::RLE,
                )
            }
        };
        let mut rep = LevelReader::new(rep, rep_encoding, 1)
            .ok_or_else(|| self.corrupt("an unknown repetition level encoding"))?;
        let mut def = LevelReader::new(def, def_encoding, self.levels.value)
            .ok_or_else(|| self.corrupt("an unknown definition level encoding"))?;
        let width = self.ids.width();
        let mut values = match encoding {
            Encoding::PLAIN => Values::Plain {
                data: buf,
                at: 0,
                width,
            },
            Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => {
                let Some(dictionary) = dictionary.as_ref() else {
                    return Err(self.corrupt("dictionary-encoded values without a dictionary"));
                };
                let Some(&bit_width) = buf.first() else {
                    return Err(self.corrupt("no dictionary indices"));
                };
                if bit_width > 32 {
                    return Err(self.corrupt("dictionary indices wider than 32 bits"));
                }
                Values::Dictionary {
                    indices: Hybrid::new(&buf[1..], bit_width),
                    size: dictionary.len(),
                }
            }
            other => {
                return Err(InputError::Unsupported(format!(
                    "{}: Parquet values of encoding {other} at row {} (not in the footer's list \
                     of encodings)",
                    self.name,
                    self.lists.rows()
                )))
            }
        };
        let mut reps = vec![0i16; CHUNK_LEVELS.min(levels_count)];
        let mut defs = vec![0i16; reps.len()];
        let mut left = levels_count;
        while left > 0 {
            if self.taken >= self.keep && self.row.is_some() {
                // A full row going on in runs of present values: counted a run at a time.
                if let (Some((1, a)), Some((d, b))) = (rep.peek_repeat(), def.peek_repeat()) {
                    if d == self.levels.value {
                        let n = a.min(b).min(left);
                        rep.advance(n);
                        def.advance(n);
                        values
                            .skip(n)
                            .ok_or_else(|| self.corrupt("fewer values than levels"))?;
                        if let Some(count) = self.row.as_mut() {
                            *count += n as u64;
                        }
                        left -= n;
                        continue;
                    }
                }
            }
            let n = left.min(reps.len());
            if rep.read(&mut reps[..n]) != n || def.read(&mut defs[..n]) != n {
                return Err(self.corrupt("fewer levels than the page says"));
            }
            self.walk(&reps[..n], &defs[..n], &mut values, dictionary.as_deref())?;
            left -= n;
        }
        Ok(())
    }

    /// Walks `n` levels, keeping the first `keep` values of each row.
    fn walk(
        &mut self,
        reps: &[i16],
        defs: &[i16],
        values: &mut Values,
        dictionary: Option<&[u64]>,
    ) -> Result<(), InputError> {
        // Values to read (true) or skip (false), in runs.
        let mut run: (bool, usize) = (false, 0);
        let mut at = 0;
        while at < reps.len() {
            if self.taken >= self.keep && self.row.is_some() {
                // The row is full: its further values (repetition 1, present) are counted at once.
                let value = self.levels.value;
                let more = reps[at..]
                    .iter()
                    .zip(&defs[at..])
                    .position(|(&r, &d)| r != 1 || d != value)
                    .unwrap_or(reps.len() - at);
                if more > 0 {
                    if run.0 && run.1 > 0 {
                        self.flush(&mut run, values, dictionary)?;
                    }
                    run = (false, run.1 + more);
                    if let Some(count) = self.row.as_mut() {
                        *count += more as u64;
                    }
                    at += more;
                    continue;
                }
            }
            let (r, d) = (reps[at], defs[at]);
            at += 1;
            if r == 0 {
                self.flush(&mut run, values, dictionary)?;
                self.finish_row()?;
                let row = self.lists.rows();
                if d < self.levels.list {
                    return Err(InputError::Data(format!(
                        "{}: row {row} has no list of ids (null)",
                        self.name
                    )));
                }
                self.row = Some(0);
            } else if r != 1 || self.row.is_none() {
                return Err(self.corrupt("repetition levels that start no row"));
            }
            if d < self.levels.element {
                continue;
            }
            let Some(count) = self.row.as_mut() else {
                continue;
            };
            if d < self.levels.value {
                return Err(InputError::Data(format!(
                    "{}: row {} holds a null id at position {count}",
                    self.name,
                    self.lists.rows()
                )));
            }
            *count += 1;
            let wanted = self.taken < self.keep;
            self.taken += usize::from(wanted);
            if run.0 != wanted && run.1 > 0 {
                self.flush(&mut run, values, dictionary)?;
            }
            run = (wanted, run.1 + 1);
        }
        self.flush(&mut run, values, dictionary)
    }

    /// Reads or skips the values of `run`.
    fn flush(
        &mut self,
        run: &mut (bool, usize),
        values: &mut Values,
        dictionary: Option<&[u64]>,
    ) -> Result<(), InputError> {
        let (wanted, count) = std::mem::take(run);
        if count == 0 {
            return Ok(());
        }
        if !wanted {
            return values
                .skip(count)
                .ok_or_else(|| self.corrupt("fewer values than levels"));
        }
        self.values.clear();
        values
            .read(count, &mut self.values, dictionary.unwrap_or(&[]))
            .ok_or_else(|| self.corrupt("fewer values than levels"))?;
        let row = self.lists.rows();
        for i in 0..self.values.len() {
            let raw = self.values[i];
            let id = match self.ids {
                Ids::I32 => i64::from(raw as u32 as i32),
                Ids::U32 => i64::from(raw as u32),
                Ids::I64 => raw as i64,
                Ids::U64 => i64::try_from(raw).map_err(|_| {
                    InputError::Data(format!(
                        "{}: id {raw} in row {row} is above 2^63 - 1",
                        self.name
                    ))
                })?,
            };
            self.lists.push(id);
        }
        Ok(())
    }
}

/// A little-endian value of `width` bytes (4 or 8).
fn raw(bytes: &[u8], width: usize) -> u64 {
    let mut wide = [0u8; 8];
    wide[..width.min(8)].copy_from_slice(&bytes[..width.min(8).min(bytes.len())]);
    u64::from_le_bytes(wide)
}

/// The levels of a V1 page from byte `at`: RLE (a 4-byte length, then the runs) or the old
/// BIT_PACKED (`count` levels of the bit width of `max`). Returns them and where they end.
fn v1_levels(
    buf: &[u8],
    at: usize,
    encoding: Encoding,
    max: i16,
    count: usize,
) -> Option<(&[u8], usize)> {
    if max == 0 {
        return Some((&[], at));
    }
    let len = match encoding {
        Encoding::RLE => {
            let prefix: [u8; 4] = buf.get(at..at.checked_add(4)?)?.try_into().ok()?;
            let len = usize::try_from(u32::from_le_bytes(prefix)).ok()?;
            let start = at + 4;
            let end = start.checked_add(len).filter(|&end| end <= buf.len())?;
            return Some((&buf[start..end], end));
        }
        #[allow(deprecated)]
        Encoding::BIT_PACKED => count.checked_mul(bit_width(max) as usize)?.div_ceil(8),
        _ => return Some((&[], at)),
    };
    let end = at.checked_add(len).filter(|&end| end <= buf.len())?;
    Some((&buf[at..end], end))
}

/// Bits per level of levels up to `max`.
fn bit_width(max: i16) -> u8 {
    (16 - (max.max(0) as u16).leading_zeros()) as u8
}

/// Levels of one page.
enum LevelReader<'a> {
    /// A column without such levels: every level is 0 (repetition) or `max`.
    Constant(i16),
    Hybrid(Hybrid<'a>),
    /// The old BIT_PACKED encoding: most significant bit first.
    Packed {
        data: &'a [u8],
        bit: usize,
        width: u8,
    },
}

impl<'a> LevelReader<'a> {
    fn new(data: &'a [u8], encoding: Encoding, max: i16) -> Option<LevelReader<'a>> {
        if max == 0 {
            return Some(LevelReader::Constant(0));
        }
        let width = bit_width(max);
        match encoding {
            Encoding::RLE => Some(LevelReader::Hybrid(Hybrid::new(data, width))),
            #[allow(deprecated)]
            Encoding::BIT_PACKED => Some(LevelReader::Packed {
                data,
                bit: 0,
                width,
            }),
            _ => None,
        }
    }

    /// The level and count of the run of one level that comes next, when the encoding says so
    /// (an RLE run, or a column without such levels).
    fn peek_repeat(&mut self) -> Option<(i16, usize)> {
        match self {
            LevelReader::Constant(level) => Some((*level, usize::MAX)),
            LevelReader::Hybrid(hybrid) => hybrid
                .peek_repeat()
                .map(|(value, count)| (value as i16, count)),
            LevelReader::Packed { .. } => None,
        }
    }

    /// Consumes `n` levels of the run [`LevelReader::peek_repeat`] saw.
    fn advance(&mut self, n: usize) {
        if let LevelReader::Hybrid(hybrid) = self {
            hybrid.repeat.1 = hybrid.repeat.1.saturating_sub(n);
        }
    }

    /// Fills `out`; returns how many levels there were.
    fn read(&mut self, out: &mut [i16]) -> usize {
        match self {
            LevelReader::Constant(level) => {
                out.fill(*level);
                out.len()
            }
            LevelReader::Hybrid(hybrid) => {
                let mut filled = 0;
                while filled < out.len() {
                    match hybrid.next_run(out.len() - filled) {
                        Some(Run::Repeat(value, n)) => {
                            out[filled..filled + n].fill(value as i16);
                            filled += n;
                        }
                        Some(Run::Packed(n)) => {
                            for slot in &mut out[filled..filled + n] {
                                *slot = hybrid.packed_value() as i16;
                            }
                            filled += n;
                        }
                        None => break,
                    }
                }
                filled
            }
            LevelReader::Packed { data, bit, width } => {
                let width = usize::from(*width);
                let mut filled = 0;
                for slot in out.iter_mut() {
                    if bit.saturating_add(width) > data.len() * 8 {
                        break;
                    }
                    let mut level = 0u16;
                    for _ in 0..width {
                        let byte = data[*bit / 8];
                        level = (level << 1) | u16::from((byte >> (7 - *bit % 8)) & 1);
                        *bit += 1;
                    }
                    *slot = level as i16;
                    filled += 1;
                }
                filled
            }
        }
    }
}

/// A stretch of the RLE/bit-packed hybrid encoding.
enum Run {
    /// `n` times the value.
    Repeat(u64, usize),
    /// `n` values to take with [`Hybrid::packed_value`].
    Packed(usize),
}

/// The RLE/bit-packed hybrid encoding (levels and dictionary indices).
struct Hybrid<'a> {
    data: &'a [u8],
    /// Next byte of run headers.
    at: usize,
    width: u8,
    repeat: (u64, usize),
    /// Bit position of the next packed value and how many are left in the run.
    packed: (usize, usize),
}

impl<'a> Hybrid<'a> {
    fn new(data: &'a [u8], width: u8) -> Hybrid<'a> {
        Hybrid {
            data,
            at: 0,
            width,
            repeat: (0, 0),
            packed: (0, 0),
        }
    }

    /// The next up to `most` values: a repeated value or packed ones; None at the end.
    fn next_run(&mut self, most: usize) -> Option<Run> {
        self.load()?;
        if self.repeat.1 > 0 {
            let n = self.repeat.1.min(most);
            self.repeat.1 -= n;
            return Some(Run::Repeat(self.repeat.0, n));
        }
        Some(Run::Packed(self.packed.1.min(most)))
    }

    /// The value and length of the repeated run that comes next, if one does.
    fn peek_repeat(&mut self) -> Option<(u64, usize)> {
        self.load()?;
        (self.repeat.1 > 0).then_some(self.repeat)
    }

    /// Reads run headers until a run with values is current; None at the end.
    fn load(&mut self) -> Option<()> {
        while self.repeat.1 == 0 && self.packed.1 == 0 {
            let header = self.uleb()?;
            let width = usize::from(self.width);
            if header & 1 == 1 {
                let groups = usize::try_from(header >> 1).ok()?;
                let bytes = groups.checked_mul(width)?;
                let start = self.at;
                let available = self.data.len() - start;
                let end = start + bytes.min(available);
                // A last run cut short holds the values its bytes hold.
                let held = ((end - start) * 8).checked_div(width).unwrap_or(usize::MAX);
                let values = groups.checked_mul(8)?.min(held);
                self.packed = (start * 8, values);
                self.at = end;
            } else {
                let count = usize::try_from(header >> 1).ok()?;
                let bytes = width.div_ceil(8);
                let value_bytes = self.data.get(self.at..self.at.checked_add(bytes)?)?;
                let mut wide = [0u8; 8];
                wide[..bytes].copy_from_slice(value_bytes);
                self.at += bytes;
                self.repeat = (u64::from_le_bytes(wide), count);
            }
        }
        Some(())
    }

    /// The next value of a packed run (least significant bit first); the caller took a count
    /// from [`Hybrid::next_run`].
    fn packed_value(&mut self) -> u64 {
        let width = usize::from(self.width);
        let (bit, left) = self.packed;
        self.packed = (bit + width, left.saturating_sub(1));
        let mut value = 0u64;
        let mut taken = 0;
        while taken < width {
            let at = bit + taken;
            let byte = self.data.get(at / 8).copied().unwrap_or(0);
            let shift = at % 8;
            let bits = (8 - shift).min(width - taken);
            let part = (u64::from(byte) >> shift) & ((1u64 << bits) - 1);
            value |= part << taken;
            taken += bits;
        }
        value
    }

    /// Skips up to `n` values; returns how many there were.
    fn skip(&mut self, n: usize) -> usize {
        let mut skipped = 0;
        while skipped < n {
            match self.next_run(n - skipped) {
                Some(Run::Repeat(_, m)) => skipped += m,
                Some(Run::Packed(m)) => {
                    let (bit, left) = self.packed;
                    self.packed = (bit + m * usize::from(self.width), left - m);
                    skipped += m;
                }
                None => break,
            }
        }
        skipped
    }

    fn uleb(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.data.get(self.at)?;
            self.at += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
}

/// The values of one page.
enum Values<'a> {
    Plain {
        data: &'a [u8],
        at: usize,
        width: usize,
    },
    Dictionary {
        indices: Hybrid<'a>,
        size: usize,
    },
}

impl Values<'_> {
    /// Appends the next `n` values to `out`; None when the page has fewer or an index is outside
    /// the dictionary.
    fn read(&mut self, n: usize, out: &mut Vec<u64>, dictionary: &[u64]) -> Option<()> {
        match self {
            Values::Plain { data, at, width } => {
                let end = n.checked_mul(*width)?.checked_add(*at)?;
                let bytes = data.get(*at..end)?;
                out.extend(bytes.chunks_exact(*width).map(|b| raw(b, *width)));
                *at = end;
            }
            Values::Dictionary { indices, size } => {
                let mut read = 0;
                while read < n {
                    match indices.next_run(n - read)? {
                        Run::Repeat(index, m) => {
                            let value = *dictionary.get(usize::try_from(index).ok()?)?;
                            out.extend(std::iter::repeat_n(value, m));
                            read += m;
                        }
                        Run::Packed(m) => {
                            for _ in 0..m {
                                let index = usize::try_from(indices.packed_value()).ok()?;
                                if index >= *size {
                                    return None;
                                }
                                out.push(*dictionary.get(index)?);
                            }
                            read += m;
                        }
                    }
                }
            }
        }
        Some(())
    }

    /// Skips the next `n` values; None when the page has fewer.
    fn skip(&mut self, n: usize) -> Option<()> {
        match self {
            Values::Plain { data, at, width } => {
                let end = n.checked_mul(*width)?.checked_add(*at)?;
                if end > data.len() {
                    return None;
                }
                *at = end;
            }
            Values::Dictionary { indices, .. } => {
                if indices.skip(n) != n {
                    return None;
                }
            }
        }
        Some(())
    }
}
