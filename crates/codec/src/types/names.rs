//! The names of the type grammar: CQL type keywords and Cassandra's Java class names, and the
//! suggestion of a known name for a misspelt one.

use super::NativeType;

/// The Java package of Cassandra's type classes, accepted (or omitted) before a class name.
pub(super) const JAVA_PACKAGE: &str = "org.apache.cassandra.db.marshal.";

/// The native type of a CQL type keyword (lowercase).
pub(super) fn native_from_cql(name: &str) -> Option<NativeType> {
    use NativeType::*;
    Some(match name {
        "ascii" => Ascii,
        "bigint" => BigInt,
        "blob" => Blob,
        "boolean" => Boolean,
        "counter" => Counter,
        "date" => Date,
        "decimal" => Decimal,
        "double" => Double,
        "duration" => Duration,
        "float" => Float,
        "inet" => Inet,
        "int" => Int,
        "smallint" => SmallInt,
        "text" | "varchar" => Text,
        "time" => Time,
        "timestamp" => Timestamp,
        "timeuuid" => TimeUuid,
        "tinyint" => TinyInt,
        "uuid" => Uuid,
        "varint" => Varint,
        _ => return None,
    })
}

/// The native type of a Java class simple name (lowercase).
pub(super) fn native_from_java(class: &str) -> Option<NativeType> {
    use NativeType::*;
    Some(match class {
        "asciitype" => Ascii,
        "longtype" => BigInt,
        "bytestype" => Blob,
        "booleantype" => Boolean,
        "countercolumntype" => Counter,
        "simpledatetype" => Date,
        "decimaltype" => Decimal,
        "doubletype" => Double,
        "durationtype" => Duration,
        "floattype" => Float,
        "inetaddresstype" => Inet,
        "int32type" => Int,
        "shorttype" => SmallInt,
        "utf8type" => Text,
        "timetype" => Time,
        "timestamptype" | "datetype" => Timestamp,
        "timeuuidtype" => TimeUuid,
        "bytetype" => TinyInt,
        "uuidtype" | "lexicaluuidtype" => Uuid,
        "integertype" => Varint,
        _ => return None,
    })
}

/// The CQL type constructors taking `<...>` parameters.
pub(super) const CQL_COMPOSITES: [&str; 6] = ["list", "set", "map", "tuple", "frozen", "vector"];

/// The CQL native type names (those [`native_from_cql`] knows), for suggestions.
pub(super) const CQL_NATIVES: [&str; 21] = [
    "ascii",
    "bigint",
    "blob",
    "boolean",
    "counter",
    "date",
    "decimal",
    "double",
    "duration",
    "float",
    "inet",
    "int",
    "smallint",
    "text",
    "varchar",
    "time",
    "timestamp",
    "timeuuid",
    "tinyint",
    "uuid",
    "varint",
];

/// Whether a lowercase name is a CQL type constructor taking `<...>` parameters.
pub(super) fn is_cql_composite(name: &str) -> bool {
    CQL_COMPOSITES.contains(&name)
}

/// The closest of `candidates` to the unknown type name `name`, when one is close enough to be a
/// typo.
pub(super) fn closest_name<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    candidates
        .into_iter()
        .map(|candidate| (strsim::damerau_levenshtein(name, candidate), candidate))
        .filter(|&(distance, candidate)| distance <= 2 && distance < candidate.len())
        // Among equally distant names, the one sharing the longest start (`intt`: `int`, not `inet`).
        .min_by(|a, b| {
            let similarity = |c: &str| strsim::jaro_winkler(name, c);
            a.0.cmp(&b.0)
                .then_with(|| similarity(b.1).total_cmp(&similarity(a.1)))
        })
        .map(|(_, candidate)| candidate)
}

/// The lowercase simple class name of a Java type name: the part after `org.apache.cassandra.db.marshal.`,
/// or the whole name when it has no package. `None` for other dotted names.
pub(super) fn java_class(lower: &str) -> Option<&str> {
    match lower.strip_prefix(JAVA_PACKAGE) {
        Some(class) => Some(class),
        None if !lower.contains('.') => Some(lower),
        None => None,
    }
}

/// Whether a lowercase Java simple class name is a parameterised type.
pub(super) fn is_java_composite(class: &str) -> bool {
    matches!(
        class,
        "listtype"
            | "settype"
            | "maptype"
            | "tupletype"
            | "frozentype"
            | "reversedtype"
            | "vectortype"
            | "usertype"
    )
}
