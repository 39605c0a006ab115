//! PostGIS, as Hasura serves it: `geometry` and `geography` columns read and
//! written as GeoJSON, the `_st_*` operators in `where`, in a permission rule on a
//! session variable, and in a live query. Each filter's answer is checked against
//! the same condition written as plain SQL on the same rows.

use crate::client;

use crate::fresh_server::{ids, ids_by_sql, post, serve_with_functions};
use serde_json::{json, Value};

const FIXTURE: &str = include_str!("../fixtures/sql/postgis.postgres.sql");

/// Select on landmarks within 2 km of the caller's `x-hasura-location`.
const METADATA: &str = r#"
- table: {schema: public, name: landmark}
  computed_fields:
    - {name: centre, definition: {function: landmark_centre}}
  select_permissions:
    - role: parisian
      permission:
        columns: [id]
        filter: {location: {_cast: {geometry: {_st_within: {type: Polygon, coordinates: [[[2.25, 48.84], [2.36, 48.84], [2.36, 48.88], [2.25, 48.88], [2.25, 48.84]]]}}}}}
    - role: visitor
      permission:
        columns: [id, name, location]
        filter: {location: {_st_d_within: {distance: 2000, from: X-Hasura-Location}}}
  event_triggers:
    - name: landmark_changed
      definition: {enable_manual: false, insert: {columns: "*"}, update: {columns: [location], payload: [id, location]}}
      retry_conf: {num_retries: 0, interval_sec: 10, timeout_sec: 5}
      webhook: http://127.0.0.1:9/unused
- table: {schema: public, name: shape}
  select_permissions:
    - role: planner
      permission:
        columns: [id]
        filter: {geom: {_cast: {geography: {_st_d_within: {distance: 200000, from: X-Hasura-Location, use_spheroid: false}}}}}
- table: {schema: public, name: point3d}
"#;

