use super::names::{native_from_cql, CQL_NATIVES, JAVA_PACKAGE};
use super::*;

fn parse(text: &str) -> CqlType {
    parse_type(text, &UdtRegistry::new()).unwrap()
}

fn native(n: NativeType) -> CqlType {
    CqlType::Native(n)
}

fn list(t: CqlType) -> CqlType {
    CqlType::List(Box::new(t))
}

fn parse_error(text: &str, udts: &UdtRegistry) -> TypeError {
    parse_type(text, udts).unwrap_err()
}

#[test]
fn every_native_name_parses_case_insensitively() {
    use NativeType::*;
    let all = [
        Ascii, BigInt, Blob, Boolean, Counter, Date, Decimal, Double, Duration, Float, Inet, Int,
        SmallInt, Text, Time, Timestamp, TimeUuid, TinyInt, Uuid, Varint,
    ];
    for n in all {
        assert_eq!(parse(n.cql_name()), native(n));
        assert_eq!(
            parse(&format!("  {}\t", n.cql_name().to_uppercase())),
            native(n)
        );
    }
    assert_eq!(parse("varchar"), native(Text));
    assert_eq!(parse("VarChar"), native(Text));
}

#[test]
fn composites_parse_with_any_spacing() {
    use NativeType::*;
    assert_eq!(parse("list<int>"), list(native(Int)));
    assert_eq!(
        parse(" MAP < text ,frozen< list<int >>> "),
        CqlType::Map(Box::new(native(Text)), Box::new(list(native(Int))))
    );
    assert_eq!(parse("set<uuid>"), CqlType::Set(Box::new(native(Uuid))));
    assert_eq!(
        parse("tuple<int, text,blob>"),
        CqlType::Tuple(vec![native(Int), native(Text), native(Blob)])
    );
    assert_eq!(
        parse("vector<float, 3>"),
        CqlType::Vector(Box::new(native(Float)), 3)
    );
    assert_eq!(
        parse("vector<vector<smallint,2>,1>"),
        CqlType::Vector(Box::new(CqlType::Vector(Box::new(native(SmallInt)), 2)), 1)
    );
    assert_eq!(
        parse("vector<list<text>, 2>"),
        CqlType::Vector(Box::new(list(native(Text))), 2)
    );
    let pair = CqlType::Tuple(vec![native(Int), native(Text)]);
    assert_eq!(parse("frozen<tuple<int, text>>"), pair);
    assert_eq!(parse("list<frozen<tuple<int, text>>>"), list(pair));
}

#[test]
fn java_class_names_parse_with_or_without_package() {
    use NativeType::*;
    let pairs = [
        ("AsciiType", Ascii),
        ("LongType", BigInt),
        ("BytesType", Blob),
        ("BooleanType", Boolean),
        ("CounterColumnType", Counter),
        ("SimpleDateType", Date),
        ("DecimalType", Decimal),
        ("DoubleType", Double),
        ("DurationType", Duration),
        ("FloatType", Float),
        ("InetAddressType", Inet),
        ("Int32Type", Int),
        ("ShortType", SmallInt),
        ("UTF8Type", Text),
        ("TimeType", Time),
        ("TimestampType", Timestamp),
        ("DateType", Timestamp),
        ("TimeUUIDType", TimeUuid),
        ("ByteType", TinyInt),
        ("UUIDType", Uuid),
        ("IntegerType", Varint),
    ];
    for (class, n) in pairs {
        assert_eq!(parse(class), native(n), "{class}");
        assert_eq!(
            parse(&format!("{JAVA_PACKAGE}{class}")),
            native(n),
            "{class}"
        );
    }
    let m = "org.apache.cassandra.db.marshal.";
    assert_eq!(
        parse(&format!("{m}VectorType({m}FloatType,3)")),
        CqlType::Vector(Box::new(native(Float)), 3)
    );
    assert_eq!(
        parse("VectorType(FloatType , 3)"),
        CqlType::Vector(Box::new(native(Float)), 3)
    );
    assert_eq!(
        parse(&format!(
            "{m}MapType({m}UTF8Type,{m}ListType({m}Int32Type))"
        )),
        CqlType::Map(Box::new(native(Text)), Box::new(list(native(Int))))
    );
    assert_eq!(
        parse("FrozenType(SetType(ReversedType(TimeUUIDType)))"),
        CqlType::Set(Box::new(native(TimeUuid)))
    );
    assert_eq!(
        parse("TupleType(Int32Type,UTF8Type)"),
        CqlType::Tuple(vec![native(Int), native(Text)])
    );
}

