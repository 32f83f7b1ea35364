//! Column types and values as a message carries them: a type the grammar knows or a custom class it
//! does not, and a value that is null, unset, decoded, or raw bytes when its type is unknown.

use super::reread::Reread;
use crate::types::CqlType;
use std::fmt;
use std::ops::Range;

/// The type of a column or bound variable, from a type `[option]`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ColumnType {
    /// A type of the grammar (custom Java class names included when it knows them).
    Cql(CqlType),
    /// A custom type the grammar does not know: its Java class name (or a type built from one).
    Unknown(String),
}

impl ColumnType {
    /// Applies `f` to a known type; an unknown one stays unknown.
    pub(crate) fn map(self, f: impl FnOnce(CqlType) -> CqlType) -> ColumnType {
        match self {
            ColumnType::Cql(ty) => ColumnType::Cql(f(ty)),
            unknown => unknown,
        }
    }

    /// The type when the grammar knows it.
    pub fn cql(&self) -> Option<&CqlType> {
        match self {
            ColumnType::Cql(ty) => Some(ty),
            ColumnType::Unknown(_) => None,
        }
    }
}

impl fmt::Display for ColumnType {
    /// CQL syntax for a known type (`vector<float, 3>`), the class name for an unknown one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColumnType::Cql(ty) => write!(f, "{ty}"),
            ColumnType::Unknown(class) => f.write_str(class),
        }
    }
}

/// A column (of a Rows result) or a bound variable (of a Prepared result), owned; results keep
/// theirs in [`Columns`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Its keyspace.
    pub keyspace: String,
    /// Its table.
    pub table: String,
    /// Its name (a bind marker's name, a column name, or a selector).
    pub name: String,
    /// Its type.
    pub ty: ColumnType,
}

/// Column specifications kept compact: the names one after the other, and each column's keyspace
/// and table and type as an index into the distinct ones. A result of 1.7 M columns of one table
/// and type costs its names plus 8 bytes a column, not a [`Column`] each. Shared when cloned (a
/// statement's result columns by each page of its rows).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Columns(std::sync::Arc<ColumnTable>);

/// What [`Columns`] holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ColumnTable {
    /// The names, one after the other.
    names: String,
    /// Where each column's name ends in `names`.
    ends: Vec<u32>,
    /// The distinct keyspace and table pairs, in order of appearance.
    tables: Vec<(String, String)>,
    /// Each column's pair in `tables`; empty while every column has the first.
    table_of: Vec<u32>,
    /// The distinct types, in order of appearance.
    types: Vec<ColumnType>,
    /// Each column's type in `types`.
    type_of: Vec<u32>,
}

/// One column of [`Columns`], borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnRef<'a> {
    /// Its keyspace.
    pub keyspace: &'a str,
    /// Its table.
    pub table: &'a str,
    /// Its name (a bind marker's name, a column name, or a selector).
    pub name: &'a str,
    /// Its type.
    pub ty: &'a ColumnType,
}

/// How many of the latest distinct types (and tables) a new column's is compared with before it
/// is added as a new one (a search of all would be quadratic in hostile metadata).
const RECENT_DISTINCT: usize = 8;

impl Columns {
    /// No columns.
    pub fn new() -> Self {
        Columns::default()
    }

    /// No columns, with room for `count` (a count checked against the bytes that hold them).
    pub fn with_capacity(count: usize) -> Self {
        Columns(std::sync::Arc::new(ColumnTable {
            ends: Vec::with_capacity(count),
            type_of: Vec::with_capacity(count),
            ..ColumnTable::default()
        }))
    }

    /// The number of columns.
    pub fn len(&self) -> usize {
        self.0.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.ends.is_empty()
    }

