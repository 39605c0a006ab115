//! PostGIS rasters, as Hasura serves them: a `raster` column read and written as
//! its hex WKB text, compared with `_eq`, `_neq`, `_in`, `_nin`, `_is_null` and
//! the three intersections (`_st_intersects_rast`, `_st_intersects_nband_geom`,
//! `_st_intersects_geom_nband`), in `where` and in a permission rule on a session
//! variable. Each filter's answer is checked against the same condition in SQL.

use crate::fresh_server::{ids, ids_by_sql, post, serve};
use serde_json::{json, Value};

const FIXTURE: &str = include_str!("../fixtures/sql/raster.postgres.sql");

/// `mapper` reads the tiles whose band 1 meets the caller's `x-hasura-area`.
const METADATA: &str = r#"
- table: {schema: public, name: tile}
  select_permissions:
    - role: mapper
      permission:
        columns: [id, name]
        filter: {rast: {_st_intersects_geom_nband: {geommin: X-Hasura-Area, nband: 1}}}
    - role: any_band
      permission:
        columns: [id]
        filter: {rast: {_st_intersects_geom_nband: {geommin: X-Hasura-Area, nband: null}}}
    - role: twin
      permission:
        columns: [id]
        filter: {rast: {_cneq: rast}}
- table: {schema: public, name: spot}
"#;

/// A square from (0.5, 0.5) to (11, 11): it meets tiles 1, 2 and 3's footprints.
const WIDE: &str = r#"{"type": "Polygon", "coordinates": [[[0.5, 0.5], [11, 0.5], [11, 11], [0.5, 11], [0.5, 0.5]]]}"#;

/// A point inside tiles 1 and 3's footprints (3's band is all nodata).
const POINT: &str = r#"{"type": "Point", "coordinates": [1.5, 1.5]}"#;