#[test]
fn java_user_types_decode_their_hex_names() {
    let m = "org.apache.cassandra.db.marshal.";
    // "addr" = 61646472, "street" = 737472656574, "zip" = 7a6970
    let text = format!("{m}UserType(ks,61646472,737472656574:{m}UTF8Type,7a6970:{m}Int32Type)");
    let expected = CqlType::Udt(UdtType {
        keyspace: Some("ks".into()),
        name: "addr".into(),
        fields: vec![
            ("street".into(), native(NativeType::Text)),
            ("zip".into(), native(NativeType::Int)),
        ],
    });
    assert_eq!(parse(&text), expected);
    let error = parse_error("UserType(ks,6g)", &UdtRegistry::new());
    assert_eq!(error.position, 12);
}

#[test]
fn udts_are_declared_and_used_by_name() {
    let mut udts = UdtRegistry::new();
    udts.declare("addr(street text, zip int)").unwrap();
    udts.declare("Person ( name text, homes list<frozen<addr>> )")
        .unwrap();
    let addr = udts.get("addr").unwrap().clone();
    assert_eq!(addr.fields.len(), 2);
    assert_eq!(
        parse_type("list<frozen<addr>>", &udts).unwrap(),
        list(CqlType::Udt(addr.clone()))
    );
    let person = parse_type("PERSON", &udts).unwrap();
    let CqlType::Udt(person) = person else {
        panic!("not a udt")
    };
    assert_eq!(person.fields[1].1, list(CqlType::Udt(addr)));
    assert_eq!(
        parse_type("ks.addr", &udts).unwrap(),
        parse_type("addr", &udts).unwrap()
    );
    assert_eq!(
        udts.declare("addr(x int)").unwrap_err().kind,
        TypeErrorKind::AlreadyDeclared {
            name: "addr".into()
        }
    );
    assert_eq!(
        udts.declare("int(x int)").unwrap_err().kind,
        TypeErrorKind::BuiltInName { name: "int".into() }
    );
    let e = udts.declare("dup(x int, X text)").unwrap_err();
    assert_eq!(e.kind, TypeErrorKind::DuplicateField { name: "x".into() });
    assert_eq!(e.to_string(), "duplicate field `x` at character 11");
    assert_eq!(udts.declare("bad(x nosuch)").unwrap_err().position, 6);
    udts.declare("\"Mixed\"(\"Zip\" int)").unwrap();
    assert_eq!(udts.get("Mixed").unwrap().fields[0].0, "Zip");
    assert!(parse_type("mixed", &udts).is_err());
    assert!(parse_type("\"Mixed\"", &udts).is_ok());
}

#[test]
fn unknown_names_and_bad_syntax_say_where() {
    let udts = UdtRegistry::new();
    let e = parse_error("map<text, nosuch>", &udts);
    assert_eq!(e.position, 10);
    assert!(
        matches!(&e.kind, TypeErrorKind::UnknownType { name, suggestion: None } if name == "nosuch")
    );
    assert_eq!(e.to_string(), "unknown type `nosuch` at character 10");
    let e = parse_type("mapp<int, int>", &UdtRegistry::new()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown type `mapp` (did you mean `map`?) at character 0"
    );
    let e = parse_type("list<intt>", &UdtRegistry::new()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown type `intt` (did you mean `int`?) at character 5"
    );
    let e = parse_type("int<int>", &UdtRegistry::new()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`int` does not take `<...>` parameters at character 0"
    );
    for name in CQL_NATIVES {
        assert!(native_from_cql(name).is_some(), "{name}");
    }
    assert_eq!(parse_error("list<int", &udts).position, 8);
    assert_eq!(parse_error("list<int>>", &udts).position, 9);
    assert_eq!(parse_error("", &udts).position, 0);
    assert_eq!(
        parse_error("list", &udts).to_string(),
        "`list` needs `<...>` parameters at character 0"
    );
    assert!(matches!(
        parse_error("int<text>", &udts).kind,
        TypeErrorKind::UnexpectedParameters {
            parameters: "<...>",
            ..
        }
    ));
    assert_eq!(
        parse_error("ListType", &udts).to_string(),
        "`listtype` needs `(...)` parameters at character 0"
    );
    for bad in ["0", "x", "99999999999999999999"] {
        let e = parse_error(&format!("vector<float, {bad}>"), &udts);
        assert_eq!(
            e.kind,
            TypeErrorKind::InvalidVectorDimension { found: bad.into() }
        );
        assert_eq!(e.position, 14);
    }
    assert_eq!(
        parse_error("tuple<>", &udts).to_string(),
        "expected a type, found `>` at character 6"
    );
    assert_eq!(
        parse_error(" list<int", &udts).to_string(),
        "expected `>`, found the end at character 9"
    );
    assert!(matches!(
        parse_error("com.example.Foo", &udts).kind,
        TypeErrorKind::UnknownType { .. }
    ));
    // Positions count characters, not bytes.
    assert_eq!(parse_error("tuple<é, é>", &udts).position, 6);
    assert_eq!(parse_error("tuple<int,\u{a0}é>", &udts).position, 11);
    assert_eq!(
        parse_error("list<int> é", &udts).kind,
        TypeErrorKind::TrailingText { found: 'é' }
    );
    assert_eq!(
        parse_error("\"open", &udts).kind,
        TypeErrorKind::UnterminatedQuotedName
    );
}