    /// Adds a column.
    pub fn push(&mut self, keyspace: &str, table: &str, name: &str, ty: ColumnType) {
        let i = self.len();
        let this = std::sync::Arc::make_mut(&mut self.0);
        let recent = this.tables.len().saturating_sub(RECENT_DISTINCT);
        let same = |(k, t): &(String, String)| k == keyspace && t == table;
        let pair = match this.tables[recent..].iter().rposition(same) {
            Some(at) => recent + at,
            None => {
                this.tables.push((keyspace.to_string(), table.to_string()));
                this.tables.len() - 1
            }
        };
        if pair != 0 && this.table_of.is_empty() {
            this.table_of = vec![0; i];
        }
        if !this.table_of.is_empty() || pair != 0 {
            this.table_of.push(pair as u32);
        }
        let recent = this.types.len().saturating_sub(RECENT_DISTINCT);
        let kind = match this.types[recent..].iter().rposition(|t| *t == ty) {
            Some(at) => recent + at,
            None => {
                this.types.push(ty);
                this.types.len() - 1
            }
        };
        this.type_of.push(kind as u32);
        this.names.push_str(name);
        this.ends.push(this.names.len() as u32);
    }

    /// Column `i`.
    pub fn get(&self, i: usize) -> Option<ColumnRef<'_>> {
        let t = &*self.0;
        let end = *t.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { t.ends[i - 1] as usize };
        let pair = t.table_of.get(i).copied().unwrap_or(0) as usize;
        let (keyspace, table) = &t.tables[pair];
        Some(ColumnRef {
            keyspace,
            table,
            name: &t.names[start..end],
            ty: &t.types[t.type_of[i] as usize],
        })
    }

    /// The columns in order.
    pub fn iter(&self) -> impl Iterator<Item = ColumnRef<'_>> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// The bytes of metadata they hold (names, tables and types as text), as the prepared
    /// statements' registry counts them.
    pub fn footprint(&self) -> usize {
        let t = &*self.0;
        let tables: usize = t.tables.iter().map(|(k, t)| k.len() + t.len()).sum();
        let types: usize = t.types.iter().map(|t| t.to_string().len()).sum();
        t.names.len() + tables + types + 12 * self.len()
    }
}

impl FromIterator<Column> for Columns {
    fn from_iter<I: IntoIterator<Item = Column>>(columns: I) -> Self {
        let mut all = Columns::new();
        for c in columns {
            all.push(&c.keyspace, &c.table, &c.name, c.ty);
        }
        all
    }
}

/// One `[value]` of a row or of bound values. A value is kept as where its bytes are in the
/// message's body ([`super::Message::bytes`]), not decoded: a message holds about what it took on
/// the wire whatever its values, and each value is decoded again when it is written
/// (from [`super::Message::cell_bytes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    /// A length of -1.
    Null,
    /// A length of -2: the column is left unchanged.
    Unset,
    /// A value of its known type: its bytes, which are decoded where they are written (and may
    /// not decode: a text that is not UTF-8 is still a cell of its row).
    Value(Range<usize>),
    /// The bytes of a value whose type is unknown.
    Bytes(Range<usize>),
}

/// A `[string multimap]` (the options of a SUPPORTED), kept as where it is in the message's body
/// ([`super::Message::bytes`]), checked when the message was decoded: [`StringMultimap::iter`]
/// reads it again, so a map of millions of short strings takes no more than its bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StringMultimap {
    /// The number of keys (a repeated key counts each time).
    keys: usize,
    /// Where the keys and values are in the body (after the count).
    range: Range<usize>,
}

impl StringMultimap {
    /// `keys` keys with their values at `range` of the body.
    pub(crate) fn new(keys: usize, range: Range<usize>) -> Self {
        StringMultimap { keys, range }
    }

    /// The number of keys (a repeated key counts each time).
    pub fn len(&self) -> usize {
        self.keys
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.keys == 0
    }

    /// The keys in wire order, each with its values, read from `body`, the body of the message
    /// ([`super::Message::bytes`]).
    pub fn iter<'a>(
        &self,
        body: &'a [u8],
    ) -> impl Iterator<Item = (&'a str, MultimapValues<'a>)> + 'a {
        let mut strings = Reread::new(body, &self.range);
        (0..self.keys).map_while(move |_| {
            let key = strings.string()?;
            let count = strings.short()?;
            let values = MultimapValues {
                strings: strings.clone(),
                left: count,
            };
            for _ in 0..count {
                strings.string()?;
            }
            Some((key, values))
        })
    }
}

