//! Starts the throwaway cluster (or uses `GRAFTON_TEST_DATABASE_URL`), creates two
//! databases and queries each.

use grafton_testkit::{fresh_database, postgres_url, sqlite_path};

fn select_one(url: &str) -> (i32, String) {
    // The sync client runs its own runtime; a plain #[test] thread is fine.
    let mut client = postgres::Client::connect(url, postgres::NoTls).expect("connect");
    let row = client
        .query_one("SELECT 1, current_database()::text", &[])
        .expect("SELECT 1");
    (row.get(0), row.get(1))
}

#[test]
fn cluster_serves_two_fresh_databases() {
    let server = postgres_url();
    assert!(server.starts_with("postgres"), "{server}");
    assert_eq!(postgres_url(), server, "the cluster is started once");

    let a = fresh_database("testkit_a");
    let b = fresh_database("testkit_b");
    assert_ne!(a, b);

    let (one_a, name_a) = select_one(&a);
    let (one_b, name_b) = select_one(&b);
    assert_eq!((one_a, one_b), (1, 1));
    assert!(name_a.starts_with("testkit_a_"), "{name_a}");
    assert!(name_b.starts_with("testkit_b_"), "{name_b}");
    assert_ne!(name_a, name_b);
}

#[test]
fn sqlite_paths_are_fresh() {
    let a = sqlite_path("t");
    let b = sqlite_path("t");
    assert_ne!(a, b);
    assert!(!a.exists());
    assert!(a.parent().expect("parent").is_dir());
}