#[test]
fn nesting_is_limited_without_overflowing_the_stack() {
    let udts = UdtRegistry::new();
    let nest = |n: usize| format!("{}int{}", "list<".repeat(n), ">".repeat(n));
    assert_eq!(parse(&nest(MAX_TYPE_DEPTH - 1)).depth(), MAX_TYPE_DEPTH);
    let e = parse_error(&nest(MAX_TYPE_DEPTH), &udts);
    assert_eq!(e.kind, TypeErrorKind::TooDeep, "{e}");
    let e = parse_error(&nest(10_000), &udts);
    assert_eq!(e.kind, TypeErrorKind::TooDeep, "{e}");
    assert_eq!(e.to_string().lines().count(), 1);
    let java = format!(
        "{}Int32Type{}",
        "ListType(".repeat(10_000),
        ")".repeat(10_000)
    );
    assert_eq!(parse_error(&java, &udts).kind, TypeErrorKind::TooDeep);
    // frozen does not change the type but still counts as a level of syntax.
    let frozen = format!("{}int{}", "frozen<".repeat(10_000), ">".repeat(10_000));
    assert_eq!(parse_error(&frozen, &udts).kind, TypeErrorKind::TooDeep);
    let reversed = format!(
        "{}Int32Type{}",
        "ReversedType(".repeat(10_000),
        ")".repeat(10_000)
    );
    assert_eq!(parse_error(&reversed, &udts).kind, TypeErrorKind::TooDeep);
}

#[test]
fn udt_references_count_towards_depth_and_size() {
    let mut udts = UdtRegistry::new();
    let inner = format!("{}int{}", "list<".repeat(40), ">".repeat(40));
    udts.declare(&format!("deep(x {inner})")).unwrap();
    let e = udts
        .declare(&format!("deeper(x {})", inner.replace("int", "deep")))
        .unwrap_err();
    assert_eq!(e.kind, TypeErrorKind::TooDeep, "{e}");
    // Each level doubles the size: the node limit stops the blow-up.
    udts.declare("t0(a int, b int)").unwrap();
    let mut failed = false;
    for level in 1..40 {
        let previous = level - 1;
        if udts
            .declare(&format!("t{level}(a t{previous}, b t{previous})"))
            .is_err()
        {
            failed = true;
            break;
        }
    }
    assert!(failed);
}

#[test]
fn display_is_cql_and_parses_back() {
    let mut udts = UdtRegistry::new();
    udts.declare("addr(street text, zip int)").unwrap();
    udts.declare("\"Odd \"\"Name\"\"\"(x int)").unwrap();
    for text in [
        "int",
        "list<int>",
        "set<timeuuid>",
        "map<text, int>",
        "tuple<int, text, blob>",
        "vector<float, 3>",
        "vector<vector<smallint, 2>, 4>",
        "list<addr>",
        "map<addr, tuple<varint, decimal>>",
        "\"Odd \"\"Name\"\"\"",
    ] {
        let t = parse_type(text, &udts).unwrap();
        assert_eq!(t.to_string(), text);
        assert_eq!(parse_type(&t.to_string(), &udts).unwrap(), t);
    }
    assert_eq!(parse("varchar").to_string(), "text");
    assert_eq!(
        parse("VectorType(FloatType , 3)").to_string(),
        "vector<float, 3>"
    );
    assert_eq!(
        udts.get("addr").unwrap().declaration(),
        "addr(street text, zip int)"
    );
}

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

#[test]
fn identifiers_are_quoted_when_mixed_case_or_reserved() {
    let shown = |name: &str| Identifier(name).to_string();
    assert_eq!(shown("emb"), "emb");
    assert_eq!(shown("Emb"), "\"Emb\"");
    assert_eq!(shown("select"), "\"select\"");
    assert_eq!(shown("token"), "\"token\"");
    assert_eq!(shown("from_date"), "from_date");
    assert_eq!(shown("a\"b"), "\"a\"\"b\"");
}