fn geom(geojson: &str) -> String {
    format!("ST_GeomFromGeoJSON('{geojson}')")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raster_columns_filters_rules_and_writes() {
    let (url, server) = serve("raster", FIXTURE, METADATA).await;
    let endpoint = server.url();
    let hex = |id: i32| {
        grafton_testkit::query_one(
            &url,
            &format!("SELECT rast::text FROM tile WHERE id = {id}"),
        )
        .trim()
        .to_owned()
    };

    // Read as its text (hex WKB), as PostgreSQL writes it.
    let v = post(
        &endpoint,
        &[],
        "{ tile(order_by: {id: asc}) { id rast } }",
        Value::Null,
    )
    .await;
    assert_eq!(
        v["data"]["tile"],
        json!([{"id": 1, "rast": hex(1)}, {"id": 2, "rast": hex(2)},
               {"id": 3, "rast": hex(3)}, {"id": 4, "rast": null}]),
        "{v}"
    );

    // Every operator against its SQL.
    let cases: Vec<(String, Value, String)> = vec![
        (
            "{rast: {_eq: $v}}".into(),
            json!(hex(1)),
            format!("rast = '{}'::raster", hex(1)),
        ),
        (
            "{rast: {_neq: $v}}".into(),
            json!(hex(1)),
            format!("NOT rast = '{}'::raster", hex(1)),
        ),
        (
            "{rast: {_in: $v}}".into(),
            json!([hex(2), hex(3)]),
            format!("rast IN ('{}'::raster, '{}'::raster)", hex(2), hex(3)),
        ),
        (
            "{rast: {_nin: $v}}".into(),
            json!([hex(2)]),
            format!("NOT rast IN ('{}'::raster)", hex(2)),
        ),
        (
            "{rast: {_is_null: $v}}".into(),
            json!(true),
            "rast IS NULL".into(),
        ),
        (
            "{rast: {_st_intersects_rast: $v}}".into(),
            json!(hex(3)),
            "ST_Intersects(rast, (SELECT rast FROM tile WHERE id = 3))".into(),
        ),
        (
            "{rast: {_st_intersects_nband_geom: $v}}".into(),
            json!({"nband": 1, "geommin": serde_json::from_str::<Value>(POINT).unwrap()}),
            format!("ST_Intersects(rast, 1, {})", geom(POINT)),
        ),
        (
            "{rast: {_st_intersects_geom_nband: $v}}".into(),
            json!({"geommin": WIDE}),
            format!("ST_Intersects(rast, {})", geom(WIDE)),
        ),
        (
            "{rast: {_st_intersects_geom_nband: $v}}".into(),
            json!({"geommin": WIDE, "nband": 1}),
            format!("ST_Intersects(rast, {}, 1)", geom(WIDE)),
        ),
    ];
    let types = [
        "raster",
        "raster",
        "[raster!]",
        "[raster!]",
        "Boolean",
        "raster",
        "st_intersects_nband_geom_input",
        "st_intersects_geom_nband_input",
        "st_intersects_geom_nband_input",
    ];
    for ((filter, value, sql), ty) in cases.into_iter().zip(types) {
        let query =
            format!("query($v: {ty}) {{ tile(where: {filter}, order_by: {{id: asc}}) {{ id }} }}");
        let v = post(&endpoint, &[], &query, json!({"v": value})).await;
        let expected = ids_by_sql(&url, "tile", &sql);
        assert_eq!(ids(&v["data"]["tile"]), expected, "{filter}: {v}");
        assert!(
            expected.as_array().is_some_and(|a| !a.is_empty()),
            "{sql} selects nothing"
        );
    }
    // nodata is not there: band 1 of tile 3 meets nothing, its footprint does.
    assert_eq!(
        ids_by_sql(
            &url,
            "tile",
            &format!("ST_Intersects(rast, 1, {})", geom(POINT))
        ),
        json!([1])
    );

    // A rule on a session variable: band 1 meeting the caller's area.
    let v = post(
        &endpoint,
        &[("x-hasura-role", "mapper"), ("x-hasura-area", WIDE)],
        "{ tile(order_by: {id: asc}) { id name } }",
        Value::Null,
    )
    .await;
    assert_eq!(
        ids(&v["data"]["tile"]),
        ids_by_sql(
            &url,
            "tile",
            &format!("ST_Intersects(rast, {}, 1)", geom(WIDE))
        ),
        "{v}"
    );
    assert_eq!(ids(&v["data"]["tile"]), json!([1, 2]), "{v}");
    // `nband: null` is PostGIS's default: every band, so the footprint.
    let v = post(
        &endpoint,
        &[("x-hasura-role", "any_band"), ("x-hasura-area", WIDE)],
        "{ tile(order_by: {id: asc}) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(ids(&v["data"]["tile"]), json!([1, 2, 3]), "{v}");
    // `_cneq` between rasters is `NOT =` (PostGIS has no `<>`): no row differs
    // from itself.
    let v = post(
        &endpoint,
        &[("x-hasura-role", "twin")],
        "{ tile { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(v["data"]["tile"], json!([]), "{v}");

    // Written as its text, read back the same.
    let v = post(
        &endpoint,
        &[],
        "mutation($r: raster) { insert_tile_one(object: {id: 5, name: \"copy\", rast: $r}) { id rast } }",
        json!({"r": hex(2)}),
    )
    .await;
    assert_eq!(
        v["data"]["insert_tile_one"],
        json!({"id": 5, "rast": hex(2)}),
        "{v}"
    );
    assert_eq!(
        grafton_testkit::query_one(
            &url,
            "SELECT ST_Envelope(rast) = ST_Envelope((SELECT rast FROM tile WHERE id = 2)) FROM tile WHERE id = 5"
        )
        .trim(),
        "t"
    );

    // Refusals: no ordering operators on rasters; text that is no raster is the
    // database's to refuse (PostGIS raises it as an internal error, XX000, which
    // Grafton, like Hasura, answers as `unexpected`, with PostGIS's reason).
    let v = post(
        &endpoint,
        &[],
        r#"{ tile(where: {rast: {_gt: "00"}}) { id } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        v["errors"][0]["extensions"]["code"], "validation-failed",
        "{v}"
    );
    let v = post(
        &endpoint,
        &[],
        r#"{ tile(where: {rast: {_st_intersects_rast: "not a raster"}}) { id } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(v["errors"][0]["extensions"]["code"], "unexpected", "{v}");
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("wkb")),
        "{v}"
    );

    // Hasura's input types.
    let v = post(
        &endpoint,
        &[],
        r#"{ r: __type(name: "raster_comparison_exp") { inputFields { name type { name } } }
             n: __type(name: "st_intersects_nband_geom_input") { inputFields { name type { kind name ofType { name } } } }
             g: __type(name: "st_intersects_geom_nband_input") { inputFields { name type { kind name ofType { name } } } }
             q: __type(name: "query_root") { fields { name } } }"#,
        Value::Null,
    )
    .await;
    let mut names: Vec<&str> = (v["data"]["r"]["inputFields"]
        .as_array()
        .into_iter()
        .flatten())
    .filter_map(|f| f["name"].as_str())
    .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "_eq",
            "_in",
            "_is_null",
            "_neq",
            "_nin",
            "_st_intersects_geom_nband",
            "_st_intersects_nband_geom",
            "_st_intersects_rast"
        ],
        "{v}"
    );
    let required = json!({"kind": "NON_NULL", "name": null, "ofType": {"name": "geometry"}});
    assert_eq!(
        v["data"]["n"]["inputFields"],
        json!([{"name": "nband", "type": {"kind": "NON_NULL", "name": null, "ofType": {"name": "Int"}}},
               {"name": "geommin", "type": required}]),
        "{v}"
    );
    assert_eq!(
        v["data"]["g"]["inputFields"],
        json!([{"name": "geommin", "type": required},
               {"name": "nband", "type": {"kind": "SCALAR", "name": "Int", "ofType": null}}]),
        "{v}"
    );
    // postgis_raster's own views are not served.
    let roots = v["data"]["q"]["fields"].to_string();
    assert!(
        roots.contains("\"tile\"") && !roots.contains("raster_columns"),
        "{v}"
    );

    // Relay: a table keyed by a geometry is no Node (its id could not be read
    // back); one keyed by an integer is.
    let relay = endpoint.replace("/v1/graphql", "/v1beta1/relay");
    let v = post(
        &relay,
        &[],
        r#"{ spot: __type(name: "spot") { interfaces { name } }
             tile: __type(name: "tile") { interfaces { name } }
             q: __type(name: "query_root") { fields { name } } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(v["data"]["spot"]["interfaces"], json!([]), "{v}");
    assert_eq!(
        v["data"]["tile"]["interfaces"],
        json!([{"name": "Node"}]),
        "{v}"
    );
    let roots = v["data"]["q"]["fields"].to_string();
    assert!(
        roots.contains("tile_connection") && !roots.contains("spot_connection"),
        "{v}"
    );
    server.stop().await;
}

/// A column comparison rasters have no operator for (`_cgt`) stops start-up,
/// named, rather than failing every request of the role.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raster_ordering_in_a_rule_stops_start_up() {
    let url = grafton_testkit::fresh_database("raster_refused");
    grafton_testkit::psql(&url, FIXTURE.as_bytes());
    let config: grafton_schema::Config = serde_norway::from_str(
        "tables:\n  tile:\n    permissions:\n      r: {select: {columns: [id], filter: {rast: {_cgt: rast}}}}\n",
    )
    .expect("config");
    let started = grafton_server::start(&grafton_server::ServeOptions {
        database_url: url,
        port: 0,
        config,
        strict_metadata: true,
        ..Default::default()
    })
    .await;
    match started {
        Err(e) => assert!(e.to_string().contains("'_cgt' does not apply"), "{e}"),
        Ok(server) => {
            server.stop().await;
            panic!("started with _cgt on a raster");
        }
    }
}
