//! CQL types as the server reports them, printed in CQL syntax.

use std::fmt::{self, Write as _};
use std::sync::Arc;

use cqlwire_codec::types::Identifier;
use scylla::cluster::metadata::{CollectionType, ColumnType, NativeType, UserDefinedType};

/// A CQL type reported by the server (a table column or a bind marker), cheap to clone.
///
/// [`fmt::Display`] prints it in CQL syntax (`vector<float, 768>`, `frozen<map<int, text>>`, a
/// user-defined type by its name), the form that cqlwire's type parser reads; [`CqlType::udt_declarations`]
/// gives the declarations of the user-defined types it uses.
#[derive(Clone, PartialEq, Eq)]
pub struct CqlType(Arc<ColumnType<'static>>);

impl CqlType {
    /// Wraps a driver type, refusing one that has no CQL syntax here (a variant added to the driver
    /// after this crate was written).
    pub fn new(typ: ColumnType<'static>) -> Result<Self, UnsupportedType> {
        let mut probe = String::new();
        write_type(&mut probe, &typ)?;
        Ok(CqlType(Arc::new(typ)))
    }

    /// The driver's form of the type.
    pub fn column_type(&self) -> &ColumnType<'static> {
        &self.0
    }

    /// Whether a value made for this type fits a bind marker of type `other`: the same type once the
    /// `frozen` flags are ignored (bind markers never carry them).
    pub fn matches(&self, other: &ColumnType<'_>) -> bool {
        same_type(&self.0, other)
    }

    /// The declarations `name(field type, ...)` of the user-defined types this type uses, inner ones
    /// first, each once: the form of cqlwire's `--udt` option.
    pub fn udt_declarations(&self) -> Vec<String> {
        let mut out = Vec::new();
        collect_udts(&self.0, &mut out);
        out
    }
}

impl fmt::Display for CqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        // `new` checked that every variant is printable.
        write_type(&mut text, &self.0).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

impl fmt::Debug for CqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CqlType({self})")
    }
}

/// A driver type that has no CQL syntax here.
#[derive(Debug, Clone, thiserror::Error)]
#[error("type {0} has no CQL syntax known to this loader")]
pub struct UnsupportedType(pub String);

fn native_name(native: &NativeType) -> Option<&'static str> {
    Some(match native {
        NativeType::Ascii => "ascii",
        NativeType::Boolean => "boolean",
        NativeType::Blob => "blob",
        NativeType::Counter => "counter",
        NativeType::Date => "date",
        NativeType::Decimal => "decimal",
        NativeType::Double => "double",
        NativeType::Duration => "duration",
        NativeType::Float => "float",
        NativeType::Int => "int",
        NativeType::BigInt => "bigint",
        NativeType::Text => "text",
        NativeType::Timestamp => "timestamp",
        NativeType::Inet => "inet",
        NativeType::SmallInt => "smallint",
        NativeType::TinyInt => "tinyint",
        NativeType::Time => "time",
        NativeType::Timeuuid => "timeuuid",
        NativeType::Uuid => "uuid",
        NativeType::Varint => "varint",
        _ => return None,
    })
}

fn write_type(out: &mut String, typ: &ColumnType<'_>) -> Result<(), UnsupportedType> {
    let frozen = match typ {
        ColumnType::Collection { frozen, .. } | ColumnType::UserDefinedType { frozen, .. } => {
            *frozen
        }
        _ => false,
    };
    if frozen {
        out.push_str("frozen<");
    }
    match typ {
        ColumnType::Native(native) => {
            let name = native_name(native).ok_or_else(|| UnsupportedType(format!("{native:?}")))?;
            out.push_str(name);
        }
        ColumnType::Collection { typ, .. } => match typ {
            CollectionType::List(element) => write_generic(out, "list", &[element])?,
            CollectionType::Set(element) => write_generic(out, "set", &[element])?,
            CollectionType::Map(key, value) => write_generic(out, "map", &[key, value])?,
            other => return Err(UnsupportedType(format!("{other:?}"))),
        },
        ColumnType::Vector { typ, dimensions } => {
            out.push_str("vector<");
            write_type(out, typ)?;
            let _ = write!(out, ", {dimensions}>");
        }
        ColumnType::UserDefinedType { definition, .. } => {
            let _ = write!(out, "{}", Identifier(&definition.name));
        }
        ColumnType::Tuple(fields) => {
            let fields: Vec<&ColumnType<'_>> = fields.iter().collect();
            write_generic(out, "tuple", &fields)?;
        }
        other => return Err(UnsupportedType(format!("{other:?}"))),
    }
    if frozen {
        out.push('>');
    }
    Ok(())
}

