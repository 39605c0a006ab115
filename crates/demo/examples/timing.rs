//! Times `create_sqlite` (and writing the PostgreSQL script) for a size:
//! `cargo run --release -p grafton-demo --example timing -- 100000 [--progress] [--sql FILE]`.

use std::time::Instant;

use grafton_demo::{create_sqlite, write_postgres_copy, DemoOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows = args
        .first()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(10_000);
    let opts = DemoOptions {
        rows,
        progress: args.iter().any(|a| a == "--progress"),
    };
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("demo.db");

    let start = Instant::now();
    let summary = create_sqlite(&path, &opts)?;
    let sqlite = start.elapsed();
    println!(
        "create_sqlite rows={rows}: {sqlite:.2?} ({} bytes) {:?}",
        std::fs::metadata(&path)?.len(),
        summary.rows_per_table
    );

    let start = Instant::now();
    let again = create_sqlite(&path, &opts)?;
    println!(
        "second call: {:.2?}, created={}",
        start.elapsed(),
        again.created
    );

    if let Some(i) = args.iter().position(|a| a == "--sql") {
        let file = args.get(i + 1).ok_or("--sql needs a file")?;
        let start = Instant::now();
        write_postgres_copy(&mut std::fs::File::create(file)?, &opts)?;
        println!("write_postgres_copy: {:.2?}", start.elapsed());
    }
    Ok(())
}
