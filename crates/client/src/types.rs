//! CQL types as the server reports them, printed in CQL syntax.

use std::fmt::{self, Write as _};
use std::sync::Arc;

use cqlwire_codec::types::{CqlType as CodecType, Identifier, NativeType as CodecNative, UdtType};
use scylla::cluster::metadata::{CollectionType, ColumnType, NativeType, UserDefinedType};

/// A CQL type reported by the server (a table column or a bind marker), cheap to clone.
///
/// [`fmt::Display`] prints it in CQL syntax (`vector<float, 768>`, `frozen<map<int, text>>`, a
/// user-defined type by its name), the form that cqlwire's type parser reads; [`ServerType::udt_declarations`]
/// gives the declarations of the user-defined types it uses.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerType(Arc<ColumnType<'static>>);

impl ServerType {
    /// Wraps a driver type, refusing one that has no CQL syntax here (a variant added to the driver
    /// after this crate was written).
    pub fn new(typ: ColumnType<'static>) -> Result<Self, UnsupportedType> {
        let mut probe = String::new();
        write_type(&mut probe, &typ)?;
        Ok(ServerType(Arc::new(typ)))
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

    /// The codec's form of the type, converted directly (the `frozen` flags dropped, as the codec
    /// keeps none): the type the value bytes are decoded and encoded by.
    pub fn codec_type(&self) -> Result<CodecType, UnsupportedType> {
        to_codec(&self.0)
    }

    /// The declarations `name(field type, ...)` of the user-defined types this type uses, inner ones
    /// first, each once: the form of cqlwire's `--udt` option.
    pub fn udt_declarations(&self) -> Vec<String> {
        let mut out = Vec::new();
        collect_udts(&self.0, &mut out);
        out
    }
}

impl fmt::Display for ServerType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        // `new` checked that every variant is printable.
        write_type(&mut text, &self.0).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

impl fmt::Debug for ServerType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ServerType({self})")
    }
}

/// A driver type that has no CQL syntax here.
#[derive(Debug, Clone, thiserror::Error)]
#[error("type {0} has no CQL syntax known to this loader")]
#[non_exhaustive]
pub struct UnsupportedType(pub String);

/// The codec's native type of a driver's native type (`None` for one added to the driver later).
fn codec_native(native: &NativeType) -> Option<CodecNative> {
    Some(match native {
        NativeType::Ascii => CodecNative::Ascii,
        NativeType::Boolean => CodecNative::Boolean,
        NativeType::Blob => CodecNative::Blob,
        NativeType::Counter => CodecNative::Counter,
        NativeType::Date => CodecNative::Date,
        NativeType::Decimal => CodecNative::Decimal,
        NativeType::Double => CodecNative::Double,
        NativeType::Duration => CodecNative::Duration,
        NativeType::Float => CodecNative::Float,
        NativeType::Int => CodecNative::Int,
        NativeType::BigInt => CodecNative::BigInt,
        NativeType::Text => CodecNative::Text,
        NativeType::Timestamp => CodecNative::Timestamp,
        NativeType::Inet => CodecNative::Inet,
        NativeType::SmallInt => CodecNative::SmallInt,
        NativeType::TinyInt => CodecNative::TinyInt,
        NativeType::Time => CodecNative::Time,
        NativeType::Timeuuid => CodecNative::TimeUuid,
        NativeType::Uuid => CodecNative::Uuid,
        NativeType::Varint => CodecNative::Varint,
        _ => return None,
    })
}

fn to_codec(typ: &ColumnType<'_>) -> Result<CodecType, UnsupportedType> {
    let boxed = |typ| to_codec(typ).map(Box::new);
    Ok(match typ {
        ColumnType::Native(native) => CodecType::Native(
            codec_native(native).ok_or_else(|| UnsupportedType(format!("{native:?}")))?,
        ),
        ColumnType::Collection { typ, .. } => match typ {
            CollectionType::List(element) => CodecType::List(boxed(element)?),
            CollectionType::Set(element) => CodecType::Set(boxed(element)?),
            CollectionType::Map(key, value) => CodecType::Map(boxed(key)?, boxed(value)?),
            other => return Err(UnsupportedType(format!("{other:?}"))),
        },
        ColumnType::Vector { typ, dimensions } => {
            CodecType::Vector(boxed(typ)?, usize::from(*dimensions))
        }
        ColumnType::UserDefinedType { definition, .. } => CodecType::Udt(UdtType {
            keyspace: None,
            name: definition.name.to_string(),
            fields: definition
                .field_types
                .iter()
                .map(|(name, typ)| Ok((name.to_string(), to_codec(typ)?)))
                .collect::<Result<_, UnsupportedType>>()?,
        }),
        ColumnType::Tuple(fields) => {
            CodecType::Tuple(fields.iter().map(to_codec).collect::<Result<_, _>>()?)
        }
        other => return Err(UnsupportedType(format!("{other:?}"))),
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
            let name = codec_native(native)
                .ok_or_else(|| UnsupportedType(format!("{native:?}")))?
                .cql_name();
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

    pub(crate) fn collection(frozen: bool, typ: CollectionType<'static>) -> ColumnType<'static> {
        ColumnType::Collection { frozen, typ }
    }

    pub(crate) fn udt(
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
        ServerType::new(typ).unwrap().to_string()
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
        let typ = ServerType::new(outer).unwrap();
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
    fn the_codec_type_is_what_the_codec_parses_from_the_cql_syntax() {
        let point = udt(true, "Point", vec![("x", native(NativeType::Double))]);
        let shape = udt(
            false,
            "shape",
            vec![
                ("corner", point),
                ("id", native(NativeType::Timeuuid)),
                (
                    "tags",
                    collection(
                        true,
                        CollectionType::Map(
                            Box::new(native(NativeType::Text)),
                            Box::new(vector(NativeType::Float, 3)),
                        ),
                    ),
                ),
            ],
        );
        for typ in [
            vector(NativeType::Float, 768),
            ColumnType::Tuple(vec![native(NativeType::Varint), native(NativeType::Inet)]),
            collection(false, CollectionType::Set(Box::new(shape.clone()))),
            shape,
        ] {
            let typ = ServerType::new(typ).unwrap();
            let mut udts = cqlwire_codec::types::UdtRegistry::new();
            for declaration in typ.udt_declarations() {
                udts.declare(&declaration).unwrap();
            }
            let parsed = cqlwire_codec::types::parse_type(&typ.to_string(), &udts).unwrap();
            assert_eq!(typ.codec_type().unwrap(), parsed, "{typ}");
        }
    }

    #[test]
    fn matching_ignores_frozen_flags_only() {
        let schema = ServerType::new(collection(
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
        let floats = ServerType::new(vector(NativeType::Float, 3)).unwrap();
        assert!(floats.matches(&vector(NativeType::Float, 3)));
        assert!(!floats.matches(&vector(NativeType::Float, 4)));
        assert!(!floats.matches(&vector(NativeType::Double, 3)));
        assert!(!floats.matches(&native(NativeType::Blob)));
    }
}