fn write_generic(
    out: &mut String,
    name: &str,
    parameters: &[&ColumnType<'_>],
) -> Result<(), UnsupportedType> {
    out.push_str(name);
    out.push('<');
    for (i, parameter) in parameters.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_type(out, parameter)?;
    }
    out.push('>');
    Ok(())
}

fn collect_udts(typ: &ColumnType<'_>, out: &mut Vec<String>) {
    match typ {
        ColumnType::Native(_) => {}
        ColumnType::Collection { typ, .. } => match typ {
            CollectionType::List(element) | CollectionType::Set(element) => {
                collect_udts(element, out)
            }
            CollectionType::Map(key, value) => {
                collect_udts(key, out);
                collect_udts(value, out);
            }
            _ => {}
        },
        ColumnType::Vector { typ, .. } => collect_udts(typ, out),
        ColumnType::Tuple(fields) => fields.iter().for_each(|field| collect_udts(field, out)),
        ColumnType::UserDefinedType { definition, .. } => {
            for (_, field) in &definition.field_types {
                collect_udts(field, out);
            }
            let declaration = udt_declaration(definition);
            if !out.contains(&declaration) {
                out.push(declaration);
            }
        }
        _ => {}
    }
}

fn udt_declaration(definition: &UserDefinedType<'_>) -> String {
    let mut out = String::new();
    let _ = write!(out, "{}(", Identifier(&definition.name));
    for (i, (name, typ)) in definition.field_types.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{} ", Identifier(name));
        // Field types were checked printable when the enclosing type was.
        let _ = write_type(&mut out, typ);
    }
    out.push(')');
    out
}