/// The Eiffel Tower, where the visitor stands.
const EIFFEL: &str = r#"{"type": "Point", "coordinates": [2.2945, 48.8584]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spatial_columns_filters_rules_and_writes() {
    let (url, server) = serve_with_functions(
        "postgis",
        FIXTURE,
        METADATA,
        "- function: {schema: public, name: landmarks_near}\n",
    )
    .await;
    let endpoint = server.url();

    // Read as GeoJSON with its CRS, as Hasura's ST_AsGeoJSON(value, 15, 4).
    let v = post(
        &endpoint,
        &[],
        "{ landmark_by_pk(id: 1) { location } shape_by_pk(id: 4) { geom } }",
        Value::Null,
    )
    .await;
    let crs = json!({"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::4326"}});
    assert_eq!(
        v["data"],
        json!({
            "landmark_by_pk": {"location": {"type": "Point", "crs": crs, "coordinates": [2.2945, 48.8584]}},
            "shape_by_pk": {"geom": {"type": "Polygon", "crs": crs,
                "coordinates": [[[0, 0], [2, 0], [2, 2], [0, 2], [0, 0]]]}}
        }),
        "{v}"
    );

    // Every operator against its SQL, on points, lines and polygons in a plane.
    let square =
        r#"{"type": "Polygon", "coordinates": [[[0, 0], [2, 0], [2, 2], [0, 2], [0, 0]]]}"#;
    let offset =
        r#"{"type": "Polygon", "coordinates": [[[1, 1], [3, 1], [3, 3], [1, 3], [1, 1]]]}"#;
    let point = r#"{"type": "Point", "coordinates": [1, 1]}"#;
    let sql = |geojson: &str| format!("ST_GeomFromGeoJSON('{geojson}')");
    let cases = [
        (
            "_st_within",
            square,
            format!("ST_Within(geom, {})", sql(square)),
        ),
        (
            "_st_contains",
            point,
            format!("ST_Contains(geom, {})", sql(point)),
        ),
        (
            "_st_intersects",
            square,
            format!("ST_Intersects(geom, {})", sql(square)),
        ),
        (
            "_st_touches",
            square,
            format!("ST_Touches(geom, {})", sql(square)),
        ),
        (
            "_st_crosses",
            square,
            format!("ST_Crosses(geom, {})", sql(square)),
        ),
        (
            "_st_overlaps",
            offset,
            format!("ST_Overlaps(geom, {})", sql(offset)),
        ),
        (
            "_st_equals",
            point,
            format!("ST_Equals(geom, {})", sql(point)),
        ),
        ("_eq", point, format!("geom = {}", sql(point))),
        ("_neq", point, format!("NOT geom = {}", sql(point))),
    ];
    for (op, operand, condition) in cases {
        let v = post(
            &endpoint,
            &[],
            &format!("query ($g: geometry!) {{ shape(where: {{geom: {{{op}: $g}}}}, order_by: {{id: asc}}) {{ id }} }}"),
            json!({ "g": serde_json::from_str::<Value>(operand).expect("geojson") }),
        )
        .await;
        let want = ids_by_sql(&url, "shape", &condition);
        assert_eq!(ids(&v["data"]["shape"]), want, "{op}: {v}");
        assert!(
            want.as_array().is_some_and(|w| !w.is_empty()),
            "{op} selects something"
        );
    }

    // `_st_d_within` with its parts as literals and variables, `_in` of shapes,
    // and the 3D operators.
    let v = post(
        &endpoint,
        &[],
        r#"query ($d: Float!, $from: geometry!) {
            near: shape(where: {geom: {_st_d_within: {distance: $d, from: $from}}}, order_by: {id: asc}) { id }
            listed: shape(where: {geom: {_in: [{type: "Point", coordinates: [5, 5]}, {type: "Point", coordinates: [0, 0]}]}}, order_by: {id: asc}) { id }
            unlisted: shape(where: {geom: {_nin: [{type: "Point", coordinates: [5, 5]}]}}, order_by: {id: asc}) { id }
            unset: shape(where: {geom: {_is_null: true}}) { id }
            d3: point3d(where: {p: {_st_3d_d_within: {distance: 5, from: {type: "Point", coordinates: [0, 0, 1]}}}}) { id }
            i3: point3d(where: {p: {_st_3d_intersects: {type: "Point", coordinates: [0, 0, 10]}}}) { id }
        }"#,
        json!({"d": 1.5, "from": {"type": "Point", "coordinates": [0, 0]}}),
    )
    .await;
    let origin = sql(r#"{"type": "Point", "coordinates": [0, 0]}"#);
    assert_eq!(
        ids(&v["data"]["near"]),
        ids_by_sql(&url, "shape", &format!("ST_DWithin(geom, {origin}, 1.5)")),
        "{v}"
    );
    assert_eq!(ids(&v["data"]["listed"]), json!([1, 3]), "{v}");
    assert_eq!(ids(&v["data"]["unlisted"]), json!([1, 2, 4, 5, 6]), "{v}");
    assert_eq!(ids(&v["data"]["unset"]), json!([7]), "{v}");
    assert_eq!(ids(&v["data"]["d3"]), json!([1]), "{v}");
    assert_eq!(ids(&v["data"]["i3"]), json!([2]), "{v}");

    // A null list matches what it matches for any other type: nothing.
    let v = post(
        &endpoint,
        &[],
        "query ($g: [geometry!], $i: [Int!]) { g: shape(where: {geom: {_nin: $g}}) { id } i: shape(where: {id: {_nin: $i}}) { id } }",
        json!({"g": null, "i": null}),
    )
    .await;
    assert_eq!(v["data"]["g"], v["data"]["i"], "{v}");

    // Geography: distances in metres, on the spheroid unless told otherwise.
    let v = post(
        &endpoint,
        &[],
        r#"query ($at: geography!) {
            spheroid: landmark(where: {location: {_st_d_within: {distance: 3167, from: $at}}}, order_by: {id: asc}) { id }
            sphere: landmark(where: {location: {_st_d_within: {distance: 3167, from: $at, use_spheroid: false}}}, order_by: {id: asc}) { id }
            here: landmark(where: {location: {_st_intersects: $at}}) { id }
        }"#,
        json!({ "at": serde_json::from_str::<Value>(EIFFEL).expect("geojson") }),
    )
    .await;
    let at = format!("ST_GeomFromGeoJSON('{EIFFEL}')::geography");
    assert_eq!(
        ids(&v["data"]["spheroid"]),
        ids_by_sql(
            &url,
            "landmark",
            &format!("ST_DWithin(location, {at}, 3167)")
        ),
        "{v}"
    );
    assert_eq!(
        ids(&v["data"]["sphere"]),
        ids_by_sql(
            &url,
            "landmark",
            &format!("ST_DWithin(location, {at}, 3167, false)")
        ),
        "{v}"
    );
    assert_eq!(ids(&v["data"]["here"]), json!([1]), "{v}");
    // The Louvre is 3,172 m away on the spheroid and 3,163 m on a sphere.
    assert_eq!(
        (ids(&v["data"]["spheroid"]), ids(&v["data"]["sphere"])),
        (json!([1, 4]), json!([1, 2, 4])),
        "{v}"
    );

    // `_cast` between geometry and geography: metres on a geometry column, and
    // geometry's operators on a geography one; in a rule too.
    let near = sql(r#"{"type": "Point", "coordinates": [0, 0]}"#);
    let paris = r#"{"type": "Polygon", "coordinates": [[[2.25, 48.84], [2.36, 48.84], [2.36, 48.88], [2.25, 48.88], [2.25, 48.84]]]}"#;
    let v = post(
        &endpoint,
        &[],
        r#"query ($paris: geometry!) {
            metres: shape(where: {geom: {_cast: {geography: {_st_d_within: {distance: 200000, from: {type: "Point", coordinates: [0, 0]}}}}}}, order_by: {id: asc}) { id }
            inside: landmark(where: {location: {_cast: {geometry: {_st_within: $paris}}}}, order_by: {id: asc}) { id }
        }"#,
        json!({ "paris": serde_json::from_str::<Value>(paris).expect("geojson") }),
    )
    .await;
    let metres = ids_by_sql(
        &url,
        "shape",
        &format!("ST_DWithin(geom::geography, ({near})::geography, 200000)"),
    );
    assert_eq!(ids(&v["data"]["metres"]), metres, "{v}");
    assert!(
        metres
            .as_array()
            .is_some_and(|m| m.len() > 1 && m.len() < 6),
        "{metres}"
    );
    let inside = ids_by_sql(
        &url,
        "landmark",
        &format!("ST_Within(location::geometry, {})", sql(paris)),
    );
    assert_eq!(ids(&v["data"]["inside"]), inside, "{v}");
    assert!(
        inside
            .as_array()
            .is_some_and(|m| !m.is_empty() && m.len() < 5),
        "{inside}"
    );
    let planner = [
        ("x-hasura-role", "planner"),
        (
            "x-hasura-location",
            r#"{"type": "Point", "coordinates": [0, 0]}"#,
        ),
    ];
    let v = post(
        &endpoint,
        &planner,
        "{ shape(order_by: {id: asc}) { id } }",
        Value::Null,
    )
    .await;
    let sphere = ids_by_sql(
        &url,
        "shape",
        &format!("ST_DWithin(geom::geography, ({near})::geography, 200000, false)"),
    );
    assert_eq!(ids(&v["data"]["shape"]), sphere, "{v}");
    // Geometry's own operators on a geography column, in a rule.
    let parisian = [("x-hasura-role", "parisian")];
    let v = post(
        &endpoint,
        &parisian,
        "{ landmark(order_by: {id: asc}) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(ids(&v["data"]["landmark"]), inside, "{v}");
    // A cast and a cast back: the inner comparison is geometry's again.
    let v = post(
        &endpoint,
        &[],
        r#"query ($paris: geometry!) { landmark(where: {location: {_cast: {geometry: {_cast: {geography: {_cast: {geometry: {_st_within: $paris}}}}}}}}, order_by: {id: asc}) { id } }"#,
        json!({ "paris": serde_json::from_str::<Value>(paris).expect("geojson") }),
    )
    .await;
    assert_eq!(ids(&v["data"]["landmark"]), inside, "{v}");

    // A computed field returning geometry takes geometry's operators.
    let v = post(
        &endpoint,
        &[],
        r#"query ($paris: geometry!) {
            inside: landmark(where: {centre: {_st_within: $paris}}, order_by: {id: asc}) { id }
            outside: landmark(where: {_not: {centre: {_st_within: $paris}}}, order_by: {id: asc}) { id }
        }"#,
        json!({ "paris": serde_json::from_str::<Value>(paris).expect("geojson") }),
    )
    .await;
    assert_eq!(ids(&v["data"]["inside"]), inside, "{v}");
    let outside = ids_by_sql(
        &url,
        "landmark",
        &format!("NOT ST_Within(location::geometry, {})", sql(paris)),
    );
    assert_eq!(ids(&v["data"]["outside"]), outside, "{v}");
    assert!(
        outside.as_array().is_some_and(|o| !o.is_empty()),
        "{outside}"
    );

    // A tracked function taking a geography, and a computed field giving a
    // geometry: GeoJSON in and out there too.
    let v = post(
        &endpoint,
        &[],
        "query ($at: geography!) { landmarks_near(args: {at: $at, metres: 2000}, order_by: {id: asc}) { id centre } }",
        json!({ "at": serde_json::from_str::<Value>(EIFFEL).expect("geojson") }),
    )
    .await;
    assert_eq!(
        v["data"]["landmarks_near"],
        json!([
            {"id": 1, "centre": {"type": "Point", "crs": crs, "coordinates": [2.2945, 48.8584]}},
            {"id": 4, "centre": {"type": "Point", "crs": crs, "coordinates": [2.295, 48.8738]}}
        ]),
        "{v}"
    );

    // The rule reads the caller's location from the session: a visitor at the
    // Eiffel Tower sees what is within 2 km of it, and a read by primary key of
    // something farther is null.
    let visitor = [("x-hasura-role", "visitor"), ("x-hasura-location", EIFFEL)];
    let v = post(
        &endpoint,
        &visitor,
        "{ landmark(order_by: {id: asc}) { id } far: landmark_by_pk(id: 5) { id } }",
        Value::Null,
    )
    .await;
    let within = ids_by_sql(
        &url,
        "landmark",
        &format!("ST_DWithin(location, {at}, 2000)"),
    );
    assert_eq!(within, json!([1, 4]));
    assert_eq!(ids(&v["data"]["landmark"]), within, "{v}");
    assert_eq!(v["data"]["far"], Value::Null, "{v}");
    // Without the session variable the rule cannot be evaluated: refused.
    let v = post(
        &endpoint,
        &[("x-hasura-role", "visitor")],
        "{ landmark { id } }",
        Value::Null,
    )
    .await;
    assert!(v["errors"][0]["message"].as_str().is_some(), "{v}");
    assert!(v["data"].is_null(), "{v}");

    // The same rule in a live query (its statement shared by subscribers).
    let payload = json!({"headers": {
        "x-hasura-admin-secret": crate::ADMIN_SECRET,
        "x-hasura-role": "visitor",
        "x-hasura-location": EIFFEL,
    }});
    let mut ws = client::Client::connect(&server, client::TRANSPORT_WS, payload).await;
    ws.start(
        "1",
        "subscription { landmark(order_by: {id: asc}) { id name } }",
        Value::Null,
    )
    .await;
    assert_eq!(
        ws.result("1").await,
        json!({"data": {"landmark": [{"id": 1, "name": "Eiffel Tower"}, {"id": 4, "name": "Arc de Triomphe"}]}})
    );
    ws.close().await;

    // Writes take GeoJSON: an insert (with a conflict clause) and an update.
    let v = post(
        &endpoint,
        &[],
        r#"mutation ($p: geography!) {
            insert_landmark_one(object: {id: 6, name: "Sacré-Cœur", type: "church", location: $p},
                                on_conflict: {constraint: landmark_pkey, update_columns: [location]}) { id location }
            update_shape(where: {id: {_eq: 3}}, _set: {geom: {type: "LineString", coordinates: [[5, 5], [6, 6]]}}) {
                returning { id geom }
            }
        }"#,
        json!({"p": {"type": "Point", "coordinates": [2.3431, 48.8867]}}),
    )
    .await;
    assert_eq!(
        v["data"]["insert_landmark_one"]["location"]["coordinates"],
        json!([2.3431, 48.8867]),
        "{v}"
    );
    assert_eq!(
        v["data"]["update_shape"]["returning"][0]["geom"]["type"], "LineString",
        "{v}"
    );
    let stored = grafton_testkit::query_one(
        &url,
        "SELECT ST_AsText(location) || ' ' || (SELECT ST_AsText(geom) FROM shape WHERE id = 3) FROM landmark WHERE id = 6",
    );
    assert_eq!(stored.trim(), "POINT(2.3431 48.8867) LINESTRING(5 5,6 6)");
    // The event trigger's payload carries the shape as GeoJSON, as a read does,
    // whole rows and listed columns alike.
    grafton_testkit::psql(
        &url,
        b"UPDATE landmark SET location = 'SRID=4326;POINT(2.35 48.85)' WHERE id = 6",
    );
    let payloads = grafton_testkit::query_one(
        &url,
        "SELECT json_agg(data->'new'->'location' ORDER BY created_at) FROM grafton_catalog.event_log WHERE trigger_name = 'landmark_changed'",
    );
    let payloads: Value = serde_json::from_str(payloads.trim()).expect("payloads");
    assert_eq!(
        payloads,
        json!([
            {"type": "Point", "crs": crs, "coordinates": [2.3431, 48.8867]},
            {"type": "Point", "crs": crs, "coordinates": [2.35, 48.85]}
        ])
    );
    // An upsert that meets the row takes its conflict branch with GeoJSON too.
    let v = post(
        &endpoint,
        &[],
        r#"mutation { insert_landmark_one(object: {id: 6, name: "Sacré-Cœur", type: "church", location: {type: "Point", coordinates: [2.3431, 48.8867]}},
                                          on_conflict: {constraint: landmark_pkey, update_columns: [location]}) { id } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(v["data"]["insert_landmark_one"]["id"], 6, "{v}");
    assert_eq!(
        grafton_testkit::query_one(
            &url,
            "SELECT ST_AsText(location) FROM landmark WHERE id = 6"
        )
        .trim(),
        "POINT(2.3431 48.8867)"
    );

    // A shape PostGIS cannot read is the database's to refuse, and nothing is written.
    let v = post(
        &endpoint,
        &[],
        r#"mutation { insert_landmark_one(object: {id: 7, name: "x", type: "x", location: {type: "Point"}}) { id } }"#,
        Value::Null,
    )
    .await;
    assert!(
        v["errors"][0]["extensions"]["code"].as_str().is_some(),
        "{v}"
    );
    assert_eq!(
        grafton_testkit::query_one(&url, "SELECT count(*) FROM landmark").trim(),
        "6"
    );

    // Hasura's input types for the operators.
    let v = post(
        &endpoint,
        &[],
        r#"{ g: __type(name: "geography_comparison_exp") { inputFields { name } }
             d: __type(name: "st_d_within_geography_input") { inputFields { name defaultValue } } }"#,
        Value::Null,
    )
    .await;
    let names: Vec<&str> = (v["data"]["g"]["inputFields"]
        .as_array()
        .into_iter()
        .flatten())
    .filter_map(|f| f["name"].as_str())
    .collect();
    for op in ["_eq", "_in", "_is_null", "_st_d_within", "_st_intersects"] {
        assert!(names.contains(&op), "{op}: {v}");
    }
    assert!(
        !names.contains(&"_st_within"),
        "geography has no _st_within: {v}"
    );
    assert_eq!(
        v["data"]["d"]["inputFields"][2],
        json!({"name": "use_spheroid", "defaultValue": "true"}),
        "{v}"
    );
    server.stop().await;

    // Without metadata every table is served, but not PostGIS's own
    // (`spatial_ref_sys`, `geometry_columns`…).
    let server = grafton_server::start(&grafton_server::ServeOptions {
        database_url: url.clone(),
        port: 0,
        ..Default::default()
    })
    .await
    .expect("server starts");
    let v = post(
        &server.url(),
        &[],
        r#"{ __type(name: "query_root") { fields { name } } }"#,
        Value::Null,
    )
    .await;
    let roots: Vec<&str> = (v["data"]["__type"]["fields"]
        .as_array()
        .into_iter()
        .flatten())
    .filter_map(|f| f["name"].as_str())
    .collect();
    assert!(
        roots.contains(&"shape") && roots.contains(&"landmark"),
        "{v}"
    );
    assert!(
        !roots
            .iter()
            .any(|r| r.starts_with("spatial_ref_sys") || r.starts_with("geometry_columns")),
        "{v}"
    );
    server.stop().await;
}