/// The values of one key of a [`StringMultimap`].
#[derive(Debug, Clone)]
pub struct MultimapValues<'a> {
    strings: Reread<'a>,
    left: u16,
}

impl<'a> Iterator for MultimapValues<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        self.left = self.left.checked_sub(1)?;
        self.strings.string()
    }
}

/// The bound values of a QUERY, EXECUTE or BATCH statement, kept as where they are in the message's
/// body ([`super::Message::bytes`]), checked when the message was decoded: [`BoundValues::iter`]
/// reads them again, so a message holds no more than its body however many values it binds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BoundValues {
    /// How many values there are.
    count: usize,
    /// Whether each value is preceded by its name (`WITH_NAMES_FOR_VALUES`).
    named: bool,
    /// The statement's bound variables, from its PREPARED result, when seen.
    variables: Option<Columns>,
    /// Where the values (and their names) are in the body.
    range: Range<usize>,
}

impl BoundValues {
    /// `count` values at `range` of the body, each preceded by its name when `named`, typed by
    /// `variables` when known.
    pub(crate) fn new(
        count: usize,
        named: bool,
        variables: Option<Columns>,
        range: Range<usize>,
    ) -> Self {
        BoundValues {
            count,
            named,
            variables,
            range,
        }
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The values in order, read from `body`, the body of their message ([`super::Message::bytes`]):
    /// each with the name the message gives it or else its variable's, the variable's type when
    /// known, and its cell ([`Cell::Value`] when the type is known, else [`Cell::Bytes`]).
    pub fn iter<'a>(&'a self, body: &'a [u8]) -> impl Iterator<Item = BoundValue<'a>> + 'a {
        let mut values = Reread::new(body, &self.range);
        (0..self.count).map_while(move |i| {
            let given = if self.named {
                Some(values.string()?)
            } else {
                None
            };
            let variable = self.variables.as_ref().and_then(|v| v.get(i));
            let ty = variable.map(|v| v.ty);
            Some(BoundValue {
                name: given.or(variable.map(|v| v.name)),
                ty,
                value: values.cell(ty.is_some_and(|t| t.cql().is_some()))?,
            })
        })
    }
}

/// One bound value of a statement, as [`BoundValues::iter`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundValue<'a> {
    /// The bind marker's name, when the message or the statement's PREPARED result gives it.
    pub name: Option<&'a str>,
    /// The variable's type, when the statement's PREPARED result was seen.
    pub ty: Option<&'a ColumnType>,
    /// The value.
    pub value: Cell,
}

#[cfg(test)]
mod columns_tests {
    use super::*;
    use crate::types::NativeType;

    #[test]
    fn columns_give_back_what_was_pushed_sharing_tables_and_types() {
        let int = ColumnType::Cql(CqlType::Native(NativeType::Int));
        let text = ColumnType::Cql(CqlType::Native(NativeType::Text));
        let pushed = [
            ("ks", "t", "a", &int),
            ("ks", "t", "b", &text),
            ("ks", "u", "", &int),
            ("other", "t", "d", &ColumnType::Unknown("x.Y".into())),
            ("ks", "t", "é", &text),
        ];
        let mut columns = Columns::new();
        for (k, t, n, ty) in pushed {
            columns.push(k, t, n, ty.clone());
        }
        assert_eq!(columns.len(), pushed.len());
        for (i, (keyspace, table, name, ty)) in pushed.into_iter().enumerate() {
            let expected = ColumnRef {
                keyspace,
                table,
                name,
                ty,
            };
            assert_eq!(columns.get(i), Some(expected), "column {i}");
        }
        assert_eq!(columns.get(pushed.len()), None);
        assert_eq!((columns.0.tables.len(), columns.0.types.len()), (3, 3));
        let shared = columns.clone();
        assert!(std::sync::Arc::ptr_eq(&shared.0, &columns.0));
    }
}