fn same_type(a: &ColumnType<'_>, b: &ColumnType<'_>) -> bool {
    match (a, b) {
        (ColumnType::Native(a), ColumnType::Native(b)) => a == b,
        (ColumnType::Collection { typ: a, .. }, ColumnType::Collection { typ: b, .. }) => {
            match (a, b) {
                (CollectionType::List(a), CollectionType::List(b))
                | (CollectionType::Set(a), CollectionType::Set(b)) => same_type(a, b),
                (CollectionType::Map(ak, av), CollectionType::Map(bk, bv)) => {
                    same_type(ak, bk) && same_type(av, bv)
                }
                _ => false,
            }
        }
        (
            ColumnType::Vector {
                typ: a,
                dimensions: da,
            },
            ColumnType::Vector {
                typ: b,
                dimensions: db,
            },
        ) => da == db && same_type(a, b),
        (
            ColumnType::UserDefinedType { definition: a, .. },
            ColumnType::UserDefinedType { definition: b, .. },
        ) => {
            a.keyspace == b.keyspace
                && a.name == b.name
                && a.field_types.len() == b.field_types.len()
                && a.field_types
                    .iter()
                    .zip(&b.field_types)
                    .all(|((an, at), (bn, bt))| an == bn && same_type(at, bt))
        }
        (ColumnType::Tuple(a), ColumnType::Tuple(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_type(a, b))
        }
        _ => false,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::borrow::Cow;

    pub(crate) fn native(native: NativeType) -> ColumnType<'static> {
        ColumnType::Native(native)
    }

    pub(crate) fn vector(element: NativeType, dimensions: u16) -> ColumnType<'static> {
        ColumnType::Vector {
            typ: Box::new(native(element)),
            dimensions,
        }
    }

    fn collection(frozen: bool, typ: CollectionType<'static>) -> ColumnType<'static> {
        ColumnType::Collection { frozen, typ }
    }

    fn udt(
        frozen: bool,
        name: &str,
        fields: Vec<(&str, ColumnType<'static>)>,
    ) -> ColumnType<'static> {
        ColumnType::UserDefinedType {
            frozen,
            definition: Arc::new(UserDefinedType {
                name: Cow::Owned(name.to_owned()),
                keyspace: Cow::Borrowed("ks"),
                field_types: fields
                    .into_iter()
                    .map(|(name, typ)| (Cow::Owned(name.to_owned()), typ))
                    .collect(),
            }),
        }
    }

    fn text(typ: ColumnType<'static>) -> String {
        CqlType::new(typ).unwrap().to_string()
    }

    #[test]
    fn types_print_in_cql_syntax() {
        assert_eq!(text(vector(NativeType::Float, 768)), "vector<float, 768>");
        assert_eq!(
            text(collection(
                false,
                CollectionType::List(Box::new(native(NativeType::Text)))
            )),
            "list<text>"
        );
        let map = CollectionType::Map(
            Box::new(native(NativeType::Int)),
            Box::new(native(NativeType::Text)),
        );
        assert_eq!(text(collection(true, map)), "frozen<map<int, text>>");
        let tuple = ColumnType::Tuple(vec![native(NativeType::BigInt), native(NativeType::Uuid)]);
        assert_eq!(text(tuple), "tuple<bigint, uuid>");
        let nested = collection(
            false,
            CollectionType::Set(Box::new(collection(
                true,
                CollectionType::List(Box::new(vector(NativeType::SmallInt, 2))),
            ))),
        );
        assert_eq!(text(nested), "set<frozen<list<vector<smallint, 2>>>>");
    }

    #[test]
    fn user_defined_types_print_by_name_and_declare_inner_types_first() {
        let inner = udt(true, "Point", vec![("x", native(NativeType::Double))]);
        let outer = udt(
            false,
            "shape",
            vec![
                ("corner", inner.clone()),
                ("also", inner),
                (
                    "tags",
                    collection(
                        false,
                        CollectionType::List(Box::new(native(NativeType::Ascii))),
                    ),
                ),
            ],
        );
        let list = collection(
            false,
            CollectionType::List(Box::new(udt(true, "shape", vec![]))),
        );
        assert_eq!(text(list), "list<frozen<shape>>");
        let typ = CqlType::new(outer).unwrap();
        assert_eq!(typ.to_string(), "shape");
        assert_eq!(
            typ.udt_declarations(),
            vec![
                "\"Point\"(x double)".to_owned(),
                "shape(corner frozen<\"Point\">, also frozen<\"Point\">, tags list<ascii>)"
                    .to_owned()
            ]
        );
    }

    #[test]
    fn matching_ignores_frozen_flags_only() {
        let schema = CqlType::new(collection(
            true,
            CollectionType::List(Box::new(native(NativeType::Int))),
        ))
        .unwrap();
        let marker = collection(
            false,
            CollectionType::List(Box::new(native(NativeType::Int))),
        );
        assert!(schema.matches(&marker));
        let set = collection(
            false,
            CollectionType::Set(Box::new(native(NativeType::Int))),
        );
        assert!(!schema.matches(&set));
        let floats = CqlType::new(vector(NativeType::Float, 3)).unwrap();
        assert!(floats.matches(&vector(NativeType::Float, 3)));
        assert!(!floats.matches(&vector(NativeType::Float, 4)));
        assert!(!floats.matches(&vector(NativeType::Double, 3)));
        assert!(!floats.matches(&native(NativeType::Blob)));
    }
}
