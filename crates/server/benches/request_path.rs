//! Engine overhead per request without the database: parse → validate → coerce
//! variables → IR → SQL, for the seed queries, first seen (uncached) and repeated
//! (cached: the plan is reused and only variables are coerced).
//!
//! `cargo bench -p grafton --bench request_path`

use criterion::{criterion_group, criterion_main, Criterion};
use grafton_schema::{Config, Convention, Naming};
use grafton_server::engine::Planner;
use grafton_server::{GraphqlRequest, Transport};
use grafton_sql::Dialect;
use serde_json::json;
use std::hint::black_box;

const SEED: [(&str, &str); 3] = [
    (
        "venues",
        "query queryVenues($limit: Int!, $offset: Int!, $id_gt: Int!) { venues(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id name postal_code } }",
    ),
    (
        "venue_meetups",
        "query queryVenueMeetups($limit: Int!, $offset: Int!, $id_gt: Int!) { venues(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id name postal_code meetups(limit: $limit, sort: { id: desc }) { id title } } }",
    ),
    (
        "meetups_members",
        "query queryMeetupsWithMembers($limit: Int!, $offset: Int!, $id_gt: Int!) { meetups(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id title meetups_members(limit: $limit) { member { id email } } } }",
    ),
];

/// The demo schema, introspected once from a small SQLite file; the benchmark
/// itself never touches a database.
fn planner() -> Planner {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bench.db");
    grafton_demo::create_sqlite(
        &path,
        &grafton_demo::DemoOptions {
            rows: 10,
            progress: false,
        },
    )
    .expect("demo file");
    let conn = rusqlite::Connection::open(&path).expect("open");
    let mut catalog = grafton_catalog::introspect_sqlite(&conn)
        .expect("introspect")
        .catalog;
    // Plan as for PostgreSQL, the benchmark's reference backend: its default schema.
    for table in &mut catalog.tables {
        table.schema = "public".into();
        for fk in &mut table.foreign_keys {
            fk.ref_schema = "public".into();
        }
    }
    let model = grafton_schema::build(
        catalog,
        &Config::default(),
        Naming::new(Convention::Phrag),
        grafton_catalog::Backend::Postgres,
    )
    .expect("schema");
    Planner::new(model, Dialect::Postgres)
}

fn request(query: &str, id_gt: i64) -> GraphqlRequest {
    let variables = json!({"limit": 50, "offset": 7, "id_gt": id_gt});
    GraphqlRequest {
        query: query.to_owned(),
        operation_name: None,
        variables: variables.as_object().cloned().unwrap_or_default(),
        persisted_hash: None,
    }
}

fn bench(c: &mut Criterion) {
    let planner = planner();
    let mut group = c.benchmark_group("request_path");
    for (name, query) in SEED {
        group.bench_function(format!("{name}/uncached"), |b| {
            let req = request(query, 1234);
            b.iter(|| {
                let prepared = planner.prepare_uncached(black_box(&req)).expect("plans");
                black_box(matches!(
                    prepared.action,
                    grafton_server::engine::Action::Plan(_)
                ))
            })
        });
        group.bench_function(format!("{name}/cached"), |b| {
            let mut id = 0;
            let _ = planner.prepare(&request(query, 0), Transport::Post);
            b.iter(|| {
                id = (id + 1) % 100_000;
                // A new variables map every time, as a real request brings.
                let req = request(query, id);
                let prepared = planner
                    .prepare(black_box(&req), Transport::Post)
                    .expect("plans");
                black_box(prepared.variables.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
