//! Rows built as records, and whether a statement's JSON is compact.

use super::*;

fn column(c: &str) -> Expr {
    Expr::ToJson(Box::new(Expr::column("_t0", c)), JsonKind::Plain)
}

fn row(pairs: Vec<(String, Expr)>) -> Expr {
    Expr::RowObject {
        alias: "_r1".into(),
        pairs,
    }
}

fn table() -> Option<From> {
    Some(From::Table {
        schema: Some("public".into()),
        name: "t".into(),
        alias: "_t0".into(),
    })
}

fn one(item: Expr, from: Option<From>) -> Select {
    Select {
        items: vec![SelectItem::Expr(item, "root".into())],
        from,
        ..Select::default()
    }
}

#[test]
fn a_row_object_item_is_a_lateral_record_and_compact() {
    let select = one(row(vec![("id".into(), column("id"))]), table());
    let pg = render(&select, Dialect::Postgres);
    assert_eq!(
        pg.sql,
        r#"SELECT to_json("_r1") AS "root" FROM "public"."t" AS "_t0", LATERAL (SELECT "_t0"."id" AS "id") AS "_r1""#
    );
    assert!(pg.compact);
    // Without a source the record is the source; SQLite has no records.
    let root = render(
        &one(row(vec![("a".into(), Expr::Int(1))]), None),
        Dialect::Postgres,
    );
    assert_eq!(
        root.sql,
        r#"SELECT to_json("_r1") AS "root" FROM (SELECT 1 AS "a") AS "_r1""#
    );
    let sqlite = render(&select, Dialect::Sqlite).sql;
    assert!(sqlite.starts_with("SELECT json_object('id', "), "{sqlite}");
}

#[test]
fn a_list_of_row_objects_joins_each_row_to_its_record() {
    let page = Select {
        items: vec![SelectItem::AllFrom("_t0".into())],
        from: table(),
        ..Select::default()
    };
    let list = Select {
        items: vec![SelectItem::Expr(
            Expr::JsonAgg {
                expr: Box::new(Expr::RowObject {
                    alias: "_r1".into(),
                    pairs: vec![("id".into(), Expr::column("_e0", "id"))],
                }),
                order_by: vec![],
            },
            "root".into(),
        )],
        from: Some(From::Subquery {
            select: Box::new(page),
            alias: "_e0".into(),
        }),
        ..Select::default()
    };
    let pg = render(
        &one(Expr::JsonSubquery(Box::new(list)), None),
        Dialect::Postgres,
    );
    assert!(
        pg.sql.contains(r#"ARRAY(SELECT "_r1" FROM (SELECT "_t0".* FROM "public"."t" AS "_t0") AS "_e0", LATERAL (SELECT "_e0"."id" AS "id") AS "_r1"))"#),
        "{}",
        pg.sql
    );
    assert!(pg.compact);
}

#[test]
fn padded_json_makes_a_statement_not_compact() {
    let padded = [
        Expr::JsonObject(vec![("id".into(), column("id"))]),
        Expr::JsonArray(vec![column("id")]),
        Expr::ToJson(Box::new(Expr::column("_t0", "doc")), JsonKind::Json),
        // Elsewhere than an item, a row's object is json_build_object's.
        Expr::Subquery(Box::new(one(
            Expr::Cast(
                Box::new(row(vec![("id".into(), column("id"))])),
                SqlType::Builtin("json"),
            ),
            table(),
        ))),
    ];
    for expr in padded {
        let st = render(
            &one(row(vec![("x".into(), expr)]), table()),
            Dialect::Postgres,
        );
        assert!(!st.compact, "{}", st.sql);
    }
    // A cursor's JSON becomes a base64 string: not the answer's padding.
    let cursor = Expr::Base64(Box::new(Expr::JsonArray(vec![column("id")])));
    let st = render(
        &one(row(vec![("c".into(), cursor)]), table()),
        Dialect::Postgres,
    );
    assert!(st.compact, "{}", st.sql);
}
