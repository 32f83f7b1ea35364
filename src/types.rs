//! The CQL type grammar: native types, collections, tuples, user-defined types and vectors, parsed
//! from CQL syntax or Cassandra's Java class names, and displayed back as CQL.

/// A native (non-composite) CQL type. `varchar` is an alias of `text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NativeType {
    /// `ascii`: US-ASCII text.
    Ascii,
    /// `bigint`: 64-bit signed integer.
    BigInt,
    /// `blob`: arbitrary bytes.
    Blob,
    /// `boolean`: one byte, zero is false.
    Boolean,
    /// `counter`: 64-bit signed integer.
    Counter,
    /// `date`: unsigned 32-bit day count, 2^31 is 1970-01-01.
    Date,
    /// `decimal`: 32-bit scale then a varint unscaled value.
    Decimal,
    /// `double`: IEEE 754 binary64.
    Double,
    /// `duration`: months, days and nanoseconds as signed vints.
    Duration,
    /// `float`: IEEE 754 binary32.
    Float,
    /// `inet`: 4 or 16 address bytes.
    Inet,
    /// `int`: 32-bit signed integer.
    Int,
    /// `smallint`: 16-bit signed integer.
    SmallInt,
    /// `text` (and its alias `varchar`): UTF-8 text.
    Text,
    /// `time`: nanoseconds since midnight as a 64-bit signed integer.
    Time,
    /// `timestamp`: milliseconds since the epoch as a 64-bit signed integer.
    Timestamp,
    /// `timeuuid`: a version 1 UUID.
    TimeUuid,
    /// `tinyint`: 8-bit signed integer.
    TinyInt,
    /// `uuid`: 16 bytes.
    Uuid,
    /// `varint`: arbitrary-precision two's complement integer.
    Varint,
}

/// A user-defined type: its name and its fields in declaration order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdtType {
    /// The keyspace, when known (from a Java `UserType(...)` name).
    pub keyspace: Option<String>,
    /// The type's name.
    pub name: String,
    /// Field names and types, in declaration order.
    pub fields: Vec<(String, CqlType)>,
}

/// A CQL type. `frozen<...>` (and Java `FrozenType`/`ReversedType`) does not change the bytes, so it is
/// not kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CqlType {
    /// A native type.
    Native(NativeType),
    /// `list<T>`.
    List(Box<CqlType>),
    /// `set<T>`.
    Set(Box<CqlType>),
    /// `map<K, V>`.
    Map(Box<CqlType>, Box<CqlType>),
    /// `tuple<T1, T2, ...>`.
    Tuple(Vec<CqlType>),
    /// A user-defined type.
    Udt(UdtType),
    /// `vector<T, N>` with N ≥ 1.
    Vector(Box<CqlType>, usize),
}

impl NativeType {
    /// The size in bytes of this type's values when it is a *fixed-size* vector element
    /// (PRODUCT §2): boolean, int, float, bigint, double, timestamp, uuid, timeuuid. Every other native
    /// type — smallint, tinyint, date and time included — is vint-prefixed inside a vector.
    pub fn vector_element_size(self) -> Option<usize> {
        match self {
            NativeType::Boolean => Some(1),
            NativeType::Int | NativeType::Float => Some(4),
            NativeType::BigInt | NativeType::Double | NativeType::Timestamp => Some(8),
            NativeType::Uuid | NativeType::TimeUuid => Some(16),
            _ => None,
        }
    }
}

impl CqlType {
    /// The size in bytes of this type's values as a vector element when fixed (PRODUCT §2): the
    /// fixed-size natives and vectors of fixed-size elements (dimension × size); `None` when every
    /// element carries a vint length prefix.
    pub fn vector_element_size(&self) -> Option<usize> {
        match self {
            CqlType::Native(n) => n.vector_element_size(),
            CqlType::Vector(element, dimension) => element
                .vector_element_size()
                .and_then(|size| size.checked_mul(*dimension)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_listed_natives_are_fixed_size_in_vectors() {
        assert_eq!(
            CqlType::Native(NativeType::Float).vector_element_size(),
            Some(4)
        );
        assert_eq!(
            CqlType::Native(NativeType::Uuid).vector_element_size(),
            Some(16)
        );
        for n in [
            NativeType::SmallInt,
            NativeType::TinyInt,
            NativeType::Date,
            NativeType::Time,
            NativeType::Text,
        ] {
            assert_eq!(n.vector_element_size(), None, "{n:?}");
        }
        let nested = CqlType::Vector(Box::new(CqlType::Native(NativeType::Double)), 3);
        assert_eq!(nested.vector_element_size(), Some(24));
        let list = CqlType::List(Box::new(CqlType::Native(NativeType::Int)));
        assert_eq!(
            CqlType::Vector(Box::new(list), 2).vector_element_size(),
            None
        );
    }
}
